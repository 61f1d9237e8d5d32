"""PettingZoo and Gymnasium adapters pass the peers' own test suites."""

import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from pettingzoo.test import api_test, parallel_api_test, seed_test

from arena_core import ConfigError, IllegalActionError, IllegalActionPolicy
from arena_core.env import ArenaAECEnv, ArenaGymEnv, aec_env, parallel_env
from arena_games.kuhn import KuhnAction, KuhnPoker
from arena_players.random_player import RandomPlayer
from toy_games import CountToTwenty, RepeatedPennies

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")

GAMES = [KuhnPoker, RepeatedPennies, CountToTwenty]


@pytest.mark.parametrize("game_cls", GAMES)
def test_pettingzoo_api_test(game_cls):
    api_test(aec_env(game_cls()), num_cycles=200)


@pytest.mark.parametrize("game_cls", GAMES)
def test_pettingzoo_seed_test(game_cls):
    seed_test(lambda: aec_env(game_cls()), num_cycles=100)


def test_parallel_api_test():
    parallel_api_test(parallel_env(RepeatedPennies()), num_cycles=100)


def test_parallel_env_refuses_sequential_games():
    with pytest.raises(ConfigError, match="AEC env"):
        parallel_env(KuhnPoker())


def test_gymnasium_check_env():
    check_env(ArenaGymEnv(KuhnPoker(), [RandomPlayer(3)], seat=1), skip_render_check=True)
    check_env(ArenaGymEnv(CountToTwenty(), [RandomPlayer(1), RandomPlayer(2)], seat=2), skip_render_check=True)


def _play_aec(env, seed):
    env.reset(seed=seed)
    trace = []
    for agent in env.agent_iter():
        obs, reward, term, trunc, info = env.last()
        if term or trunc:
            trace.append((agent, reward, term, trunc, info.get("end_reason")))
            env.step(None)
            continue
        legal = np.flatnonzero(obs["action_mask"])
        assert sorted(env.unwrapped.game.action_id(a) for a in env.unwrapped.legal_actions(agent)) == legal.tolist()
        env.step(int(legal[0]))
    return trace


def test_mask_lives_in_the_observation_and_matches_the_typed_legal_actions():
    env = aec_env(CountToTwenty())
    trace = _play_aec(env, 0)
    assert {t[4] for t in trace} == {"natural"}
    assert sum(t[1] for t in trace) == 2 - 1 - 1


def test_turn_cap_is_truncation_not_termination():
    env = aec_env(CountToTwenty(), turn_cap=3)
    trace = _play_aec(env, 0)
    assert all(trunc and not term and reason == "turn_cap" and reward == 0 for _, reward, term, trunc, reason in trace)
    assert env.unwrapped.episode_record.end.returns is None


def test_illegal_action_in_the_env_follows_the_policy():
    env = aec_env(CountToTwenty())
    env.reset(seed=0)
    with pytest.raises(IllegalActionError):
        env.step(7)
    env = aec_env(CountToTwenty(), policy=IllegalActionPolicy(mode="retry", max_retries=1))
    env.reset(seed=0)
    env.step(7)
    assert env.agent_selection == "player_0" and env.infos["player_0"]["policy_verdict"] == "retry"
    env.step(7)
    assert all(env.terminations.values())
    assert env.infos["player_1"]["end_reason"] == "forfeit"
    assert env.rewards["player_0"] == -1


def test_reset_without_seed_continues_a_seeded_stream():
    a, b = ArenaAECEnv(KuhnPoker()), ArenaAECEnv(KuhnPoker())
    a.reset(seed=5)
    b.reset(seed=5)
    a.reset()
    b.reset()
    assert a.episode_seed == b.episode_seed != 5


def test_text_view_is_reachable_from_the_env():
    env = ArenaAECEnv(KuhnPoker())
    env.reset(seed=2)
    prompt = env.prompt("player_0")
    assert prompt.legal == ("pass", "bet")
    assert "Legal actions: pass, bet" in prompt.user
    env.step(int(KuhnAction.BET))
    assert env.structured_observation("player_1")["history"] == ["bet"]


def test_render_ansi():
    env = ArenaAECEnv(KuhnPoker(), render_mode="ansi")
    env.reset(seed=0)
    assert "kuhn_poker ply 0" in env.render()
