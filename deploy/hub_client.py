"""A small client for the course's hub: its REST API, users' servers, kernels, Unix users.

Used by the end-to-end test (tests/hub/) and by deploy/measure.py. Standard library plus
tornado (for the kernel websocket), which every Jupyter environment has.
"""

from __future__ import annotations

import asyncio
import json
import pwd
import shutil
import subprocess
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

__all__ = ["HubClient"]


class HubClient:
    """A running hub and its users, with helpers for its REST API and the users' servers."""

    def __init__(self, deploy, layout, course: Path, bindir: Path):
        self.deploy = deploy
        self.layout = layout
        self.course = course
        self.bindir = bindir
        self.instructor = layout.instructor
        self.students = layout.students
        self.exchange = layout.exchange
        self.tokens: dict[str, str] = {}

    # -- HTTP ------------------------------------------------------------------------------
    def request(self, method: str, path: str, token: str, body=None, *, timeout: float = 120):
        """``method`` on the hub's public URL; returns the decoded JSON (or text) answer."""
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(
            f"{self.layout.url}{path}",
            data=data,
            method=method,
            headers={"Authorization": f"token {token}", "Content-Type": "application/json"},
        )
        try:
            with urllib.request.urlopen(request, timeout=timeout) as answer:
                text = answer.read().decode()
        except urllib.error.HTTPError as error:
            raise AssertionError(
                f"{method} {path} -> {error.code}: {error.read().decode()[:2000]}"
            ) from None
        try:
            return json.loads(text) if text else None
        except json.JSONDecodeError:
            return text

    def admin(self, method: str, path: str, body=None):
        return self.request(method, f"/hub/api{path}", self.layout.admin_token, body)

    def server(self, user: str, method: str, path: str, body=None, *, timeout: float = 120):
        """A request to ``user``'s own server, with ``user``'s own token."""
        quoted = urllib.parse.quote(path, safe="/?&=")
        return self.request(
            method, f"/user/{user}{quoted}", self.tokens[user], body, timeout=timeout
        )

    # -- users and servers -----------------------------------------------------------------
    def log_in(self, user: str) -> str:
        """A token for ``user``, issued by the hub (the admin service asks on their behalf)."""
        answer = self.admin("POST", f"/users/{user}/tokens", {"note": "hub e2e test"})
        self.tokens[user] = answer["token"]
        return answer["token"]

    def start_servers(self, users: list[str], timeout: float = 90) -> None:
        """Start each user's server through the hub, with the user's own token, all at once
        (the hub spawns them concurrently), and wait until every one is ready.

        The requests go out together: the hub answers one only when its server is ready or
        after its ``slow_spawn_timeout`` (10 s), so one after the other each spawn began up
        to 10 s after the previous one (4 servers: 49 s, measured on a 2-core machine).
        """
        with ThreadPoolExecutor(len(users) or 1) as pool:
            spawns = [
                pool.submit(self.request, "POST", f"/hub/api/users/{u}/server", self.tokens[u], {})
                for u in users
            ]
        for spawn in spawns:
            spawn.result()  # a refused spawn fails here, as it did one request at a time
        deadline = time.monotonic() + timeout
        waiting = set(users)
        while waiting and time.monotonic() < deadline:
            for user in sorted(waiting):
                server = self.admin("GET", f"/users/{user}").get("servers", {}).get("", {})
                if server.get("ready"):
                    waiting.discard(user)
            time.sleep(0.3)
        assert not waiting, f"servers not ready within {timeout} s: {sorted(waiting)}"

    # -- acting as a Unix user -------------------------------------------------------------
    def as_user(self, user: str, *command: str, cwd: Path | None = None, check: bool = True):
        """Run ``command`` as the Unix user ``user`` with the servers' environment."""
        entry = pwd.getpwnam(user)
        role = "instructor" if user == self.instructor else "student"
        env = {
            "HOME": entry.pw_dir,
            "USER": user,
            "LOGNAME": user,
            "LANG": "C.UTF-8",
            "PATH": f"{self.bindir}:/usr/bin:/bin",
            "JUPYTER_CONFIG_PATH": str(self.layout.root / "config" / role),
        }
        result = subprocess.run(
            [shutil.which("runuser"), "-u", user, "--", *command],
            cwd=cwd or entry.pw_dir,
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
        )
        if check and result.returncode != 0:
            raise AssertionError(
                f"{' '.join(command)} as {user} failed ({result.returncode}):\n"
                f"{result.stdout[-3000:]}\n{result.stderr[-3000:]}"
            )
        return result

    # -- kernels through a user's server ---------------------------------------------------
    def execute(self, user: str, code: str, timeout: float = 60) -> str:
        """Run ``code`` in a new kernel of ``user``'s server; return what it printed."""
        kernel = self.server(user, "POST", "/api/kernels", {"name": "python3"})
        try:
            return self.run_in_kernel(user, kernel["id"], code, timeout)
        finally:
            self.server(user, "DELETE", f"/api/kernels/{kernel['id']}")

    def run_in_kernel(self, user: str, kernel_id: str, code: str, timeout: float = 60) -> str:
        """Run ``code`` in ``user``'s running kernel ``kernel_id``; return what it printed."""
        return asyncio.run(self._execute(user, kernel_id, code, timeout))

    async def _execute(self, user: str, kernel_id: str, code: str, timeout: float) -> str:
        from tornado.httpclient import HTTPRequest
        from tornado.websocket import websocket_connect

        url = f"ws://127.0.0.1:{self.layout.port}/user/{user}/api/kernels/{kernel_id}/channels"
        request = HTTPRequest(url, headers={"Authorization": f"token {self.tokens[user]}"})
        socket = await websocket_connect(request)
        msg_id = uuid.uuid4().hex
        socket.write_message(
            json.dumps(
                {
                    "header": {
                        "msg_id": msg_id,
                        "msg_type": "execute_request",
                        "username": user,
                        "session": uuid.uuid4().hex,
                        "version": "5.3",
                        "date": "",
                    },
                    "parent_header": {},
                    "metadata": {},
                    "channel": "shell",
                    "content": {"code": code, "silent": False, "allow_stdin": False},
                }
            )
        )
        printed, errors = [], []
        try:
            while True:
                raw = await asyncio.wait_for(socket.read_message(), timeout)
                if raw is None:
                    raise AssertionError("the kernel's websocket closed")
                if isinstance(raw, bytes):
                    continue  # a message with binary buffers (widgets): never stream or status
                message = json.loads(raw)
                if message.get("parent_header", {}).get("msg_id") != msg_id:
                    continue
                kind = message["msg_type"]
                if kind == "stream":
                    printed.append(message["content"]["text"])
                elif kind == "error":
                    errors.append("\n".join(message["content"]["traceback"]))
                elif kind == "status" and message["content"]["execution_state"] == "idle":
                    break
        finally:
            socket.close()
            # Wait for the closing handshake, so that no socket is left to the collector.
            while await asyncio.wait_for(socket.read_message(), 10) is not None:
                pass
        if errors:
            raise AssertionError(f"code failed in {user}'s kernel:\n{errors[0]}")
        return "".join(printed)
