#!/usr/bin/env python3
"""Interop checks for any ZooKeeper-compatible server, driven by kazoo (the Python client).

    python3 tests/interop/kazoo_suite.py HOST:PORT

Prints one line per check, then `kazoo: N passed, M failed`, and exits 1 on any failure.
Every wait is on an event (a watch, a thread, a session state) with a bound, so a server
that misbehaves fails a check instead of hanging the suite. Each run works under its own
random root znode, so runs against the same server never collide.
Set KAZOO_SUITE_LOG=DEBUG (or INFO, WARNING) to see kazoo's own log.
"""

import logging
import os
import queue
import socket
import sys
import threading
import time
import traceback
import uuid

from kazoo.client import KazooClient
from kazoo.exceptions import (
    BadVersionError,
    LockTimeout,
    NoAuthError,
    NoChildrenForEphemeralsError,
    NodeExistsError,
    NoNodeError,
    NotEmptyError,
    RolledBackError,
    RuntimeInconsistency,
)
from kazoo.protocol.states import EventType, KazooState, ZnodeStat
from kazoo.security import OPEN_ACL_UNSAFE, make_acl, make_digest_acl, make_digest_acl_credential

WAIT = 10.0  # bound on any one wait for an event
CHECK_LIMIT = 30.0  # bound on one whole check, should a wait inside kazoo hang
SUITE_LIMIT = 150.0  # past this, the remaining checks are reported failed, not run
SHORT_SESSION = 4.0  # real ZooKeeper's minimum with tickTime=2000 (2 ticks)

if len(sys.argv) != 2 or ":" not in sys.argv[1]:
    sys.exit("usage: kazoo_suite.py HOST:PORT")
HOSTS = sys.argv[1]
TARGET = (HOSTS.rsplit(":", 1)[0], int(HOSTS.rsplit(":", 1)[1]))
ROOT = "/kazoo-suite-" + uuid.uuid4().hex[:12]


# ---------------------------------------------------------------- helpers


def expect(cond, what):
    if not cond:
        raise AssertionError(what)


def eq(got, want, what):
    if got != want:
        raise AssertionError(f"{what}: got {got!r}, want {want!r}")


def raises(exc, fn, *args, **kwargs):
    try:
        fn(*args, **kwargs)
    except exc:
        return
    except Exception as e:  # a different error is a failure too, and worth naming
        raise AssertionError(f"{fn.__name__}{args}: raised {type(e).__name__}, want {exc.__name__}")
    raise AssertionError(f"{fn.__name__}{args}: no error, want {exc.__name__}")


def acquire(lock, what):
    """Blocking acquire of a kazoo lock-like recipe, bounded by WAIT."""
    try:
        ok = lock.acquire(timeout=WAIT)
    except LockTimeout:
        ok = False
    expect(ok, f"{what}: not acquired within {WAIT}s")


class Events:
    """A watch callback that queues what it receives, to be waited on with a bound."""

    def __init__(self):
        self.q = queue.Queue()

    def __call__(self, item):
        self.q.put(item)

    def next(self, what, timeout=WAIT):
        try:
            return self.q.get(timeout=timeout)
        except queue.Empty:
            raise AssertionError(f"no {what} within {timeout}s") from None

    def pending(self):
        return self.q.qsize()


def flush_watches(zk, path):
    """Returns once every notification zk's session was sent before now has been delivered.

    The server sends a session's notifications in order, and kazoo runs watch callbacks
    in order on one thread, so once a watch fired by a fresh write of our own has run,
    anything sent earlier has run too. This proves a watch did NOT fire without sleeping.
    """
    marker = Events()
    expect(zk.exists(path, watch=marker) is None, f"{path} exists already")
    zk.create(path)
    eq(marker.next("marker CREATED event").type, EventType.CREATED, "marker event")
    zk.delete(path)


