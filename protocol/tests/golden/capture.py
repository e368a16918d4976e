#!/usr/bin/env python3
"""Capture golden ZooKeeper wire traffic as `.frames` fixtures.

The script starts a private ZooKeeper 3.8 server (Debian's
/usr/share/java/zookeeper.jar) in a temporary directory on a free loopback
port, puts a small recording TCP proxy in front of it, and drives several
clients through the proxy: kazoo, hand-written raw-socket frames and the Java
client via zkCli.sh. Every frame that crosses the proxy is written, with its
4-byte length prefix, to `<scenario>.frames` next to this file. The server and
every proxy thread are stopped before the script exits, and a watchdog ends the
whole run if it exceeds its time budget.

Regenerate all fixtures
-----------------------
    apt-get install -y zookeeper zookeeper-bin   # Java server + zkCli.sh
    pip install kazoo                             # the only non-stdlib module
    python3 protocol/tests/golden/capture.py      # from the workspace root

Options: `--out DIR` writes the fixtures elsewhere; `--only NAME [NAME ...]`
runs only the named scenarios; `--keep-tmp` keeps the server's temp dir (logs)
for debugging. It needs Python 3.11, java on PATH, and loopback only. The run
takes about 25 s (a hard budget of RUN_BUDGET_S stops it otherwise) and exits
non-zero if a scenario fails or a fixture does not pass the built-in format
check. Session ids, passwords, zxids and timestamps differ on each run, and so
may the number of client pings; the frame layouts do not.

File format (one file per scenario, UTF-8)
------------------------------------------
Lines starting with `#` are comments. Every other line is

    <dir> <kind> <op> <hex>

dir   `c2s` or `s2c`
kind  `connect` (ConnectRequest / ConnectResponse, the first frame of each
      direction), `request`, `reply`, or `event` (xid -1 notification)
op    decimal opcode: the header's type for a request, the opcode of the
      matching request for a reply (pings: 11), `-` for connect and event
hex   lowercase hex of the whole frame including its length prefix

Frames are grouped per TCP connection, each group headed by a
`# connection N: ...` comment, in the order the proxy saw them. Four-letter
words never go through the proxy's recorder.
"""

from __future__ import annotations

import argparse
import collections
import os
import re
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
ZK_JAR = "/usr/share/java/zookeeper.jar"
ZK_CP_EXTRA = ["/usr/share/java/slf4j-log4j12.jar", "/usr/share/java/log4j-1.2.jar"]
ZKCLI = "/usr/share/zookeeper/bin/zkCli.sh"

# Whole run budget; the watchdog kills the server and exits past it, so a
# wedged client can never leave the script (or a JVM) running.
RUN_BUDGET_S = 420
TICK_MS = 2000

# Every command the 3.8 server recognises as a four-letter word. Connections
# that open with one of these are passed through but never recorded.
FOUR_LETTER_WORDS = {
    w.encode()
    for w in (
        "conf cons crst dirs dump envi gtmk hash isro mntr ruok "
        "srst srvr stat stmk wchc wchp wchs"
    ).split()
}
FOUR_LETTER_WORDS.add(b"\xff\xf4\xff\xfd")  # telnet "close"

MAX_FRAME = 0xFFFFF  # jute.maxbuffer default; larger "lengths" are not frames

OP_PING = 11
OP_CLOSE = -11
XID_NOTIFICATION = -1
XID_PING = -2

# Requests containing this path make the proxy cut the connection instead of
# forwarding them, so a real client reconnects and re-arms its watches.
DROP_MARKER = b"/shepherd-drop"

VERSION_LINE = "unknown"


def log(msg: str) -> None:
    print(f"[capture {time.strftime('%H:%M:%S')}] {msg}", flush=True)


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# --------------------------------------------------------------------------
# The real server
# --------------------------------------------------------------------------


class ZkServer:
    def __init__(self, tmp: str):
        self.tmp = tmp
        self.port = free_port()
        self.proc: subprocess.Popen | None = None
        self.logfile = os.path.join(tmp, "server.out")

    def start(self) -> None:
        conf = os.path.join(self.tmp, "conf")
        data = os.path.join(self.tmp, "data")
        os.makedirs(conf, exist_ok=True)
        os.makedirs(data, exist_ok=True)
        cfg = os.path.join(conf, "zoo.cfg")
        with open(cfg, "w") as f:
            f.write(
                f"tickTime={TICK_MS}\n"
                f"dataDir={data}\n"
                f"clientPort={self.port}\n"
                "clientPortAddress=127.0.0.1\n"
                "admin.enableServer=false\n"
                "4lw.commands.whitelist=*\n"
            )
        with open(os.path.join(conf, "log4j.properties"), "w") as f:
            f.write(log4j_props(os.path.join(self.tmp, "server.log")))
        cp = ":".join([conf, ZK_JAR] + ZK_CP_EXTRA)
        out = open(self.logfile, "wb")
        self.proc = subprocess.Popen(
            [
                "java",
                "-Xmx256m",
                f"-Dlog4j.configuration=file:{conf}/log4j.properties",
                "-cp",
                cp,
                "org.apache.zookeeper.server.ZooKeeperServerMain",
                cfg,
            ],
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
        out.close()
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"zookeeper exited early, see {self.logfile}")
            try:
                text = self.four_letter(b"srvr")
            except OSError:
                text = ""
            # `ruok` answers before sessions are accepted; `Mode:` means ready.
            if "Mode:" in text:
                return
            time.sleep(0.2)
        raise RuntimeError("zookeeper did not become ready")

    def four_letter(self, word: bytes) -> str:
        with socket.create_connection(("127.0.0.1", self.port), timeout=3) as s:
            s.sendall(word)
            s.shutdown(socket.SHUT_WR)
            chunks = []
            while True:
                b = s.recv(65536)
                if not b:
                    break
                chunks.append(b)
        return b"".join(chunks).decode("utf-8", "replace")

    def stop(self) -> None:
        if self.proc is None or self.proc.poll() is not None:
            return
        try:
            os.killpg(self.proc.pid, signal.SIGTERM)
        except ProcessLookupError:
            return
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(timeout=10)


