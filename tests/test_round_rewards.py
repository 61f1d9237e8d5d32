"""Rewards at the grain the game verifies (issue 42 point 2): a game declares its rounds through
``Game.round_rewards``; TextArena's LiarsDice-v0 settles one at each call; GRPO's
``reward.kind = "round"`` credits each decision with its own round's reward."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from arena_core.errors import ConfigError
from arena_core.registry import make_game, make_player
from arena_train.rollout import (
    Choice,
    EpisodeResult,
    EpisodeSpec,
    PlayerLearner,
    RewardSpec,
    StepRecord,
    decision_returns,
    play_episodes,
    seat_return,
)

pytest.importorskip("textarena")

TITLE = "textarena/LiarsDice-v0"
EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "train_liars_round_reward.toml"


def _play(game, seed: int):
    """A random game where calls come often: every settled round, with the seat that moved."""
    rng = np.random.default_rng(seed)
    pos, rounds, calls = game.start(seed), [], 0
    while not game.is_over(pos):
        seat = game.current_player(pos)
        legal = game.legal(pos, seat)
        action = "[Call]" if "[Call]" in legal and rng.random() < 0.5 else legal[int(rng.integers(len(legal)))]
        calls += action == "[Call]"
        new = game.act(pos, seat, action)
        rewards = game.round_rewards(pos.state, new.state)
        assert (rewards is not None) == (action == "[Call]")
        if rewards is not None:
            rounds.append(rewards)
        pos = new
    return rounds, calls, game.final_returns(pos)


@pytest.mark.parametrize("players, seed", [(2, 3), (3, 11)])
def test_liars_dice_settles_a_round_at_every_call_and_the_dice_add_up(players, seed):
    """Each call: one seat -1 (a die lost), one +1 (the other party of the call), the rest 0. The
    dice lost add up to the game: every seat out of the game lost all 5 of its dice, the winner fewer."""
    game = make_game(TITLE, num_players=players)
    assert game.has_rounds
    rounds, calls, returns = _play(game, seed)
    assert len(rounds) == calls > 0
    for r in rounds:
        assert sorted(r) == [-1.0] + [0.0] * (players - 2) + [1.0]
    lost = [sum(1 for r in rounds if r[s] == -1.0) for s in range(players)]
    winner = int(np.argmax(returns))
    assert all(n == 5 for s, n in enumerate(lost) if s != winner) and lost[winner] < 5


def test_a_game_without_rounds_declares_none_and_grpo_refuses_the_round_reward(tmp_path):
    kuhn = make_game("kuhn_poker")
    pos = kuhn.start(0)
    assert not kuhn.has_rounds and kuhn.round_rewards(pos.state, kuhn.act(pos, 0, kuhn.legal(pos, 0)[0]).state) is None
    pytest.importorskip("mlx.core")
    from arena_train import grpo

    cfg = dict(
        game="kuhn_poker",
        steps=1,
        reward=dict(kind="round"),
        pool=dict(players=["random"]),
        eval=dict(anchor="random", every=0, deals=2, bootstrap=100),
        plot=False,
    )
    with pytest.raises(ConfigError, match="declares rounds"):
        grpo.TRAINER(cfg, tmp_path / "run")


def test_each_decision_gets_its_own_rounds_reward():
    """Decisions at plies 0, 2 (round settled at ply 3: +1) and 5, 7 (round settled at ply 8: -1),
    and one after the last call (no round settled: 0); a penalty counts in its own round only."""
    steps = [StepRecord(0, p, Choice(None), pen) for p, pen in ((0, 0.0), (2, -0.5), (5, 0.0), (7, 0.0), (10, 0.0))]
    result = EpisodeResult(1, 0, (1.0, -1.0), steps, rounds=[(3, (1.0, -1.0)), (8, (-1.0, 1.0))])
    spec = RewardSpec("round")
    assert decision_returns(result, spec) == [0.5, 0.5, -1.0, -1.0, 0.0]
    assert seat_return(result, 0, spec) == 0.0 - 0.5 and seat_return(result, 1, spec) == 0.0


def test_grpo_round_advantages_are_centred_per_group_and_seat():
    """The rollout records the rounds; with per-decision credit and the group baseline every
    decision's advantage is its round's reward minus its group and seat's mean (unscaled)."""
    pytest.importorskip("mlx.core")
    from arena_train.config import GRPOConfig
    from arena_train.grpo_rollout import advantages, update_baselines

    game = make_game(TITLE)
    learner = PlayerLearner(make_player("random", seed=1))
    specs = [EpisodeSpec(5 + k // 2, 0, {1: make_player("random", seed=2)}, k) for k in range(4)]
    results = play_episodes(game, specs, learner, rounds=True)
    assert all(r.rounds for r in results)
    cfg = GRPOConfig.model_validate(
        dict(
            game=TITLE,
            steps=1,
            baseline="group",
            advantage="per_decision",
            advantage_scale="none",
            reward=dict(kind="round"),
            pool=dict(players=["random"]),
            eval=dict(anchor="random"),
        )
    )
    groups = [0, 0, 1, 1]
    adv = advantages(cfg, groups, results, RewardSpec("round"), _baselines())
    by_key: dict[tuple[int, int], list[float]] = {}
    for i, seat, a, g in zip(adv.episodes, adv.decision_seats, adv.advantages, adv.decision_returns):
        assert g in (-1.0, 0.0, 1.0)
        by_key.setdefault((groups[i], seat), []).append(a)
    assert all(abs(sum(v)) < 1e-9 for v in by_key.values())
    role = cfg.model_copy(update={"baseline": "role"})
    base = _baselines()
    update_baselines(role, base, advantages(role, groups, results, RewardSpec("round"), base))
    assert base.role[0] == pytest.approx(0.05 * float(np.mean(adv.decision_returns)))  # a round's, not a game's


def _baselines():
    from arena_train.grpo_rollout import Baselines

    return Baselines([0.0, 0.0])


def test_the_round_reward_example_trains_a_step(tmp_path):
    """examples/train_liars_round_reward.toml, cut to one small step."""
    pytest.importorskip("mlx.core")
    from arena_train import grpo
    from arena_train.config import parse_config

    cfg = parse_config(EXAMPLE).model_dump(mode="json")
    cfg.update(steps=1, deals_per_step=1, group_size=2, seats="rotate", plot=False)
    cfg["eval"].update(deals=1, bootstrap=100)
    row = grpo.TRAINER(cfg, tmp_path / "run").metrics[1]
    assert row["decisions"] > 0 and np.isfinite(row["grad_norm"]) and row["grad_norm"] > 0
    assert -5 <= row["reward_mean"] <= 4  # dice won minus dice lost, not the outcome's +-1
    assert json.loads((tmp_path / "run" / "manifest.json").read_text())["config"]["reward"]["kind"] == "round"