def wait_children(zk, path, n):
    """Waits on child watches until path has at least n children; returns them."""
    deadline = time.monotonic() + WAIT
    while True:
        changed = threading.Event()
        kids = zk.get_children(path, watch=lambda _e: changed.set())
        if len(kids) >= n:
            return kids
        if not changed.wait(max(0.0, deadline - time.monotonic())):
            raise AssertionError(f"{path} has {len(kids)} children after {WAIT}s, want {n}")


def parallel(*fns, limit=3 * WAIT):
    """Runs fns in threads; re-raises the first error; fails if any is still running."""
    errors = []

    def run(fn):
        try:
            fn()
        except BaseException as e:
            errors.append(e)

    threads = [threading.Thread(target=run, args=(fn,), daemon=True) for fn in fns]
    for t in threads:
        t.start()
    deadline = time.monotonic() + limit
    for t in threads:
        t.join(max(0.0, deadline - time.monotonic()))
    if errors:
        raise errors[0]
    stuck = sum(t.is_alive() for t in threads)
    expect(stuck == 0, f"{stuck} of {len(threads)} threads still running after {limit}s")


class Proxy:
    """A loopback TCP relay in front of the server. Cutting it takes a client's connection
    away without the client closing its session, as a crash or a network fault would."""

    def __init__(self):
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.hosts = "127.0.0.1:%d" % self.listener.getsockname()[1]
        self.lock = threading.Lock()
        self.conns = []
        self.first_reply = b""  # the start of the server's first frame: the ConnectResponse
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while True:
            try:
                down, _ = self.listener.accept()
                up = socket.create_connection(TARGET, timeout=WAIT)
            except OSError:
                if self.listener.fileno() < 0:
                    return
                continue
            up.settimeout(None)
            with self.lock:
                self.conns += [down, up]
            for src, dst in ((down, up), (up, down)):
                threading.Thread(target=self._pump, args=(src, dst, src is up), daemon=True).start()

    def _pump(self, src, dst, from_server):
        try:
            while data := src.recv(65536):
                if from_server and len(self.first_reply) < 12:
                    self.first_reply += data
                dst.sendall(data)
        except OSError:
            pass
        for s in (src, dst):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def negotiated_timeout(self):
        """Session timeout in seconds the server granted: length, protocolVersion, timeOut."""
        expect(len(self.first_reply) >= 12, "no ConnectResponse seen through the proxy")
        return int.from_bytes(self.first_reply[8:12], "big", signed=True) / 1000.0

    def drop(self):
        """Cuts the current connections; new ones are still relayed."""
        with self.lock:
            conns, self.conns = self.conns, []
        for s in conns:
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            s.close()

    def close(self):
        """Cuts everything and refuses new connections."""
        try:
            self.listener.shutdown(socket.SHUT_RDWR)  # wakes the blocked accept()
        except OSError:
            pass
        self.listener.close()
        self.drop()


class Ctx:
    """What one check owns: its base path, its clients and proxies, all closed after it."""

    def __init__(self, base):
        self.base = base
        self.clients = []
        self.proxies = []

    def path(self, name):
        return f"{self.base}/{name}"

    def client(self, hosts=None, timeout=10.0, **kwargs):
        zk = KazooClient(hosts=hosts or HOSTS, timeout=timeout, **kwargs)
        self.clients.append(zk)
        zk.start(timeout=WAIT)
        return zk

    def proxy(self):
        p = Proxy()
        self.proxies.append(p)
        return p

    def close(self):
        for p in self.proxies:
            p.close()
        for zk in self.clients:
            try:
                zk.stop()
                zk.close()
            except Exception:
                pass


CHECKS = []


def check(name):
    def register(fn):
        CHECKS.append((name, fn))
        return fn

    return register


# ---------------------------------------------------------------- CRUD


