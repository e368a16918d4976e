"""Clients for the secure interop matrix: kazoo configured for TLS or SASL, a `whoami` request
kazoo lacks, raw probes that say what a server does with a bad connection, and the Java client
(zkCli) over Netty TLS or with a JAAS `Client` section.

Every wait is bounded: a server that never answers yields an outcome ("timeout"), not a hang.
"""

import os
import re
import socket
import ssl
import struct
import subprocess
from collections import namedtuple

from kazoo.client import KazooClient
from kazoo.protocol.serialization import int_struct, read_string

WAIT = 10.0  # bound on one connect or request that should succeed
REFUSE_WAIT = 5.0  # bound on waiting for a server to refuse a bad connection
ZKCLI_LIMIT = 60  # seconds for one zkCli run

PASSWORD = "shepherd"  # of every PKCS#12 file `shepherd tls make-test-certs` writes


# ---------------------------------------------------------------- kazoo


class WhoAmI(namedtuple("WhoAmI", "")):
    """ZooKeeper 3.8's whoAmI request (opcode 107): the connection's (scheme, id) pairs."""

    type = 107

    def __bool__(self):
        return True  # an empty namedtuple is false, and kazoo's send loop tests requests

    def serialize(self):
        return bytearray()

    @classmethod
    def deserialize(cls, buf, offset):
        count = int_struct.unpack_from(buf, offset)[0]
        offset += int_struct.size
        ids = []
        for _ in range(max(count, 0)):
            scheme, offset = read_string(buf, offset)
            user, offset = read_string(buf, offset)
            ids.append((scheme, user))
        return sorted(ids)


def whoami(zk):
    result = zk.handler.async_result()
    zk._call(WhoAmI(), result)  # kazoo 2.11 has no whoami of its own
    return result.get(timeout=WAIT)


def kazoo(addr, secure_dir, cert=None, sasl=None, tls=False, listener=None):
    """A started kazoo client. cert: None (no client certificate) or a file stem of
    secure_dir ("client", "other", "untrusted"); sasl: (user, password) for DIGEST-MD5;
    listener: a state listener added before the start."""
    kwargs = {}
    if tls:
        kwargs.update(use_ssl=True, ca=os.path.join(secure_dir, "ca.pem"), verify_certs=True)
        if cert:
            kwargs.update(
                certfile=os.path.join(secure_dir, cert + ".pem"),
                keyfile=os.path.join(secure_dir, cert + "-key.pem"),
            )
    if sasl:
        kwargs["sasl_options"] = {
            "mechanism": "DIGEST-MD5",
            "username": sasl[0],
            "password": sasl[1],
        }
    zk = KazooClient(hosts=addr, timeout=WAIT, connection_retry={"max_tries": 0}, **kwargs)
    if listener:
        zk.add_listener(listener)
    try:
        zk.start(timeout=WAIT)
    except BaseException:
        zk.stop()
        zk.close()
        raise
    return zk


def close(zk):
    try:
        zk.stop()
    finally:
        zk.close()


# ---------------------------------------------------------------- raw probes


def _connect_request():
    # protocolVersion, lastZxidSeen, timeOut, sessionId, passwd (16 zero bytes), readOnly
    body = struct.pack("!iqiqi", 0, 0, 10000, 0, 16) + bytes(16) + b"\x00"
    return struct.pack("!i", len(body)) + body


def _read_reply(sock):
    """What the server sends after a ConnectRequest: 'session' for a ConnectResponse, else
    'closed' (EOF or reset) or 'timeout'."""
    got = b""
    try:
        while len(got) < 4 + 36:
            chunk = sock.recv(4096)
            if not chunk:
                return "closed" if not got else f"closed after {len(got)} bytes"
            got += chunk
    except socket.timeout:
        return "timeout"
    except ssl.SSLError as e:
        return "tls alert: " + _alert(e)
    except (ConnectionResetError, BrokenPipeError):
        return "closed"
    return "session"


def _alert(e):
    reason = getattr(e, "reason", None) or str(e)
    return reason.lower()


def plaintext_probe(addr):
    """A plaintext ConnectRequest sent to addr."""
    host, port = addr.rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=REFUSE_WAIT) as sock:
        sock.settimeout(REFUSE_WAIT)
        try:
            sock.sendall(_connect_request())
        except (ConnectionResetError, BrokenPipeError):
            return "closed"
        return _read_reply(sock)


