"""Arena games behind TextArena's env API, played by TextArena-style agents (MegaGem too)."""

from __future__ import annotations

import random
import re

import pytest

ta = pytest.importorskip("textarena")

from arena_core.errors import GameOverError  # noqa: E402
from arena_core.registry import make_game  # noqa: E402
from arena_games.textarena.reverse import ArenaPromptWrapper, ArenaTextArenaEnv, register  # noqa: E402

_TOKENS = re.compile(r"'\[([^\]]+)\]'")


class BracketAgent(ta.Agent):
    """A TextArena agent: reads 'Available actions' from the observation text and answers with
    one bracketed token (its own random.Random, never the global generator)."""

    def __init__(self, seed: int):
        self.rng = random.Random(seed)

    def __call__(self, observation: str) -> str:
        options = _TOKENS.findall(observation.rsplit("Available actions:", 1)[-1])
        return f"I will go with [{self.rng.choice(options)}]"


def _play(game_id, num_players, seed, agent_seed=0, wrap=ArenaPromptWrapper):
    env = wrap(ArenaTextArenaEnv(game_id))
    env.reset(num_players=num_players, seed=seed)
    agents = [BracketAgent(agent_seed + i) for i in range(num_players)]
    trace, done = [], False
    while not done:
        pid, observation = env.get_observation()
        action = agents[pid](observation)
        trace.append((pid, action))
        done, info = env.step(action)
        assert info == {}
    rewards, game_info = env.close()
    return trace, rewards, game_info


@pytest.mark.parametrize("game_id,num_players", [("kuhn_poker", 2), ("megagem", 3), ("megagem", 4)])
def test_textarena_agents_play_an_arena_game(game_id, num_players):
    game = make_game(game_id, num_players=num_players)
    trace, rewards, game_info = _play(game_id, num_players, seed=5)
    assert set(rewards) == set(range(num_players))
    lo, hi = game.spec.reward_bounds
    assert all(lo <= r <= hi for r in rewards.values())
    assert all(not game_info[p]["invalid_move"] and game_info[p]["end_reason"] == "natural" for p in rewards)
    assert sum(info["turn_count"] for info in game_info.values()) == len(trace)
    again = _play(game_id, num_players, seed=5)
    assert again[0] == trace and again[1] == rewards


def test_megagem_through_the_wrapper_matches_the_arena_episode():
    """The wrapper adds nothing: the same actions through Match give the same returns."""
    from arena_core.match import Match

    trace, rewards, _ = _play("megagem", 3, seed=8, agent_seed=3)
    game = make_game("megagem", num_players=3)
    match = Match(game, 8)
    for pid, text in trace:
        token = re.findall(r"\[([^\]]+)\]", text)[-1]
        match.submit(pid, game.action_from_str(match.position, pid, token))
    assert match.done and list(match.returns()) == [rewards[p] for p in range(3)]


def test_observation_is_rebuilt_not_drained_and_does_not_carry_over():
    env = ArenaPromptWrapper(ArenaTextArenaEnv("kuhn_poker"))
    env.reset(num_players=2, seed=1)
    first = env.get_observation()
    assert env.get_observation() == first  # reading twice gives the same text
    pid, obs = first
    env.step(f"[{_TOKENS.findall(obs)[0]}]")
    env.reset(num_players=2, seed=1)
    assert env.get_observation() == first  # a new episode starts clean


def test_invalid_text_follows_textarenas_rule_through_our_policy():
    env = ArenaTextArenaEnv("kuhn_poker")
    env.reset(num_players=2, seed=2)
    pid, _ = env.get_observation()
    done, info = env.step("[raise a million]")
    assert not done and info["invalid_move"] and info["verdict"] == "retry"
    assert env.get_observation()[0] == pid  # the same player is asked again
    done, info = env.step("nonsense")
    assert done and info["verdict"] == "forfeit"
    rewards, game_info = env.close()
    assert rewards[pid] == -2.0 and rewards[1 - pid] == 2.0 and game_info[pid]["invalid_move"]
    with pytest.raises(GameOverError):
        env.step("[pass]")


def test_a_cut_off_episode_is_truncation_not_a_draw():
    env = ArenaPromptWrapper(ArenaTextArenaEnv("megagem", turn_cap=4))
    env.reset(num_players=3, seed=0)
    agents = [BracketAgent(i) for i in range(3)]
    done = False
    while not done:
        pid, obs = env.get_observation()
        done, _ = env.step(agents[pid](obs))
    rewards, game_info = env.close()
    assert rewards is None and all(i["truncated"] and i["end_reason"] == "turn_cap" for i in game_info.values())


