"""Server-side expiry and failover, as kazoo sees them."""

from __future__ import annotations

import threading

from kazoo.client import KazooClient
from kazoo.protocol.states import KazooState, KeeperState

from conftest import WAIT_S, States


def test_expiry_on_the_server_is_expired_session_for_kazoo(zk_server):
    client = KazooClient(zk_server.connect_string, timeout=10)
    states = States(client)
    lost = threading.Event()
    client.add_listener(lambda state: lost.set() if state == KazooState.LOST else None)
    client.start(timeout=WAIT_S)
    other = KazooClient(zk_server.connect_string)
    other.start(timeout=WAIT_S)
    client.create("/owned", ephemeral=True)
    deleted = threading.Event()
    other.exists("/owned", watch=lambda event: deleted.set())
    old = client.client_id[0]

    zk_server.expire_session(old)

    assert deleted.wait(WAIT_S), "the ephemeral's watcher was not told"
    assert lost.wait(WAIT_S), "kazoo did not report LOST"
    assert states.wait_for(KeeperState.EXPIRED_SESSION)
    client.retry(client.get, "/")
    assert client.client_id[0] != old
    assert other.exists("/owned") is None
    client.stop()
    other.stop()


def test_a_stopped_member_fails_over_with_the_session(zk_ensemble):
    client = KazooClient(zk_ensemble.connect_string, timeout=10)
    client.start(timeout=WAIT_S)
    client.create("/mine", ephemeral=True)
    session = client.client_id[0]
    member = next(s["member"] for s in zk_ensemble.sessions() if int(s["id"], 16) == session)

    zk_ensemble.stop_member(member)

    assert zk_ensemble.member_states()[member] == "stopped"
    client.retry(client.get, "/mine")
    assert client.client_id[0] == session
    moved = next(s["member"] for s in zk_ensemble.sessions() if int(s["id"], 16) == session)
    assert moved != member
    zk_ensemble.start_member(member)
    client.stop()
