"""Type stubs of the native module (``python/src``): the embedded server and the command."""

from os import PathLike
from typing import List, Optional, Sequence, Tuple, Union

class ServerError(RuntimeError):
    """The embedded server failed: it panicked, was closed, or could not do what was asked."""

class NativeServer:
    """One embedded server and its runtime threads; `shepherd_zk.Server` wraps it."""

    @staticmethod
    def start(
        port: int,
        data_dir: Optional[Union[str, PathLike[str]]],
        members: int,
        settings: Sequence[Tuple[str, str]],
    ) -> NativeServer:
        """Starts a server; ``ValueError`` for a bad setting, ``OSError`` for a taken port."""
    @property
    def connect_string(self) -> str:
        """Every member's ``host:port``, comma-separated."""
    @property
    def ports(self) -> List[int]:
        """Every member's port, in member order."""
    @property
    def closed(self) -> bool:
        """Whether `close` was called."""
    def control(self, method: str, path: str, body: str) -> Tuple[int, str]:
        """One test-controls call (docs/test-controls.md): the status and the JSON text."""
    def restart(self) -> None:
        """Restarts on the same ports, keeping the tree, the sessions and the zxid."""
    def reset(self) -> None:
        """Deletes every node but ``/`` and ``/zookeeper``'s as a super user; clears faults."""
    def close(self) -> None:
        """Stops the server and frees its ports and threads; idempotent."""
    def _panic_on_server_thread(self) -> None:
        """Panics on a server thread (for the test that it becomes an exception)."""

def check_settings(settings: Sequence[Tuple[str, str]]) -> None:
    """``ValueError`` naming the first unknown zoo.cfg key or bad value in `settings`."""

def run_cli(argv: List[str]) -> int:
    """Runs the ``shepherd`` command with `argv` (program name first); its exit status."""