@check("crud: create/get/set/exists/delete, stats and versions")
def _(c):
    zk = c.client()
    p = c.path("node")
    eq(zk.create(p, b"v1"), p, "create returns the path")
    data, st = zk.get(p)
    eq(data, b"v1", "get data")
    eq((st.version, st.dataLength, st.numChildren, st.ephemeralOwner), (0, 2, 0, 0), "stat after create")
    eq(st.czxid, st.mzxid, "czxid == mzxid before any set")
    st2 = zk.set(p, b"v22")
    eq((st2.version, st2.dataLength), (1, 3), "stat returned by set")
    expect(st2.mzxid > st.mzxid, "mzxid grows on set")
    eq(zk.set(p, b"v3", version=1).version, 2, "conditional set with the right version")
    eq(zk.exists(p).version, 2, "exists returns the stat")
    zk.delete(p, version=2)
    eq(zk.exists(p), None, "exists after delete")
    path, st3 = zk.create(p, b"x", include_data=True)
    eq((path, st3.version, st3.dataLength), (p, 0, 1), "create with include_data (create2)")
    zk.create(c.path("a/b/c"), b"deep", makepath=True)
    eq(zk.get(c.path("a/b/c"))[0], b"deep", "create with makepath")


@check("crud: get_children with and without include_data")
def _(c):
    zk = c.client()
    for kid in ("b", "a", "c"):
        zk.create(c.path(kid))
    eq(sorted(zk.get_children(c.base)), ["a", "b", "c"], "children")
    kids, st = zk.get_children(c.base, include_data=True)
    eq(sorted(kids), ["a", "b", "c"], "children with include_data")
    eq((st.numChildren, st.cversion), (3, 3), "parent stat from get_children2")
    eq(zk.get_children(c.path("a")), [], "a leaf has no children")


@check("crud: null data versus empty data")
def _(c):
    zk = c.client()
    zk.create(c.path("null"), None)
    zk.create(c.path("empty"), b"")
    data, st = zk.get(c.path("null"))
    eq((data, st.dataLength), (None, 0), "node created with null data")
    data, st = zk.get(c.path("empty"))
    eq((data, st.dataLength), (b"", 0), "node created with empty data")
    zk.set(c.path("empty"), None)
    eq(zk.get(c.path("empty"))[0], None, "set to null data")


@check("crud: sequential nodes count per parent")
def _(c):
    zk = c.client()
    names = [zk.create(c.path("n-"), sequence=True) for _ in range(3)]
    eq(names, [c.path("n-%010d" % i) for i in range(3)], "sequential names")
    zk.delete(names[0])
    eq(zk.exists(c.base).cversion, 4, "parent cversion counts creates and deletes")
    # the suffix counts creates only, so a delete does not advance it
    eq(zk.create(c.path("n-"), sequence=True), c.path("n-0000000003"), "counter after a delete")
    eq(zk.create(c.path("e-"), ephemeral=True, sequence=True), c.path("e-0000000004"), "ephemeral sequential")


@check("crud: ephemeral nodes belong to their session")
def _(c):
    owner, other = c.client(), c.client()
    p = c.path("eph")
    owner.create(p, b"e", ephemeral=True)
    eq(other.exists(p).ephemeralOwner, owner.client_id[0], "ephemeralOwner is the session id")
    raises(NoChildrenForEphemeralsError, owner.create, p + "/child")
    gone = Events()
    expect(other.exists(p, watch=gone), "ephemeral visible to another session")
    owner.stop()
    owner.close()
    eq(gone.next("DELETED event after the owner closed").type, EventType.DELETED, "event type")
    eq(other.exists(p), None, "ephemeral after its session closed")


# ---------------------------------------------------------------- errors


@check("errors: NoNode, NodeExists, BadVersion, NotEmpty")
def _(c):
    zk = c.client()
    missing = c.path("missing")
    raises(NoNodeError, zk.get, missing)
    raises(NoNodeError, zk.set, missing, b"x")
    raises(NoNodeError, zk.delete, missing)
    raises(NoNodeError, zk.get_children, missing)
    raises(NoNodeError, zk.create, missing + "/child")
    p = c.path("node")
    zk.create(p, b"x")
    raises(NodeExistsError, zk.create, p)
    raises(BadVersionError, zk.set, p, b"y", version=5)
    raises(BadVersionError, zk.delete, p, version=5)
    zk.create(p + "/child")
    raises(NotEmptyError, zk.delete, p)
    zk.delete(p, recursive=True)
    eq(zk.exists(p), None, "recursive delete")


