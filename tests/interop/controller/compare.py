"""ZooKeeper 3.8's ControllerService and Shepherd's /command/* URLs, side by side.

    python3 compare.py ZK_CLIENT ZK_CONTROLLER_URL ZK_PID SH_CLIENT SH_CONTROLLER_URL SH_PID

Sends each command to both servers and compares, per command, the HTTP status, the content
type, the body (the command echoed for a 200; for a 404, an error page naming the URI), and
what a kazoo client of that server sees (its connection cut and resumed, its session lost, a
request failed, delayed or never answered, the server gone). Prints one row per command and a
closing line `controller: N passed, M failed`; exits 1 if any row differs.

Run by .ci/controller.sh inside a network namespace of its own (ZooKeeper's listener binds the
wildcard address). Every wait is bounded.
"""

import logging
import os
import sys
import threading
import time
import urllib.error
import urllib.request

from kazoo.client import KazooClient, KazooState
from kazoo.handlers.threading import KazooTimeoutError

WAIT = 30  # seconds: the bound on every wait for an event
DELAY_MS = 1500  # adddelay's parameter; a delayed reply takes at least this long


def http(base, path):
    """(status, content type, body) of GET base/path."""
    try:
        with urllib.request.urlopen(base + "/" + path, timeout=WAIT) as response:
            return response.status, response.headers.get("Content-Type"), response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.headers.get("Content-Type"), error.read().decode("latin-1")


def answer(base, path):
    """The answer, with a 404's Jetty page reduced to what it says (its version line aside)."""
    status, content_type, body = http(base, path)
    if status == 404:
        named = "<td>/%s</td>" % path in body and "Error 404 Not Found" in body
        body = "error page for /%s" % path if named else body
    return "%s %s %r" % (status, content_type, body)


class Watched:
    """A kazoo client and the states it went through, with events to wait on."""

    def __init__(self, hosts):
        self.states = []
        self.changed = threading.Condition()
        self.client = KazooClient(hosts=hosts, timeout=10)
        self.client.add_listener(self._seen)
        self.client.start(timeout=WAIT)
        self.session = self.client.client_id[0]

    def _seen(self, state):
        with self.changed:
            self.states.append(state)
            self.changed.notify_all()

    def wait_for(self, wanted, after=0):
        """Whether `wanted` was seen (after the first `after` states) within WAIT."""
        with self.changed:
            return self.changed.wait_for(lambda: wanted in self.states[after:], timeout=WAIT)

    def hex(self):
        return "0x%x" % self.session

    def stop(self):
        """Stops the client; bounded, since a withheld reply can hold its close forever."""
        done = threading.Thread(target=self._stop, daemon=True)
        done.start()
        done.join(WAIT)

    def _stop(self):
        try:
            self.client.stop()
            self.client.close()
        except Exception:  # noqa: BLE001 - the session may be gone; stopping is best effort
            pass


def get_outcome(client):
    """What a getData of / came to: "ok", or the exception's class name."""
    try:
        client.get("/")
        return "ok"
    except Exception as error:  # noqa: BLE001 - the outcome is the observation
        return type(error).__name__


def resumed(watched):
    """The connection was cut and came back on the same session."""
    cut = watched.wait_for(KazooState.SUSPENDED)
    back = cut and watched.wait_for(KazooState.CONNECTED, after=watched.states.index(KazooState.SUSPENDED))
    same = watched.client.client_id is not None and watched.client.client_id[0] == watched.session
    return "cut and resumed, same session" if back and same else "states %s" % watched.states


# Each case: (name, a function of (hosts, base, pid) returning the observation).


def simple(path):
    """A command whose effect is nothing a client notices: the answer, and a getData after."""

    def run(hosts, base, _pid):
        watched = Watched(hosts)
        try:
            got = answer(base, path)
            return "%s; client: %s, states %s" % (got, get_outcome(watched.client), watched.states)
        finally:
            watched.stop()

    return run


def close_own(hosts, base, _pid):
    watched, other = Watched(hosts), Watched(hosts)
    try:
        got = answer(base, "command/closeconnection/" + watched.hex())
        got = got.replace(watched.hex(), "SESSION")  # the ids differ; the echo must not
        return "%s; client: %s; other: states %s" % (got, resumed(watched), other.states)
    finally:
        watched.stop()
        other.stop()


def close_all(hosts, base, _pid):
    one, two = Watched(hosts), Watched(hosts)
    try:
        got = answer(base, "command/CloseConnection")
        return "%s; clients: %s / %s" % (got, resumed(one), resumed(two))
    finally:
        one.stop()
        two.stop()


def expire_own(hosts, base, _pid):
    watched, other = Watched(hosts), Watched(hosts)
    try:
        got = answer(base, "command/expiresession/%d" % watched.session)
        got = got.replace(str(watched.session), "SESSION")
        lost = watched.wait_for(KazooState.LOST)
        return "%s; client: %s; other: %s" % (
            got,
            "session lost" if lost else "states %s" % watched.states,
            get_outcome(other.client),
        )
    finally:
        watched.stop()
        other.stop()


def expire_all(hosts, base, _pid):
    one, two = Watched(hosts), Watched(hosts)
    try:
        got = answer(base, "command/expiresession")
        lost = [w.wait_for(KazooState.LOST) for w in (one, two)]
        return "%s; both sessions lost: %s" % (got, all(lost))
    finally:
        one.stop()
        two.stop()


