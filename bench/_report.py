"""Write one benchmark's section into docs/benchmarks.md (between its own markers)."""

from __future__ import annotations

import platform
import re
from datetime import date
from pathlib import Path

DOC = Path(__file__).resolve().parents[1] / "docs" / "benchmarks.md"


def machine() -> str:
    import os

    return (
        f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, {date.today().isoformat()}"
    )


def write_section(key: str, body: str) -> None:
    DOC.parent.mkdir(exist_ok=True)
    text = (
        DOC.read_text()
        if DOC.exists()
        else "# Benchmarks\n\nEach section is written by its script in `bench/`; rerun the script to refresh it.\n"
    )
    begin, end = f"<!-- BEGIN {key} -->", f"<!-- END {key} -->"
    block = f"{begin}\n{body.strip()}\n{end}"
    if begin in text:
        text = re.sub(re.escape(begin) + ".*?" + re.escape(end), lambda _: block, text, flags=re.S)
    else:
        text = text.rstrip() + "\n\n" + block + "\n"
    DOC.write_text(text)


def machinery_random_play(game, games: int, choices):
    """A timed body: ``games`` seeded episodes through the checked machinery (``Game.act``) with
    random legal actions drawn from the pre-drawn ``choices``; returns the number of decisions."""

    def run() -> int:
        n = 0
        for g in range(games):
            pos = game.start(g)
            while not game.is_over(pos):
                player = game.current_player(pos)
                legal = game.legal(pos, player)
                pos = game.act(pos, player, legal[choices[n] % len(legal)])
                n += 1
        return n

    return run


def aec_random_play(env, games: int, choices):
    """A timed body: ``games`` seeded episodes of any PettingZoo AEC env (ours or a peer's) with
    random legal actions drawn from the pre-drawn ``choices`` through the action mask; returns
    the number of decisions. The same loop for every env, so their rows compare."""
    import numpy as np

    def run() -> int:
        n = 0
        for g in range(games):
            env.reset(seed=g)
            for _agent in env.agent_iter():
                obs, _, term, trunc, _ = env.last()
                if term or trunc:
                    env.step(None)
                    continue
                legal = np.flatnonzero(obs["action_mask"])
                env.step(int(legal[choices[n] % len(legal)]))
                n += 1
        return n

    return run


def openspiel_random_play(name: str, games: int, choices):
    """A timed body: ``games`` episodes of OpenSpiel's ``name`` (pyspiel, C++) with chance drawn
    uniformly over its outcomes and player actions from the pre-drawn ``choices``; returns the
    number of player decisions. The peer's counterpart of :func:`aec_random_play`."""
    import numpy as np
    import pyspiel

    game = pyspiel.load_game(name)
    rng = np.random.default_rng(0)

    def run() -> int:
        n = 0
        for _ in range(games):
            state = game.new_initial_state()
            while not state.is_terminal():
                if state.is_chance_node():
                    outcomes = state.chance_outcomes()
                    state.apply_action(outcomes[int(rng.integers(len(outcomes)))][0])
                    continue
                legal = state.legal_actions()
                state.apply_action(legal[choices[n] % len(legal)])
                n += 1
        return n

    return run
