"""shepherd-zk: a ZooKeeper-compatible server inside the Python process.

`Server` runs Shepherd's embedded server on runtime threads of its own (no subprocess, no
JVM) and gives a test the same controls as the Rust `Server`: server-side session expiry,
dropped connections, frozen sessions, fault rules, ensemble members stopped and partitioned,
and views of the sessions, the tree and the notifications sent. The controls speak the JSON of
the HTTP test controls (docs/test-controls.md), through the same code in the server.

Also in the package: the pytest plugin (`shepherd_zk.pytest_plugin`, fixtures `zk_server`,
`zk_server_module`, `zk_server_session`, `zk_ensemble`) and a drop-in for kazoo's test harness
(`shepherd_zk.kazoo`).
"""

from __future__ import annotations

import json
import os
from typing import Any, Dict, List, Mapping, Optional, Union

from shepherd_zk._native import NativeServer, ServerError, check_settings

__all__ = ["Server", "ServerError"]

#: What a setting's value may be: zoo.cfg text, a number, or a boolean (written true/false).
SettingValue = Union[str, int, float, bool]


def _setting_text(value: SettingValue) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _session_id(session_id: Union[int, str]) -> str:
    """A session id for a control's path: an int (kazoo's ``client_id[0]``) or ``"0x…"``."""
    if isinstance(session_id, bool) or not isinstance(session_id, (int, str)):
        raise TypeError(f"a session id is an int or a '0x…' string, not {session_id!r}")
    return str(session_id)