def log4j_props(path: str) -> str:
    # Logs go to the temp dir so neither server nor zkCli writes to
    # /var/log/zookeeper or clutters the console.
    return (
        "log4j.rootLogger=INFO, F\n"
        "log4j.appender.F=org.apache.log4j.FileAppender\n"
        f"log4j.appender.F.File={path}\n"
        "log4j.appender.F.layout=org.apache.log4j.PatternLayout\n"
        "log4j.appender.F.layout.ConversionPattern=%d{ISO8601} %-5p [%t:%C{1}@%L] - %m%n\n"
    )


# --------------------------------------------------------------------------
# Recording proxy
# --------------------------------------------------------------------------


class Conn:
    """One proxied TCP connection and the frames seen on it."""

    def __init__(self, proxy: "Proxy", num: int, label: str, client: socket.socket,
                 upstream: socket.socket):
        self.proxy = proxy
        self.num = num
        self.label = label
        self.client = client
        self.upstream = upstream
        self.lines: list[str] = []
        self.mode: str | None = None  # None until the first 4 bytes: "zk" or "4lw"
        self.seen = {"c2s": False, "s2c": False}
        # xid -> FIFO of opcodes: auth (-4) and setWatches (-8) reuse their xid.
        self.pending: dict[int, collections.deque] = collections.defaultdict(collections.deque)
        self.pings_pending = 0
        self.open_pumps = 2
        self.done = threading.Event()

    def comment(self, text: str) -> None:
        with self.proxy.lock:
            self.lines.append(f"# {text}")

    def record(self, direction: str, fr: bytes) -> str:
        """Classify and store one frame; returns "drop" to cut the connection."""
        payload = fr[4:]
        action = "forward"
        with self.proxy.lock:
            if not self.seen[direction]:
                self.seen[direction] = True
                kind, op = "connect", "-"
            elif direction == "c2s":
                kind = "request"
                xid, opcode = struct.unpack(">ii", payload[:8])
                op = str(opcode)
                if DROP_MARKER in payload:
                    action = "drop"
                elif opcode == OP_PING:
                    # The server answers every ping with xid -2, whatever xid it had.
                    self.pings_pending += 1
                else:
                    self.pending[xid].append(opcode)
            else:
                xid = struct.unpack(">i", payload[:4])[0]
                if xid == XID_NOTIFICATION:
                    kind, op = "event", "-"
                elif xid == XID_PING and self.pings_pending and not self.pending.get(XID_PING):
                    self.pings_pending -= 1
                    kind, op = "reply", str(OP_PING)
                elif self.pending.get(xid):
                    kind, op = "reply", str(self.pending[xid].popleft())
                else:
                    kind, op = "reply", "?"
            self.lines.append(f"{direction} {kind} {op} {fr.hex()}")
            if action == "drop":
                self.proxy.drops.append(len(self.proxy.conns))
                self.lines.append(
                    "# proxy cut the connection here: the request above never reached the "
                    "server; the client reconnects with its session"
                )
        return action

    def pump_done(self) -> None:
        with self.proxy.lock:
            self.open_pumps -= 1
            last = self.open_pumps == 0
        if last:
            for s in (self.client, self.upstream):
                try:
                    s.close()
                except OSError:
                    pass
            self.done.set()

    def cut(self) -> None:
        for s in (self.client, self.upstream):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


