"""Shared helpers of the package's tests: bounded waits on kazoo clients."""

from __future__ import annotations

import threading
from typing import Iterator, List

import pytest
from kazoo.client import KazooClient

#: How long a test waits for an event before it fails (never a sleep standing in for one).
WAIT_S = 10.0


class States:
    """Every session state kazoo's connection reports (KeeperState: CONNECTED,
    EXPIRED_SESSION…), recorded by wrapping the client's session callback, with a bounded wait
    for one of them."""

    def __init__(self, client: KazooClient) -> None:
        self.seen: List[str] = []
        self._changed = threading.Condition()
        original = client._session_callback

        def record(state: str) -> None:
            original(state)
            with self._changed:
                self.seen.append(state)
                self._changed.notify_all()

        client._session_callback = record

    def wait_for(self, state: str) -> bool:
        with self._changed:
            return self._changed.wait_for(lambda: state in self.seen, timeout=WAIT_S)


@pytest.fixture
def kazoo_client(zk_server) -> Iterator[KazooClient]:
    """A started kazoo client on ``zk_server``, stopped after the test."""
    client = KazooClient(zk_server.connect_string, timeout=10)
    client.start(timeout=WAIT_S)
    yield client
    client.stop()
    client.close()
