"""The pytest fixtures: fresh servers, and shared ones emptied between tests."""

from __future__ import annotations

import time

from kazoo.client import KazooClient
from kazoo.security import make_digest_acl

_seen = {}


def _client(server, auth_data=None):
    client = KazooClient(server.connect_string, auth_data=auth_data)
    client.start(timeout=10)
    return client


def _user_nodes(server):
    return [n["path"] for n in server.dump_tree() if not n["path"].startswith("/zookeeper")][1:]


def test_zk_server_is_fresh_1(zk_server):
    _seen.setdefault("ports", []).append(zk_server.port)
    assert _user_nodes(zk_server) == []
    client = _client(zk_server)
    client.create("/left-behind")
    client.stop()


def test_zk_server_is_fresh_2(zk_server):
    assert _user_nodes(zk_server) == []


def test_module_server_leaves_nodes_1(zk_server_module):
    _seen["module"] = zk_server_module.port
    client = _client(zk_server_module, auth_data=[("digest", "someone:x")])
    # Nobody but "someone" may delete it: the reset must act as the super user.
    client.create("/guarded/deep", makepath=True, acl=[make_digest_acl("someone", "x", all=True)])
    zk_server_module.add_fault("delay", delay_ms=1)
    client.stop()


def test_module_server_is_emptied_2(zk_server_module):
    assert zk_server_module.port == _seen["module"]
    assert _user_nodes(zk_server_module) == []
    assert zk_server_module.faults() == []


def test_session_server_leaves_nodes_1(zk_server_session):
    _seen["session"] = zk_server_session.port
    client = _client(zk_server_session)
    client.create("/x/y/z", makepath=True)
    client.stop()
    zk_server_session.stop()


def test_session_server_is_emptied_and_running_2(zk_server_session):
    assert zk_server_session.port == _seen["session"]
    assert _user_nodes(zk_server_session) == []
    client = _client(zk_server_session)
    client.stop()


def test_zk_ensemble_has_three_members(zk_ensemble):
    assert len(zk_ensemble.ports) == 3
    assert zk_ensemble.connect_string.count(",") == 2
    assert zk_ensemble.leader() == 3
    zk_ensemble.partition_member(3)
    assert zk_ensemble.member_states()[3] == "partitioned"
    zk_ensemble.heal_member(3)
    assert zk_ensemble.member_states() == {1: "up", 2: "up", 3: "up"}


def test_zk_ensemble_elects_on_demand_and_isolates(zk_ensemble):
    zk_ensemble.elect_member(1)
    assert zk_ensemble.member_roles() == {1: "looking", 2: "looking", 3: "looking"}
    # The election takes one tick (2 s by default); bounded at five times that.
    deadline = time.monotonic() + 10
    while zk_ensemble.leader() != 1:
        assert time.monotonic() < deadline, "no leader after the election time"
        time.sleep(0.05)
    assert zk_ensemble.member_roles() == {1: "leader", 2: "follower", 3: "follower"}
    zk_ensemble.isolate_member(2)
    assert zk_ensemble.member_states()[2] == "isolated"
    zk_ensemble.heal_member(2)
    assert zk_ensemble.member_states()[2] == "up"
