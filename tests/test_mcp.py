"""Arena games over MCP (issue 44, point 6), driven by the MCP SDK's own client: the tools, hidden
information per seat, one clear error per bad call, ``arena mcp`` over stdio, and the ``mcp``
player seating an agent (examples/mcp_agent.py) in a match."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

import pytest

mcp = pytest.importorskip("mcp")

from mcp import Client  # noqa: E402

from arena_core.match import Match  # noqa: E402
from arena_core.registry import make_game, make_player  # noqa: E402
from arena_core.runner import play_episode  # noqa: E402
from arena_players.mcp_server import build_server  # noqa: E402

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "mcp_agent.py"


def _run(coro):
    return asyncio.run(coro)


async def _call(client, tool, **args):
    result = await client.call_tool(tool, args)
    if result.is_error:
        return "ERROR " + result.content[0].text
    return result.structured_content


def test_the_tools_and_a_whole_game_replayed_by_arena():
    async def session():
        async with Client(build_server()) as client:
            names = {t.name for t in (await client.list_tools()).tools}
            assert names == {"list_games", "new_game", "observe", "legal_actions", "act", "replay"}
            games = {g["game"]: g for g in (await _call(client, "list_games"))["games"]}
            assert games["kuhn_poker"]["players"] == [2, 2] and "megagem" in games
            deal = await _call(client, "new_game", game="megagem", seed=11, num_players=3, opponents={"2": "random"})
            tokens = deal["tokens"]
            assert set(tokens) == {"0", "1"}
            moves = 0
            while True:
                views = {s: await _call(client, "observe", token=t) for s, t in tokens.items()}
                if all(v["done"] for v in views.values()):
                    break
                for seat, view in views.items():
                    if view["to_act"]:
                        legal = (await _call(client, "legal_actions", token=tokens[seat]))["legal_actions"]
                        assert legal == view["legal_actions"] and legal
                        await _call(client, "act", token=tokens[seat], action=legal[len(legal) // 2])
                        moves += 1
            return views, await _call(client, "replay", game_id=deal["game_id"]), moves

    views, record, moves = _run(session())
    assert moves > 0 and record["seed"] == 11 and views["0"]["returns"] == record["returns"]
    game = make_game("megagem", record["params"], num_players=3)
    match = Match(game, 11)
    for seat, action in record["actions"]:
        match.submit(seat, game.action_from_str(match.position, seat, action))
    assert match.done and list(match.returns()) == record["returns"]  # the record replays exactly


def test_hidden_information_stays_with_each_seat():
    async def session():
        async with Client(build_server()) as client:
            deal = await _call(client, "new_game", game="kuhn_poker", seed=5)
            t0, t1 = deal["tokens"]["0"], deal["tokens"]["1"]
            return await _call(client, "observe", token=t0), await _call(client, "observe", token=t1)

    v0, v1 = _run(session())
    game = make_game("kuhn_poker")
    pos = game.start(5)
    assert v0["observation"] == game.observe(pos, 0) and v1["observation"] == game.observe(pos, 1)
    assert v0["observation"]["card"] != v1["observation"]["card"]
    assert v1["observation"]["card"] not in json.dumps(v0)  # seat 0's answer never shows seat 1's card


def test_every_bad_call_gets_one_clear_error_and_changes_nothing():
    async def session():
        async with Client(build_server()) as client:
            out = [await _call(client, "new_game", game="kuhn_pokr", seed=1)]
            out.append(await _call(client, "new_game", game="kuhn_poker", seed=-1))
            out.append(await _call(client, "new_game", game="kuhn_poker", seed=1, opponents={"7": "random"}))
            deal = await _call(client, "new_game", game="kuhn_poker", seed=1, opponents={"1": "random"})
            token = deal["tokens"]["0"]
            out.append(await _call(client, "observe", token="not-a-token"))
            out.append(await _call(client, "act", token=token, action="fold"))
            out.append(await _call(client, "replay", game_id=deal["game_id"]))
            out.append(await _call(client, "replay", game_id="g99"))
            before = await _call(client, "observe", token=token)
            await _call(client, "act", token=token, action="bet")
            out.append(await _call(client, "act", token=token, action="bet"))
            return out, before

    out, before = _run(session())
    assert all(isinstance(o, str) and o.startswith("ERROR ") and "\n" not in o for o in out), out
    unknown, seed, seat, token, illegal, early, game_id, after = out
    assert "kuhn_poker" in unknown  # the closest id is named
    assert "seed must be a non-negative integer" in seed and "'7' is not a seat of kuhn_poker" in seat
    assert "unknown seat token" in token and "'fold' is not a legal action of seat 0; legal: pass, bet" in illegal
    assert "not over" in early and "unknown game 'g99'" in game_id
    assert "is over" in after or "not to act" in after
    assert before["to_act"] and before["ply"] == 0  # the refused calls changed nothing


def test_the_example_agent_plays_against_arena_mcp():
    """`arena mcp` over stdio, started by the SDK's client: list, deal, observe, act, replay."""
    out = subprocess.run([sys.executable, str(EXAMPLE), "3"], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert "games served; playing kuhn_poker" in out.stdout and "returns [" in out.stdout


def test_the_mcp_player_seats_an_agent_in_a_match():
    """The player serves its seat over Streamable HTTP and starts the example agent; its moves are
    legal, the returns sum to zero, and the episode replays."""
    agent = make_player("mcp", command=[sys.executable, str(EXAMPLE)], timeout_s=60)
    game = make_game("kuhn_poker")
    try:
        results = [play_episode(game, [agent, make_player("random", seed=1)], seed) for seed in range(3)]
    finally:
        agent.close()
    for record in results:
        assert record.end.reason.value == "natural" and sum(record.end.returns) == 0
        assert not [e for e in record.events if getattr(e, "type", "") == "policy"]  # no illegal moves, no faults


def test_an_agent_that_dies_is_a_recorded_failure_not_a_crash():
    agent = make_player("mcp", command=[sys.executable, "-c", "import sys; sys.exit(3)"], timeout_s=5)
    try:
        assert agent.url.startswith("http://127.0.0.1:")  # starts the server and the agent, which exits at once
        record = play_episode(make_game("kuhn_poker"), [agent, make_player("random")], 0)
    finally:
        agent.close()
    faults = [e for e in record.events if getattr(e, "type", "") == "policy"]
    assert record.end.reason.value == "player_error" and faults
    assert "the agent exited with code 3" in faults[0].detail