def tls_probe(addr, secure_dir, cert):
    """A TLS handshake with cert (a file stem of secure_dir, or None), then a
    ConnectRequest."""
    host, port = addr.rsplit(":", 1)
    ctx = ssl.create_default_context(cafile=os.path.join(secure_dir, "ca.pem"))
    if cert:
        ctx.load_cert_chain(
            os.path.join(secure_dir, cert + ".pem"), os.path.join(secure_dir, cert + "-key.pem")
        )
    raw = socket.create_connection((host, int(port)), timeout=REFUSE_WAIT)
    try:
        try:
            sock = ctx.wrap_socket(raw, server_hostname=host)
        except ssl.SSLError as e:
            return "handshake refused: " + _alert(e)
        except socket.timeout:
            return "timeout"
        except (ConnectionResetError, BrokenPipeError):
            return "closed"
        with sock:
            sock.settimeout(REFUSE_WAIT)
            try:
                sock.sendall(_connect_request())
            except ssl.SSLError as e:
                return "tls alert: " + _alert(e)
            except (ConnectionResetError, BrokenPipeError):
                return "closed"
            return _read_reply(sock)
    finally:
        raw.close()


def refused(outcome):
    """True for every outcome in which the server opened no session and closed the
    connection within the bound."""
    return outcome != "session" and outcome != "timeout"


# ---------------------------------------------------------------- zkCli

JAVA_CP = ":".join(
    "/usr/share/java/" + jar
    for jar in (
        "zookeeper.jar",
        "slf4j-api.jar",
        "netty-codec.jar",  # not in zookeeper.jar's manifest, needed by Netty's TLS handler
        "netty-resolver.jar",
    )
)


def zkcli(addr, commands, secure_dir, tls=False, jaas=None, pem=False):
    """Runs Debian's ZooKeeper 3.8 Java client (ZooKeeperMain, what zkCli.sh runs) with
    commands on stdin; returns (exit status, output lines without log noise). With tls, the
    key and trust stores are PKCS#12, or with pem ZooKeeper's PEM stores (the key and the
    certificate in one file; the CA certificate)."""
    props = ["-Dzookeeper.sasl.client=" + ("true" if jaas else "false")]
    if jaas:
        props.append("-Djava.security.auth.login.config=" + os.path.join(secure_dir, jaas))
    if tls:
        if pem:
            key, trust, kind = "client-keystore.pem", "ca.pem", "PEM"
        else:
            key, trust, kind = "client.p12", "truststore.p12", "PKCS12"
        props += [
            "-Dzookeeper.clientCnxnSocket=org.apache.zookeeper.ClientCnxnSocketNetty",
            "-Dzookeeper.client.secure=true",
            "-Dzookeeper.ssl.keyStore.location=" + os.path.join(secure_dir, key),
            "-Dzookeeper.ssl.keyStore.type=" + kind,
            "-Dzookeeper.ssl.trustStore.location=" + os.path.join(secure_dir, trust),
            "-Dzookeeper.ssl.trustStore.type=" + kind,
        ]
        if not pem:
            props += [
                "-Dzookeeper.ssl.keyStore.password=" + PASSWORD,
                "-Dzookeeper.ssl.trustStore.password=" + PASSWORD,
            ]
    cmd = [
        "java",
        "-Xmx128m",
        "-XX:+UseSerialGC",
        "-XX:TieredStopAtLevel=1",
        *props,
        "-cp",
        JAVA_CP,
        "org.apache.zookeeper.ZooKeeperMain",
        "-server",
        addr,
    ]
    try:
        run = subprocess.run(
            cmd,
            input="\n".join(commands + ["quit"]) + "\n",
            capture_output=True,
            text=True,
            timeout=ZKCLI_LIMIT,
        )
    except subprocess.TimeoutExpired:
        return None, ["(zkCli did not finish within %d s)" % ZKCLI_LIMIT]
    return run.returncode, _clean(run.stdout + run.stderr)


_NOISE = re.compile(r"^(SLF4J:|log4j:|Connecting to |Welcome to ZooKeeper|JLine support|$)")


def _clean(text):
    return [line.rstrip() for line in text.splitlines() if not _NOISE.match(line)]
