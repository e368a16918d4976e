#!/usr/bin/env python3
"""Workload, dumper and comparer for the data-directory compatibility check (.ci/datadir-compat.sh).

    python3 tests/interop/datadir.py workload HOST:PORT DATA_DIR SNAP_COUNT [ROOT]
    python3 tests/interop/datadir.py few HOST:PORT
    python3 tests/interop/datadir.py dump HOST:PORT OUT.jsonl
    python3 tests/interop/datadir.py compare A.jsonl B.jsonl
    python3 tests/interop/datadir.py resume HOST:PORT SESSION_ID PASSWORD_HEX

`workload` writes, under ROOT (default /dd), every kind of node a ZooKeeper 3.8 data directory can hold:
persistent, ephemeral (of a session it leaves alive: the process exits without closing it),
sequential, a container with a child, TTL nodes, data that is null, empty, small and large,
digest, ip and reduced-world ACLs, setData, setACL, deletes, a successful and a failed multi,
a failed plain write, and a session that closes. It prints the kept session's id and password
(`workload: keeper session ID PASSWORD_HEX`). It writes enough to cross several snapshots
of a server configured with SNAP_COUNT, then ends with transactions after the newest snapshot
in DATA_DIR/version-2 (see `end_after_a_snapshot`), so that a restart needs both the snapshot
and the log. It prints the last zxid it wrote.

`few` creates /few and three children: a directory stopped before its first snapCount
snapshot (ZooKeeper refuses logs without any snapshot before them).

`dump` walks the whole tree from "/" as the servers' digest super user and writes one JSON line
per node, sorted by path: data (hex, or null), every Stat field and the ACL list.

`compare` prints every difference between two dumps and exits 1 if there is any.

`resume` tries to resume a session by id and password and prints `resume: resumed` or
`resume: refused` (the server answered as for an expired session).

kazoo is the client because CI already installs it for the interop suite, it drives both
servers the same way, and it reports the full Stat and ACLs; container and TTL creates, which
kazoo lacks, are its own request records with their opcodes (19, 21).
"""

import json
import os
import re
import sys
import time

from kazoo.client import KazooClient
from kazoo.exceptions import BadVersionError, NodeExistsError
from kazoo.protocol.serialization import Create, Create2, long_struct
from kazoo.security import ACL, Id, Permissions, make_digest_acl

# The super user of .ci/run and .ci/real-zk.sh: superDigest=oracle:b29uxuNcniFv6vjwF9tdJVA4Q8c=
SUPER = ("digest", "oracle:oracle")
ALICE = ("digest", "alice:secret")
KEEPER_TIMEOUT = 60.0  # the kept session must outlive a stop, a copy and a start elsewhere
WAIT = 10.0  # bound on any one request
ROOT = "/dd"


class CreateContainer(Create2):
    """createContainer (19): a Create2 record and reply, container flag 4."""

    type = 19


class CreateTTL(Create2):
    """createTTL (21): a Create2 record followed by the TTL in ms (ZooKeeper's CreateTTLRequest)."""

    type = 21

    def __new__(cls, path, data, acl, flags, ttl):
        self = super().__new__(cls, path, data, acl, flags)
        self.ttl = ttl
        return self

    def serialize(self):
        return super().serialize() + long_struct.pack(self.ttl)


def call(zk, request):
    result = zk.handler.async_result()
    zk._call(request, result)
    return result.get(timeout=WAIT)


def client(hosts, auth=(), timeout=10.0):
    zk = KazooClient(hosts=hosts, timeout=timeout, auth_data=list(auth), connection_retry=None)
    zk.start(timeout=WAIT)
    return zk


# ---------------------------------------------------------------- workload

