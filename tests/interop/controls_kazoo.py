#!/usr/bin/env python3
"""kazoo against Shepherd's test controls (docs/test-controls.md): a session expired on the
server, not faked in the client.

    SHEPHERD_CONTROLS_TOKEN=TOKEN python3 tests/interop/controls_kazoo.py HOST:PORT http://HOST:PORT

The first argument is `shepherd serve`'s client address, the second its test-controls URL; the
token comes from the environment so that it stays out of the process list. Cases:

* expiry: a client holds a kazoo Lock and expires its own session through
  `POST /sessions/{id}/expire`; it sees KazooState.LOST with the session-expired state
  (KeeperState.EXPIRED_SESSION), and a second client waiting on the same Lock takes it over.
* close: the connection is cut through `POST /sessions/{id}/close`; the client sees SUSPENDED,
  then CONNECTED with the same session, and its ephemeral node is still there.

Every wait is bounded and waits on an event (a state change, a lock acquired), never a sleep.
Prints `controls kazoo: N passed`; exits 1 on the first failure.
"""

import json
import os
import queue
import sys
import threading
import urllib.error
import urllib.request
import uuid

from kazoo.client import KazooClient
from kazoo.protocol.states import KazooState, KeeperState

WAIT = 20  # seconds: the longest any single wait may take
BRIEF = 0.3  # seconds: how long "the contender stays out" is watched


class Controls:
    """The test controls of one server, over HTTP with its bearer token."""

    def __init__(self, url, token):
        self.url = url.rstrip("/")
        self.token = token

    def call(self, method, path, body=None):
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(self.url + path, data=data, method=method)
        request.add_header("Authorization", "Bearer " + self.token)
        try:
            with urllib.request.urlopen(request, timeout=10) as response:
                return response.status, json.load(response)
        except urllib.error.HTTPError as error:
            return error.code, json.load(error)


def check(condition, what):
    if not condition:
        raise AssertionError(what)


def client(hosts):
    """A started client whose state changes, with kazoo's KeeperState at that moment, go to a
    queue."""
    zk = KazooClient(hosts=hosts, timeout=10)
    states = queue.Queue()
    zk.add_listener(lambda state: states.put((state, zk.client_state)))
    zk.start(timeout=WAIT)
    return zk, states


def next_state(states, wanted, what):
    """The next (state, keeper_state) whose state is `wanted`, others dropped, within WAIT."""
    while True:
        try:
            state = states.get(timeout=WAIT)
        except queue.Empty:
            raise AssertionError("timed out after %d s waiting for %s" % (WAIT, what))
        if state[0] == wanted:
            return state


def session_hex(zk):
    return "0x%x" % zk.client_id[0]


def expiry(hosts, controls, base):
    """A Lock holder's session is expired on the server; the contender takes the lock over."""
    holder, holder_states = client(hosts)
    contender, _ = client(hosts)
    try:
        path = base + "/lock"
        mine = holder.Lock(path, "holder")
        check(mine.acquire(timeout=WAIT), "the holder acquires the lock")
        theirs = contender.Lock(path, "contender")
        acquired = queue.Queue()
        waiter = threading.Thread(
            target=lambda: acquired.put(theirs.acquire(timeout=WAIT)), daemon=True
        )
        waiter.start()
        try:
            acquired.get(timeout=BRIEF)
            raise AssertionError("the contender took a lock that is held")
        except queue.Empty:
            pass

        # kazoo's client_id[0] is the session id as a (decimal) int: the controls take both.
        session = holder.client_id[0]
        hex_id = session_hex(holder)
        status, listed = controls.call("GET", "/sessions/%d" % session)
        check(status == 200, "GET /sessions/%d: %s %s" % (session, status, listed))
        check(listed["id"] == hex_id, "the session is listed in hex: %s" % listed)
        status, body = controls.call("POST", "/sessions/%s/expire" % hex_id)
        check(status == 200, "expire: %s %s" % (status, body))

        lost, keeper_state = next_state(holder_states, KazooState.LOST, "KazooState.LOST")
        check(
            keeper_state == KeeperState.EXPIRED_SESSION,
            "the holder's session state at LOST is EXPIRED_SESSION, not %s" % keeper_state,
        )
        try:
            took_over = acquired.get(timeout=WAIT)
        except queue.Empty:
            raise AssertionError("the contender did not take the lock over within %d s" % WAIT)
        check(took_over is True, "the contender holds the lock")
        waiter.join(timeout=WAIT)
        contenders = contender.get_children(path)
        check(len(contenders) == 1, "one lock node left, the contender's: %s" % contenders)
        status, body = controls.call("GET", "/sessions/%s" % hex_id)
        check(status == 404, "the expired session is gone: %s %s" % (status, body))
        theirs.release()
    finally:
        holder.stop()
        contender.stop()
        holder.close()
        contender.close()


def close(hosts, controls, base):
    """A cut connection: the client suspends, comes back with the same session."""
    zk, states = client(hosts)
    try:
        node = base + "/ephemeral"
        zk.create(node, b"", ephemeral=True, makepath=True)
        session = zk.client_id[0]
        status, body = controls.call("POST", "/sessions/%s/close" % session_hex(zk))
        check(status == 200, "close: %s %s" % (status, body))
        next_state(states, KazooState.SUSPENDED, "KazooState.SUSPENDED")
        next_state(states, KazooState.CONNECTED, "KazooState.CONNECTED again")
        check(zk.client_id[0] == session, "the same session after the cut")
        stat = zk.exists(node)
        check(stat is not None and stat.owner_session_id == session, "the ephemeral node lives on")
    finally:
        zk.stop()
        zk.close()


def main():
    if len(sys.argv) != 3 or not os.environ.get("SHEPHERD_CONTROLS_TOKEN"):
        print(
            "usage: SHEPHERD_CONTROLS_TOKEN=TOKEN %s HOST:PORT CONTROLS_URL" % sys.argv[0],
            file=sys.stderr,
        )
        return 2
    hosts, url = sys.argv[1], sys.argv[2]
    controls = Controls(url, os.environ["SHEPHERD_CONTROLS_TOKEN"])
    base = "/controls-kazoo/" + uuid.uuid4().hex[:10]
    passed = 0
    for name, case in [("expiry", expiry), ("close", close)]:
        try:
            case(hosts, controls, base + "/" + name)
        except Exception as error:  # noqa: BLE001 - any failure fails the case, with its reason
            print("controls kazoo: %s FAILED: %r" % (name, error), file=sys.stderr)
            print("controls kazoo: %d passed" % passed)
            return 1
        print("controls kazoo: %s ok" % name)
        passed += 1
    print("controls kazoo: %d passed" % passed)
    return 0


if __name__ == "__main__":
    sys.exit(main())
