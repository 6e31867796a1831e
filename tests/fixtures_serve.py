"""A real `depparse serve` for the tests: a subprocess on 127.0.0.1 (a free port the server
picks and prints), started once per test session and stopped with Ctrl-C (SIGINT) at the end.

The fixture is a plugin of ``conftest.py`` (``pytest_plugins``): a test names ``server`` as an
argument, with no import.  The server is memoized in this module, so the test modules share one.
"""

from __future__ import annotations

import atexit
import json
import re
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent
#: The flags of the shared server: a small queue, so that a burst of requests meets a 503.
FLAGS = ("--workers", "2", "--queue", "6", "--time-limit", "30", "-q")
_SERVERS: dict = {}


@dataclass
class Server:
    url: str
    proc: subprocess.Popen
    log: list = field(default_factory=list)  # the server's stderr lines
    startup_seconds: float = 0.0

    def get(self, path: str, timeout: float = 60):
        """``(status, body bytes)`` of a GET."""
        try:
            with urllib.request.urlopen(self.url + path, timeout=timeout) as r:
                return r.status, r.read()
        except urllib.error.HTTPError as e:
            return e.code, e.read()

    def post(self, path: str, body: bytes, content_type: str, timeout: float = 120):
        req = urllib.request.Request(self.url + path, data=body, method="POST",
                                     headers={"Content-Type": content_type})
        try:
            with urllib.request.urlopen(req, timeout=timeout) as r:
                return r.status, r.read()
        except urllib.error.HTTPError as e:
            return e.code, e.read()

    def alive(self) -> bool:
        status, body = self.get("/models", timeout=30)
        return status == 200 and "default_model" in json.loads(body)

    def stop(self, timeout: float = 60) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        return self.proc.returncode


def start_server(*flags: str, timeout: float = 900) -> Server:
    """Start ``depparse serve --port 0 FLAGS`` and wait until it answers (the first start may
    compile the Numba kernels: minutes)."""
    t0 = time.monotonic()
    proc = subprocess.Popen([sys.executable, "-m", "depparse.cli", "serve", "--port", "0",
                             *flags], cwd=REPO_ROOT, stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    log: list = []
    found = threading.Event()
    url = []

    def drain():
        for line in proc.stderr:
            log.append(line.rstrip("\n"))
            m = re.search(r"at (http://127\.0\.0\.1:\d+)/ with", line)
            if m and not url:
                url.append(m.group(1))
                found.set()
        found.set()

    threading.Thread(target=drain, daemon=True).start()
    if not found.wait(timeout) or not url:
        proc.kill()
        raise RuntimeError("depparse serve did not start:\n" + "\n".join(log[-20:]))
    server = Server(url[0], proc, log)
    for _ in range(600):
        try:
            if server.alive():
                break
        except OSError:
            time.sleep(0.1)
    server.startup_seconds = time.monotonic() - t0
    return server


@pytest.fixture(scope="session")
def server():
    """The shared server (:data:`FLAGS`); skips when the serve extra is not installed."""
    pytest.importorskip("starlette", reason="depparse serve needs the serve extra "
                                            "(pip install 'depparse[serve]')")
    pytest.importorskip("uvicorn", reason="depparse serve needs the serve extra")
    if "shared" not in _SERVERS:
        s = _SERVERS["shared"] = start_server(*FLAGS)
        atexit.register(s.stop)
    s = _SERVERS["shared"]
    if s.proc.poll() is not None:
        pytest.fail("the shared server has exited:\n" + "\n".join(s.log[-20:]))
    return s