class Proxy:
    def __init__(self, upstream_port: int):
        self.upstream_port = upstream_port
        self.lock = threading.Lock()
        self.lsock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.lsock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.lsock.bind(("127.0.0.1", 0))
        self.lsock.listen(16)
        self.port = self.lsock.getsockname()[1]
        self.conns: list[Conn] = []
        # For each cut: how many connections had been accepted at that moment.
        self.drops: list[int] = []
        self.labels: collections.deque[str] = collections.deque()
        self.count = 0
        self.closed = False
        self.thread = threading.Thread(target=self._accept_loop, name="proxy-accept", daemon=True)
        self.thread.start()

    # Scenario bookkeeping -------------------------------------------------
    def begin(self) -> None:
        with self.lock:
            self.conns = []
            self.drops = []
            self.labels.clear()
            self.count = 0

    def expect(self, label: str) -> None:
        """Label the next accepted connection (in accept order)."""
        with self.lock:
            self.labels.append(label)

    def end(self, timeout: float = 8.0) -> list[Conn]:
        deadline = time.monotonic() + timeout
        with self.lock:
            conns = list(self.conns)
        for c in conns:
            if not c.done.wait(max(0.0, deadline - time.monotonic())):
                c.comment("proxy closed this connection at the end of the scenario")
                c.cut()
                c.done.wait(2.0)
        with self.lock:
            return [c for c in self.conns if c.mode != "4lw"]

    def drop_count(self) -> int:
        with self.lock:
            return len(self.drops)

    def wait_reconnected(self, drops_before: int, timeout: float) -> None:
        """Wait until a connection has been cut after `drops_before` cuts, and
        a connection accepted after that cut has finished its handshake; then
        give the client a moment to re-arm its watches."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self.lock:
                ready = len(self.drops) > drops_before and any(
                    c.seen["s2c"] for c in self.conns[self.drops[drops_before]:])
            if ready:
                time.sleep(1.0)
                return
            time.sleep(0.05)
        raise TimeoutError("client was not cut, or did not reconnect")

    def note(self, text: str) -> None:
        """Add a comment line to the most recently accepted connection."""
        with self.lock:
            conn = self.conns[-1] if self.conns else None
        if conn is not None:
            conn.comment(text)

    # Plumbing ---------------------------------------------------------------
    def _accept_loop(self) -> None:
        while not self.closed:
            try:
                client, _ = self.lsock.accept()
            except OSError:
                return
            try:
                upstream = socket.create_connection(("127.0.0.1", self.upstream_port), timeout=5)
                upstream.settimeout(None)
            except OSError:
                client.close()
                continue
            for s in (client, upstream):
                s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            with self.lock:
                self.count += 1
                label = self.labels.popleft() if self.labels else "unlabelled connection"
                conn = Conn(self, self.count, label, client, upstream)
                self.conns.append(conn)
            for direction, src, dst in (("c2s", client, upstream), ("s2c", upstream, client)):
                threading.Thread(
                    target=self._pump, args=(conn, direction, src, dst),
                    name=f"pump-{conn.num}-{direction}", daemon=True,
                ).start()

    def _pump(self, conn: Conn, direction: str, src: socket.socket, dst: socket.socket) -> None:
        buf = bytearray()
        try:
            while True:
                data = src.recv(65536)
                if not data:
                    break
                buf += data
                while True:
                    if conn.mode is None:
                        if direction != "c2s" or len(buf) < 4:
                            break
                        conn.mode = "4lw" if bytes(buf[:4]) in FOUR_LETTER_WORDS else "zk"
                    if conn.mode == "4lw":
                        dst.sendall(buf)
                        buf.clear()
                        break
                    if len(buf) < 4:
                        break
                    n = struct.unpack(">i", buf[:4])[0]
                    if n < 0 or n > MAX_FRAME:
                        # Not a frame the server would accept; pass it on unrecorded.
                        conn.comment(f"{direction}: unframed bytes {bytes(buf).hex()}")
                        dst.sendall(buf)
                        buf.clear()
                        break
                    if len(buf) < 4 + n:
                        break
                    fr = bytes(buf[: 4 + n])
                    del buf[: 4 + n]
                    # Record before forwarding so a request is always logged
                    # before the reply the server builds for it.
                    if conn.record(direction, fr) == "drop":
                        conn.cut()
                        return
                    dst.sendall(fr)
        except OSError:
            pass
        finally:
            if buf and conn.mode == "zk":
                conn.comment(f"{direction}: {len(buf)} trailing bytes, not a whole frame: "
                             f"{bytes(buf).hex()}")
            try:
                dst.shutdown(socket.SHUT_WR)
            except OSError:
                pass
            conn.pump_done()

    def close(self) -> None:
        self.closed = True
        try:
            self.lsock.close()
        except OSError:
            pass
        with self.lock:
            conns = list(self.conns)
        for c in conns:
            c.cut()


# --------------------------------------------------------------------------
# Raw jute encoding (reference docs/protocol.md §1.2 and §5) and a tiny blocking client
# --------------------------------------------------------------------------


def i32(v: int) -> bytes:
    return struct.pack(">i", v)


def i64(v: int) -> bytes:
    return struct.pack(">q", v)


def boolean(v: bool) -> bytes:
    return b"\x01" if v else b"\x00"


def ustr(s: str | None) -> bytes:
    if s is None:
        return i32(-1)
    b = s.encode("utf-8")
    return i32(len(b)) + b


def buf(b: bytes | None) -> bytes:
    if b is None:
        return i32(-1)
    return i32(len(b)) + b


def strvec(items: list[str]) -> bytes:
    return i32(len(items)) + b"".join(ustr(s) for s in items)


def aclvec(acls: list[tuple[int, str, str | None]]) -> bytes:
    return i32(len(acls)) + b"".join(i32(p) + ustr(s) + ustr(i) for p, s, i in acls)


OPEN_ACL = [(31, "world", "anyone")]


def create_req(path: str, data: bytes | None, flags: int = 0, acl=None) -> bytes:
    return ustr(path) + buf(data) + aclvec(OPEN_ACL if acl is None else acl) + i32(flags)


def path_watch(path: str, watch: bool = False) -> bytes:
    return ustr(path) + boolean(watch)


def multi_hdr(op: int, done: bool = False, err: int = -1) -> bytes:
    return i32(op) + boolean(done) + i32(err)


MULTI_END = multi_hdr(-1, True, -1)


def connect_payload(form: int, session_id: int = 0, passwd: bytes = bytes(16),
                    last_zxid: int = 0, timeout_ms: int = 30000, read_only: bool = False) -> bytes:
    p = i32(0) + i64(last_zxid) + i32(timeout_ms) + i64(session_id) + buf(passwd)
    if form == 45:
        p += boolean(read_only)
    assert len(p) == form
    return p


class Reply:
    def __init__(self, payload: bytes):
        self.xid, self.zxid, self.err = struct.unpack(">iqi", payload[:16])
        self.body = payload[16:]

    def __repr__(self) -> str:
        return f"Reply(xid={self.xid}, zxid={self.zxid}, err={self.err}, body={len(self.body)}B)"


class RawClient:
    def __init__(self, port: int, timeout: float = 5.0):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=timeout)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.xid = 0
        self.session_id = 0
        self.passwd = bytes(16)
        self.last_zxid = 0
        self.events: list[bytes] = []

    def _recv_exact(self, n: int) -> bytes | None:
        out = bytearray()
        while len(out) < n:
            b = self.sock.recv(n - len(out))
            if not b:
                return None
            out += b
        return bytes(out)

    def recv_frame(self) -> bytes | None:
        hdr = self._recv_exact(4)
        if hdr is None:
            return None
        return self._recv_exact(struct.unpack(">i", hdr)[0])

    def send(self, payload: bytes) -> None:
        self.sock.sendall(i32(len(payload)) + payload)

    def connect(self, form: int = 45, **kw) -> tuple[int, int, bytes]:
        self.send(connect_payload(form, **kw))
        resp = self.recv_frame()
        if resp is None:
            raise ConnectionError("server closed during handshake")
        _proto, timeout_ms, sid = struct.unpack(">iiq", resp[:16])
        plen = struct.unpack(">i", resp[16:20])[0]
        self.session_id, self.passwd = sid, resp[20:20 + plen]
        return timeout_ms, sid, self.passwd

    def next_xid(self) -> int:
        self.xid += 1
        return self.xid

    def call(self, op: int, body: bytes = b"", xid: int | None = None,
             expect_reply: bool = True) -> Reply | None:
        """Send one request; read until its reply, keeping notifications."""
        if xid is None:
            xid = self.next_xid()
        self.send(i32(xid) + i32(op) + body)
        if not expect_reply:
            return None
        want = XID_PING if op == OP_PING else xid
        while True:
            payload = self.recv_frame()
            if payload is None:
                return None
            r = Reply(payload)
            if r.xid == XID_NOTIFICATION:
                self.events.append(payload)
                continue
            if r.xid != want:
                raise RuntimeError(f"unexpected reply {r} while waiting for xid {want}")
            if r.zxid > 0 and r.xid >= 0:
                self.last_zxid = max(self.last_zxid, r.zxid)
            return r

    def ping(self, xid: int = XID_PING) -> Reply | None:
        return self.call(OP_PING, xid=xid)

    def wait_closed(self, timeout: float = 3.0) -> bool:
        self.sock.settimeout(timeout)
        try:
            return self.sock.recv(1) == b""
        except (socket.timeout, OSError):
            return False

    def close(self) -> None:
        try:
            self.sock.close()
        except OSError:
            pass


# --------------------------------------------------------------------------
# Fixture writing and checking
# --------------------------------------------------------------------------

LINE_RE = re.compile(r"^(c2s|s2c) (connect|request|reply|event) (-|-?\d+) ([0-9a-f]+)$")


def write_fixture(out_dir: str, name: str, what: list[str], client: str,
                  conns: list[Conn]) -> int:
    lines = [f"# scenario: {name}"]
    lines += [f"# what: {w}" for w in what]
    lines.append(f"# client: {client}")
    lines.append(f"# server: {VERSION_LINE}")
    lines.append("# format: <dir> <kind> <op> <hex of whole frame incl. 4-byte length>; "
                 "regenerate with capture.py")
    frames = 0
    for c in conns:
        lines.append(f"# connection {c.num}: {c.label}")
        for ln in c.lines:
            if not ln.startswith("#"):
                frames += 1
            lines.append(ln)
    path = os.path.join(out_dir, f"{name}.frames")
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
    return frames


def check_fixture(path: str) -> list[str]:
    """Structural self-check, so a bad capture fails here and not in cargo test."""
    problems = []
    with open(path, encoding="utf-8") as f:
        for n, ln in enumerate(f, 1):
            ln = ln.rstrip("\n")
            if not ln or ln.startswith("#"):
                continue
            m = LINE_RE.match(ln)
            if not m:
                problems.append(f"{path}:{n}: malformed line")
                continue
            _d, kind, op, hx = m.groups()
            raw = bytes.fromhex(hx)
            if struct.unpack(">i", raw[:4])[0] != len(raw) - 4:
                problems.append(f"{path}:{n}: length prefix mismatch")
            if (kind in ("connect", "event")) != (op == "-"):
                problems.append(f"{path}:{n}: op {op} does not fit kind {kind}")
            if kind == "request" and struct.unpack(">i", raw[8:12])[0] != int(op):
                problems.append(f"{path}:{n}: request op differs from header")
    return problems


# --------------------------------------------------------------------------
# Scenarios
# --------------------------------------------------------------------------


# Every kazoo client made by a scenario, so a scenario that fails half-way
# cannot leave one behind that reconnects during the next scenario.
LIVE_KAZOO: list = []


def kazoo_client(port: int, **kw):
    from kazoo.client import KazooClient

    kw.setdefault("timeout", 10.0)
    zk = KazooClient(hosts=f"127.0.0.1:{port}", **kw)
    LIVE_KAZOO.append(zk)
    return zk


def stop_kazoo_clients() -> None:
    while LIVE_KAZOO:
        zk = LIVE_KAZOO.pop()
        try:
            zk.stop()
            zk.close()
        except Exception:
            pass


def sc_connect_45_kazoo(proxy: Proxy) -> dict:
    proxy.expect("kazoo, session timeout 4 s so it pings about every 1.3 s")
    zk = kazoo_client(proxy.port, timeout=4.0)
    zk.start(timeout=10)
    time.sleep(5.0)  # let kazoo's own ping timer fire a few times
    zk.stop()
    zk.close()
    return dict(what=["kazoo connects (45-byte ConnectRequest, 37-byte ConnectResponse)",
                      "idles ~5 s so kazoo sends its own pings (xid -2, op 11)",
                      "then closes the session (op -11); the server closes the socket"],
                client="kazoo")


def sc_connect_44_raw(proxy: Proxy) -> dict:
    proxy.expect("raw socket, 44-byte ConnectRequest (no readOnly byte)")
    c = RawClient(proxy.port)
    timeout_ms, sid, _ = c.connect(form=44, timeout_ms=30000)
    assert sid != 0 and timeout_ms == 30000, (sid, timeout_ms)
    c.ping()
    r = c.ping(xid=77)  # the reply comes back as xid -2 anyway
    assert r is not None and r.xid == XID_PING
    c.call(OP_CLOSE)
    c.wait_closed()
    c.close()
    return dict(what=["raw 44-byte ConnectRequest -> 36-byte ConnectResponse (no readOnly byte)",
                      "ping with xid -2, then a ping with xid 77 (the server still replies xid -2)",
                      "closeSession (op -11)"],
                client="raw socket (capture.py RawClient)")


def sc_crud_kazoo(proxy: Proxy) -> dict:
    from kazoo.exceptions import BadVersionError, NoNodeError, NodeExistsError, NotEmptyError
    from kazoo.protocol.serialization import Create
    from kazoo.security import OPEN_ACL_UNSAFE, make_acl

    proxy.expect("kazoo")
    zk = kazoo_client(proxy.port)
    zk.start(timeout=10)
    zk.create("/crud", b"hello")                                    # op 1
    zk.create("/crud/c2", b"two", include_data=True)                # op 15
    zk.exists("/crud")                                              # op 3 hit
    assert zk.exists("/crud/missing") is None                       # op 3 miss, err -101
    zk.get("/crud")                                                 # op 4
    zk.set("/crud", b"world")                                       # op 5
    zk.set("/crud", b"v2", version=1)                               # op 5 with a version
    try:
        zk.set("/crud", b"bad", version=99)                         # BadVersion -103
    except BadVersionError:
        pass
    zk.get_acls("/crud")                                            # op 6
    zk.set_acls("/crud", [make_acl("world", "anyone", read=True, write=True, create=True,
                                   delete=True, admin=True)])       # op 7
    zk.set_acls("/crud", OPEN_ACL_UNSAFE, version=1)                # op 7 with aversion
    zk.create("/crud/eph", b"e", ephemeral=True)                    # flags 1
    zk.create("/crud/seq-", b"s", sequence=True)                    # flags 2
    zk.create("/crud/eseq-", b"es", ephemeral=True, sequence=True)  # flags 3
    zk.create("/crud/empty")                                        # empty (not null) data
    # kazoo's public create() refuses None, but its Create record writes a
    # None buffer as length -1, which is what the Java CLI sends for "no data".
    pending = zk.handler.async_result()
    zk._call(Create("/crud/null", None, OPEN_ACL_UNSAFE, 0), pending)
    pending.get(timeout=10)
    zk.get("/crud/null")                                            # data comes back as -1
    zk.get("/crud/empty")
    zk.get_children("/crud")                                        # op 8
    zk.get_children("/crud", include_data=True)                     # op 12
    zk.sync("/crud")                                                # op 9
    for fn in (lambda: zk.get("/crud/nope"),                        # NoNode -101
               lambda: zk.create("/crud", b"again"),                # NodeExists -110
               lambda: zk.delete("/crud"),                          # NotEmpty -111
               lambda: zk.get_children("/crud/nope"),
               lambda: zk.create("/nope/child", b"")):              # NoNode on parent
        try:
            fn()
        except (NoNodeError, NodeExistsError, NotEmptyError):
            pass
    zk.delete("/crud/c2")                                           # op 2
    zk.delete("/crud/empty", version=0)                             # op 2 with a version
    zk.stop()
    zk.close()
    return dict(what=["create (1), create2 (15), exists hit and miss (3), getData (4), "
                      "setData (5), getACL (6), setACL (7), getChildren (8), getChildren2 (12), "
                      "sync (9), delete (2)",
                      "ephemeral / sequential / ephemeral-sequential creates, an empty-data "
                      "create and a null-data (-1) create read back with getData",
                      "error replies: NoNode, NodeExists, NotEmpty, BadVersion; close (-11)"],
                client="kazoo")


def sc_multi_fail(proxy: Proxy) -> dict:
    proxy.expect("kazoo")
    zk = kazoo_client(proxy.port)
    zk.start(timeout=10)
    zk.create("/mf", b"base")
    zk.create("/mf/b", b"b")
    t = zk.transaction()
    t.create("/mf/a", b"1")
    t.check("/mf", 99)          # bad version: the whole multi fails
    t.delete("/mf/b")
    t.set_data("/mf", b"never")
    res = t.commit()
    assert any(isinstance(r, Exception) for r in res), res
    t = zk.transaction()
    t.create("/mf/a", b"1")
    t.create("/mf/s-", b"", sequence=True)
    t.set_data("/mf", b"ok")
    t.check("/mf", 1)
    t.delete("/mf/b")
    res = t.commit()
    assert not any(isinstance(r, Exception) for r in res), res
    zk.stop()
    zk.close()
    return dict(what=["multi (14) [create, check bad version, delete, setData] that fails: "
                      "header err 0, per-op results (0, -103, -2, -2)",
                      "multi (14) [create, sequential create, setData, check, delete] that "
                      "succeeds"],
                client="kazoo")


def sc_watch_event(proxy: Proxy) -> dict:
    fired = []

    def cb(ev):
        fired.append(ev)

    proxy.expect("kazoo A: holds the watches")
    a = kazoo_client(proxy.port)
    a.start(timeout=10)
    a.create("/w", b"0")
    a.create("/w/a", b"a")
    a.get("/w", watch=cb)            # data watch
    a.get_children("/w", watch=cb)   # child watch
    a.exists("/w/new", watch=cb)     # exist watch on a missing node
    a.set("/w", b"1")                # NodeDataChanged before the setData reply
    a.create("/w/new", b"n")         # NodeCreated, NodeChildrenChanged, then the reply
    a.get("/w", watch=cb)
    a.get_children("/w", watch=cb)
    a.exists("/w/a", watch=cb)
    a.get_children("/w/a", watch=cb)

    proxy.expect("kazoo B: makes the changes A watches")
    b = kazoo_client(proxy.port)
    b.start(timeout=10)
    b.set("/w", b"2")                # -> A: NodeDataChanged(/w)
    b.delete("/w/a")                 # -> A: NodeDeleted(/w/a) once, NodeChildrenChanged(/w)
    time.sleep(0.3)
    a.get("/w", watch=cb)
    a.get_children("/w", watch=cb)
    b.delete("/w/new")               # -> A: NodeChildrenChanged(/w)
    time.sleep(0.3)
    a.get("/w", watch=cb)
    a.get_children("/w", watch=cb)
    b.delete("/w")                   # -> A: one NodeDeleted(/w) for both watches
    time.sleep(0.5)
    b.stop()
    b.close()
    a.stop()
    a.close()
    return dict(what=["A sets a data watch (getData), child watch (getChildren) and exist "
                      "watch (exists on a missing node), then changes the nodes itself: the "
                      "event frames precede the setData / create reply",
                      "B changes and deletes nodes A watches: A receives NodeDataChanged, "
                      "NodeDeleted, NodeChildrenChanged events with no request in between",
                      f"events seen by kazoo: {len(fired)}"],
                client="kazoo (two clients)")


def sc_auth_digest(proxy: Proxy) -> dict:
    from kazoo.exceptions import NoAuthError
    from kazoo.security import ACL, Id, make_acl, make_digest_acl

    proxy.expect("kazoo A with auth_data digest alice:secret")
    a = kazoo_client(proxy.port, auth_data=[("digest", "alice:secret")])
    a.start(timeout=10)
    a.add_auth("digest", "bob:builder")           # op 100, xid -4, after the handshake
    a.create("/auth", b"secret", acl=[make_digest_acl("alice", "secret", all=True),
                                      make_acl("world", "anyone", read=True)])
    # kazoo writes an empty id as a null ustring (-1): `auth:` with a null id
    # expands to every digest identity of the connection.
    a.create("/auth/mine", b"m", acl=[ACL(31, Id("auth", ""))])
    a.get_acls("/auth")
    a.get_acls("/auth/mine")
    a.get("/auth/mine")
    a.set_acls("/auth/mine", [make_digest_acl("bob", "builder", all=True)])

    proxy.expect("kazoo B without credentials, later a wrong password")
    b = kazoo_client(proxy.port)
    b.start(timeout=10)
    b.get("/auth")                                # world may read
    for fn in (lambda: b.get("/auth/mine"), lambda: b.set("/auth", b"x")):
        try:
            fn()
        except NoAuthError:
            pass
    b.add_auth("digest", "alice:wrong")           # succeeds, matches nothing
    try:
        b.set("/auth", b"x")
    except NoAuthError:
        pass
    b.stop()
    b.close()
    a.delete("/auth/mine")
    a.delete("/auth")
    a.stop()
    a.close()
    return dict(what=["auth (100, xid -4) sent by kazoo right after the handshake and again "
                      "via add_auth; create with digest and world ACLs; create with an "
                      "auth ACL whose id is a null ustring; getACL; setACL",
                      "a second client gets NoAuth (-102), adds a wrong digest (still err 0) "
                      "and gets NoAuth again"],
                client="kazoo (two clients)")


def sc_auth_failed_raw(proxy: Proxy) -> dict:
    proxy.expect("raw socket: auth with an unknown scheme")
    c = RawClient(proxy.port)
    c.connect(form=45)
    r = c.call(100, i32(0) + ustr("super") + buf(b"super:test"), xid=-4)
    assert r is not None and r.err == -115, r
    closed = c.wait_closed()
    c.close()
    return dict(what=["auth (100, xid -4) with scheme `super` (not a provider): err -115 "
                      f"AuthFailed, zxid 0, then the server closes the socket (closed={closed})"],
                client="raw socket (capture.py RawClient)")


def sc_expired_session(proxy: Proxy) -> dict:
    proxy.expect("raw 45: new session, then closeSession (so its id is dead)")
    c = RawClient(proxy.port)
    _, sid, pw = c.connect(form=45)
    c.call(OP_CLOSE)
    c.wait_closed()
    c.close()
    notes = []
    unknown = sid + 1000
    wrong_pw = bytes(range(1, 17))
    cases = [
        (45, sid, pw, "closed session id with its right password"),
        (45, unknown, wrong_pw, "unknown session id, wrong password"),
        (44, sid, wrong_pw, "closed session id, wrong password"),
        (44, unknown, wrong_pw, "unknown session id, wrong password"),
    ]
    for form, s, p, desc in cases:
        proxy.expect(f"raw {form}: reattach with {desc}")
        c = RawClient(proxy.port)
        timeout_ms, got_sid, got_pw = c.connect(form=form, session_id=s, passwd=p,
                                                last_zxid=0)
        closed = c.wait_closed()
        c.close()
        assert timeout_ms == 0 and got_sid == 0 and got_pw == bytes(16), (timeout_ms, got_sid)
        notes.append(f"{form}-byte request, {desc}: invalid response, server closed={closed}")
    return dict(what=["reconnect attempts that the server rejects with timeOut 0, "
                      "sessionId 0 and a 16-byte zero password, then closes the socket",
                      *notes],
                client="raw socket (capture.py RawClient)")


def sc_reattach_raw(proxy: Proxy) -> dict:
    notes = []
    for form in (45, 44):
        proxy.expect(f"raw {form}: new session, creates an ephemeral, drops TCP without close")
        c = RawClient(proxy.port)
        _, sid, pw = c.connect(form=form, timeout_ms=20000)
        c.call(1, create_req(f"/ra{form}", b"eph", flags=1))
        last = c.last_zxid
        c.close()
        time.sleep(0.3)
        proxy.expect(f"raw {form}: reattaches with session id, password and lastZxidSeen")
        c = RawClient(proxy.port)
        timeout_ms, sid2, pw2 = c.connect(form=form, session_id=sid, passwd=pw,
                                          last_zxid=last, timeout_ms=20000)
        assert sid2 == sid and pw2 == pw, (sid, sid2)
        r = c.call(3, path_watch(f"/ra{form}"))
        assert r is not None and r.err == 0
        c.ping()
        c.call(OP_CLOSE)
        c.wait_closed()
        c.close()
        notes.append(f"{form}-byte: reattach returned the same id and password, "
                     f"timeout {timeout_ms}")
    return dict(what=["a session survives a dropped TCP connection: the reattach "
                      "ConnectResponse repeats the session id and password", *notes],
                client="raw socket (capture.py RawClient)")


def sc_raw_misc(proxy: Proxy) -> dict:
    notes = []
    proxy.expect("raw 45: the 3.6+ ops, watch management, multiRead, createContainer, "
                 "reconfig, sasl")
    c = RawClient(proxy.port)
    c.connect(form=45)
    c.call(1, create_req("/rm", b"r"))
    c.call(1, create_req("/rm/e1", b"e", flags=1))                # ephemeral
    c.call(1, create_req("/rm/null", None))                       # null data
    c.call(4, path_watch("/rm/null"))
    c.call(19, create_req("/rc", b"c", flags=4))                  # createContainer
    c.call(1, create_req("/rc/k", b"k"))
    c.call(103, ustr("/"))                                        # getEphemerals
    c.call(103, ustr("/rm"))
    c.call(104, ustr("/rm"))                                      # getAllChildrenNumber
    c.call(104, ustr("/"))
    r = c.call(104, ustr("/nope"))
    notes.append(f"getAllChildrenNumber on a missing path: err {r.err}")
    c.call(107)                                                   # whoAmI, no body
    c.call(106, ustr("/rm") + i32(0))                             # addWatch persistent
    c.call(106, ustr("/rc") + i32(1))                             # addWatch recursive
    c.call(17, ustr("/rm") + i32(2))                              # checkWatches Data
    c.call(17, ustr("/rm/null") + i32(1))                         # none there: -121
    c.call(18, ustr("/rm") + i32(3))                              # removeWatches Any
    c.call(18, ustr("/rm") + i32(3))                              # again: -121
    r = c.call(17, ustr("/rc") + i32(4))                          # Persistent type on 3.8
    notes.append(f"checkWatches type 4 (Persistent): err {r.err}")
    # setWatches from relativeZxid 1: /rm changed since, /gone is missing,
    # /rm/e1 exists now, /notyet stays armed, /rm children changed.
    c.call(101, i64(1) + strvec(["/rm", "/gone"]) + strvec(["/rm/e1", "/notyet"])
           + strvec(["/rm"]), xid=-8)
    c.call(105, i64(c.last_zxid) + strvec(["/rm/null"]) + strvec(["/notyet2"])
           + strvec(["/rm"]) + strvec(["/rm"]) + strvec(["/rc"]), xid=-8)
    c.call(5, ustr("/rm") + buf(b"changed") + i32(-1))           # persistent watch fires
    c.call(1, create_req("/rc/deep", b"d"))                       # recursive watch fires
    c.call(1, create_req("/notyet", b""))                         # exist watch fires
    c.call(22, multi_hdr(4) + path_watch("/rm", True)             # multiRead
           + multi_hdr(8) + path_watch("/rm")
           + multi_hdr(4) + path_watch("/missing")
           + multi_hdr(8) + path_watch("/missing")
           + MULTI_END)
    c.call(14, multi_hdr(15) + create_req("/rm/m2", b"x")          # create2 inside multi
           + multi_hdr(19) + create_req("/rm/mc", b"y", flags=4)  # createContainer inside
           + multi_hdr(5) + ustr("/rm/m2") + buf(b"z") + i32(0)
           + multi_hdr(13) + ustr("/rm/m2") + i32(1)
           + multi_hdr(2) + ustr("/rm/m2") + i32(1)
           + MULTI_END)
    c.call(14, MULTI_END)                                         # empty multi
    c.call(14, multi_hdr(1) + create_req("/rm/bad", b"", flags=99)  # bad flags in multi
           + MULTI_END)
    r = c.call(14, multi_hdr(1) + create_req("/rm/mix", b"")       # write + read mixed
               + multi_hdr(4) + path_watch("/rm") + MULTI_END)
    notes.append(f"multi mixing create and getData: err {r.err}")
    r = c.call(16, ustr("server.2=127.0.0.1:2888:3888;2181") + ustr(None) + ustr(None)
               + i64(-1))                                         # reconfig
    notes.append(f"reconfig: err {r.err}")
    r = c.call(102, buf(b""))                                     # sasl, none configured
    notes.append(f"sasl: err {r.err}, body {r.body.hex()}")
    c.call(9, ustr("/rm"))                                        # sync
    r = c.call(21, create_req("/rm/ttl", b"t", flags=5) + i64(5000))  # createTTL
    notes.append(f"createTTL without extended types: err {r.err}")
    c.call(7, ustr("/rm") + aclvec(OPEN_ACL) + i32(0))            # setACL
    c.call(6, ustr("/rm"))                                        # getACL
    c.call(3, path_watch("/rm/none", True))                       # exist watch
    c.call(12, path_watch("/rm", True))                           # getChildren2 + watch
    c.call(5, ustr("/rm/null") + buf(None) + i32(-1))            # setData with null data
    c.call(4, path_watch("/rm/null"))
    c.call(2, ustr("/rm/null") + i32(-1))                         # child watch fires
    c.call(OP_CLOSE)
    c.wait_closed()
    c.close()

    proxy.expect("raw 45: unknown opcode 55")
    c = RawClient(proxy.port)
    c.connect(form=45)
    r = c.call(55, b"")
    closed = c.wait_closed()
    c.close()
    notes.append(f"op 55: err {r.err if r else None}, zxid {r.zxid if r else None}, "
                 f"closed={closed}")

    proxy.expect("raw 45: opcode 0 (notification) sent as a request")
    c = RawClient(proxy.port)
    c.connect(form=45)
    r = c.call(0, b"")
    closed = c.wait_closed()
    c.close()
    notes.append(f"op 0: err {r.err if r else None}, closed={closed}")
    return dict(what=["hand-written frames for ops kazoo never sends: getEphemerals (103), "
                      "getAllChildrenNumber (104), whoAmI (107), addWatch (106), "
                      "checkWatches (17), removeWatches (18), setWatches (101) and "
                      "setWatches2 (105) with their catch-up events, multiRead (22), "
                      "createContainer (19), setData with null data, "
                      "multi with create2/createContainer/setData/check/"
                      "delete, empty multi, reconfig (16), sasl (102), createTTL (21), "
                      "null-data create, unknown opcodes 55 and 0", *notes],
                client="raw socket (capture.py RawClient)")


def sc_raw_quirks(proxy: Proxy) -> dict:
    notes = []
    proxy.expect("raw 45: top-level check (13) and deleteContainer (20)")
    c = RawClient(proxy.port)
    c.connect(form=45)
    c.call(1, create_req("/quirk", b"q"))
    before = c.last_zxid
    # 3.8 processes a top-level check like a write but has no response
    # record for it, so nothing comes back; the connection stays usable.
    c.call(13, ustr("/quirk") + i32(0), expect_reply=False)
    c.sock.settimeout(2.0)
    try:
        got = c.recv_frame()
    except socket.timeout:
        got = None
    c.sock.settimeout(5.0)
    proxy.note("no reply to the check above within 2 s (3.8 logs a NullPointerException)")
    r = c.ping()
    notes.append(f"top-level check: reply {'none' if got is None else got.hex()}; "
                 f"the next ping shows zxid {r.zxid} (was {before}): a zxid was consumed")
    # deleteContainer is server-internal. 3.8 takes the whole body as the
    # path, so a jute-encoded path (with its length prefix) is invalid.
    r = c.call(20, buf(b"/quirk"))
    notes.append(f"deleteContainer with a length-prefixed path: err {r.err}, zxid {r.zxid}")
    c.call(3, path_watch("/quirk"))
    c.call(2, ustr("/quirk") + i32(-1))
    c.call(OP_CLOSE)
    c.wait_closed()
    c.close()
    return dict(what=["3.8 oddities kept for the codec tests only (the server need not copy "
                      "them): a top-level check (13) gets no reply, deleteContainer (20) sent "
                      "by a client", *notes],
                client="raw socket (capture.py RawClient)")


ZKCLI_SCRIPT = """\
create /zk "hello"
create /zk/child
create -e /zk/eph "e"
create -s /zk/seq- "s"
create -c /zkc "container"
create /zkc/x
get /zk
get -s /zk
get -w /zk
stat /zk
stat -w /zk/nothere
ls /zk
ls -s /zk
ls -w /zk
ls -R /zk
set /zk "world"
set -s /zk "again" -v 1
getAcl /zk
setAcl /zk world:anyone:cdrwa
sync /zk
getEphemerals
getEphemerals /zk
getAllChildrenNumber /zk
whoami
config
get -w /zk
ls -w /zk
stat -w /zk/nothere
stat /shepherd-drop-1
set /zk "after-reconnect"
addWatch /zk
addWatch -m PERSISTENT_RECURSIVE /zkc
stat /shepherd-drop-2
set /zk "persistent"
create /zkc/y
removewatches /zk
removewatches /zkc -a
addauth digest alice:secret
create /zka "x" digest:alice:aYXlLOpEooaV1cRAvUL1fp9Qt7E=:cdrwa
getAcl /zka
get /zka
delete /zka
delete /zk/child
deleteall /zk
delete /nothere
quit
"""


def sc_zkcli(proxy: Proxy, tmp: str) -> dict:
    proxy.expect("zkCli (Java client) first connection")
    proxy.expect("zkCli reconnect after the first cut: holds standard watches -> setWatches")
    proxy.expect("zkCli reconnect after the second cut: holds persistent watches too")
    props = os.path.join(tmp, "zkcli-log4j.properties")
    with open(props, "w") as f:
        f.write(log4j_props(os.path.join(tmp, "zkcli.log")))
    env = dict(os.environ)
    env["CLIENT_JVMFLAGS"] = (f"-Dzookeeper.log.dir={tmp} "
                              f"-Dlog4j.configuration=file:{props}")
    out_path = os.path.join(tmp, "zkcli.out")
    with open(out_path, "wb") as out:
        p = subprocess.Popen(["bash", ZKCLI, "-server", f"127.0.0.1:{proxy.port}"],
                             stdin=subprocess.PIPE, stdout=out, stderr=subprocess.STDOUT,
                             env=env, start_new_session=True)
        try:
            # Feed the commands in chunks that end at a cut marker, and wait
            # for the reconnect before going on: a command typed while the
            # Java client is reconnecting can fail locally with ConnectionLoss
            # and still reach the server, which makes the capture erratic.
            chunk: list[str] = []
            for line in ZKCLI_SCRIPT.splitlines(keepends=True):
                chunk.append(line)
                if DROP_MARKER.decode() in line:
                    before = proxy.drop_count()
                    p.stdin.write("".join(chunk).encode())
                    p.stdin.flush()
                    chunk = []
                    proxy.wait_reconnected(before, timeout=20)
            p.communicate("".join(chunk).encode(), timeout=90)
        except (subprocess.TimeoutExpired, TimeoutError):
            os.killpg(p.pid, signal.SIGKILL)
            p.wait(10)
            raise RuntimeError(f"zkCli did not finish, see {out_path}")

    # The Java client only pings after readTimeout/2 of silence (10 s with the
    # default 30 s timeout), so a second, short-timeout run idles to show it.
    proxy.expect("zkCli -timeout 4000, idles ~4.5 s so the Java client pings")
    with open(out_path, "ab") as out:
        p = subprocess.Popen(["bash", ZKCLI, "-timeout", "4000",
                              "-server", f"127.0.0.1:{proxy.port}"],
                             stdin=subprocess.PIPE, stdout=out, stderr=subprocess.STDOUT,
                             env=env, start_new_session=True)
        try:
            p.stdin.write(b"ls /\n")
            p.stdin.flush()
            time.sleep(4.5)
            p.communicate(b"quit\n", timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait(10)
            raise RuntimeError(f"second zkCli did not finish, see {out_path}")
    return dict(what=["zkCli.sh fed these commands on stdin: "
                      + "; ".join(ZKCLI_SCRIPT.strip().splitlines()),
                      "the proxy cuts the TCP connection on `stat /shepherd-drop-N` so the "
                      "Java client reconnects (lastZxidSeen > 0) and re-arms its watches "
                      "with setWatches / setWatches2 (3.8's Java client sends them with an "
                      "ordinary xid, not -8)",
                      "a second zkCli run with -timeout 4000 lists / and idles, so the Java "
                      "client's pings (xid -2, op 11) appear"],
                client="zkCli.sh (ZooKeeper 3.8 Java client)")


SCENARIOS = [
    ("connect_45_kazoo", sc_connect_45_kazoo),
    ("connect_44_raw", sc_connect_44_raw),
    ("crud_kazoo", sc_crud_kazoo),
    ("multi_fail", sc_multi_fail),
    ("watch_event", sc_watch_event),
    ("auth_digest", sc_auth_digest),
    ("auth_failed_raw", sc_auth_failed_raw),
    ("expired_session", sc_expired_session),
    ("reattach_raw", sc_reattach_raw),
    ("raw_misc", sc_raw_misc),
    ("raw_quirks", sc_raw_quirks),
    ("zkcli", sc_zkcli),
]


# --------------------------------------------------------------------------
# Main
# --------------------------------------------------------------------------


def main() -> int:
    global VERSION_LINE
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=HERE)
    ap.add_argument("--only", nargs="*")
    ap.add_argument("--keep-tmp", action="store_true")
    args = ap.parse_args()

    import logging

    logging.basicConfig(level=logging.CRITICAL)  # kazoo logs expected errors loudly

    tmp = tempfile.mkdtemp(prefix="zk-golden-")
    server = ZkServer(tmp)
    proxy: Proxy | None = None

    def watchdog() -> None:
        log(f"run exceeded {RUN_BUDGET_S} s, stopping")
        server.stop()
        os._exit(3)

    timer = threading.Timer(RUN_BUDGET_S, watchdog)
    timer.daemon = True
    timer.start()
    failures = []
    summary = []
    try:
        server.start()
        srvr = server.four_letter(b"srvr")
        VERSION_LINE = srvr.splitlines()[0].strip()
        log(f"server on 127.0.0.1:{server.port}: {VERSION_LINE}")
        proxy = Proxy(server.port)
        for name, fn in SCENARIOS:
            if args.only and name not in args.only:
                continue
            log(f"scenario {name}")
            proxy.begin()
            try:
                meta = fn(proxy, tmp) if fn is sc_zkcli else fn(proxy)
            except Exception:
                traceback.print_exc()
                failures.append(name)
                stop_kazoo_clients()
                proxy.end(timeout=2.0)
                continue
            stop_kazoo_clients()
            conns = proxy.end()
            n = write_fixture(args.out, name, meta["what"], meta["client"], conns)
            problems = check_fixture(os.path.join(args.out, f"{name}.frames"))
            if problems:
                failures.append(name)
                for pr in problems:
                    log(pr)
            summary.append((name, n, len(conns)))
    finally:
        stop_kazoo_clients()
        if proxy is not None:
            proxy.close()
        server.stop()
        timer.cancel()
        if args.keep_tmp:
            log(f"kept {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    for name, n, nc in summary:
        log(f"{name}.frames: {n} frames on {nc} connection(s)")
    if failures:
        log(f"FAILED: {', '.join(failures)}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