# ---------------------------------------------------------------- watches


@check("watch: data watch fires once, on change and on delete")
def _(c):
    watcher, writer = c.client(), c.client()
    p = c.path("w")
    writer.create(p, b"0")
    w = Events()
    watcher.get(p, watch=w)
    writer.set(p, b"1")
    ev = w.next("CHANGED event")
    eq((ev.type, ev.path), (EventType.CHANGED, p), "event")
    writer.set(p, b"2")
    flush_watches(watcher, c.path("marker"))
    eq(w.pending(), 0, "events after the one-shot watch fired")
    watcher.get(p, watch=w)
    writer.delete(p)
    eq(w.next("DELETED event").type, EventType.DELETED, "event after delete")


@check("watch: child watch fires once")
def _(c):
    watcher, writer = c.client(), c.client()
    w = Events()
    eq(watcher.get_children(c.base, watch=w), [], "children")
    writer.create(c.path("k1"))
    ev = w.next("CHILD event")
    eq((ev.type, ev.path), (EventType.CHILD, c.base), "event")
    writer.create(c.path("k2"))
    flush_watches(watcher, c.path("marker"))
    eq(w.pending(), 0, "events after the one-shot watch fired")
    watcher.get_children(c.base, watch=w)
    writer.delete(c.path("k1"))
    eq(w.next("CHILD event on delete").type, EventType.CHILD, "event after child delete")


@check("watch: exists watch fires once on create, then on change")
def _(c):
    watcher, writer = c.client(), c.client()
    p = c.path("later")
    w = Events()
    eq(watcher.exists(p, watch=w), None, "exists before create")
    writer.create(p)
    ev = w.next("CREATED event")
    eq((ev.type, ev.path), (EventType.CREATED, p), "event")
    writer.set(p, b"x")
    flush_watches(watcher, c.path("marker"))
    eq(w.pending(), 0, "events after the one-shot watch fired")
    expect(watcher.exists(p, watch=w), "exists after create")
    writer.set(p, b"y")
    eq(w.next("CHANGED event").type, EventType.CHANGED, "exists watch on an existing node")


@check("watch: DataWatch and ChildrenWatch helpers")
def _(c):
    watcher, writer = c.client(), c.client()
    p = c.path("dw")
    seen = Events()
    watcher.DataWatch(p)(lambda data, stat: seen((data, stat.version if stat else None)))
    eq(seen.next("initial DataWatch call"), (None, None), "missing node")
    writer.create(p, b"one")
    eq(seen.next("DataWatch call on create"), (b"one", 0), "after create")
    writer.set(p, b"two")
    eq(seen.next("DataWatch call on set"), (b"two", 1), "after set")
    writer.delete(p)
    eq(seen.next("DataWatch call on delete"), (None, None), "after delete")

    kids = Events()
    watcher.ChildrenWatch(c.base)(lambda children: kids(sorted(children)))
    eq(kids.next("initial ChildrenWatch call"), [], "initial children")
    writer.create(c.path("x"))
    eq(kids.next("ChildrenWatch call on create"), ["x"], "after create")
    writer.create(c.path("y"))
    eq(kids.next("ChildrenWatch call on create"), ["x", "y"], "after second create")
    writer.delete(c.path("x"))
    eq(kids.next("ChildrenWatch call on delete"), ["y"], "after delete")


# ---------------------------------------------------------------- transactions


