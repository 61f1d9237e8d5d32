"""The ``mcp`` player: a tool-using agent in a seat, playing through Arena's MCP tools.

    arena play kuhn_poker --players 'mcp{command="python examples/mcp_agent.py"}',random

The player serves one seat over MCP's Streamable HTTP on 127.0.0.1 (an ephemeral port; the
tools of :mod:`.mcp_server`: ``observe``, ``legal_actions``, ``act``) and starts the agent's
``command`` with ``ARENA_MCP_URL`` and ``ARENA_MCP_TOKEN`` in its environment (without a
command it prints both for an agent started by hand). At each decision the seat's view waits
for the agent; its ``act`` must name a legal action (an illegal one is refused and the agent
may try again); no answer within ``timeout_s`` (or an agent that has exited) becomes the
player's failure, recorded by the harness like any other. When the player is collected or the
process exits, the seat closes (``observe`` then says ``closed``) and the agent is stopped.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
import threading
import time
import weakref
from typing import Any

from arena_core.errors import PlayerError
from arena_core.players import BasePlayer, Decision

from .mcp_server import GameHost, build_server


class _Service:
    """The MCP server thread and the agent process of one player (what ``close`` stops)."""

    def __init__(self, label: str, command: list[str], port: int):
        import uvicorn

        self.host = GameHost()
        self.token, self.desk = self.host.open_desk(label)
        app = build_server(self.host, name=f"arena-{label}").streamable_http_app(host="127.0.0.1")
        self.server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
        self.thread = threading.Thread(target=self.server.run, name=f"mcp-{label}", daemon=True)
        self.thread.start()
        deadline = time.monotonic() + 30
        while not self.server.started:
            if not self.thread.is_alive() or time.monotonic() > deadline:
                raise PlayerError(f"{label}: the MCP server did not start on 127.0.0.1:{port}")
            time.sleep(0.01)
        bound = self.server.servers[0].sockets[0].getsockname()[1]
        self.url = f"http://127.0.0.1:{bound}/mcp"
        self.agent: subprocess.Popen[bytes] | None = None
        self._exit: str | None = None
        if command:
            env = {**os.environ, "ARENA_MCP_URL": self.url, "ARENA_MCP_TOKEN": self.token}
            self.agent = subprocess.Popen(command, env=env, stdin=subprocess.DEVNULL, stderr=subprocess.PIPE)
        else:
            print(f"[mcp player {label}] agent: connect to {self.url} with token {self.token}", file=sys.stderr)

    def agent_failure(self) -> str | None:
        """Why the agent can no longer answer (it exited), or None."""
        if self.agent is None or self.agent.poll() is None:
            return None
        if self._exit is None:
            tail = (self.agent.stderr.read() if self.agent.stderr else b"").decode(errors="replace").strip()
            self._exit = f"the agent exited with code {self.agent.returncode}" + (
                f": {tail.splitlines()[-1][:300]}" if tail else ""
            )
        return self._exit

    def close(self) -> None:
        self.desk.closed = True
        if self.agent is not None:
            try:
                self.agent.wait(timeout=5)  # the agent sees `closed` and leaves
            except subprocess.TimeoutExpired:
                self.agent.terminate()
                self.agent.wait(timeout=5)
        self.server.should_exit = True
        self.thread.join(timeout=5)


class MCPPlayer(BasePlayer):
    """A seat played by an MCP agent (see the module docstring). Options: ``command`` (the agent's
    command line, a string or a list), ``timeout_s`` (per decision, default 120), ``port`` (0: any)."""

    name = "mcp"

    def __init__(self, seed: int = 0, command: str | list[str] = "", timeout_s: float = 120.0, port: int = 0):
        super().__init__(seed)
        self.command = shlex.split(command) if isinstance(command, str) else [str(c) for c in command]
        self.timeout_s = float(timeout_s)
        self.port = int(port)
        self._service: _Service | None = None

    def _started(self) -> _Service:
        if self._service is None:
            try:
                service = _Service(f"{self.name}-{id(self):x}", self.command, self.port)
            except ImportError as exc:
                raise PlayerError(
                    f"the mcp player needs the MCP SDK: pip install 'turn-arena-players[mcp]' ({exc})"
                ) from None
            self._service = service
            weakref.finalize(self, service.close)
        return self._service

    @property
    def url(self) -> str:
        """The seat's MCP endpoint (the server starts on first use)."""
        return self._started().url

    @property
    def token(self) -> str:
        return self._started().token

    def act(self, decision: Decision) -> Any:
        service = self._started()
        failure = service.agent_failure()
        if failure:
            raise PlayerError(f"mcp player: {failure}")
        try:
            return service.desk.post(decision, self.timeout_s, service.agent_failure)
        except TimeoutError as exc:
            raise PlayerError(f"mcp player: {exc}") from None

    def close(self) -> None:
        """Close the seat, stop the agent and the server (also done when the player is collected)."""
        if self._service is not None:
            self._service.close()
            self._service = None


__all__ = ["MCPPlayer"]