class Server:
    """An embedded ZooKeeper-compatible server, in this process.

    ``Server(port=0, data_dir=None, members=1, settings=None)`` configures it; ``start()`` (or
    ``with Server() as zk:``) starts it, ``close()`` (or the end of the ``with``) ends it.

    :param port: the first member's port; 0 picks free ports. Member ``i`` of an ensemble with
        a fixed port listens on ``port + i - 1``.
    :param data_dir: where to keep the transaction log and snapshots (ZooKeeper 3.8's format);
        ``None`` keeps everything in memory.
    :param members: 1 for a single server, 3 (or any n) for an in-process ensemble whose
        members can be stopped, started and partitioned.
    :param settings: zoo.cfg keys the server reads, e.g. ``{"tickTime": 500,
        "extendedTypesEnabled": True}``. An unknown key raises ``ValueError`` naming it.
    """

    def __init__(
        self,
        port: int = 0,
        data_dir: Optional[Union[str, "os.PathLike[str]"]] = None,
        members: int = 1,
        settings: Optional[Mapping[str, SettingValue]] = None,
    ) -> None:
        if not isinstance(port, int) or not 0 <= port <= 65535:
            raise ValueError(f"port: 0 to 65535, not {port!r}")
        if not isinstance(members, int) or members < 1:
            raise ValueError(f"members: a whole number from 1, not {members!r}")
        self._port = port
        self._data_dir = os.fspath(data_dir) if data_dir is not None else None
        self._members = members
        self._settings = [(str(k), _setting_text(v)) for k, v in (settings or {}).items()]
        self._native: Optional[NativeServer] = None
        self._stopped = False
        self._closed = False
        # Checked now, so that a misspelt key fails where it is written.
        check_settings(self._settings)

    # ------------------------------------------------------------------ lifecycle

    def start(self) -> "Server":
        """Starts the server, or starts it again after `stop()` on the same ports with the
        same tree and sessions. Returns the server, so ``zk = Server().start()`` works."""
        if self._closed:
            raise ServerError("the server is closed: call no method on it after close()")
        if self._native is None:
            self._native = NativeServer.start(
                self._port, self._data_dir, self._members, self._settings
            )
        elif self._stopped:
            for member in range(1, self._members + 1):
                self._call("POST", f"/members/{member}/start")
        self._stopped = False
        return self

    def stop(self) -> None:
        """Stops every member: ports closed, connections dropped, clients see a connection
        loss. The tree, the sessions (their timeouts running) and the zxid stay; `start()`
        brings the server back on the same ports."""
        for member in range(1, self._members + 1):
            self._call("POST", f"/members/{member}/stop")
        self._stopped = True

    def restart(self) -> None:
        """Stops and starts the server on the same ports, keeping the tree, the sessions and
        the zxid (a data directory is flushed and recovered from, as at start). Clients see
        a connection loss, then resume their sessions. A server stopped with `stop()` comes
        back too."""
        if self._stopped:
            # A restart keeps stopped members stopped; stop() stopped them all.
            self.start()
        self._running().restart()

    def close(self) -> None:
        """Ends the server and frees its ports and threads. Sessions are not closed. Any call
        afterwards raises `ServerError`; calling `close()` again does nothing."""
        self._closed = True
        if self._native is not None:
            self._native.close()

    def __enter__(self) -> "Server":
        return self.start()

    def __exit__(self, *exc_info: Any) -> None:
        self.close()

    def __repr__(self) -> str:
        if self._native is None:
            state = "closed" if self._closed else "not started"
        else:
            state = "closed" if self._closed else self._native.connect_string
        return f"<shepherd_zk.Server {state}>"

    # ------------------------------------------------------------------ addresses

    @property
    def connect_string(self) -> str:
        """Every member's ``host:port``, comma-separated, ready for any ZooKeeper client."""
        return self._running().connect_string

    @property
    def port(self) -> int:
        """Member 1's port."""
        return self._running().ports[0]

    @property
    def ports(self) -> List[int]:
        """Every member's port, in member order (member 1 first)."""
        return list(self._running().ports)

    @property
    def members(self) -> int:
        """How many members the server has (1 for a single server)."""
        return self._members

    # ------------------------------------------------------------------ sessions

    def expire_session(self, session_id: Union[int, str]) -> None:
        """Ends the session on the server now, as its timeout would: its ephemerals are
        deleted and watchers told, its connection closed; the client's next contact is told
        the session expired (kazoo: ``KazooState.LOST``). Raises `KeyError` if unknown."""
        self._call("POST", f"/sessions/{_session_id(session_id)}/expire")

    def close_connection(self, session_id: Union[int, str]) -> None:
        """Drops the session's connection and keeps the session, as a network reset would;
        the client reconnects and resumes it."""
        self._call("POST", f"/sessions/{_session_id(session_id)}/close")

    def freeze_session(self, session_id: Union[int, str]) -> None:
        """Neither reads nor writes the session's connection (a reconnect is held too) while
        its timeout runs: a partition between that client and the server."""
        self._call("POST", f"/sessions/{_session_id(session_id)}/freeze")

    def thaw_session(self, session_id: Union[int, str]) -> None:
        """Ends a freeze; what was queued is delivered in order."""
        self._call("POST", f"/sessions/{_session_id(session_id)}/thaw")

    def sessions(self) -> List[Dict[str, Any]]:
        """Every session: ``id`` (``"0x…"``), ``timeout_ms``, ``connected``, ``frozen``,
        ``member``, ``ephemerals``, ``watches`` (docs/test-controls.md, "Sessions")."""
        return self._call("GET", "/sessions")["sessions"]

    # ------------------------------------------------------------------ faults

    def add_fault(self, fault: str, **rule: Any) -> int:
        """Adds a fault rule and returns its id. ``fault`` is ``"apply_then_drop"``,
        ``"drop_before_apply"``, ``"delay"`` (with ``delay_ms``) or ``"reject"`` (with
        ``error``, e.g. ``"NoNode"``); the filters ``session``, ``opcode`` (``"Create"``…),
        ``path_prefix`` and ``times`` (``"once"``, ``"always"`` or n) are optional
        (docs/test-controls.md, "Faults"). A bad rule raises `ValueError`."""
        rule["fault"] = fault
        return int(self._call("POST", "/faults", rule)["id"])

    def remove_fault(self, rule: int) -> None:
        """Removes the fault rule with this id (`KeyError` if there is none)."""
        self._call("DELETE", f"/faults/{int(rule)}")

    def faults(self) -> List[Dict[str, Any]]:
        """Every fault rule, in the order added, with how many times it fired."""
        return self._call("GET", "/faults")["faults"]

    def clear_faults(self) -> None:
        """Removes every fault rule."""
        self._call("DELETE", "/faults")

    # ------------------------------------------------------------------ tree

    def set_sequence_counter(self, path: str, n: int) -> None:
        """Sets the counter of `path`'s sequential children: the next one is numbered `n`."""
        self._call("POST", "/sequence", {"path": path, "value": n})

    def dump_tree(self) -> List[Dict[str, Any]]:
        """Every znode, sorted by path: ``{"path": …, "stat": {…}}`` with ZooKeeper's Stat
        field names."""
        return self._call("GET", "/tree")["nodes"]

    def dump_watches(self) -> List[Dict[str, Any]]:
        """Every watch registration: path, kind, mode, session."""
        return self._call("GET", "/watches")["watches"]

    def notification_counts(self) -> Dict[str, Any]:
        """Watch notifications sent since start: ``total``, one count per event type
        (``NodeCreated``, ``NodeDeleted``, ``NodeDataChanged``, ``NodeChildrenChanged``), and
        ``per_session`` (by ``"0x…"`` id)."""
        return self._call("GET", "/notifications")

    def reset(self) -> None:
        """Deletes every node but ``/`` and ``/zookeeper``'s, as a super user (so that ACLs do
        not stop it), and removes every fault rule: what the shared fixtures do between
        tests. A server stopped with `stop()` is started first."""
        if self._stopped:
            self.start()
        self._running().reset()

    # ------------------------------------------------------------------ ensemble

    def stop_member(self, i: int) -> None:
        """Stops member `i` (1..=n, as ZooKeeper's myid): its port closes, its clients move
        to another member with their sessions."""
        self._call("POST", f"/members/{int(i)}/stop")

    def start_member(self, i: int) -> None:
        """Starts member `i` again on its port."""
        self._call("POST", f"/members/{int(i)}/start")

    def partition_member(self, i: int) -> None:
        """Cuts member `i` off from its clients: connections stay open but silent, so their
        clients time out and move on."""
        self._call("POST", f"/members/{int(i)}/partition")

    def heal_member(self, i: int) -> None:
        """Ends member `i`'s partition or isolation."""
        self._call("POST", f"/members/{int(i)}/heal")

    def isolate_member(self, i: int) -> None:
        """Cuts member `i` off from its peers, not its clients: after syncLimit it looks
        alone (its clients dropped), and if it led, the others elect another leader."""
        self._call("POST", f"/members/{int(i)}/isolate")

    def elect_member(self, i: int) -> None:
        """Forces an election that member `i` wins: every member looks (every client is
        disconnected), and after the election time `i` leads."""
        self._call("POST", f"/members/{int(i)}/elect")

    def member_states(self) -> Dict[int, str]:
        """Each member's state: ``"up"``, ``"stopped"``, ``"partitioned"`` or
        ``"isolated"``."""
        members = self._call("GET", "/members")["members"]
        return {int(m["id"]): m["state"] for m in members}

    def member_roles(self) -> Dict[int, Optional[str]]:
        """Each member's role: ``"leader"``, ``"follower"``, ``"looking"`` while an
        election runs, or ``None`` while stopped."""
        members = self._call("GET", "/members")["members"]
        return {int(m["id"]): m["role"] for m in members}

    def leader(self) -> Optional[int]:
        """The member that reports ``Mode: leader``; ``None`` for a single server."""
        return self._call("GET", "/members")["leader"]

    # ------------------------------------------------------------------ internals

    def _running(self) -> NativeServer:
        if self._closed:
            raise ServerError("the server is closed: call no method on it after close()")
        if self._native is None:
            raise ServerError("the server is not started: call start() or use `with`")
        return self._native

    def _call(self, method: str, path: str, body: Optional[Dict[str, Any]] = None) -> Any:
        text = json.dumps(body) if body is not None else ""
        status, answer = self._running().control(method, path, text)
        value = json.loads(answer)
        if status < 300:
            return value
        message = value.get("error", answer) if isinstance(value, dict) else answer
        if status == 404:
            raise KeyError(message)
        if status == 400:
            raise ValueError(message)
        raise ServerError(f"{method} {path}: {message} (status {status})")