@check("transaction: all ops commit together")
def _(c):
    zk = c.client()
    a, b = c.path("a"), c.path("b")
    t = zk.transaction()
    t.create(a, b"a")
    t.create(b, b"b")
    t.set_data(a, b"aa")
    t.check(b, 0)
    t.delete(b)
    res = t.commit()
    eq(len(res), 5, f"result count of {res!r}")
    eq(res[:2], [a, b], "create results")
    expect(isinstance(res[2], ZnodeStat) and res[2].version == 1, f"set_data result {res[2]!r}")
    eq(res[3:], [True, True], "check and delete results")
    eq(zk.get(a)[0], b"aa", "data after commit")
    eq(zk.exists(b), None, "node created and deleted in one transaction")


@check("transaction: a failing op rolls back the others")
def _(c):
    zk = c.client()
    a = c.path("a")
    zk.create(a, b"orig")
    t = zk.transaction()
    t.create(c.path("new1"))
    t.set_data(a, b"changed", version=99)
    t.create(c.path("new2"))
    res = t.commit()
    eq([type(r) for r in res], [RolledBackError, BadVersionError, RuntimeInconsistency], "result types")
    eq(zk.exists(c.path("new1")), None, "op before the failure rolled back")
    eq(zk.exists(c.path("new2")), None, "op after the failure not applied")
    data, st = zk.get(a)
    eq((data, st.version), (b"orig", 0), "failed op not applied")
    t = zk.transaction()
    t.create(a)
    t.delete(a)
    eq([type(r) for r in t.commit()], [NodeExistsError, RuntimeInconsistency], "failure in the first op")
    eq(zk.get(a)[0], b"orig", "node after the second failed transaction")


# ---------------------------------------------------------------- ACLs


@check("acl: digest auth, NoAuth for others, get_acls masking")
def _(c):
    owner = c.client(auth_data=[("digest", "alice:secret")])
    other = c.client()
    mine = make_digest_acl("alice", "secret", all=True)
    private, shared = c.path("private"), c.path("shared")
    owner.create(private, b"p", acl=[mine])
    owner.create(shared, b"s", acl=[mine, make_acl("world", "anyone", read=True)])
    eq(owner.get(private)[0], b"p", "owner reads its node")
    raises(NoAuthError, other.get, private)
    raises(NoAuthError, other.set, private, b"x")
    raises(NoAuthError, other.get_acls, private)
    eq(other.get(shared)[0], b"s", "world-readable node")
    raises(NoAuthError, other.set, shared, b"x")
    raises(NoAuthError, other.create, shared + "/kid")

    acls, _st = owner.get_acls(shared)
    eq(sorted(a.id.id for a in acls), sorted([mine.id.id, "anyone"]), "ids seen by the owner")
    acls, _st = other.get_acls(shared)
    eq(sorted(a.id.id for a in acls), ["alice:x", "anyone"], "digest masked without ADMIN")
    eq(mine.id.id, make_digest_acl_credential("alice", "secret"), "digest id format")

    wrong = c.client(auth_data=[("digest", "alice:wrong")])
    raises(NoAuthError, wrong.get, private)
    other.add_auth("digest", "alice:secret")
    other.set(private, b"now allowed")
    eq(owner.get(private)[0], b"now allowed", "write after add_auth")
    st = owner.set_acls(shared, OPEN_ACL_UNSAFE, version=0)
    eq(st.aversion, 1, "aversion after set_acls")
    raises(BadVersionError, owner.set_acls, shared, OPEN_ACL_UNSAFE, version=0)
    wrong.set(shared, b"open now")


# ---------------------------------------------------------------- sessions


@check("session: a dropped connection resumes the same session")
def _(c):
    proxy = c.proxy()
    zk = c.client(hosts=proxy.hosts)
    observer = c.client()
    p = c.path("eph")
    zk.create(p, ephemeral=True)
    sid = zk.client_id[0]
    states = Events()
    zk.add_listener(states)
    proxy.drop()
    eq(states.next("SUSPENDED after the drop"), KazooState.SUSPENDED, "state")
    eq(states.next("CONNECTED after reconnecting"), KazooState.CONNECTED, "state")
    eq(zk.client_id[0], sid, "session id after reconnecting")
    eq(observer.exists(p).ephemeralOwner, sid, "the ephemeral survived")


