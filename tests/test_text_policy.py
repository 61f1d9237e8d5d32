"""The language model on the frontier's terms (issue 46, point 4): the game's text view answered
in the title's own action strings under the MLX player's constrained decoding
(:class:`arena_train.text_policy.TextPolicy`). Greedy, it answers what ``mlx:mode=constrained``
answers; sampled, it draws each legal string with the product of its branching steps'
probabilities; GRPO trains on it (``view = "text"``) and the checkpoint plays as it trained."""

from __future__ import annotations

import math

import numpy as np
import pytest

pytest.importorskip("textarena")
pytest.importorskip("mlx_lm")

from pydantic import ValidationError

from arena_core.players import Decision
from arena_core.registry import make_game, make_player
from arena_core.runner import play_episode
from arena_train.rollout import Request
from arena_train.text_policy import TextPolicy, records_of

KUHN, LIARS = "textarena/KuhnPoker-v0", "textarena/LiarsDice-v0"


def _positions(game, seed, n):
    """The first ``n`` decisions of a random game: (position, seat)."""
    pos, out = game.start(seed), []
    player = make_player("random", seed=seed)
    while not game.is_over(pos) and len(out) < n:
        seat = game.current_player(pos)
        out.append((pos, seat))
        pos = game.act(pos, seat, player.act(Decision.at(game, pos, seat, seed)))
    return out


def test_greedy_text_answers_are_the_mlx_players_constrained_answers():
    from arena_players.mlx_player import MLXPlayer
    from arena_players.tiny_model import ensure_tiny_model

    game, seed = make_game(LIARS), 5  # bids of several tokens, branching at the quantity and the face
    model = str(ensure_tiny_model(game_ids=[LIARS]))  # its tokenizer trained on the title: shorter prompts
    mlx = MLXPlayer(seed=0, model=model, mode="constrained", temperature=0.0)
    policy = TextPolicy(mlx.engine.model, mlx.engine.tokenizer, temperature=0.0)
    positions = _positions(game, seed, 4)
    mine = policy.decide([Request(game, pos, seat, 0, 0) for pos, seat in positions])  # one batch
    for (pos, seat), choice in zip(positions, mine):
        theirs = mlx.act(Decision.at(game, pos, seat, seed)).action
        assert choice.action == theirs and choice.action in game.legal(pos, seat)


def _exact(policy, game, pos, seat):
    """Every legal string's probability, by walking its whole trie."""
    prompt = policy.prompt(Request(game, pos, seat, 0, 0))
    out = {}

    def walk(node, path, logp):
        allowed = prompt.trie.allowed(node, policy.eos)
        lp = [0.0] if len(allowed) == 1 else policy._logprobs([(prompt.tokens + tuple(path), tuple(allowed))])[0]
        for tok, step_lp in zip(allowed, lp):
            if tok == policy.eos:
                out[prompt.legal[node.value]] = logp + step_lp
                continue
            child = node.children[tok]
            if not child.children:
                out[prompt.legal[child.value]] = logp + step_lp
            else:
                walk(child, [*path, tok], logp + step_lp)

    walk(prompt.trie.root, [], 0.0)
    return out


def test_a_sampled_answer_is_drawn_with_the_product_of_its_branching_steps():
    from arena_players.mlx_engine import load_model
    from arena_players.tiny_model import ensure_tiny_model

    model, tok = load_model(str(ensure_tiny_model(game_ids=[LIARS])))
    game = make_game(LIARS)
    pos, seat = _positions(game, 2, 3)[-1]  # a standing bid: [Call] and the higher bids
    policy = TextPolicy(model, tok, temperature=3.0)  # hot: the tiny model's sharp logits spread out
    exact = _exact(policy, game, pos, seat)
    assert set(exact) == set(policy.prompt(Request(game, pos, seat, 0, 0)).legal)
    assert math.fsum(math.exp(v) for v in exact.values()) == pytest.approx(1.0, abs=1e-6)
    n = 600
    choices = policy.decide([Request(game, pos, seat, 0, key) for key in range(n)])
    counts: dict[str, int] = {}
    for c in choices:
        text = game.action_to_str(c.action)
        counts[text] = counts.get(text, 0) + 1
        # each choice's steps carry its exact log-probability
        assert math.fsum(r.logprob for r in records_of(c.record)) == pytest.approx(exact[text], abs=1e-5)
    for text, logp in exact.items():
        p = math.exp(logp)
        assert abs(counts.get(text, 0) / n - p) < 5 * math.sqrt(p * (1 - p) / n) + 1e-3, (text, p)


def test_grpo_trains_on_the_text_view_and_its_checkpoint_plays_as_it_trained(tmp_path):
    from arena_train import grpo

    cfg = {
        "game": KUHN,
        "view": "text",
        "steps": 2,
        "deals_per_step": 2,
        "group_size": 4,
        "temperature": 5.0,  # the tiny model's logits are sharp: hot enough for a group's plays to differ
        "kl_beta": 0.0,
        "plot": False,
        "checkpoint_every": 1,
        "model": {"path": "tiny", "tiny_games": [KUHN]},
        "optim": {"learning_rate": 1e-2},
        # against random (which bets) a fold or a call changes the outcome: groups differ (the title's
        # rounds are otherwise won by the cards alone)
        "pool": {"players": ["random"]},
        "eval": {"anchor": "random", "deals": 2},
    }
    summary = grpo.TRAINER(cfg, tmp_path / "run")
    rows = [r for r in summary.metrics if r.get("decisions")]
    assert summary.status == "ok" and len(rows) == 2
    assert all(r["parse_failures"] == 0 and r["illegal_actions"] == 0 and r["response_tokens"] >= 1 for r in rows)
    assert any(r["grad_norm"] > 0 for r in rows)  # the steps' text answers carried a gradient
    import mlx.core as mx

    w1 = mx.load(str(tmp_path / "run" / "checkpoints" / "step_000001" / "trainable.safetensors"))
    w2 = mx.load(str(tmp_path / "run" / "checkpoints" / "step_000002" / "trainable.safetensors"))
    assert any(not np.array_equal(np.array(w1[k]), np.array(w2[k])) for k in w1)
    game = make_game(KUHN)
    player = make_player(f"checkpoint:run={tmp_path / 'run'},temperature=train", seed=0)
    assert type(player.policy_for(game)).__name__ == "TextPolicy"
    record = play_episode(game, [player, make_player("random", seed=1)], 4)
    assert record.end.returns is not None and not any(e.type != "step" for e in record.events)


@pytest.mark.parametrize("change", [{"eval": {"anchor": "random", "exploitability": True}}, {"action_space": "all"}])
def test_text_answers_refuse_what_needs_a_menu(change):
    from arena_train.config import GRPOConfig

    with pytest.raises(ValidationError, match="view = .text."):
        GRPOConfig.model_validate(
            {
                "game": KUHN,
                "steps": 1,
                "view": "text",
                "pool": {"players": ["random"]},
                "eval": {"anchor": "random"},
                **change,
            }
        )
