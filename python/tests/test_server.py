"""shepherd_zk.Server: start, settings, addresses, restart, close, and the controls."""

from __future__ import annotations

import socket

import pytest
from kazoo.client import KazooClient
from kazoo.exceptions import NoAuthError, NoNodeError

from shepherd_zk import Server, ServerError


def test_unknown_settings_are_refused_naming_the_key():
    with pytest.raises(ValueError, match="tickTimee"):
        Server(settings={"tickTimee": 500})
    with pytest.raises(ValueError, match="tickTime"):
        Server(settings={"tickTime": "soon"})
    with pytest.raises(ValueError):
        Server(settings={"tickTime=1\nmaxClientCnxns": 3})


def test_known_settings_are_applied():
    with Server(settings={"tickTime": 500, "extendedTypesEnabled": True}) as zk:
        client = KazooClient(zk.connect_string, timeout=30)
        client.start(timeout=10)
        # tickTime 500 caps a session at 20 ticks: the server grants 10 s, not 30.
        assert zk.sessions()[0]["timeout_ms"] == 10_000
        client.stop()


def test_addresses_and_a_client(kazoo_client, zk_server):
    assert zk_server.connect_string == f"127.0.0.1:{zk_server.port}"
    assert zk_server.ports == [zk_server.port]
    kazoo_client.create("/a", b"1")
    assert [n["path"] for n in zk_server.dump_tree()][:2] == ["/", "/a"]
    assert zk_server.sessions()[0]["id"] == hex(kazoo_client.client_id[0])


def test_restart_keeps_the_tree_and_the_session(kazoo_client, zk_server):
    kazoo_client.create("/kept", b"v", ephemeral=True)
    session = kazoo_client.client_id[0]
    port = zk_server.port
    zk_server.restart()
    assert zk_server.port == port
    data, _ = kazoo_client.retry(kazoo_client.get, "/kept")
    assert data == b"v"
    assert kazoo_client.client_id[0] == session


def test_stop_then_start_on_the_same_port(kazoo_client, zk_server):
    kazoo_client.create("/kept", b"v")
    port = zk_server.port
    zk_server.stop()
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", port), timeout=5).close()
    zk_server.start()
    assert kazoo_client.retry(kazoo_client.get, "/kept")[0] == b"v"


def test_restart_after_stop_serves_again(kazoo_client, zk_server):
    kazoo_client.create("/kept", b"v")
    zk_server.stop()
    zk_server.restart()
    assert zk_server.member_states() == {1: "up"}
    assert kazoo_client.retry(kazoo_client.get, "/kept")[0] == b"v"


def test_a_data_dir_outlives_the_server(tmp_path):
    with Server(data_dir=tmp_path) as zk:
        client = KazooClient(zk.connect_string)
        client.start(timeout=10)
        client.create("/durable", b"d")
        client.stop()
    with Server(data_dir=tmp_path) as zk:
        paths = [n["path"] for n in zk.dump_tree()]
        assert "/durable" in paths


def test_calls_after_close_raise():
    zk = Server().start()
    zk.close()
    zk.close()
    with pytest.raises(ServerError, match="closed"):
        zk.sessions()
    with pytest.raises(ServerError, match="closed"):
        zk.start()


def test_a_panic_on_a_server_thread_is_an_exception_then_the_server_goes_on(zk_server):
    zk_server._native._panic_on_server_thread()
    with pytest.raises(ServerError, match="panicked"):
        zk_server.sessions()
    assert zk_server.sessions() == []


def test_faults_and_sequence_counters(kazoo_client, zk_server):
    kazoo_client.create("/q")
    zk_server.set_sequence_counter("/q", 41)
    assert kazoo_client.create("/q/n-", sequence=True) == "/q/n-0000000041"
    rule = zk_server.add_fault("reject", error="NoAuth", opcode="Create", times="always")
    assert zk_server.faults()[0]["id"] == rule
    with pytest.raises(NoAuthError):
        kazoo_client.create("/refused")
    zk_server.remove_fault(rule)
    kazoo_client.create("/accepted")
    with pytest.raises(KeyError):
        zk_server.remove_fault(rule)
    with pytest.raises(ValueError, match="fault"):
        zk_server.add_fault("explode")


def test_notifications_are_counted(kazoo_client, zk_server):
    kazoo_client.create("/w")
    kazoo_client.exists("/w", watch=lambda event: None)
    kazoo_client.delete("/w")
    kazoo_client.sync("/")
    counts = zk_server.notification_counts()
    assert counts["NodeDeleted"] == 1
    assert counts["per_session"][hex(kazoo_client.client_id[0])] == 1


def test_close_connection_keeps_the_session(kazoo_client, zk_server):
    session = kazoo_client.client_id[0]
    zk_server.close_connection(session)
    kazoo_client.retry(kazoo_client.get, "/")
    assert kazoo_client.client_id[0] == session
    with pytest.raises(KeyError):
        zk_server.expire_session(12345)


def test_reset_deletes_nodes_an_acl_protects(kazoo_client, zk_server):
    from kazoo.security import make_digest_acl

    acl = [make_digest_acl("someone", "secret", all=True)]
    owner = KazooClient(zk_server.connect_string, auth_data=[("digest", "someone:secret")])
    owner.start(timeout=10)
    owner.create("/locked", acl=acl)
    owner.create("/locked2", acl=acl)
    owner.create("/locked2/child")
    owner.stop()
    # Deleting a child needs DELETE on its parent, which only "someone" has.
    with pytest.raises(NoAuthError):
        kazoo_client.delete("/locked2/child")
    zk_server.reset()
    paths = [n["path"] for n in zk_server.dump_tree()]
    assert "/locked" not in paths and "/locked2" not in paths
    with pytest.raises(NoNodeError):
        kazoo_client.get("/locked2")


def test_freeze_and_thaw(kazoo_client, zk_server):
    session = kazoo_client.client_id[0]
    zk_server.freeze_session(session)
    assert zk_server.sessions()[0]["frozen"] is True
    zk_server.thaw_session(session)
    assert zk_server.sessions()[0]["frozen"] is False
    kazoo_client.retry(kazoo_client.get, "/")
    with pytest.raises(ServerError, match="not frozen"):
        zk_server.thaw_session(session)