@check("session: expiry after a lost connection deletes ephemerals")
def _(c):
    # The owner talks through a proxy that is then shut: its session is neither closed
    # nor resumed, so only the server's session timeout can remove the ephemeral.
    proxy = c.proxy()
    owner = c.client(hosts=proxy.hosts, timeout=SHORT_SESSION)
    observer = c.client()
    p = c.path("eph")
    owner.create(p, ephemeral=True)
    negotiated = proxy.negotiated_timeout()  # kazoo keeps only the timeout it asked for
    states = Events()
    owner.add_listener(states)
    gone = Events()
    expect(observer.exists(p, watch=gone), "ephemeral visible before the cut")
    cut = time.monotonic()
    proxy.close()
    eq(states.next("SUSPENDED after the cut"), KazooState.SUSPENDED, "owner state")
    expect(observer.exists(p), "ephemeral removed at once on disconnect, before any timeout")
    ev = gone.next("DELETED event from session expiry", timeout=2 * negotiated + WAIT)
    elapsed = time.monotonic() - cut
    eq(ev.type, EventType.DELETED, "event type")
    expect(elapsed > negotiated / 3, f"expired after {elapsed:.1f}s, under a third of {negotiated}s")
    return f"negotiated {negotiated:g}s, ephemeral gone {elapsed:.1f}s after the cut"


# ---------------------------------------------------------------- recipes


@check("recipe: Lock gives mutual exclusion (4 clients x 5 rounds)")
def _(c):
    zk = c.client()
    counter = c.path("counter")
    zk.create(counter, b"0")
    guard, inside, overlaps = threading.Lock(), [0], []

    def worker(client, ident):
        lock = client.Lock(c.path("lock"), ident)
        for _ in range(5):
            acquire(lock, ident)
            try:
                with guard:
                    inside[0] += 1
                    if inside[0] > 1:
                        overlaps.append(ident)
                # read-modify-write: overlapping holders would lose updates
                value = int(client.get(counter)[0])
                client.set(counter, b"%d" % (value + 1))
                with guard:
                    inside[0] -= 1
            finally:
                lock.release()

    clients = [c.client() for _ in range(4)]
    parallel(*[lambda cl=cl, i=i: worker(cl, f"w{i}") for i, cl in enumerate(clients)])
    eq(overlaps, [], "holders that found another holder inside")
    eq(int(zk.get(counter)[0]), 20, "shared counter (lost updates mean no exclusion)")


@check("recipe: ReadLock/WriteLock share reads, exclude writes")
def _(c):
    p = c.path("rw")
    a, b, w = c.client(), c.client(), c.client()
    r1, r2, wl = a.ReadLock(p, "r1"), b.ReadLock(p, "r2"), w.WriteLock(p, "w")
    acquire(r1, "first reader")
    acquire(r2, "second reader alongside the first")
    eq(wl.acquire(blocking=False), False, "writer acquired while readers hold")
    r1.release()
    r2.release()
    acquire(wl, "writer after readers left")
    eq(r1.acquire(blocking=False), False, "reader acquired while the writer holds")
    wl.release()

    guard, state, bad = threading.Lock(), {"r": 0, "w": 0}, []

    def worker(lock, kind):
        for _ in range(3):
            acquire(lock, kind)
            try:
                with guard:
                    state[kind] += 1
                    if state["w"] > 1 or (state["w"] and state["r"]):
                        bad.append(dict(state))
                lock.client.sync(p)  # a round trip while holding widens the window
                with guard:
                    state[kind] -= 1
            finally:
                lock.release()

    clients = [c.client() for _ in range(4)]
    locks = [(cl.ReadLock(p, f"r{i}"), "r") if i % 2 else (cl.WriteLock(p, f"w{i}"), "w") for i, cl in enumerate(clients)]
    parallel(*[lambda lk=lk, k=k: worker(lk, k) for lk, k in locks])
    eq(bad, [], "states with a writer alongside anyone")