def add_delay(hosts, base, _pid):
    watched = Watched(hosts)
    try:
        got = answer(base, "command/adddelay/%d" % DELAY_MS)
        started = time.monotonic()
        outcome = get_outcome(watched.client)
        delayed = time.monotonic() - started >= DELAY_MS / 1000
        reset = answer(base, "command/reset")
        started = time.monotonic()
        after = get_outcome(watched.client)
        prompt = time.monotonic() - started < DELAY_MS / 1000
        return "%s; getData %s %s; reset %s; then %s %s" % (
            got,
            outcome,
            "delayed" if delayed else "NOT delayed",
            reset,
            after,
            "prompt" if prompt else "still delayed",
        )
    finally:
        watched.stop()


def fail_requests(count):
    def run(hosts, base, _pid):
        watched = Watched(hosts)
        try:
            got = answer(base, "command/failrequests" + ("/%d" % count if count else ""))
            outcomes = [get_outcome(watched.client) for _ in range(count or 2)]
            reset = answer(base, "command/reset")
            return "%s; getData: %s; reset %s; then %s" % (
                got,
                ", ".join(outcomes),
                reset,
                get_outcome(watched.client),
            )
        finally:
            watched.stop()

    return run


def no_response(hosts, base, _pid):
    watched, other = Watched(hosts), Watched(hosts)
    path = "/controller-noresponse-%d" % watched.session
    try:
        got = answer(base, "command/noresponse/1")
        pending = watched.client.create_async(path)
        try:
            pending.get(timeout=2)
            reply = "answered"
        except KazooTimeoutError:
            reply = "no reply within 2 s"
        except Exception as error:  # noqa: BLE001 - the outcome is the observation
            reply = type(error).__name__
        applied = other.client.exists(path) is not None
        reset = answer(base, "command/reset")
        return "%s; create: %s, %s" % (got, reply, "applied" if applied else "NOT applied") + (
            "; reset %s" % reset
        )
    finally:
        watched.stop()
        try:
            other.client.delete(path)
        except Exception:  # noqa: BLE001 - cleanup only
            pass
        other.stop()


def reject_connections(hosts, base, _pid):
    got = answer(base, "command/rejectconnections")
    try:
        late = Watched(hosts)
        late.stop()
        return "%s; a new client connects" % got
    except Exception as error:  # noqa: BLE001 - the outcome is the observation
        return "%s; a new client: %s" % (got, type(error).__name__)


def shutdown(hosts, base, pid):
    watched = Watched(hosts)
    try:
        got = answer(base, "command/shutdown")
        cut = watched.wait_for(KazooState.SUSPENDED)
        deadline = time.monotonic() + WAIT
        gone = False
        while time.monotonic() < deadline:
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                gone = True
                break
            time.sleep(0.1)
        return "%s; client %s; process %s" % (
            got,
            "disconnected" if cut else "still connected",
            "exited" if gone else "still running",
        )
    finally:
        watched.stop()


CASES = [
    ("ping", simple("command/ping")),
    ("PING (upper case)", simple("command/PING")),
    ("ping/IGNORED (parameter ignored)", simple("command/ping/IGNORED")),
    ("unknown action", simple("command/nope")),
    ("no action", simple("command")),
    ("closeconnection/SESSION", close_own),
    ("closeconnection (all)", close_all),
    ("closeconnection/unknown session", simple("command/closeconnection/0x99")),
    ("closeconnection/bad id", simple("command/closeconnection/zz")),
    ("closeconnection/ (empty)", simple("command/closeconnection/")),
    ("expiresession/SESSION", expire_own),
    ("expiresession (all)", expire_all),
    ("expiresession/unknown session", simple("command/expiresession/0x99")),
    ("expiresession/bad id", simple("command/expiresession/zz")),
    ("adddelay/MS then reset", add_delay),
    ("adddelay/negative", simple("command/adddelay/-5")),
    ("failrequests/1 then reset", fail_requests(1)),
    ("failrequests (all) then reset", fail_requests(0)),
    ("failrequests/bad count", simple("command/failrequests/x")),
    ("noresponse/1 then reset", no_response),
    ("reset", simple("command/reset")),
    ("rejectconnections", reject_connections),
    ("electnewleader", simple("command/electnewleader")),
    ("shutdown", shutdown),
]


def main():
    # The clients' own complaints (xids out of order after a withheld reply, refused
    # reconnections after shutdown) are the effects observed, not news: keep them off the log.
    logging.basicConfig(level=logging.CRITICAL)
    threading.excepthook = lambda args: None
    if len(sys.argv) != 7:
        print(__doc__, file=sys.stderr)
        return 2
    zk = (sys.argv[1], sys.argv[2], int(sys.argv[3]))
    sh = (sys.argv[4], sys.argv[5], int(sys.argv[6]))
    passed = failed = 0
    for name, case in CASES:
        seen = []
        for hosts, base, pid in (zk, sh):
            try:
                seen.append(case(hosts, base, pid))
            except Exception as error:  # noqa: BLE001 - a broken case is a failed row
                seen.append("raised %s: %s" % (type(error).__name__, error))
        same = seen[0] == seen[1]
        passed, failed = passed + same, failed + (not same)
        print("%-6s %s" % ("same" if same else "DIFF", name))
        print("       zookeeper: %s" % seen[0])
        if not same:
            print("       shepherd:  %s" % seen[1])
        sys.stdout.flush()
    print("controller: %d passed, %d failed" % (passed, failed))
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
