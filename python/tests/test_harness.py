"""shepherd_zk.kazoo: kazoo's harness API, with expiry and connection loss on the server."""

from __future__ import annotations

import os
import threading

from kazoo.protocol.states import KazooState

from shepherd_zk.kazoo import KazooTestCase, KazooTestHarness


class HarnessTest(KazooTestCase):
    def test_attributes_as_kazoo_has_them(self):
        assert self.client.connected
        assert self.hosts.startswith(self.servers + "/kazootests")
        assert len(self.cluster) == 3
        assert all(member.running for member in self.cluster)
        other = self._get_nonchroot_client()
        other.start()
        assert other.exists(self.client.chroot) is not None

    def test_writes_reach_the_clusters_data_dir(self):
        # Durable as kazoo's ZooKeeper is: some of kazoo's tests count on a write's disk time.
        mark = b"written-through-" + os.urandom(8).hex().encode()
        self.client.create("/durable", mark)
        logs = os.path.join(self.cluster.data_dir, "version-2")
        found = False
        for name in os.listdir(logs):
            if name.startswith("log."):
                with open(os.path.join(logs, name), "rb") as log:
                    found = found or mark in log.read()
        assert found

    def test_expire_session_ends_it_on_the_server(self):
        self.client.create("/eph", ephemeral=True)
        old = self.client.client_id[0]
        watcher = self._get_nonchroot_client()
        watcher.start()
        deleted = threading.Event()
        watcher.exists(self.client.chroot + "/eph", watch=lambda e: deleted.set())
        self.expire_session(threading.Event)
        assert deleted.wait(10)
        assert self.client.client_id[0] != old
        assert old not in [int(s["id"], 16) for s in self.cluster.server.sessions()]

    def test_lose_connection_keeps_the_session(self):
        states = []
        self.client.add_listener(states.append)
        old = self.client.client_id[0]
        self.lose_connection(threading.Event)
        assert KazooState.SUSPENDED in states
        assert self.client.client_id[0] == old

    def test_a_member_stopped_and_run_again(self):
        self.cluster[0].stop()
        assert not self.cluster[0].running
        self.client.retry(self.client.get, "/")
        self.cluster[0].run()
        assert self.cluster[0].running


class MixinTest(KazooTestHarness):
    def setUp(self):
        self.setup_zookeeper(timeout=5)

    def tearDown(self):
        self.teardown_zookeeper()
        assert self.client is None

    def test_client_options_reach_the_client(self):
        assert self.client._session_timeout <= 5000