@check("recipe: Semaphore respects max_leases")
def _(c):
    p = c.path("sem")
    clients = [c.client() for _ in range(3)]
    sems = [cl.Semaphore(p, identifier=f"s{i}", max_leases=2) for i, cl in enumerate(clients)]
    acquire(sems[0], "first lease")
    acquire(sems[1], "second lease")
    eq(sems[2].acquire(blocking=False), False, "third lease with max_leases=2")
    eq(sorted(sems[0].lease_holders()), ["s0", "s1"], "lease holders")
    sems[0].release()
    acquire(sems[2], "lease freed by a release")
    sems[1].release()
    sems[2].release()

    guard, holders, peak = threading.Lock(), [0], [0]

    def worker(sem):
        for _ in range(3):
            acquire(sem, sem.data.decode())
            try:
                with guard:
                    holders[0] += 1
                    peak[0] = max(peak[0], holders[0])
                sem.client.sync(p)
                with guard:
                    holders[0] -= 1
            finally:
                sem.release()

    more = [c.client() for _ in range(5)]
    parallel(*[lambda s=cl.Semaphore(p, identifier=f"t{i}", max_leases=2): worker(s) for i, cl in enumerate(more)])
    expect(1 <= peak[0] <= 2, f"peak of {peak[0]} holders with max_leases=2")


@check("recipe: Election has exactly one leader at a time")
def _(c):
    p = c.path("election")
    clients = [c.client() for _ in range(3)]
    elections = [cl.Election(p, f"e{i}") for i, cl in enumerate(clients)]
    led = [threading.Event() for _ in range(3)]
    resign = [threading.Event() for _ in range(3)]
    guard, leading, order, peak = threading.Lock(), [0], [], [0]

    def lead(i):
        with guard:
            leading[0] += 1
            peak[0] = max(peak[0], leading[0])
            order.append(i)
        led[i].set()
        resign[i].wait(WAIT)
        with guard:
            leading[0] -= 1

    threads = []
    for i, e in enumerate(elections):
        t = threading.Thread(target=e.run, args=(lead, i), daemon=True)
        t.start()
        threads.append(t)
        if i == 0:
            expect(led[0].wait(WAIT), "first contender not elected")
        wait_children(clients[0], p, i + 1)  # contenders join in a known order
    eq(elections[2].contenders(), ["e0", "e1", "e2"], "contenders, leader first")
    for i in range(3):
        expect(led[i].wait(WAIT), f"e{i} never elected")
        eq([e.is_set() for e in led[i + 1 :]], [False] * (2 - i), f"others elected while e{i} leads")
        resign[i].set()
    for t in threads:
        t.join(WAIT)
        expect(not t.is_alive(), "an election thread did not finish")
    eq((order, peak[0]), ([0, 1, 2], 1), "leadership order and peak leaders")


@check("recipe: Barrier holds waiters until removed")
def _(c):
    p = c.path("barrier")
    zk = c.client()
    barrier = zk.Barrier(p)
    barrier.create()
    eq(zk.Barrier(p).wait(timeout=0.2), False, "wait on a standing barrier")
    removed, passed = threading.Event(), []
    waiters = [c.client() for _ in range(3)]
    armed = Events()

    def waiter(cl):
        # Barrier.wait() arms its watch with exists(); report when that has returned,
        # so the barrier is removed only under waiters that are really waiting.
        exists = cl.exists
        cl.exists = lambda *a, **kw: (exists(*a, **kw), armed(cl))[0]
        ok = cl.Barrier(p).wait(timeout=WAIT)
        passed.append((ok, removed.is_set()))

    threads = [threading.Thread(target=waiter, args=(cl,), daemon=True) for cl in waiters]
    for t in threads:
        t.start()
    for _ in waiters:
        armed.next("a waiter arming its watch")
    removed.set()
    barrier.remove()
    for t in threads:
        t.join(WAIT)
    eq(sorted(passed), [(True, True)] * 3, "(passed, after removal) per waiter")


