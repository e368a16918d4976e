"""A drop-in for kazoo's test harness (``kazoo.testing``, as of kazoo 2.11).

Change ``from kazoo.testing import KazooTestCase`` to
``from shepherd_zk.kazoo import KazooTestCase`` and nothing else: the same attributes
(``self.client``, ``self.hosts``, ``self.servers``, ``self.cluster``), the same methods
(``setup_zookeeper()``, ``teardown_zookeeper()``, ``_get_client()``,
``_get_nonchroot_client()``, ``expire_session(event_factory)``,
``lose_connection(event_factory)``), on an in-process Shepherd ensemble instead of a cluster of
JVMs. Two differences, both on purpose:

* ``expire_session`` ends the session on the server (its ephemerals are deleted, other clients'
  watches fire) instead of faking the expiry inside the client, and ``lose_connection`` drops
  the connection on the server; the client then sees what a real expiry or network reset gives;
* the cluster starts in a millisecond or so, so every test class may have a fresh one.

Like kazoo's ZooKeeper, the cluster keeps its data in a directory of its own (a fresh temporary
one, removed when the cluster ends) and syncs each write to disk before it answers. Some of
kazoo's tests count on a write taking a disk's time: ``test_connection_dropped`` sends a 1 MB
``set`` and then drops the connection, and expects the ``set`` to fail. Kept in memory, the
reply can come back first (it did in 8 runs of 40 on a 2-core machine).

As in kazoo, one cluster is shared by the test classes of a process (``ZOOKEEPER_CLUSTER_SIZE``
members, 3 unless set), each test gets its own chroot, and ``KazooTestCase.tearDownClass``
ends the cluster. Its super user is kazoo's, ``super:test``.
"""

from __future__ import annotations

import atexit
import logging
import os
import tempfile
import unittest
import uuid
from typing import Any, Callable, Iterator, List, Optional

from kazoo.client import KazooClient
from kazoo.exceptions import KazooException
from kazoo.protocol.states import KazooState

from shepherd_zk import Server

log = logging.getLogger(__name__)

__all__ = ["KazooTestCase", "KazooTestHarness", "ShepherdCluster", "get_global_cluster"]

#: kazoo's harness gives ZooKeeper this super user (``super:test``); so does this one.
SUPER_DIGEST = "super:D/InIHSb7yEEbrWz8b9l71RjZJU="

CLUSTER: Optional["ShepherdCluster"] = None


class ShepherdMember:
    """One member of the cluster, shaped as kazoo's ``ManagedZooKeeper``: ``address``,
    ``running``, ``run()``/``start()``, ``stop()``."""

    def __init__(self, cluster: "ShepherdCluster", member: int) -> None:
        self._cluster = cluster
        self.member = member

    @property
    def address(self) -> str:
        """``host:port`` of this member."""
        return f"127.0.0.1:{self._cluster.server.ports[self.member - 1]}"

    @property
    def running(self) -> bool:
        """Whether the member is up (not stopped)."""
        server = self._cluster._server
        if server is None:
            return False
        return server.member_states()[self.member] != "stopped"

    def run(self) -> None:
        """Starts the member (and the cluster, if it is not running)."""
        if self._cluster._server is None:
            self._cluster.start()
        else:
            self._cluster.server.start_member(self.member)

    start = run

    def stop(self) -> None:
        """Stops the member: its port closes, its clients move to another member."""
        if self._cluster._server is not None:
            self._cluster.server.stop_member(self.member)

    def destroy(self) -> None:
        """As kazoo's: stops the member."""
        self.stop()


class ShepherdCluster:
    """The cluster, shaped as kazoo's ``ZookeeperCluster``: a sequence of members with
    ``start()``, ``stop()`` and ``terminate()``; ``server`` is the `shepherd_zk.Server`."""

    def __init__(self, size: int = 3) -> None:
        self.size = size
        self._server: Optional[Server] = None
        self._data: Optional[tempfile.TemporaryDirectory[str]] = None
        self._members = [ShepherdMember(self, i) for i in range(1, size + 1)]

    @property
    def server(self) -> Server:
        """The running server (started on first use)."""
        if self._server is None:
            self.start()
        assert self._server is not None
        return self._server

    @property
    def data_dir(self) -> Optional[str]:
        """The directory the running cluster keeps its data in (``None`` until it starts)."""
        return self._data.name if self._data is not None else None

    def __getitem__(self, index: int) -> ShepherdMember:
        return self._members[index]

    def __iter__(self) -> Iterator[ShepherdMember]:
        return iter(self._members)

    def __len__(self) -> int:
        return len(self._members)

    def start(self) -> None:
        """Starts the cluster, or every stopped member of a running one."""
        if self._server is None:
            settings = {"superDigest": SUPER_DIGEST, "4lw.commands.whitelist": "*"}
            self._data = tempfile.TemporaryDirectory(prefix="shepherd-kazoo-")
            try:
                self._server = Server(
                    members=self.size, settings=settings, data_dir=self._data.name
                ).start()
            except BaseException:
                self._data.cleanup()
                self._data = None
                raise
        else:
            for member in self._members:
                member.run()

    def stop(self) -> None:
        """Ends the cluster (its data goes with it, as kazoo's does with its JVMs)."""
        self.terminate()

    def terminate(self) -> None:
        """Ends the cluster; the next use starts a fresh one."""
        if self._server is not None:
            self._server.close()
            self._server = None
        if self._data is not None:
            self._data.cleanup()
            self._data = None

    def get_ssl_client_configuration(self) -> Any:
        """kazoo's TLS material: this cluster starts no TLS port, so a test that asks for it
        is skipped."""
        raise unittest.SkipTest("shepherd_zk.kazoo's cluster has no TLS port")

    def get_logs(self, num_lines: int = 100) -> List[str]:
        """kazoo's conftest asks for the servers' logs on failure; they go to the process's
        own log here, so there are none to add."""
        return []


