"""The language model's engines (issue 42 point 3): the fast engine gives the reference engine's
distributions (numpy forward, last layer at the answer position, tighter padding), the reference
engine keeps the old draws, and a model the fast paths do not know runs whole through MLX."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pytest.importorskip("mlx.core")

import mlx.core as mx  # noqa: E402

from arena_core.registry import make_game  # noqa: E402
from arena_core.seeding import make_rng  # noqa: E402
from arena_players.tiny_model import TinyConfig, ensure_tiny_model  # noqa: E402
from arena_train import grpo  # noqa: E402
from arena_train.exact import information_states  # noqa: E402
from arena_train.lm import (  # noqa: E402
    Engine,
    LMPolicy,
    last_logits,
    load_lm,
    pad_batch,
    prepare_trainable,
    sample_index,
    sample_rows,
)
from arena_train.lm_engine import key_uniform  # noqa: E402
from arena_train.lm_numpy import numpy_decoder, numpy_forward_for  # noqa: E402
from arena_train.views import compact_view  # noqa: E402

SHAPES = {
    "llama": TinyConfig(),  # the tiny model: 2 layers, 4 query heads sharing 2 key-value heads
    "qwen2": TinyConfig(architecture="qwen2", hidden_size=32, num_attention_heads=2, num_key_value_heads=1),
}


@pytest.fixture(scope="module", params=sorted(SHAPES))
def model(request):
    return load_lm(str(ensure_tiny_model(config=SHAPES[request.param], game_ids=["leduc_poker"])))


def _leduc_batch(tokenizer):
    """Every Leduc prompt (10 to 17 tokens)."""
    game = make_game("leduc_poker")
    policy = LMPolicy(None, tokenizer, compact_view(game))
    return [policy.encode(policy.view.menu(game, i.pos, i.seat)) for i in information_states(game)]


def test_every_forward_gives_the_same_logits(model):
    """mlx-lm's whole forward, the last layer at the answer position alone, and the numpy copy
    agree to float32 rounding, at both paddings."""
    net, tokenizer = model
    encoded = _leduc_batch(tokenizer)
    assert len({len(t) for t, _ in encoded}) > 1  # rows of several lengths: the padding is exercised
    tokens, lengths, _, _ = pad_batch([t for t, _ in encoded], [lb for _, lb in encoded], bucket=16)
    whole = np.array(last_logits(net, tokens, lengths))
    tight, tight_len, _, _ = pad_batch([t for t, _ in encoded], [lb for _, lb in encoded], bucket=1)
    assert tight.shape[1] < tokens.shape[1]
    answer = np.array(last_logits(net, tight, tight_len, answer_only=True))
    assert numpy_forward_for(net)
    numpy = numpy_decoder(net).last_logits(np.array(tight), np.array(tight_len))
    scale = np.abs(whole).max()
    assert np.abs(answer - whole).max() <= 1e-5 * scale
    assert np.abs(numpy - whole).max() <= 1e-5 * scale


def test_the_engines_give_the_same_distributions(model):
    net, tokenizer = model
    game = make_game("leduc_poker")
    view = compact_view(game)
    menus = [view.menu(game, i.pos, i.seat) for i in information_states(game)[:60]]
    ref = LMPolicy(net, tokenizer, view, temperature=3.0).distributions(menus)
    fast = LMPolicy(net, tokenizer, view, temperature=3.0, engine=Engine("fast")).distributions(menus)
    assert all(np.allclose(a, b, atol=1e-5) for a, b in zip(ref, fast))


def test_the_numpy_copy_follows_the_weights(model):
    """A fast policy reads the weights it plays: after an update (new arrays) its numpy copy is
    rebuilt; a snapshot's weights are used in place of the model's."""
    net, tokenizer = model
    game = make_game("leduc_poker")
    view = compact_view(game)
    menus = [view.menu(game, i.pos, i.seat) for i in information_states(game)[:20]]
    policy = LMPolicy(net, tokenizer, view, engine=Engine("fast"))
    before = policy.distributions(menus)
    saved = {k: v for k, v in net.trainable_parameters().items()}
    embed = net.model.embed_tokens.weight
    net.model.embed_tokens.weight = embed * 1.5
    try:
        after = policy.distributions(menus)
        reference = LMPolicy(net, tokenizer, view).distributions(menus)
        assert not all(np.allclose(a, b) for a, b in zip(before, after))
        assert all(np.allclose(a, b, atol=1e-5) for a, b in zip(after, reference))
        snapshot = LMPolicy(net, tokenizer, view, engine=Engine("fast"), weights={"model.embed_tokens.weight": embed})
        assert all(np.allclose(a, b, atol=1e-5) for a, b in zip(snapshot.distributions(menus), before))
    finally:
        net.update(saved)


def test_a_model_the_fast_paths_do_not_know_runs_through_mlx(tmp_path):
    """LoRA adapters (another Linear) keep the whole MLX forward; the distributions still agree."""
    net, tokenizer = load_lm(str(ensure_tiny_model(game_ids=["leduc_poker"])))
    prepare_trainable(net, "lora", seed=0, lora_layers=1, lora_rank=2)
    assert not numpy_forward_for(net)
    game = make_game("leduc_poker")
    view = compact_view(game)
    menus = [view.menu(game, i.pos, i.seat) for i in information_states(game)[:10]]
    ref = LMPolicy(net, tokenizer, view).distributions(menus)
    fast = LMPolicy(net, tokenizer, view, engine=Engine("fast")).distributions(menus)
    assert all(np.allclose(a, b, atol=1e-5) for a, b in zip(ref, fast))


@settings(max_examples=30, deadline=None)
@given(logits=st.lists(st.floats(-8, 8), min_size=1, max_size=20), key=st.integers(0, 2**62))
def test_the_reference_engine_draws_as_before(logits, key):
    """``sample_index`` with the reference uniform is ``Generator.choice`` as the policy drew it
    before the engines existed."""
    lp = np.asarray(logits) - np.log(np.exp(np.asarray(logits)).sum())
    p = np.exp(lp - lp.max())
    old = int(make_rng(key, "lm_policy").choice(len(p), p=p / p.sum()))
    assert sample_index(lp, Engine("reference").uniform(key)) == old


@settings(max_examples=30, deadline=None)
@given(
    rows=st.lists(st.lists(st.floats(-8, 8), min_size=1, max_size=6), min_size=1, max_size=8),
    uniforms=st.lists(st.floats(0, 1, exclude_max=True), min_size=8, max_size=8),
)
def test_the_fast_draws_invert_the_same_distribution(rows, uniforms):
    """Away from a rounding boundary, the vectorised draw picks what one row's inverse CDF picks."""
    lps = [np.asarray(r) for r in rows]
    picks = sample_rows(lps, uniforms[: len(lps)])
    for lp, u, k in zip(lps, uniforms, picks):
        p = np.exp(lp - lp.max())
        cdf = np.cumsum(p) / p.sum()
        if np.min(np.abs(cdf - u)) > 1e-9:
            assert k == sample_index(lp, u)