OPEN = [ACL(Permissions.ALL, Id("world", "anyone"))]
WORLD_READ = [ACL(Permissions.READ, Id("world", "anyone"))]
ALICE_ALL = [make_digest_acl("alice", "secret", all=True)]
IP_RW = [ACL(Permissions.READ | Permissions.WRITE, Id("ip", "127.0.0.1"))]
MIXED = [make_digest_acl("alice", "secret", all=True), ACL(Permissions.READ | Permissions.CREATE, Id("world", "anyone"))]


def data_of(i):
    """Bulk data of several sizes: empty, short, a few hundred bytes, a few KB."""
    return bytes((i * 7 + k) % 251 for k in range((0, 3, 300, 4000)[i % 4]))


def workload(hosts, data_dir, snap_count):
    keeper = client(hosts, timeout=KEEPER_TIMEOUT)
    zk = client(hosts, auth=[ALICE])
    last = 0

    def w(stat_or_zxid):
        nonlocal last
        last = max(last, stat_or_zxid if isinstance(stat_or_zxid, int) else stat_or_zxid.mzxid)

    def create(path, value=b"", acl=None, **kw):
        path, stat = zk.create(path, value, acl=acl or OPEN, include_data=True, **kw)
        w(stat.czxid)
        return path

    create(ROOT, b"root")
    create(f"{ROOT}/empty", b"")
    create(f"{ROOT}/null", None)
    create(f"{ROOT}/small", b"x")
    create(f"{ROOT}/kb", bytes(range(256)) * 4)
    create(f"{ROOT}/big", bytes((k * 31) % 256 for k in range(100_000)))
    create(f"{ROOT}/seq")
    for i in range(5):
        create(f"{ROOT}/seq/s-", f"seq {i}".encode(), sequence=True)
    _, stat = keeper.create(f"{ROOT}/eph", b"keeper", ephemeral=True, include_data=True)
    w(stat.czxid)
    _, stat = keeper.create(f"{ROOT}/seq/e-", b"", ephemeral=True, sequence=True, include_data=True)
    w(stat.czxid)
    _, stat = call(zk, CreateContainer(f"{ROOT}/container", b"box", OPEN, 4))
    w(stat.czxid)
    create(f"{ROOT}/container/child", b"keeps the container")
    hour = 3_600_000  # long enough that no server reaps them during the check
    _, stat = call(zk, CreateTTL(f"{ROOT}/ttl", b"ttl", OPEN, 5, hour))
    w(stat.czxid)
    _, stat = call(zk, CreateTTL(f"{ROOT}/ttl-seq-", b"", OPEN, 6, hour))
    w(stat.czxid)

    create(f"{ROOT}/acl")
    create(f"{ROOT}/acl/digest", b"alice only", acl=ALICE_ALL)
    create(f"{ROOT}/acl/ip", b"loopback", acl=IP_RW)
    create(f"{ROOT}/acl/world-read", b"read only", acl=WORLD_READ)
    create(f"{ROOT}/acl/mixed", b"two entries", acl=MIXED)
    create(f"{ROOT}/acl/later", b"open, then alice")
    w(zk.set_acls(f"{ROOT}/acl/later", ALICE_ALL))
    w(zk.set_acls(f"{ROOT}/acl/later", ALICE_ALL + WORLD_READ))

    for v in (b"y", b"", None, b"z" * 50):
        w(zk.set(f"{ROOT}/small", v))
    w(zk.set(f"{ROOT}/null", b"no longer null"))
    w(zk.set(f"{ROOT}/kb", None))
    w(zk.set(f"{ROOT}/acl/digest", b"alice again"))

    create(f"{ROOT}/gone", b"to be deleted")
    zk.delete(f"{ROOT}/gone")
    create(f"{ROOT}/parent")
    create(f"{ROOT}/parent/child")
    zk.delete(f"{ROOT}/parent/child")  # the parent's cversion and pzxid move
    create(f"{ROOT}/gone3")

    tx = zk.transaction()
    tx.create(f"{ROOT}/multi", b"m")
    tx.create(f"{ROOT}/multi/a", b"a")
    tx._add(Create(f"{ROOT}/multi/b", None, OPEN, 0))  # null data: kazoo's tx.create refuses None
    tx.set_data(f"{ROOT}/small", b"set in a multi")
    tx.delete(f"{ROOT}/gone3")
    tx.check(f"{ROOT}/empty", 0)
    results = tx.commit()
    if any(isinstance(r, Exception) for r in results):
        raise AssertionError(f"the successful multi failed: {results}")
    w(results[3])
    tx = zk.transaction()
    tx.create(f"{ROOT}/multi/c", b"never")
    tx.check(f"{ROOT}/empty", 99)
    results = tx.commit()
    if not isinstance(results[1], BadVersionError):
        raise AssertionError(f"the failed multi did not fail on its check: {results}")
    try:
        zk.create(f"{ROOT}/empty")
        raise AssertionError("a create of an existing node succeeded")
    except NodeExistsError:
        pass

    closing = client(hosts)
    _, stat = closing.create(f"{ROOT}/closed-eph", b"dies with its session", ephemeral=True, include_data=True)
    w(stat.czxid)
    _, stat = closing.create(f"{ROOT}/by-closed", b"outlives its session", include_data=True)
    w(stat.czxid)
    closing.stop()
    closing.close()

    # With the rest, about 130 transactions: several snapshots for a snapCount up to 40
    # (ZooKeeper's rule snapshots after snapCount/2 to snapCount transactions).
    create(f"{ROOT}/bulk")
    for i in range(60):
        create(f"{ROOT}/bulk/n-{i:03d}", data_of(i))
    for i in range(0, 60, 3):
        w(zk.set(f"{ROOT}/bulk/n-{i:03d}", data_of(i + 1)))

    last = end_after_a_snapshot(zk, data_dir, snap_count, last)
    zk.stop()
    zk.close()
    sid, password = keeper.client_id
    print(f"workload: done, last zxid {last:#x}, ephemerals of session {sid:#x} left alive")
    print(f"workload: keeper session {sid} {password.hex()}")
    sys.stdout.flush()
    # Leave the keeper's session open on the server: exit without a closeSession.
    os._exit(0)


