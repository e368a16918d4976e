"""The ``shepherd`` console script: the same command as the Rust binary (``shepherd serve``,
the client commands, ``tls``, ``datadir``), run by the native module."""

from __future__ import annotations

import sys

from shepherd_zk._native import run_cli


def main() -> None:
    """Runs ``shepherd`` with this process's arguments and exits with its status."""
    sys.exit(run_cli(["shepherd", *sys.argv[1:]]))
