"""A tool-using agent that plays Arena games through MCP, with the MCP SDK's own client.

Two ways to run it (the `mcp` extra: pip install "turn-arena-players[mcp]"):

    python examples/mcp_agent.py               # starts `arena mcp` (stdio), plays Kuhn poker against `random`
    arena play kuhn_poker --players 'mcp{command="python examples/mcp_agent.py"}',random

In the second, the `mcp` player gives the agent ARENA_MCP_URL and ARENA_MCP_TOKEN: it connects
over Streamable HTTP and plays its seat until the seat closes. Its policy is the simplest one: a
seeded random choice among the legal actions (a language model would read `text` instead).
"""

from __future__ import annotations

import asyncio
import os
import random
import sys

from mcp import Client
from mcp.client.stdio import StdioServerParameters


async def play_seat(client: Client, token: str, rng: random.Random) -> int:
    """Act whenever the seat is to act, until its game ends or the seat closes; the moves made."""
    moves = 0
    while True:
        view = (await client.call_tool("observe", {"token": token, "wait_s": 5.0})).structured_content
        if view.get("closed") or view.get("done"):
            return moves
        if view["to_act"]:
            result = await client.call_tool("act", {"token": token, "action": rng.choice(view["legal_actions"])})
            if result.is_error:
                raise RuntimeError(result.content[0].text)
            moves += 1


async def standalone(seed: int) -> None:
    server = StdioServerParameters(command=sys.executable, args=["-m", "arena_core.cli", "mcp"])
    async with Client(server) as client:
        games = (await client.call_tool("list_games", {})).structured_content["games"]
        print(f"{len(games)} games served; playing kuhn_poker")
        deal = {"game": "kuhn_poker", "seed": seed, "opponents": {"1": "random"}}
        game = (await client.call_tool("new_game", deal)).structured_content
        moves = await play_seat(client, game["tokens"]["0"], random.Random(seed))
        record = (await client.call_tool("replay", {"game_id": game["game_id"]})).structured_content
        print(f"{moves} moves; actions {record['actions']}; returns {record['returns']}")


async def seated(url: str, token: str) -> None:
    async with Client(url) as client:
        await play_seat(client, token, random.Random(token))


if __name__ == "__main__":
    if "ARENA_MCP_URL" in os.environ:
        asyncio.run(seated(os.environ["ARENA_MCP_URL"], os.environ["ARENA_MCP_TOKEN"]))
    else:
        asyncio.run(standalone(int(sys.argv[1]) if len(sys.argv) > 1 else 0))
