"""What a fresh server costs a test: shepherd_zk against kazoo's own harness.

Measures, on a release build of the wheel (docs/python.md, "Benchmark"):

1. ``Server()`` to a kazoo client connected (start, connect), and the whole fresh ``zk_server``
   a test gets (start, connect, stop the client, close), in rounds; each round's median is
   printed, then the median of all samples;
2. the same for kazoo's harness (``kazoo.testing.KazooTestCase``): a fresh real ZooKeeper
   cluster started (``get_global_cluster().start()``), ``setup_zookeeper()``,
   ``teardown_zookeeper()`` and ``terminate()``, as ``tearDownClass`` does. It needs ZooKeeper's
   jars: ``ZOOKEEPER_CLASSPATH`` (Debian: ``/usr/share/java/zookeeper.jar`` and its
   dependencies, see docs/python.md) and ``ZOOKEEPER_VERSION``; without them that part is
   reported as skipped;
3. the resident memory one idle embedded server adds to the process (VmRSS before and after,
   Linux only).

    python python/benches/fixture_cost.py [--rounds 5] [--per-round 20] [--kazoo-runs 3]
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from typing import Callable, List

from kazoo.client import KazooClient

from shepherd_zk import Server


#: Run in a fresh interpreter, so that memory an earlier server freed (kept by the allocator)
#: does not hide what one server costs: VmRSS before and after one idle server, then after ten.
MEMORY_PROBE = """
import sys
sys.path.insert(0, {here!r})
from fixture_cost import rss_kib
from shepherd_zk import Server
import kazoo.client
before = rss_kib()
one = Server().start()
after_one = rss_kib()
ten = [Server().start() for _ in range(10)]
after_ten = rss_kib()
print(before, after_one, after_ten)
"""


def memory_kib() -> List[int]:
    """VmRSS of a fresh interpreter before, after one idle server, after ten more."""
    import subprocess
    import sys

    here = os.path.dirname(os.path.abspath(__file__))
    out = subprocess.run(
        [sys.executable, "-c", MEMORY_PROBE.format(here=here)],
        capture_output=True, text=True, timeout=120, check=True,
    )
    return [int(x) for x in out.stdout.split()]


def rss_kib() -> int:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise RuntimeError("no VmRSS in /proc/self/status")


def connected_ms() -> float:
    """Server() to a kazoo client connected; the server is closed afterwards (not timed)."""
    started = time.perf_counter()
    server = Server().start()
    client = KazooClient(server.connect_string)
    client.start(timeout=10)
    elapsed = (time.perf_counter() - started) * 1000
    client.stop()
    client.close()
    server.close()
    return elapsed


def fresh_fixture_ms() -> float:
    """What ``zk_server`` costs a test that connects one client: start to close."""
    started = time.perf_counter()
    with Server() as server:
        client = KazooClient(server.connect_string)
        client.start(timeout=10)
        client.stop()
        client.close()
    return (time.perf_counter() - started) * 1000


def kazoo_fresh_cluster_ms() -> float:
    """What kazoo's harness costs a test that needs a fresh ZooKeeper: cluster start,
    setup_zookeeper, teardown_zookeeper, terminate."""
    from kazoo.testing.harness import KazooTestHarness, get_global_cluster

    class Probe(KazooTestHarness):
        def runTest(self) -> None:  # unittest needs one test method
            pass

    started = time.perf_counter()
    probe = Probe()
    probe.setup_zookeeper()
    probe.teardown_zookeeper()
    get_global_cluster().terminate()
    return (time.perf_counter() - started) * 1000


def rounds(name: str, sample: Callable[[], float], n_rounds: int, per_round: int) -> float:
    every: List[float] = []
    for r in range(n_rounds):
        samples = [sample() for _ in range(per_round)]
        every.extend(samples)
        print(f"{name}: round {r + 1}: median {statistics.median(samples):.3f} ms "
              f"(min {min(samples):.3f}, max {max(samples):.3f}, n={per_round})", flush=True)
    median = statistics.median(every)
    print(f"{name}: median of all {len(every)}: {median:.3f} ms")
    return median


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--per-round", type=int, default=20)
    parser.add_argument("--kazoo-runs", type=int, default=3)
    args = parser.parse_args()

    # Warm-up: the first server of a process pays for the module's one-time setup.
    connected_ms()
    connect = rounds("Server() to kazoo connected", connected_ms, args.rounds, args.per_round)
    fresh = rounds("fresh zk_server per test", fresh_fixture_ms, args.rounds, args.per_round)

    before, after, after_ten = memory_kib()
    print(f"idle embedded server, fresh interpreter: VmRSS {before} KiB -> {after} KiB: "
          f"+{after - before} KiB for the first; +{(after_ten - after) / 10:.0f} KiB each "
          f"for ten more")

    if not (os.environ.get("ZOOKEEPER_CLASSPATH") or os.environ.get("ZOOKEEPER_PATH")):
        print("kazoo harness: skipped (set ZOOKEEPER_CLASSPATH and ZOOKEEPER_VERSION)")
        return
    samples = []
    for r in range(args.kazoo_runs):
        samples.append(kazoo_fresh_cluster_ms())
        print(f"kazoo harness fresh cluster: run {r + 1}: {samples[-1]:.1f} ms", flush=True)
    kazoo = statistics.median(samples)
    print(f"kazoo harness fresh cluster: median {kazoo:.1f} ms "
          f"(size {os.environ.get('ZOOKEEPER_CLUSTER_SIZE', '3')})")
    print(f"ratio: fresh zk_server / kazoo harness = {fresh / kazoo:.5f} (target <= 0.01)")
    print(f"Server() to connected median {connect:.3f} ms (target <= 2 ms); "
          f"idle memory +{after - before} KiB (target <= 5120 KiB)")


if __name__ == "__main__":
    main()
