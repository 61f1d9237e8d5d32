"""TextArena's own wrappers and ``ta.make`` on every registered Arena game that plays here (the main
suite runs them on three): a seeded bracket agent plays each game to its end through
``ta.make(register(game_id))`` (TextArena's LLMObservationWrapper, as for its own titles) and
through each standard observation wrapper; the moves and returns equal those through our own
``ArenaPromptWrapper``."""

from __future__ import annotations

import random
import re

import pytest
import textarena as ta
from textarena.wrappers.ObservationWrappers import llm_observation_wrapper as obs

from arena_core.registry import availability, list_plugins
from arena_games.textarena.reverse import ArenaPromptWrapper, ArenaTextArenaEnv, register

GAMES = [p.name for p in list_plugins("games") if availability("games", p.name)[0]]
WRAPPERS = [
    "LLMObservationWrapper",
    "GameMessagesObservationWrapper",
    "FirstLastObservationWrapper",
    "SingleTurnObservationWrapper",
    "GameBoardObservationWrapper",
    "GameMessagesAndCurrentBoardObservationWrapper",
]
_TOKENS = re.compile(r"'(\[[^']+\])'")  # the offered moves, brackets included


def _play(env, seed, cap=400):
    rng, trace, done = random.Random(seed), [], False
    env.reset(num_players=_players(env), seed=seed)
    while not done and len(trace) < cap:
        pid, observation = env.get_observation()
        options = _TOKENS.findall(observation.rsplit("Available actions:", 1)[-1])
        action = rng.choice(options)
        trace.append((pid, action))
        done, _ = env.step(action)
    if not done:
        _inner(env).truncate("the test's cap")
    rewards, _ = env.close()
    return trace, rewards


def _inner(env):
    while not isinstance(env, ArenaTextArenaEnv):
        env = env.env
    return env


def _players(env):
    return _inner(env)._game_cls.spec.min_players


@pytest.mark.parametrize("game_id", GAMES)
def test_ta_make_and_every_wrapper_play_every_game(game_id):
    reference = _play(ArenaPromptWrapper(ArenaTextArenaEnv(game_id)), seed=7)
    assert _play(ta.make(register(game_id)), seed=7) == reference
    for name in WRAPPERS:
        assert _play(getattr(obs, name)(ArenaTextArenaEnv(game_id)), seed=7) == reference, name
