#!/usr/bin/env python3
"""The secure interop matrix: kazoo and the Java client (zkCli) over TLS and with SASL
DIGEST-MD5, and bad input, run on real ZooKeeper 3.8 and on Shepherd configured with the same
certificates, JAAS file and zoo.cfg keys (.ci/secure.sh starts both).

    secure_suite.py --phase main --dir DIR --results FILE \\
        --zk-tls A --zk-sasl A [--shepherd-tls A --shepherd-sasl A]
    secure_suite.py --phase enforce --dir DIR --results FILE --zk-sasl A [--shepherd-sasl A]
    secure_suite.py --report FILE [--matrix OUT.md]

`main` needs servers with TLS (ssl.clientAuth=need) and SASL; `enforce` servers that also
have enforce.auth.enabled=true with enforce.auth.schemes=sasl. Each case runs on ZooKeeper
first: it must meet the case's expectation there (else the expectation is wrong), and where the
case names an outcome, Shepherd's must equal ZooKeeper's. A bystander session, opened before
the cases, must stay connected, on the same session, and able to write after every bad input.
Prints one line per case and appends JSON lines to FILE; `--report` prints the matrix and
`secure: N passed, M failed`, and exits 1 on any failure.
"""

import argparse
import json
import logging
import os
import sys
import threading
import traceback
import uuid
from collections import namedtuple

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import matrix  # noqa: E402
import probes  # noqa: E402
from kazoo.exceptions import AuthFailedError, NoAuthError  # noqa: E402
from kazoo.protocol.states import KazooState  # noqa: E402
from kazoo.security import OPEN_ACL_UNSAFE, make_acl  # noqa: E402

SUBJECT = "CN=client,O=Shepherd"  # the subject of client.pem, as ZooKeeper's x509 provider names it
USER = os.environ.get("SHEPHERD_SASL_USER", "alice")
PASSWORD = os.environ.get("SHEPHERD_SASL_PASSWORD", "alice-secret")
ZK, SHEPHERD = "ZooKeeper 3.8", "Shepherd"


class Server:
    def __init__(self, name, tls, sasl, secure_dir):
        self.name, self.tls, self.sasl, self.dir = name, tls, sasl, secure_dir
        self.root = "/secure-" + uuid.uuid4().hex[:12]
        self.bystander = None
        self.states = []  # the bystander's state changes after it connected

    def open_bystander(self, phase):
        if phase == "main" and self.tls:
            zk = probes.kazoo(self.tls, self.dir, cert="client", tls=True)
        elif phase == "main":  # no TLS port: the SASL cases still get their bystander
            zk = probes.kazoo(self.sasl, self.dir)
        else:
            zk = probes.kazoo(self.sasl, self.dir, sasl=(USER, PASSWORD))
        zk.add_listener(self.states.append)
        zk.create(self.root, b"", acl=OPEN_ACL_UNSAFE)
        zk.create(self.root + "/bystander", b"0")
        self.bystander, self.session = zk, zk.client_id[0]

    def bystander_ok(self):
        """Why the bystander was disturbed, or None."""
        zk = self.bystander
        if zk is None:
            return "no bystander session"
        if self.states:
            return f"the bystander's session changed state: {self.states}"
        if zk.client_id is None or zk.client_id[0] != self.session:
            return "the bystander's session id changed"
        value = uuid.uuid4().hex.encode()
        zk.set(self.root + "/bystander", value)
        if zk.get(self.root + "/bystander")[0] != value:
            return "the bystander read back another value"
        return None


# ---------------------------------------------------------------- cases
# Each returns an outcome (Shepherd's must equal ZooKeeper's) or raises
# AssertionError. s is the Server.


def expect(cond, what):
    if not cond:
        raise AssertionError(what)


def acl_ids(acls):
    return sorted((a.perms, a.id.scheme, a.id.id) for a in acls)