def test_the_fast_engines_uniforms_are_uniform():
    """A chi-square test over 20 bins of the draws of 4,000 decisions (400 episodes x 10 plies):
    below 43.8, the 0.999 quantile of chi-square with 19 degrees of freedom."""
    engine = Engine("fast")
    u = np.array([key_uniform(engine.decision_key(seed, ply)) for seed in range(400) for ply in range(10)])
    counts = np.bincount((u * 20).astype(int), minlength=20)
    assert ((counts - 200) ** 2 / 200).sum() < 43.8
    assert len(set(engine.decision_key(s, p) for s in range(400) for p in range(10))) == 4000


def test_a_fast_run_reproduces_itself_and_is_another_stream(tmp_path):
    cfg = dict(
        game="kuhn_poker",
        seed=1,
        steps=2,
        deals_per_step=2,
        group_size=4,
        temperature=3.0,
        kl_beta=0.0,
        self_play=True,
        baseline="role",
        eval=dict(anchor="kuhn_king_only", every=0, deals=2, bootstrap=100),
        plot=False,
    )
    a = grpo.TRAINER(cfg, tmp_path / "a").metrics
    b = grpo.TRAINER(cfg, tmp_path / "b").metrics
    ref = grpo.TRAINER({**cfg, "engine": "reference"}, tmp_path / "c").metrics
    assert a == b and a != ref
    assert mx.array(0).item() == 0  # MLX is still usable after the runs (no stream left waiting)
