"""The MegaGem student over the expert's bid (issue 30): the view oracle, the start at the expert,
the luck-controlled trainer at a tiny size, and the checkpoint player."""

from __future__ import annotations

import copy
import importlib.util
import json
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from arena_core.errors import ConfigError
from arena_core.players import Decision
from arena_core.registry import make_game, make_player
from arena_games.megagem.bots import ExpertBidder
from arena_games.megagem.residual import (
    EXPERT_ACTION,
    MENU,
    ExpertCache,
    ResidualPolicy,
    expert_read,
    greedy_margins,
    menu_bids,
    play_deal,
)

_spec = importlib.util.spec_from_file_location(
    "train_megagem_residual", Path(__file__).resolve().parents[1] / "bench" / "train_megagem_residual.py"
)
assert _spec is not None and _spec.loader is not None
bench = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = bench  # its dataclasses resolve their module
_spec.loader.exec_module(bench)
TrainConfig, load_state, new_state, save_state, train_step = (
    bench.TrainConfig,
    bench.load_state,
    bench.new_state,
    bench.save_state,
    bench.train_step,
)


@pytest.fixture(scope="module")
def game() -> Any:
    return make_game("megagem")


def test_view_oracle_reproduces_the_expert_bid_for_bid(game: Any) -> None:
    """The expert's bid, computed from a JSON copy of the seat's observation alone, is the bid the
    expert plays, at every bid decision of whole games (every seat, loans and investments too)."""
    expert = ExpertBidder()
    seen, kinds = 0, set()
    for deal in (5, 6):
        pos = game.start(deal)
        while not game.is_over(pos):
            p = game.current_player(pos)
            d = Decision.at(game, pos, p, deal)
            action = expert.act(d)
            if d.observation["phase"] == "bid":
                view = json.loads(json.dumps(d.observation))  # nothing but the view
                assert expert_read(expert, view).bid == action.amount
                seen += 1
                kinds.add(view["current_card"]["type"])
            pos = game.act(pos, p, action)
    assert seen > 60 and kinds == {"treasure", "loan", "investment"}


def test_menu_bids_round_and_clip() -> None:
    labels = [m[0] for m in MENU]
    assert labels[EXPERT_ACTION] == "x1.0"
    assert menu_bids(10, 40) == [8, 9, 10, 11, 12, 11, 12]
    assert menu_bids(10, 11) == [8, 9, 10, 11, 11, 11, 11]
    assert menu_bids(0, 0) == [0] * len(MENU)
    assert menu_bids(0, 5) == [0, 0, 0, 0, 0, 1, 2]


def test_untrained_student_is_the_expert_and_a_deviation_is_not(game: Any) -> None:
    """Greedy at initialisation: margin over the expert exactly 0 on every deal and seat; the
    constant +1 policy (a real deviation) is not 0, so the check can fail."""
    cache = ExpertCache(game)
    deals = [101, 102]
    assert greedy_margins(game, ResidualPolicy.init(3.0), deals, cache) == [0.0, 0.0]
    assert greedy_margins(game, ResidualPolicy.init(0.01), deals, cache) == [0.0, 0.0]
    plus_one = [m[0] for m in MENU].index("+1")
    assert any(m != 0.0 for m in greedy_margins(game, ResidualPolicy.constant(plus_one), deals, cache))


def test_tiny_training_step_logs_noise_and_resumes(game: Any, tmp_path: Path) -> None:
    cfg = TrainConfig(seed=3, deals_per_step=1, lr=0.05, entropy=0.01)
    cache = ExpertCache(game)
    st = new_state(cfg)
    row = train_step(game, cfg, st, cache)
    assert row["episodes"] == 3 and row["step"] == 1
    for key in ("noise_raw", "noise_expert_control", "noise_greedy_control"):
        assert np.isfinite(row[key]) and row[key] >= 0
    assert abs(sum(row["menu_share"]) - 1.0) < 1e-9
    assert not np.allclose(st.policy.b, ResidualPolicy.init(cfg.init_bias).b)  # it moved
    save_state(st, tmp_path / "state.npz")
    twin = load_state(cfg, tmp_path / "state.npz")
    a, b = copy.deepcopy(st), twin
    train_step(game, cfg, a, cache)
    train_step(game, cfg, b, cache)
    assert np.array_equal(a.policy.W, b.policy.W) and np.array_equal(a.policy.b, b.policy.b)
    assert a.step == b.step == 2


def test_checkpoint_player_plays_the_saved_policy(game: Any, tmp_path: Path) -> None:
    ResidualPolicy.init(3.0).save(tmp_path / "student", {"step": 0})
    player = make_player(f"checkpoint:run={(tmp_path / 'student').as_posix()}")
    expert = ExpertBidder()
    assert play_deal(game, 7, [player.act, expert.act, expert.act]) == play_deal(game, 7, [expert.act] * 3)
    plus_one = [m[0] for m in MENU].index("+1")
    ResidualPolicy.constant(plus_one).save(tmp_path / "plus_one")
    bold = make_player(f"checkpoint:run={(tmp_path / 'plus_one').as_posix()}")
    assert play_deal(game, 7, [bold.act, expert.act, expert.act]) != play_deal(game, 7, [expert.act] * 3)


def test_a_checkpoint_of_another_kind_or_menu_is_refused(tmp_path: Path) -> None:
    ResidualPolicy.init(3.0).save(tmp_path)
    cfg = json.loads((tmp_path / "config.json").read_text())
    cfg["menu"] = cfg["menu"][:-1]
    (tmp_path / "config.json").write_text(json.dumps(cfg))
    with pytest.raises(ConfigError, match="menu or features differ"):
        ResidualPolicy.load(tmp_path)
    cfg["kind"] = "something_else"
    (tmp_path / "config.json").write_text(json.dumps(cfg))
    with pytest.raises(ConfigError, match="kind"):
        ResidualPolicy.load(tmp_path)