def kazoo_tls(s):
    zk = probes.kazoo(s.tls, s.dir, cert="client", tls=True)
    try:
        path = s.root + "/x509"
        zk.create(path, b"tls-data", acl=[make_acl("x509", SUBJECT, all=True)])
        expect(zk.get(path)[0] == b"tls-data", "get returned other data")
        acls = acl_ids(zk.get_acls(path)[0])
        who = probes.whoami(zk)
        expect(("x509", SUBJECT) in who, f"whoami has no x509 {SUBJECT}: {who}")
    finally:
        probes.close(zk)
    other = probes.kazoo(s.tls, s.dir, cert="other", tls=True)
    try:
        try:
            other.get(path)
            denied = "read"
        except NoAuthError:
            denied = "NoAuth"
        expect(denied == "NoAuth", "another certificate read a node with an x509 ACL")
    finally:
        probes.close(other)
    return {"acl": acls, "whoami": who, "other certificate": denied}


def kazoo_sasl(s):
    zk = probes.kazoo(s.sasl, s.dir, sasl=(USER, PASSWORD))
    try:
        path = s.root + "/sasl"
        zk.create(path, b"sasl-data", acl=[make_acl("sasl", USER, all=True)])
        expect(zk.get(path)[0] == b"sasl-data", "get returned other data")
        acls = acl_ids(zk.get_acls(path)[0])
        who = probes.whoami(zk)
        expect(("sasl", USER) in who, f"whoami has no sasl {USER}: {who}")
    finally:
        probes.close(zk)
    anon = probes.kazoo(s.sasl, s.dir)
    try:
        try:
            anon.get(path)
            denied = "read"
        except NoAuthError:
            denied = "NoAuth"
        expect(denied == "NoAuth", "an anonymous client read a node with a sasl ACL")
    finally:
        probes.close(anon)
    return {"acl": acls, "whoami": who, "anonymous": denied}


def _zkcli_case(s, addr, commands, expected, **kw):
    status, lines = probes.zkcli(addr, [c.replace("ROOT", s.root) for c in commands], s.dir, **kw)
    lines = [line.replace(s.root, "ROOT") for line in lines]
    for want in expected:
        expect(want in lines, f"zkCli printed no line {want!r}; it printed {lines}")
    # Event lines interleave with command output by thread timing; compare as a multiset.
    return {"status": status, "lines": sorted(lines)}


def zkcli_tls(s):
    return _zkcli_case(
        s,
        s.tls,
        ["whoami", "create ROOT/zkcli-tls hello-tls", "get ROOT/zkcli-tls",
         "getAcl ROOT/zkcli-tls", "delete ROOT/zkcli-tls", "ls ROOT"],
        ["x509: " + SUBJECT, "hello-tls", "'world,'anyone", "Created ROOT/zkcli-tls"],
        tls=True,
    )


def zkcli_tls_pem(s):
    return _zkcli_case(
        s,
        s.tls,
        ["whoami", "create ROOT/zkcli-pem hello-pem", "get ROOT/zkcli-pem",
         "delete ROOT/zkcli-pem"],
        ["x509: " + SUBJECT, "hello-pem", "Created ROOT/zkcli-pem"],
        tls=True,
        pem=True,
    )


def zkcli_sasl(s):
    return _zkcli_case(
        s,
        s.sasl,
        ["whoami", f"create ROOT/zkcli-sasl hello-sasl sasl:{USER}:cdrwa",
         "get ROOT/zkcli-sasl", "getAcl ROOT/zkcli-sasl", "delete ROOT/zkcli-sasl"],
        [f"sasl: {USER}", "hello-sasl", f"'sasl,'{USER}",
         "WatchedEvent state:SaslAuthenticated type:None path:null"],
        jaas="client-jaas.conf",
    )


def _refused(outcome):
    expect(probes.refused(outcome), f"not refused: {outcome}")
    # The alert's wording differs between TLS stacks; whether it was refused is compared.
    return "refused"


def plaintext_on_tls(s):
    return _refused(probes.plaintext_probe(s.tls))