@check("recipe: DoubleBarrier enters together, leaves together (3 clients)")
def _(c):
    p = c.path("double")
    guard, arrived, left, seen = threading.Lock(), [0], [0], []

    def member(cl):
        db = cl.DoubleBarrier(p, 3)
        with guard:
            arrived[0] += 1
        db.enter()
        expect(db.participating, "enter failed")
        with guard:
            seen.append(("in", arrived[0]))
            left[0] += 1
        db.leave()
        with guard:
            seen.append(("out", left[0]))

    clients = [c.client() for _ in range(3)]
    parallel(*[lambda cl=cl: member(cl) for cl in clients])
    eq(sorted(seen), [("in", 3)] * 3 + [("out", 3)] * 3, "members counted when passing each barrier")


# ---------------------------------------------------------------- runner


def run_check(admin, name, fn, index):
    ctx = Ctx(f"{ROOT}/c{index:02d}")
    outcome = {}

    def body():
        try:
            admin.create(ctx.base)
            outcome["detail"] = fn(ctx)
        except BaseException as e:
            outcome["error"] = e
            outcome["trace"] = traceback.format_exc()

    start = time.monotonic()
    t = threading.Thread(target=body, daemon=True)
    t.start()
    t.join(CHECK_LIMIT)
    took = time.monotonic() - start
    ctx.close()  # also unblocks a check stuck inside kazoo
    if t.is_alive():
        print(f"FAIL {name}: still running after {CHECK_LIMIT:.0f}s ({took:.1f}s)", flush=True)
        return False
    err = outcome.get("error")
    if err is None:
        detail = f"; {outcome['detail']}" if outcome.get("detail") else ""
        print(f"ok   {name} ({took:.2f}s{detail})", flush=True)
        return True
    print(f"FAIL {name}: {type(err).__name__}: {err} ({took:.2f}s)", flush=True)
    if not isinstance(err, AssertionError):
        print("     " + outcome["trace"].rstrip().replace("\n", "\n     "), flush=True)
    return False


def main():
    level = os.environ.get("KAZOO_SUITE_LOG")
    # kazoo logs every dropped connection; the session checks drop some on purpose
    logging.basicConfig(level=getattr(logging, level.upper()) if level else logging.CRITICAL + 1)
    started = time.monotonic()
    # with the ACL check's credentials, so cleanup can list what that check locked away
    admin = KazooClient(hosts=HOSTS, timeout=10.0, auth_data=[("digest", "alice:secret")])
    try:
        admin.start(timeout=WAIT)
        admin.create(ROOT)
    except Exception as e:
        print(f"FAIL connect to {HOSTS} and create {ROOT}: {type(e).__name__}: {e}")
        print("kazoo: 0 passed, 1 failed")
        admin.stop()
        return 1
    print(f"kazoo suite against {HOSTS} under {ROOT}", flush=True)
    passed = failed = 0
    for index, (name, fn) in enumerate(CHECKS):
        if time.monotonic() - started > SUITE_LIMIT:
            print(f"FAIL {name}: not run, the suite is past {SUITE_LIMIT:.0f}s", flush=True)
            failed += 1
        elif run_check(admin, name, fn, index):
            passed += 1
        else:
            failed += 1
    try:
        admin.delete(ROOT, recursive=True)
        eq(admin.exists(ROOT), None, "root after recursive delete")
        passed += 1
        print("ok   cleanup: recursive delete of the suite's tree")
    except Exception as e:
        failed += 1
        print(f"FAIL cleanup: recursive delete of {ROOT}: {type(e).__name__}: {e}")
    admin.stop()
    admin.close()
    print(f"(took {time.monotonic() - started:.1f}s)")
    print(f"kazoo: {passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