def get_global_cluster() -> ShepherdCluster:
    """The cluster the harnesses of this process share, created on first use."""
    global CLUSTER
    size = int(os.environ.get("ZOOKEEPER_CLUSTER_SIZE", "3"))
    if CLUSTER is not None and CLUSTER.size != size:
        CLUSTER.terminate()
        CLUSTER = None
    if CLUSTER is None:
        CLUSTER = ShepherdCluster(size)
        atexit.register(CLUSTER.terminate)
    return CLUSTER


class KazooTestHarness(unittest.TestCase):
    """kazoo's ``KazooTestHarness`` on an in-process Shepherd cluster.

    Use it as kazoo's: call ``setup_zookeeper()`` in ``setUp`` and ``teardown_zookeeper()`` in
    ``tearDown``, or derive from `KazooTestCase`, which does both.
    """

    DEFAULT_CLIENT_TIMEOUT = 15

    def __init__(self, *args: Any, **kw: Any) -> None:
        super().__init__(*args, **kw)
        self.client: Optional[KazooClient] = None
        self._clients: List[KazooClient] = []

    @property
    def cluster(self) -> ShepherdCluster:
        """The shared cluster."""
        return get_global_cluster()

    def log(self, level: int, msg: str, *args: Any, **kwargs: Any) -> None:
        log.log(level, msg, *args, **kwargs)

    @property
    def servers(self) -> str:
        """Every member's ``host:port``, comma-separated."""
        return ",".join(member.address for member in self.cluster)

    @property
    def secure_servers(self) -> str:
        """kazoo's TLS addresses: this harness starts no TLS port."""
        raise unittest.SkipTest("shepherd_zk.kazoo's cluster has no TLS port")

    def _get_nonchroot_client(self) -> KazooClient:
        client = KazooClient(self.servers)
        self._clients.append(client)
        return client

    def _get_client(self, **client_options: Any) -> KazooClient:
        client_options.setdefault("timeout", self.DEFAULT_CLIENT_TIMEOUT)
        client = KazooClient(self.hosts, **client_options)
        self._clients.append(client)
        return client

    def lose_connection(self, event_factory: Callable[[], Any]) -> None:
        """Drops the client's connection on the server; returns once it reconnected."""
        self._break_connection(self.cluster.server.close_connection, KazooState.SUSPENDED, event_factory)

    def expire_session(self, event_factory: Callable[[], Any]) -> None:
        """Expires the client's session on the server; returns once the client is connected
        again, with a new session."""
        self._break_connection(self.cluster.server.expire_session, KazooState.LOST, event_factory)

    def setup_zookeeper(self, **client_options: Any) -> None:
        """Starts the cluster if it is not running, and gives the test a client
        (``self.client``, started) chrooted to a fresh ``/kazootests<uuid>``."""
        cluster = self.cluster
        if not all(member.running for member in cluster):
            cluster.start()
        namespace = "/kazootests" + uuid.uuid4().hex
        self.hosts = self.servers + namespace
        # As kazoo's: a first client creates the chroot, so that the test's finds it.
        health = self._get_client()
        health.start()
        health.ensure_path("/")
        health.stop()
        if client_options.get("use_ssl"):
            raise unittest.SkipTest("shepherd_zk.kazoo's cluster has no TLS port")
        self.client = self._get_client(**client_options)
        self.client.start()
        self.client.ensure_path("/")

    def teardown_zookeeper(self) -> None:
        """Stops and closes every client the test was given."""
        while self._clients:
            client = self._clients.pop()
            try:
                client.stop()
            except KazooException:
                log.exception("Failed stopping client %s", client)
            finally:
                client.close()
        self.client = None

    def _break_connection(
        self,
        breaker: Callable[[int], None],
        expected_state: str,
        event_factory: Callable[[], Any],
    ) -> None:
        """Breaks the client's connection with `breaker(session_id)` on the server, then waits
        (bounded, as kazoo's harness) to see `expected_state` and then a reconnect."""
        assert self.client is not None, "setup_zookeeper() gives the client"
        lost = event_factory()
        safe = event_factory()

        def watch_loss(state: str) -> Optional[bool]:
            if state == expected_state:
                lost.set()
            elif lost.is_set() and state == KazooState.CONNECTED:
                safe.set()
                return True
            return None

        self.client.add_listener(watch_loss)
        breaker(self.client._session_id)

        lost.wait(5)
        if not lost.is_set():
            raise Exception("Failed to get notified of broken connection.")

        safe.wait(15)
        if not safe.is_set():
            raise Exception("Failed to see client reconnect.")

        self.client.retry(self.client.get_async, "/")


class KazooTestCase(KazooTestHarness):
    """kazoo's ``KazooTestCase``: a chrooted client per test, the cluster ended after the
    class."""

    def setUp(self) -> None:
        self.setup_zookeeper()

    def tearDown(self) -> None:
        self.teardown_zookeeper()

    @classmethod
    def tearDownClass(cls) -> None:
        if CLUSTER is not None:
            CLUSTER.terminate()