def untrusted_cert(s):
    return _refused(probes.tls_probe(s.tls, s.dir, "untrusted"))


def no_cert(s):
    return _refused(probes.tls_probe(s.tls, s.dir, None))


def kazoo_wrong_password(s):
    # ZooKeeper answers the SASL exchange after the session is open, so start() may return
    # first; kazoo then reports the failure as the session being LOST in AUTH_FAILED.
    lost = threading.Event()
    try:
        zk = probes.kazoo(
            s.sasl, s.dir, sasl=(USER, "not-" + PASSWORD),
            listener=lambda state: lost.set() if state == KazooState.LOST else None,
        )
    except AuthFailedError:
        return "auth failed"  # the answer came before the session's: the same outcome
    try:
        expect(lost.wait(probes.WAIT), "a wrong password was accepted")
        return "auth failed"
    finally:
        probes.close(zk)


def zkcli_wrong_password(s):
    out = _zkcli_case(
        s, s.sasl, ["whoami", "get /"], ["WatchedEvent state:AuthFailed type:None path:null"],
        jaas="client-jaas-wrong.conf",
    )
    return out


def kazoo_skips_sasl(s):
    zk = probes.kazoo(s.sasl, s.dir)
    try:
        zk.get("/")
    except Exception as e:
        return type(e).__name__
    finally:
        probes.close(zk)
    raise AssertionError("a client that skipped SASL was served")


def zkcli_skips_sasl(s):
    status, lines = probes.zkcli(s.sasl, ["create /zkcli-skips x"], s.dir)
    want = "KeeperErrorCode = Session closed because client failed to authenticate for /zkcli-skips"
    expect(want in lines, f"zkCli printed no line {want!r}; it printed {lines}")
    return "session closed, requires authentication"


def kazoo_sasl_enforced(s):
    zk = probes.kazoo(s.sasl, s.dir, sasl=(USER, PASSWORD))
    try:
        zk.create(s.root + "/enforced", b"e")
        return probes.whoami(zk)
    finally:
        probes.close(zk)


Case = namedtuple("Case", "phase row column what fn bad")
TLS, SASL = "TLS", "SASL"

# Every case's outcome on Shepherd must equal its outcome on ZooKeeper. Bad inputs also check
# the bystander afterwards.
CASES = [
    Case("main", "kazoo", TLS, "x509 ACL, get, whoami; another certificate gets NoAuth",
         kazoo_tls, False),
    Case("main", "zkCli (Netty)", TLS, "whoami, create, get, getAcl, delete", zkcli_tls, False),
    Case("main", "zkCli (Netty, PEM stores)", TLS, "whoami, create, get, delete", zkcli_tls_pem,
         False),
    Case("main", "kazoo", SASL, "DIGEST-MD5, sasl ACL, get, whoami; anonymous gets NoAuth",
         kazoo_sasl, False),
    Case("main", "zkCli (JAAS Client)", SASL, "whoami, create with a sasl ACL, getAcl",
         zkcli_sasl, False),
    Case("main", "bad: plaintext client on the TLS port", TLS, "refused", plaintext_on_tls, True),
    Case("main", "bad: untrusted client certificate", TLS, "refused", untrusted_cert, True),
    Case("main", "bad: no client certificate (clientAuth=need)", TLS, "refused", no_cert, True),
    Case("main", "bad: wrong SASL password (kazoo)", SASL, "AuthFailed", kazoo_wrong_password,
         True),
    Case("main", "bad: wrong SASL password (zkCli)", SASL, "AuthFailed event",
         zkcli_wrong_password, True),
    Case("enforce", "kazoo", SASL, "served under enforce.auth.schemes=sasl", kazoo_sasl_enforced,
         False),
    Case("enforce", "bad: skipping SASL when enforced (kazoo)", SASL, "session closed",
         kazoo_skips_sasl, True),
    Case("enforce", "bad: skipping SASL when enforced (zkCli)", SASL, "session closed",
         zkcli_skips_sasl, True),
]


