"""The pytest plugin of shepherd-zk, registered through the ``pytest11`` entry point.

Fixtures:

* ``zk_server``: a fresh single server for each test, closed after it;
* ``zk_server_module`` and ``zk_server_session``: one server per module or per session, with
  every node that earlier tests created deleted (as a super user, so ACLs do not stop it),
  every fault rule removed, and the server started again if a test stopped it, before each test
  that uses it;
* ``zk_ensemble``: a fresh three-member ensemble for each test.

Each yields a `shepherd_zk.Server`; give a client its ``connect_string``.
"""

from __future__ import annotations

from typing import Iterator

import pytest

from shepherd_zk import Server


@pytest.fixture
def zk_server() -> Iterator[Server]:
    """A fresh in-memory server for this test."""
    with Server() as server:
        yield server


@pytest.fixture(scope="module")
def _zk_server_module_shared() -> Iterator[Server]:
    with Server() as server:
        yield server


@pytest.fixture(scope="session")
def _zk_server_session_shared() -> Iterator[Server]:
    with Server() as server:
        yield server


@pytest.fixture
def zk_server_module(_zk_server_module_shared: Server) -> Server:
    """One server for the whole module, emptied of earlier tests' nodes before this test."""
    _zk_server_module_shared.reset()
    return _zk_server_module_shared


@pytest.fixture
def zk_server_session(_zk_server_session_shared: Server) -> Server:
    """One server for the whole session, emptied of earlier tests' nodes before this test."""
    _zk_server_session_shared.reset()
    return _zk_server_session_shared


@pytest.fixture
def zk_ensemble() -> Iterator[Server]:
    """A fresh in-memory three-member ensemble for this test: ``stop_member(i)``,
    ``start_member(i)``, ``partition_member(i)``, ``heal_member(i)`` with i in 1..=3."""
    with Server(members=3) as server:
        yield server