def few(hosts):
    zk = client(hosts)
    zk.create("/few", b"few")
    for i in range(3):
        zk.create(f"/few/{i}", bytes([i]) * i)
    zk.stop()
    zk.close()
    print("few: 4 nodes created")


def snapshot_zxids(data_dir):
    names = os.listdir(os.path.join(data_dir, "version-2"))
    return [int(m.group(1), 16) for m in map(re.compile(r"snapshot\.([0-9a-f]+)$").match, names) if m]


def end_after_a_snapshot(zk, data_dir, snap_count, last):
    """Writes until the newest snapshot on disk is behind the last zxid by at most
    snap_count/2 transactions, and returns the last zxid.

    ZooKeeper's rule (SyncRequestProcessor) rolls the log and snapshots only after more than
    snapCount/2 transactions since the last roll, and a snapshot's zxid is at most its roll's.
    So when the newest visible snapshot S has S < last <= S + snapCount/2, no later snapshot
    can have been started: the directory ends with a snapshot and transactions after it. The
    short pause lets a snapshot that is being written appear; the loop is bounded.
    """
    for i in range(20 * snap_count):
        snaps = snapshot_zxids(data_dir)
        newest = max(snaps, default=-1)
        if snaps and newest < last <= newest + snap_count // 2:
            print(f"workload: newest snapshot {newest:#x}, {last - newest} transactions after it")
            return last
        last = max(last, zk.set(f"{ROOT}/small", f"tail {i}".encode()).mzxid)
        time.sleep(0.05)
    raise AssertionError(f"no snapshot in {data_dir} fell within {snap_count // 2} transactions of the end")


# ---------------------------------------------------------------- dump and compare