def test_the_wrapper_leaves_global_random_alone():
    random.seed(99)
    before = random.getstate()
    _play("kuhn_poker", 2, seed=3)
    env = ArenaTextArenaEnv("kuhn_poker")
    env.reset(num_players=2)  # seed=None draws fresh entropy, not from `random`
    assert random.getstate() == before


def test_the_wrapper_is_a_textarena_env():
    assert isinstance(ArenaTextArenaEnv("kuhn_poker"), ta.Env)


def _standard_wrappers():
    from textarena.wrappers import LLMObservationWrapper, SimpleRenderWrapper
    from textarena.wrappers.ObservationWrappers import llm_observation_wrapper as obs

    names = ["LLMObservationWrapper", "GameMessagesObservationWrapper", "FirstLastObservationWrapper"]
    names += ["SingleTurnObservationWrapper", "GameBoardObservationWrapper"]
    names += ["GameMessagesAndCurrentBoardObservationWrapper", "SettlersOfCatanObservationWrapper"]
    wrappers = {name: getattr(obs, name) for name in names}
    wrappers["SimpleRenderWrapper+LLMObservationWrapper"] = lambda env: SimpleRenderWrapper(LLMObservationWrapper(env))
    return wrappers


@pytest.mark.parametrize("wrapper", list(_standard_wrappers()))
@pytest.mark.parametrize("game_id,num_players", [("kuhn_poker", 2), ("megagem", 3), ("matrix", 2)])
def test_textarenas_own_wrappers_play_arena_games(game_id, num_players, wrapper, monkeypatch):
    """TextArena's standard wrappers, unchanged, over the raw env: the same moves and returns as
    through our prompt wrapper (every registered game: make check-clients)."""
    import sys

    render = sys.modules[ta.wrappers.SimpleRenderWrapper.__module__]
    monkeypatch.setattr(render.time, "sleep", lambda s: None)  # the render wrapper pauses 0.4 s a step
    wrap = _standard_wrappers()[wrapper]
    trace, rewards, game_info = _play(game_id, num_players, seed=4, wrap=wrap)
    assert (trace, rewards) == _play(game_id, num_players, seed=4)[:2]
    assert not any(i["invalid_move"] for i in game_info.values())


def test_the_raw_env_speaks_textarenas_messages_and_state():
    from textarena.core import ObservationType

    env = ArenaTextArenaEnv("kuhn_poker")
    env.reset(num_players=2, seed=2)
    pid, messages = env.get_observation()
    assert [(sender, kind) for sender, _, kind in messages] == [
        (-1, ObservationType.PROMPT),
        (-1, ObservationType.GAME_BOARD),
    ]
    assert "Available actions: '[pass]', '[bet]'" in messages[0][1]
    assert env.get_observation() == (pid, [])  # nothing new: TextArena's wrappers would repeat it
    assert env.state.current_player_id == pid and env.state.role_mapping[-1] == "GAME"
    env.step("[bet]")
    other, messages = env.get_observation()
    assert other == 1 - pid and messages[0][2] == ObservationType.PROMPT
    done, info = env.step("[call]")  # Kuhn's answers to a bet are pass and bet: retried, with a note
    assert not done and info["verdict"] == "retry"
    again, messages = env.get_observation()
    assert again == other and [m[2] for m in messages] == [ObservationType.GAME_BOARD, ObservationType.GAME_ADMIN]
    env.step("[pass]")
    assert env.state.done and env.state.rewards is not None
    assert env.messages(pid)[-1][2] == ObservationType.GAME_ADMIN and "Game over" in env.messages(pid)[-1][1]
    assert [m for m in env.messages(other) if m[2] == ObservationType.GAME_ADMIN][0][1].startswith("Player")
    assert env.state.logs[-1][0] == -1 and (pid, "[bet]") in env.state.logs


def test_ta_make_gives_a_registered_arena_game_behind_textarenas_default_wrapper():
    env_id = register("kuhn_poker")
    assert env_id == "arena/kuhn_poker-v0" and register("kuhn_poker") == env_id  # idempotent
    env = ta.make(env_id)
    assert isinstance(env, ta.wrappers.LLMObservationWrapper) and env.env_id == env_id
    env.reset(num_players=2, seed=1)
    pid, text = env.get_observation()
    assert isinstance(text, str) and "[GAME]" in text and "Available actions" in text
    raw = ta.make(env_id + "-raw")
    assert isinstance(raw, ArenaTextArenaEnv)
