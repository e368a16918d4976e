"""The herd effect, measured from Python: watch notifications per lock hand-off for kazoo's
``Lock`` (each waiter watches its predecessor) and for a lock whose waiters all watch the lock's
children (every change wakes every waiter), as N contenders grow.

Each run has a fresh embedded server (``shepherd_zk.Server``): a coordinator takes the lock,
N contenders (one kazoo client each) queue up behind it, and once every one of them waits on a
watch the coordinator releases; N hand-offs follow, each holder releasing as soon as it
acquires. Only the hand-off phase is counted: notifications by the server's own count
(``notification_counts()``), getChildren calls by wrapping the contenders' clients. The table
has the columns of ``shepherd-bench herd`` (docs/bench/herd.md).

    python python/examples/herd.py [--contenders 2,5,10,20,50]
"""

from __future__ import annotations

import argparse
import statistics
import threading
import time
from typing import Callable, List, Tuple

from kazoo.client import KazooClient
from kazoo.recipe.lock import Lock

from shepherd_zk import Server

#: Bound on every wait of a run; a run past it fails rather than hangs.
RUN_TIMEOUT_S = 120.0
LOCK = "/herd/lock"


def herd_lock(client: KazooClient) -> Tuple[Callable[[], None], Callable[[], None]]:
    """A lock in a few lines of kazoo whose waiters all watch the lock's children: the form
    with the herd effect. Returns (acquire, release)."""
    mine: List[str] = []

    def acquire() -> None:
        me = client.create(LOCK + "/lock-", ephemeral=True, sequence=True, makepath=True)
        mine.append(me)
        name = me.rsplit("/", 1)[1]
        deadline = time.monotonic() + RUN_TIMEOUT_S
        while time.monotonic() < deadline:
            changed = threading.Event()
            children = sorted(client.get_children(LOCK, watch=lambda event: changed.set()))
            if children[0] == name:
                return
            changed.wait(deadline - time.monotonic())
        raise TimeoutError("herd lock: not acquired in time")

    def release() -> None:
        client.delete(mine.pop())

    return acquire, release


def kazoo_lock(client: KazooClient) -> Tuple[Callable[[], None], Callable[[], None]]:
    """kazoo's own ``Lock``: each waiter watches its predecessor only."""
    lock = Lock(client, LOCK)
    return (lambda: lock.acquire(timeout=RUN_TIMEOUT_S)), lock.release


RECIPES = {"kazoo-lock": kazoo_lock, "children-watch-lock": herd_lock}


def run(recipe: str, n: int) -> List[str]:
    """One run: the table row's cells."""
    make = RECIPES[recipe]
    with Server() as zk:
        clients = [KazooClient(zk.connect_string) for _ in range(n + 1)]
        for client in clients:
            client.start(timeout=30)
        get_children = [0]
        for client in clients[1:]:
            original = client.get_children

            def counted(*args, original=original, **kwargs):
                get_children[0] += 1
                return original(*args, **kwargs)

            client.get_children = counted
        coordinator_acquire, coordinator_release = make(clients[0])
        coordinator_acquire()
        times: List[Tuple[float, float]] = []
        errors: List[BaseException] = []

        def contend(client: KazooClient) -> None:
            try:
                acquire, release = make(client)
                acquire()
                acquired = time.perf_counter()
                # A hand-off runs from the start of one release to the next acquire: the
                # next holder may see the delete's notification before this thread sees
                # the delete's reply, so the release's end would give negative hand-offs.
                releasing = time.perf_counter()
                release()
                times.append((acquired, releasing))
            except BaseException as error:  # reported in the row
                errors.append(error)

        threads = [threading.Thread(target=contend, args=(c,)) for c in clients[1:]]
        for thread in threads:
            thread.start()
        # Every contender waits on a watch: the hand-off phase may begin.
        deadline = time.monotonic() + RUN_TIMEOUT_S
        while len(zk.dump_watches()) < n and time.monotonic() < deadline:
            time.sleep(0.001)
        before, calls_before = zk.notification_counts()["total"], get_children[0]
        started = time.perf_counter()
        coordinator_release()
        for thread in threads:
            thread.join(max(0.0, deadline - time.monotonic()))
        wall_ms = (time.perf_counter() - started) * 1000
        after, calls = zk.notification_counts()["total"], get_children[0] - calls_before
        for client in clients:
            client.stop()
            client.close()
    if errors or len(times) != n:
        return [recipe, str(n), f"failed: {errors[0] if errors else 'timed out'}"]
    times.sort()
    releases = [started] + [releasing for _, releasing in times[:-1]]
    handoffs = [(acquired - release) * 1e6 for (acquired, _), release in zip(times, releases)]
    notifications = after - before
    return [
        recipe,
        str(n),
        str(n),
        str(notifications),
        f"{notifications / n:.2f}",
        f"{calls / n:.2f}",
        f"{wall_ms:.0f}",
        f"{statistics.median(handoffs):.0f}",
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--contenders", default="2,5,10,20,50", help="N values, comma-separated")
    args = parser.parse_args()
    counts = [int(n) for n in args.contenders.split(",")]
    header = [
        "recipe", "N", "hand-offs", "notifications", "notif. / hand-off",
        "getChildren / hand-off", "wall ms", "hand-off p50 µs",
    ]
    print("| " + " | ".join(header) + " |")
    print("|---|" + "---:|" * (len(header) - 1))
    failed = False
    for recipe in RECIPES:
        for n in counts:
            row = run(recipe, n)
            failed |= len(row) < len(header)
            print("| " + " | ".join(row) + " |", flush=True)
    if failed:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
