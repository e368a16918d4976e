"""The `shepherd` console script: the same command as the Rust binary."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest
from kazoo.client import KazooClient


def _shepherd():
    found = shutil.which("shepherd", path=os.path.dirname(sys.executable))
    if found is None:
        pytest.skip("the console script is not installed beside this interpreter")
    return found


def test_help_lists_serve_and_the_client_commands():
    out = subprocess.run([_shepherd(), "--help"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0
    assert "serve" in out.stdout and "ls" in out.stdout


def test_a_client_command_against_the_embedded_server(zk_server):
    client = KazooClient(zk_server.connect_string)
    client.start(timeout=10)
    client.create("/from-python/child", makepath=True)
    client.stop()
    out = subprocess.run(
        [_shepherd(), "ls", "--server", zk_server.connect_string, "/from-python"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 0, out.stderr
    assert "child" in out.stdout


def test_a_bad_command_exits_2():
    out = subprocess.run([_shepherd(), "no-such-command"], capture_output=True, timeout=60)
    assert out.returncode == 2