def run_case(server, fn, bad):
    try:
        outcome = fn(server)
        if bad:
            disturbed = server.bystander_ok()
            expect(disturbed is None, f"bystander: {disturbed}")
        return True, outcome, ""
    except AssertionError as e:
        return False, None, str(e)
    except Exception as e:
        return False, None, f"{type(e).__name__}: {e}".strip() + _where()


def _where():
    if os.environ.get("SECURE_SUITE_TRACE"):
        return "\n" + traceback.format_exc()
    return ""


def run_phase(args):
    servers = [Server(ZK, args.zk_tls, args.zk_sasl, args.dir)]
    if args.shepherd_sasl or args.shepherd_tls:
        servers.append(Server(SHEPHERD, args.shepherd_tls, args.shepherd_sasl, args.dir))
    broken = {}
    for s in servers:
        try:
            s.open_bystander(args.phase)
        except Exception as e:
            broken[s.name] = f"the bystander could not connect: {type(e).__name__}: {e}"
    rows = []
    for phase, row, column, case, fn, bad in CASES:
        if phase != args.phase:
            continue
        results = {}
        for name in (ZK, SHEPHERD):
            s = next((s for s in servers if s.name == name), None)
            if s is None:
                results[name] = (False, None, "not served (no Shepherd address given)")
            elif name in broken:
                results[name] = (False, None, broken[name])
            elif not (s.tls if column == "TLS" else s.sasl):
                results[name] = (False, None, f"not served (no {column} port)")
            else:
                results[name] = run_case(s, fn, bad)
        zk_ok, zk_out, _ = results[ZK]
        sh_ok, sh_out, sh_why = results[SHEPHERD]
        if sh_ok and zk_ok and sh_out != zk_out:
            results[SHEPHERD] = (False, sh_out, f"outcome {sh_out!r}, ZooKeeper's {zk_out!r}")
        for name in (ZK, SHEPHERD):
            ok, out, why = results[name]
            line = f"{'ok  ' if ok else 'FAIL'} [{name}] {row} / {column}: {case}"
            if ok and bad:
                line += f" ({out})"
            if not ok:
                line += f": {why}"
            print(line, flush=True)
            rows.append(
                {"server": name, "row": row, "column": column, "case": case, "ok": ok, "why": why}
            )
    for s in servers:
        if s.bystander is not None:
            probes.close(s.bystander)
    with open(args.results, "a") as f:
        for r in rows:
            f.write(json.dumps(r) + "\n")
    return all(r["ok"] for r in rows)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--phase", choices=["main", "enforce"])
    p.add_argument("--dir")
    p.add_argument("--results")
    p.add_argument("--zk-tls")
    p.add_argument("--zk-sasl")
    p.add_argument("--shepherd-tls")
    p.add_argument("--shepherd-sasl")
    p.add_argument("--report")
    p.add_argument("--matrix")
    args = p.parse_args()
    # kazoo logs every refused reconnect; the cases say what happened. SECURE_SUITE_LOG=DEBUG
    # shows kazoo's log.
    logging.basicConfig(level=os.environ.get("SECURE_SUITE_LOG", "CRITICAL"))
    if args.report:
        return 0 if matrix.report(args.report, args.matrix) else 1
    if not (args.phase and args.dir and args.results and args.zk_sasl):
        p.error("--phase, --dir, --results and --zk-sasl are needed")
    # A wait inside kazoo that never returns must not hang CI: the whole phase is bounded.
    done = threading.Event()
    result = []
    worker = threading.Thread(
        target=lambda: (result.append(run_phase(args)), done.set()), daemon=True
    )
    worker.start()
    if not done.wait(timeout=240):
        print(f"FAIL phase {args.phase} did not finish within 240 s", flush=True)
        return 1
    return 0 if result and result[0] else 1


if __name__ == "__main__":
    sys.exit(main())
