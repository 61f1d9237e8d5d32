"""The MegaGem student over the expert's bid (issue 30): the view oracle, the start at the expert,
the luck-controlled trainer at a tiny size, and the checkpoint player."""

from __future__ import annotations

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
    FEATURES,
    MENU,
    ResidualPolicy,
    expert_read,
    menu_bids,
)
from arena_train import residual
from arena_train.residual import LinearStudent, play_deal, session_for
from arena_train.run import RunDir
from arena_train.trainer import Parts

_spec = importlib.util.spec_from_file_location(
    "train_megagem_residual", Path(__file__).resolve().parents[1] / "bench" / "train_megagem_residual.py"
)
assert _spec is not None and _spec.loader is not None
bench = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = bench  # its dataclasses resolve their module
_spec.loader.exec_module(bench)


def student(init_bias: float = 3.0) -> LinearStudent:
    return LinearStudent.init(len(FEATURES), len(MENU), EXPERT_ACTION, init_bias)


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
    deals = [101, 102]
    assert residual.greedy_margins(session_for(game, student(3.0)), deals) == [0.0, 0.0]
    assert residual.greedy_margins(session_for(game, student(0.01)), deals) == [0.0, 0.0]
    plus_one = [m[0] for m in MENU].index("+1")
    constant = bench.constant_student(plus_one)
    assert any(m != 0.0 for m in residual.greedy_margins(session_for(game, constant), deals))


def test_tiny_training_step_logs_noise_and_resumes(game: Any, tmp_path: Path) -> None:
    """The package's residual trainer (the bench's old step, moved): a step logs the gradient noise
    under each reference, and a checkpoint resumes exactly."""
    cfg = residual.TRAINER.parse(
        dict(game="megagem", seed=3, steps=3, deals_per_step=1, learning_rate=0.05, entropy=0.01)
    )
    run = RunDir.claim(tmp_path / "r")
    st = residual.start(cfg, run, Parts())
    row = residual.train_step(st)
    assert row["episodes"] == 3 and row["step"] == 1
    for key in ("noise_raw", "noise_expert_control", "noise_greedy_control"):
        assert np.isfinite(row[key]) and row[key] >= 0
    assert abs(sum(row["menu_share"]) - 1.0) < 1e-9
    assert not np.allclose(st.student.b, student(cfg.init_bias).b)  # it moved
    residual.save_checkpoint(run, st)
    resumed = cfg.model_copy(update={"resume_from": str(tmp_path / "r")})
    twin = residual.start(resumed, RunDir.claim(tmp_path / "r", resume=tmp_path / "r"), Parts())
    a, b = st, twin
    residual.train_step(a)
    residual.train_step(b)
    assert np.array_equal(a.student.W, b.student.W) and np.array_equal(a.student.b, b.student.b)
    assert a.step == b.step == 2


def test_arena_train_runs_the_student_and_its_checkpoint_plays(game: Any, tmp_path: Path) -> None:
    """``arena train`` with ``trainer = "residual_pg"``: the run's student directory plays as
    ``checkpoint:run=...`` exactly as the trained weights choose (the shipped model's path)."""
    from arena_train.cli import main

    config = tmp_path / "r.json"
    config.write_text(
        json.dumps(dict(trainer="residual_pg", game="megagem", seed=1, steps=1, deals_per_step=1, eval_deals=2))
    )
    assert main([str(config), "--run-dir", str(tmp_path / "run"), "--quiet"]) == 0
    rows = [json.loads(x) for x in (tmp_path / "run" / "metrics.jsonl").read_text().splitlines()]
    assert [r["step"] for r in rows] == [0, 1] and len(rows[-1]["eval_margins"]) == 2
    assert rows[0]["eval_margins"] == [0.0, 0.0]  # the untrained student is the expert
    player = make_player(f"checkpoint:run={(tmp_path / 'run' / 'student').as_posix()}")
    trained = ResidualPolicy.load(tmp_path / "run" / "student")
    view = session_for(game).view
    pos = game.start(9)
    while game.observe(pos, game.current_player(pos))["phase"] == "reveal":
        pos = game.act(pos, game.current_player(pos), game.legal(pos, game.current_player(pos))[0])
    d = Decision.at(game, pos, game.current_player(pos), 9)
    x, actions = view.read(d)
    assert player.act(d) == actions[trained.greedy(x)]


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
