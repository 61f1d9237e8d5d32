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


def _available_games():
    from arena_core.registry import availability, list_plugins

    # the extra installed (p.available), and the class loads here (a TextArena title loads without
    # textarena installed: its engine is imported when a game is made)
    return [p.name for p in list_plugins("games") if p.available and availability("games", p.name)[0]]


@pytest.mark.parametrize("game_id", _available_games())
def test_gymnasium_check_env_passes_on_every_available_game_with_defaults(game_id):
    """Default opponents (uniform random), default policy: check_env's random (mostly illegal)
    actions are replaced by the game's default action, never raised."""
    from arena_core.registry import make_game

    check_env(ArenaGymEnv(make_game(game_id)))


def _to_a_restricted_mask(env):
    obs, info = env.reset(seed=0)
    while obs["action_mask"].all():
        obs, _, _, _, info = env.step(int(np.flatnonzero(obs["action_mask"])[0]))
    return obs, info


def test_gym_exposes_legality_as_action_masks_and_in_info():
    env = ArenaGymEnv(CountToTwenty(num_players=2))
    obs, info = _to_a_restricted_mask(env)
    masks = env.action_masks()
    assert masks.dtype == bool and masks.tolist() == obs["action_mask"].astype(bool).tolist()
    assert info["action_mask"].tolist() == obs["action_mask"].tolist()
    assert [env.game.action_id(a) for a in info["legal_actions"]] == np.flatnonzero(masks).tolist()


def test_an_illegal_action_under_the_gym_view_plays_the_default_action_and_says_so():
    env = ArenaGymEnv(CountToTwenty(num_players=2))
    obs, _ = _to_a_restricted_mask(env)
    illegal = int(np.flatnonzero(obs["action_mask"] == 0)[0])
    ply = env.match.ply
    _, _, _, _, info = env.step(illegal)
    assert info["illegal_action"] is True and info["policy_verdict"] == "default"
    events = env.match.record.events
    policy = next(e for e in events if e.type == "policy" and e.ply == ply)
    assert policy.verdict == "default" and policy.player == env.seat
    substituted = next(e for e in events if e.type == "step" and e.ply == ply)
    default = env.game.default_action(_state_at(env, ply), env.seat)
    assert substituted.substituted and substituted.action_id == env.game.action_id(default)


def _state_at(env, ply):
    pos = env.game.start(env.match.seed)
    for e in env.match.record.events:
        if e.type == "step" and e.ply < ply:
            pos = env.game.act(pos, e.player, env.game.action_from_id(e.action_id))
    return pos.state


def test_the_gym_policy_can_still_be_chosen():
    env = ArenaGymEnv(CountToTwenty(num_players=2), policy=IllegalActionPolicy())
    obs, _ = _to_a_restricted_mask(env)
    with pytest.raises(IllegalActionError):
        env.step(int(np.flatnonzero(obs["action_mask"] == 0)[0]))
    env = ArenaGymEnv(CountToTwenty(num_players=2), policy=IllegalActionPolicy(mode="penalize"))
    obs, _ = _to_a_restricted_mask(env)
    _, reward, terminated, _, info = env.step(int(np.flatnonzero(obs["action_mask"] == 0)[0]))
    assert terminated and info["end_reason"] == "forfeit" and reward == -1
    assert not env.action_masks().any()


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


def _info_keys(infos):
    return {tuple(sorted(info)) for info in infos}


@pytest.mark.parametrize("game_cls", GAMES)
def test_every_aec_info_has_the_same_keys_at_every_step(game_cls):
    """Tianshou stacks infos into arrays: a key present on some steps only became NaN there."""
    env = aec_env(game_cls(), policy=IllegalActionPolicy(mode="penalize"))
    seen = []
    for seed in range(3):
        env.reset(seed=seed)
        seen += list(env.infos.values())
        rng = np.random.default_rng(seed)
        for agent in env.agent_iter(200):
            obs, _, term, trunc, info = env.last()
            seen.append(info)
            env.step(None if term or trunc else int(rng.integers(env.action_space(agent).n)))  # illegal ones too
            seen += list(env.infos.values())
    assert _info_keys(seen) == {("end_reason", "policy_verdict")}
    assert {i["end_reason"] for i in seen} >= {"", "natural"} or game_cls is CountToTwenty
    if game_cls is CountToTwenty:  # its random indices include illegal ones: penalize ends it
        assert {i["policy_verdict"] for i in seen} >= {"", "forfeit"} and "forfeit" in {i["end_reason"] for i in seen}


def test_every_parallel_and_gym_info_has_the_same_keys():
    par = parallel_env(RepeatedPennies())
    _, infos = par.reset(seed=0)
    seen = list(infos.values())
    while par.agents:
        _, _, _, _, infos = par.step({a: 0 for a in par.agents})
        seen += list(infos.values())
    assert _info_keys(seen) == {("end_reason", "policy_verdict")} and seen[-1]["end_reason"] == "natural"
    gym = ArenaGymEnv(CountToTwenty(num_players=2))
    _, info = gym.reset(seed=0)
    seen, done = [info], False
    while not done:
        _, _, term, trunc, info = gym.step(0)
        seen.append(info)
        done = term or trunc
    assert _info_keys(seen) == {("action_mask", "end_reason", "illegal_action", "legal_actions", "policy_verdict")}


def test_pettingzoos_render_test_and_gymnasiums_checker_pass_and_other_modes_warn(capsys):
    from pettingzoo.test import render_test

    render_test(lambda render_mode=None: aec_env(KuhnPoker(), render_mode=render_mode))
    assert "kuhn_poker ply" in capsys.readouterr().out  # "human" prints the text
    check_env(ArenaGymEnv(KuhnPoker(), render_mode="ansi"))  # with its render check
    par = parallel_env(RepeatedPennies(), render_mode="ansi")
    par.reset(seed=0)
    assert "to act" in par.render()
    for make in (lambda m: aec_env(KuhnPoker(), render_mode=m), lambda m: ArenaGymEnv(KuhnPoker(), render_mode=m)):
        with pytest.warns(UserWarning, match="render_mode 'rgb_array' is not supported"):
            env = make("rgb_array")
        env.reset(seed=0)
        assert env.render() is None


def test_the_gym_example_runs():
    import subprocess
    import sys
    from pathlib import Path

    example = Path(__file__).resolve().parents[1] / "examples" / "gym_masked.py"
    out = subprocess.run([sys.executable, str(example), "kuhn_poker"], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert "check_env passed" in out.stdout and "masked random play: 5 episodes" in out.stdout


def test_textarena_titles_declare_that_their_numeric_observation_is_not_the_state():
    pytest.importorskip("textarena")
    from arena_core.registry import make_game

    ids = [g for g in _available_games() if g.startswith("textarena/")]
    assert ids and all(not make_game(g).spec.observation_is_state for g in ids)
    assert all(make_game(g).spec.observation_is_state for g in ("kuhn_poker", "megagem", "matrix"))
    game = make_game("textarena/Poker-v0")  # a title on the generic encoding (seat, mover, mask, progress)
    a, b = game.start(42), game.start(43)
    assert game.observe(a, 0) != game.observe(b, 0)  # different cards ...
    assert np.array_equal(game.encode_observation(a.state, 0), game.encode_observation(b.state, 0))  # ... same vector
    liars = make_game("textarena/LiarsDice-v0")  # issue 42: its encoding carries the seat's own dice
    a, b = liars.start(42), liars.start(43)
    assert not np.array_equal(liars.encode_observation(a.state, 0), liars.encode_observation(b.state, 0))