STAT_FIELDS = (
    "czxid", "mzxid", "pzxid", "ctime", "mtime", "version", "cversion", "aversion",
    "ephemeralOwner", "dataLength", "numChildren",
)


def dump(hosts, out):
    zk = client(hosts, auth=[SUPER])
    rows, todo = [], ["/"]
    while todo:
        path = todo.pop()
        data, stat = zk.get(path)
        acls, _ = zk.get_acls(path)
        children = zk.get_children(path)
        rows.append({
            "path": path,
            "data": None if data is None else data.hex(),
            "stat": {
                "czxid": stat.czxid, "mzxid": stat.mzxid, "pzxid": stat.pzxid,
                "ctime": stat.ctime, "mtime": stat.mtime, "version": stat.version,
                "cversion": stat.cversion, "aversion": stat.aversion,
                "ephemeralOwner": stat.ephemeralOwner, "dataLength": stat.dataLength,
                "numChildren": stat.numChildren,
            },
            "acl": [[a.perms, a.id.scheme, a.id.id] for a in acls],
        })
        todo += [path.rstrip("/") + "/" + c for c in children]
    zk.stop()
    zk.close()
    rows.sort(key=lambda r: r["path"])
    with open(out, "w") as f:
        for r in rows:
            f.write(json.dumps(r, sort_keys=True) + "\n")
    print(f"dump: {len(rows)} nodes from {hosts} -> {out}")


def load(path):
    with open(path) as f:
        return {r["path"]: r for r in map(json.loads, f)}


def compare(a_path, b_path):
    a, b = load(a_path), load(b_path)
    diffs = []
    for path in sorted(a.keys() | b.keys()):
        if path not in b:
            diffs.append(f"{path}: only in {a_path}")
        elif path not in a:
            diffs.append(f"{path}: only in {b_path}")
        else:
            ra, rb = a[path], b[path]
            if ra["data"] != rb["data"]:
                diffs.append(f"{path}: data {ra['data']!r:.80} != {rb['data']!r:.80}")
            for k in STAT_FIELDS:
                if ra["stat"][k] != rb["stat"][k]:
                    diffs.append(f"{path}: {k} {ra['stat'][k]} != {rb['stat'][k]}")
            if ra["acl"] != rb["acl"]:
                diffs.append(f"{path}: acl {ra['acl']} != {rb['acl']}")
    for d in diffs:
        print("DIFF", d)
    print(f"compare: {len(a)} and {len(b)} nodes, {len(diffs)} differences ({a_path} vs {b_path})")
    return 1 if diffs else 0


def resume(hosts, session_id, password_hex):
    """kazoo reports a refused resume as LOST and then opens a new session by itself."""
    states = []
    zk = KazooClient(hosts=hosts, timeout=KEEPER_TIMEOUT, connection_retry=None,
                     client_id=(session_id, bytes.fromhex(password_hex)))
    zk.add_listener(states.append)
    zk.start(timeout=WAIT)
    resumed = zk.client_id[0] == session_id and "LOST" not in states
    zk.stop()  # a resumed session is closed here: its ephemerals go
    zk.close()
    print(f"resume: {'resumed' if resumed else 'refused'} session {session_id:#x} on {hosts}")


def main(argv):
    usage = __doc__.split("\n\n")[1]
    if len(argv) < 2:
        sys.exit("usage:\n" + usage)
    cmd, args = argv[1], argv[2:]
    if cmd == "workload" and len(args) in (3, 4):
        global ROOT
        ROOT = args[3] if len(args) == 4 else ROOT
        workload(args[0], args[1], int(args[2]))
    elif cmd == "few" and len(args) == 1:
        few(args[0])
    elif cmd == "dump" and len(args) == 2:
        dump(*args)
    elif cmd == "resume" and len(args) == 3:
        resume(args[0], int(args[1]), args[2])
    elif cmd == "compare" and len(args) == 2:
        return compare(*args)
    else:
        sys.exit("usage:\n" + usage)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
