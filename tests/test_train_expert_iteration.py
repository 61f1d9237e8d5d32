"""Expert iteration on MegaGem with the tiny model: labels, fine-tuning, report."""

from __future__ import annotations

import json

import numpy as np
import pytest

pytest.importorskip("mlx.core")

from arena_core.players import Decision  # noqa: E402
from arena_core.registry import make_game, make_player  # noqa: E402
from arena_games.megagem.views import MEGAGEM_BID_GRID, MegaGemCompactView  # noqa: E402
from arena_train import expert_iteration  # noqa: E402
from arena_train.expert_iteration import GridExpert, expert_menu_index  # noqa: E402
from arena_train.lm import menu_logprobs, records_batch, trainables  # noqa: E402

SMALL = dict(
    game="megagem",
    expert="megagem_expert",
    opponents=["megagem_heuristic"],
    rounds=1,
    deals_per_round=1,
    epochs=1,
    eval_deals=2,
    bootstrap=200,
    optim=dict(learning_rate=3e-4),
)


def test_expert_answers_map_to_the_nearest_legal_grid_bid():
    game = make_game("megagem")
    view = MegaGemCompactView()
    expert = make_player("megagem_expert")
    checked = 0
    for seed in range(3):
        pos = game.start(seed)
        while not game.is_over(pos) and checked < 60:
            seat = game.current_player(pos)
            menu = view.menu(game, pos, seat)
            idx = expert_menu_index(game, pos, seat, expert, menu, seed)
            decision = Decision(
                game, seat, game.observe(pos, seat), game.legal(pos, seat), pos.ply, seed, _position=pos
            )
            answer = expert.act(decision)
            answer = getattr(answer, "action", answer)
            chosen = menu.actions[idx]
            assert menu.legal[idx]
            if hasattr(answer, "amount"):
                legal_grid = [b for b in MEGAGEM_BID_GRID if b <= game.observe(pos, seat)["bid_limit"]]
                assert abs(chosen.amount - answer.amount) == min(abs(b - answer.amount) for b in legal_grid)
            else:
                assert chosen == answer
            checked += 1
            pos = game.act(pos, seat, chosen)
    assert checked >= 60


def test_fine_tuning_raises_agreement_with_the_expert_labels(tmp_path):
    from arena_train.run import RunDir
    from arena_train.trainer import Parts

    cfg = expert_iteration.TRAINER.parse(dict(SMALL, epochs=4))
    trainer = expert_iteration.start(cfg, RunDir.claim(tmp_path / "ei"), Parts())
    data, stats = expert_iteration.collect(trainer, 1)
    assert stats["labelled"] == stats["decisions"] == len(data) > 10

    def agreement() -> float:
        lp = np.array(menu_logprobs(trainer.model, *records_batch([d.record for d in data])))
        return float(np.mean([int(np.argmax(lp[i, : len(d.record.labels)])) == d.label for i, d in enumerate(data)]))

    before = agreement()
    weights = trainables(trainer.model)
    loss = expert_iteration.fine_tune(trainer, data, 1)
    assert np.isfinite(loss)
    after = agreement()
    assert after > before + 0.1, (before, after)
    changed = trainables(trainer.model)
    assert any(not np.array_equal(np.array(weights[k]), np.array(changed[k])) for k in weights)


def test_short_run_reports_recovery_with_intervals(tmp_path):
    out = expert_iteration.TRAINER(SMALL, tmp_path / "run")
    rep = out.report
    for key in (
        "initial_margin",
        "student_margin",
        "expert_margin",
        "grid_expert_margin",
        "recovered_fraction",
        "agreement_student",
    ):
        assert key in rep
    iv = rep["student_minus_initial"]
    assert iv["low"] <= iv["mean"] <= iv["high"]
    assert rep["expert_margin"] > 0, "the analytic expert beats the heuristic"
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    assert manifest["report"] == json.loads(json.dumps(rep))


def test_grid_expert_plays_only_menu_actions():
    game = make_game("megagem")
    view = MegaGemCompactView()
    grid = GridExpert(make_player("megagem_expert"), view)
    pos = game.start(5)
    seat = game.current_player(pos)
    decision = Decision(game, seat, game.observe(pos, seat), game.legal(pos, seat), pos.ply, 5, _position=pos)
    assert grid.act(decision) in view.menu(game, pos, seat).actions


def test_a_restricted_expert_is_offered_only_the_menus_legal_actions():
    game = make_game("megagem")
    view = MegaGemCompactView()

    class Spy:
        seen: tuple = ()

        def act(self, decision):
            self.seen = decision.legal_actions
            return decision.legal_actions[-1]

    checked = 0
    for seed in range(3):
        pos = game.start(seed)
        for _ in range(12):
            if game.is_over(pos):
                break
            seat = game.current_player(pos)
            menu = view.menu(game, pos, seat)
            spy = Spy()
            idx = expert_menu_index(game, pos, seat, spy, menu, seed, restrict=True)
            offered = tuple(a for a, ok in zip(menu.actions, menu.legal) if ok)
            assert spy.seen == offered and menu.actions[idx] == offered[-1]
            if len(offered) < len(game.legal(pos, seat)):
                checked += 1  # a bid decision: the grid is narrower than the legal bids
            pos = game.act(pos, seat, menu.actions[idx])
    assert checked > 0


def test_labelled_decisions_survive_the_cache_format():
    from arena_train.expert_iteration import Labelled
    from arena_train.lm import LMRecord

    item = Labelled(LMRecord((5, 6, 7), (20, 21), (True, False), 1, -0.25, "mg r1 x:"), 0, 3)
    assert Labelled.from_json(json.loads(json.dumps(item.to_json()))) == item


def test_the_config_names_its_game_expert_and_opponents():
    """Issue 45 point 6: the trainer package holds no default game, expert or opponents; a config
    without them is refused, naming each field."""
    from arena_core.errors import ConfigError

    with pytest.raises(ConfigError, match="game: Field required.*expert: Field required.*opponents: Field required"):
        expert_iteration.TRAINER.parse({"rounds": 1})
    cfg = expert_iteration.TRAINER.parse(SMALL)
    assert (cfg.game, str(cfg.expert), [str(o) for o in cfg.opponents]) == (
        "megagem",
        "megagem_expert",
        ["megagem_heuristic"],
    )
