"""`genir-eval view` in a process of its own, for the tests that talk to it over HTTP or
drive it in a browser (a module of its own: every test folder has a ``conftest``, so
``from conftest import ...`` would find whichever folder's was imported first)."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager

_LISTENING = re.compile(r"at (http://\S+/) ")


@contextmanager
def view_server(*args: str) -> Iterator[str]:
    """``genir-eval view ARGS --port 0`` in its own process; its URL."""
    process = subprocess.Popen(
        [sys.executable, "-m", "genir_eval", "view", *args, "--port", "0"],
        stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    try:
        assert process.stderr is not None
        line = process.stderr.readline()
        found = _LISTENING.search(line)
        if found is None:
            rest = process.stderr.read() if process.poll() is not None else ""
            raise AssertionError(f"the viewer did not start: {line}{rest}")
        url = found.group(1)
        deadline = time.monotonic() + 120
        while True:
            try:
                urllib.request.urlopen(url + "api/runs", timeout=30).read()
                break
            except urllib.error.HTTPError as answer:
                answer.close()
                break
            except (urllib.error.URLError, ConnectionError):
                if time.monotonic() > deadline or process.poll() is not None:
                    raise
                time.sleep(0.2)
        yield url
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGINT)
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        if process.stderr is not None:
            process.stderr.close()
