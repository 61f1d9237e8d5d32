"""MLX player: the tiny offline model, the token trie, constrained and free decoding, seeded
sampling that replays, telemetry in the record, and batched generation."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

mx = pytest.importorskip("mlx.core")

from arena_core.errors import ConfigError, PlayerError  # noqa: E402
from arena_core.policy import IllegalActionPolicy  # noqa: E402
from arena_core.registry import make_game, make_player  # noqa: E402
from arena_core.runner import play_episode  # noqa: E402
from arena_players.mlx_player import (  # noqa: E402
    KeyedSampler,
    MLXEngine,
    MLXPlayer,
    RowSampling,
    TokenTrie,
    TrieConstraint,
    load_model,
    top_p_filter,
)
from arena_players.tiny_model import TinyConfig, build_tiny_model, ensure_tiny_model  # noqa: E402

# cost, not decision: they depend on what the engine kept
VOLATILE = {"latency_s", "prefill_tokens", "cached_tokens", "kv_cache", "new_tokens"}


def stable(record) -> list:
    """The record's lines minus wall-clock latencies."""
    out = []
    for line in record.lines():
        data = json.loads(line)
        tel = data.get("telemetry")
        if isinstance(tel, dict):
            data["telemetry"] = {k: v for k, v in tel.items() if k not in VOLATILE}
        out.append(data)
    return out


@pytest.fixture(scope="module")
def engine() -> MLXEngine:
    model, tokenizer = load_model("tiny")
    return MLXEngine(model, tokenizer)


# ---------------------------------------------------------------- the tiny model
def test_tiny_model_files_load_and_are_reproducible(tmp_path):
    corpus = ["bid 1 bid 10 bid 12 pass bet", "You are playing a game. Legal actions: pass, bet"] * 3
    a = build_tiny_model(tmp_path / "a", config=TinyConfig(vocab_size=300), corpus=corpus)
    b = build_tiny_model(tmp_path / "b", config=TinyConfig(vocab_size=300), corpus=corpus)
    for name in ("config.json", "model.safetensors", "tokenizer.json", "tokenizer_config.json"):
        assert (a / name).read_bytes() == (b / name).read_bytes(), name
    c = build_tiny_model(tmp_path / "c", config=TinyConfig(vocab_size=300, seed=1), corpus=corpus)
    assert (a / "model.safetensors").read_bytes() != (c / "model.safetensors").read_bytes()

    import mlx_lm

    model, tok = mlx_lm.load(str(a))
    ids = tok.apply_chat_template(
        [{"role": "system", "content": "rules"}, {"role": "user", "content": "bid 12?"}], add_generation_prompt=True
    )
    assert tok.decode(ids) == "<|system|>\nrules<|end|>\n<|user|>\nbid 12?<|end|>\n<|assistant|>\n"
    assert tok.eos_token_ids == {tok.convert_tokens_to_ids("<|end|>")}
    logits = model(mx.array([ids]))
    assert logits.shape == (1, len(ids), json.loads((a / "config.json").read_text())["vocab_size"])


def test_numbers_are_a_few_tokens(engine):
    # digits are one token each, so "bid 1" is a prefix of "bid 10" in token space too
    one, ten = engine.encode_answer("bid 1"), engine.encode_answer("bid 10")
    assert ten[: len(one)] == one and len(ten) == len(one) + 1 and len(ten) <= 4


# ---------------------------------------------------------------- the trie
token_seqs = st.lists(st.lists(st.integers(0, 12), min_size=1, max_size=5), min_size=1, max_size=12, unique_by=tuple)


@settings(max_examples=60, deadline=None)
@given(token_seqs)
def test_trie_finds_every_string_and_nothing_else(seqs):
    trie = TokenTrie(seqs)
    for i, seq in enumerate(seqs):
        assert trie.lookup(seq) == i
    assert trie.depth == max(len(s) for s in seqs)
    for seq in seqs:  # a proper prefix is a string only if it is in the set
        for k in range(1, len(seq)):
            want = seqs.index(seq[:k]) if seq[:k] in seqs else None
            assert trie.lookup(seq[:k]) == want


def test_trie_rejects_ambiguous_and_empty_strings():
    with pytest.raises(ConfigError, match="same tokens"):
        TokenTrie([[1, 2], [1, 2]])
    with pytest.raises(ConfigError, match="no tokens"):
        TokenTrie([[1], []])


@settings(max_examples=60, deadline=None)
@given(token_seqs, st.integers(0, 2**32 - 1), st.booleans())
def test_constraint_always_ends_on_a_legal_string(seqs, seed, greedy):
    """Drive the logits processor with arbitrary logits, as a generation loop would: every
    path ends, by EOS or by reaching a leaf, on exactly one legal string."""
    eos, vocab = 13, 16
    trie = TokenTrie(seqs)
    proc = TrieConstraint(trie, eos)
    rng = np.random.default_rng(seed)
    sampler = None if greedy else KeyedSampler(seed, temperature=1.0)
    context = [0, 1, 2]  # the prompt
    out: list[int] = []
    for _ in range(trie.depth + 1):
        logits = proc(mx.array(context + out), mx.array(rng.normal(size=(1, vocab)).astype(np.float32)))
        allowed = set(np.flatnonzero(np.isfinite(np.array(logits[0]))))
        node_allowed = set(trie.allowed(proc.node, eos))
        assert allowed == node_allowed
        logprobs = logits - mx.logsumexp(logits, axis=-1, keepdims=True)
        token = int((sampler(logprobs) if sampler else mx.argmax(logprobs, axis=-1)).item())
        assert token in allowed
        if token == eos:
            break
        done = proc.completes(token)
        out.append(token)
        if done:
            break
    assert trie.lookup(out) is not None


def test_constraint_handles_shared_prefixes_and_eos():
    # "1" ends a string and continues into "10", "12": both EOS and the digits are allowed
    trie = TokenTrie([[1], [1, 0], [1, 2], [2]])
    proc = TrieConstraint(trie, eos=9)
    logits = mx.zeros((1, 10))
    first = np.array(proc(mx.array([5]), logits)[0])
    assert set(np.flatnonzero(np.isfinite(first))) == {1, 2}
    second = np.array(proc(mx.array([5, 1]), logits)[0])
    assert set(np.flatnonzero(np.isfinite(second))) == {0, 2, 9}
    assert proc.completes(0) and not TrieConstraint(trie, 9).completes(1)
    with pytest.raises(PlayerError, match="outside the legal trie"):
        proc.advance(7)


def test_top_p_keeps_the_smallest_set_reaching_the_mass():
    lp = mx.log(mx.array([[0.5, 0.3, 0.15, 0.05]]))
    kept = np.isfinite(np.array(top_p_filter(lp, 0.75)[0]))
    assert kept.tolist() == [True, True, False, False]
    assert np.isfinite(np.array(top_p_filter(lp, 0.01)[0])).tolist() == [True, False, False, False]


def test_keyed_sampler_is_reproducible_and_leaves_global_state_alone():
    lp = mx.log(mx.ones((1, 50)) / 50)
    before = np.array(mx.random.state[0]).tolist()
    a = [int(KeyedSampler(7, 1.0)(lp).item()) for _ in range(3)]
    s = KeyedSampler(7, 1.0)
    b = [int(s(lp).item()) for _ in range(20)]
    assert a == [b[0]] * 3  # a fresh sampler with the same seed draws the same first token
    assert len(set(b)) > 5  # the key is split every token
    assert np.array(mx.random.state[0]).tolist() == before


@settings(max_examples=40, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.none(),
            st.tuples(st.integers(0, 2**40), st.sampled_from([0.3, 1.0, 1.7]), st.sampled_from([0.5, 0.9, 1.0])),
        ),
        min_size=1,
        max_size=6,
    ),
    st.integers(0, 2**32 - 1),
    st.lists(st.integers(0, 5), max_size=4),
)
def test_row_sampling_draws_what_each_row_sampler_draws(rows, seed, drops):
    """A batch of greedy and sampled rows (mixed temperatures and top-p) drawn in one step
    gives, step after step and as rows leave the batch, exactly the tokens each row's own
    sampler (or argmax) gives one row at a time."""
    vocab = 40
    rng = np.random.default_rng(seed)
    make = lambda r: None if r is None else KeyedSampler(r[0], r[1], r[2])  # noqa: E731
    singles, batch = [make(r) for r in rows], RowSampling([make(r) for r in rows])
    alive = list(range(len(rows)))
    for step in range(5):
        logprobs = mx.array(rng.normal(size=(len(alive), vocab)).astype(np.float32) * 3)
        logprobs = logprobs - mx.logsumexp(logprobs, axis=-1, keepdims=True)
        one = [
            int((singles[i](logprobs[j : j + 1]) if singles[i] else mx.argmax(logprobs[j : j + 1], axis=-1)).item())
            for j, i in enumerate(alive)
        ]
        assert batch(logprobs).tolist() == one
        if step < len(drops) and len(alive) > 1:
            kept = [j for j in range(len(alive)) if j != drops[step] % len(alive)]
            batch.keep(kept)
            alive = [alive[j] for j in kept]


# ---------------------------------------------------------------- playing
def test_constrained_play_is_always_legal_on_megagem_bids(engine):
    """MegaGem bids ('bid 1', 'bid 10', ...) are multi-token strings with shared prefixes."""
    game = make_game("megagem")
    players = [MLXPlayer(seed=s, engine=engine, temperature=1.0) for s in range(3)]
    record = play_episode(game, players, 3, turn_cap=4)
    steps = record.steps
    assert len(steps) == 4 and not [e for e in record.events if e.type == "policy"]
    for step in steps:
        tel = step.telemetry
        assert tel["parse_method"] == "constrained" and tel["valid"] and tel["legal"] and not tel["default_used"]
        assert tel["response"] == step.action
        assert tel["tokens_in"] > 100 and 1 <= tel["tokens_out"] <= 4
        assert tel["retries"] == 0 and tel["prompt_chars"] == len(tel["prompt"]) > 0  # in full by default


def test_sampled_game_replays_exactly_whatever_the_global_seed(engine):
    game = make_game("kuhn_poker")

    def run():
        return play_episode(
            game,
            [MLXPlayer(seed=1, engine=engine, temperature=1.0), MLXPlayer(seed=2, engine=engine, temperature=1.0)],
            11,
        )

    mx.random.seed(123)
    first = run()
    mx.random.seed(456)
    second = run()
    assert stable(first) == stable(second)


def test_sampling_depends_on_episode_seed_and_player_seed(engine):
    game = make_game("megagem")

    def bids(player_seed, episode_seed):
        rec = play_episode(
            game,
            [MLXPlayer(seed=player_seed, engine=engine, temperature=2.0) for _ in range(3)],
            episode_seed,
            turn_cap=2,
        )
        return [s.action for s in rec.steps]

    base = bids(0, 5)
    assert base == bids(0, 5)
    assert base != bids(1, 5)  # another player seed, same deal: other draws


def test_free_mode_garbage_goes_to_the_policy_with_retries_recorded(engine):
    game = make_game("kuhn_poker")
    free = MLXPlayer(engine=engine, mode="free", max_tokens=6, retries=1)
    record = play_episode(game, [free, MLXPlayer(engine=engine)], 2, policy=IllegalActionPolicy(mode="default"))
    events = record.events
    policy = [e for e in events if e.type == "policy"]
    assert policy, "the random-weight model is not expected to name an action"
    tel = policy[0].telemetry
    assert tel["mode"] == "free" and tel["retries"] == 1 and len(tel["earlier_responses"]) == 1
    assert tel["default_used"] and not tel["valid"] and tel["parse_method"] == "unparseable"
    assert tel["tokens_out"] >= 2 and tel["finish_reason"] in ("length", "stop")
    assert record.steps[0].substituted  # the policy played the default action
    assert record.end.reason.value == "natural"


def test_free_mode_retry_policy_asks_again_with_a_new_key(engine):
    game = make_game("kuhn_poker")
    free = MLXPlayer(engine=engine, mode="free", max_tokens=4, temperature=1.0)
    record = play_episode(
        game, [free, free], 0, policy=IllegalActionPolicy(mode="retry", max_retries=2, after_retries="default")
    )
    attempts = [e.telemetry["attempt"] for e in record.events if e.type == "policy" and e.ply == 0]
    assert attempts[:3] == [0, 1, 2]


def test_free_answers_are_read_by_the_parser(engine):
    """A free answer that names a legal action is played, with the parser's method recorded."""
    game = make_game("kuhn_poker")
    player = MLXPlayer(engine=engine, mode="free")
    from arena_core.match import Match
    from arena_players.batched import make_decision

    decision = make_decision(Match(game, 0), 0)
    pending = player._start(decision)
    from arena_players.mlx_player import Generated

    move = player._finish(pending, Generated(engine.encode_answer("I think\nbet"), "stop"))
    assert move.action == decision.parse("bet").action
    assert move.telemetry["parse_method"] == "last_line" and move.telemetry["legal"]


def test_mode_free_and_constrained_are_registered_and_options_checked(engine):
    player = make_player("mlx:mode=free,max_tokens=8,temperature=0.5")
    assert player.settings.mode == "free" and player.settings.max_tokens == 8
    with pytest.raises(ConfigError, match="known options"):
        MLXPlayer(engine=engine, bogus=1)
    with pytest.raises(ConfigError, match="known options"):
        MLXPlayer(engine=engine, mode="loose")


def test_unloadable_model_names_the_fix(tmp_path):
    with pytest.raises(ConfigError, match="local directory"):
        load_model(str(tmp_path / "missing-model"))


def test_record_text_modes(engine):
    game = make_game("kuhn_poker")
    full = MLXPlayer(engine=engine, record_prompt="full", record_response="hash")
    none = MLXPlayer(engine=engine, record_prompt="none", record_response="none")
    rec = play_episode(game, [full, none], 4)
    t0, t1 = rec.steps[0].telemetry, rec.steps[1].telemetry
    assert "You are playing kuhn_poker" in json.loads(t0["prompt"])[0]["content"] and "response_sha256" in t0
    assert "prompt" not in t1 and "prompt_sha256" not in t1 and "response" not in t1 and t1["prompt_chars"] > 0


# ---------------------------------------------------------------- batching
def test_batched_generation_matches_one_at_a_time(engine):
    game = make_game("megagem")
    from arena_core.match import Match
    from arena_players.batched import make_decision

    decisions = []
    for seed in range(4):
        m = Match(game, seed)
        decisions.append(make_decision(m, m.to_act()))
    for temperature in (0.0, 1.5):
        player = MLXPlayer(seed=9, engine=engine, temperature=temperature)
        one = [player.act(d) for d in decisions]
        player = MLXPlayer(seed=9, engine=engine, temperature=temperature)
        many = player.act_batch(decisions)
        assert [m.action for m in one] == [m.action for m in many]
        assert [m.telemetry["tokens_out"] for m in one] == [m.telemetry["tokens_out"] for m in many]


def test_free_batched_decoding_equals_one_at_a_time_as_rows_end_at_different_steps():
    """Free (pipelined) decoding, batched and one request at a time, gives the same tokens and
    finish reasons while rows leave the batch at different steps: by their own token budgets
    and by end-of-sequence (two tokens that two sampled rows produce mid-answer are made to
    count as EOS, so those rows stop early)."""
    from arena_core.match import Match
    from arena_players.batched import make_decision
    from arena_players.mlx_player import Request

    model, tokenizer = load_model("tiny")
    engine = MLXEngine(model, tokenizer)
    game = make_game("megagem")
    player = MLXPlayer(engine=engine, mode="free")
    prompts = []
    for seed in range(6):
        m = Match(game, seed)
        prompts.append(player._request(player._start(make_decision(m, m.to_act()))))

    def requests():
        budgets = [1, 3, 9, 20, 20, 20]
        samplers = [
            None,
            KeyedSampler(1, 1.5),
            KeyedSampler(2, 1.5, 0.9),
            None,
            KeyedSampler(4, 2.0),
            KeyedSampler(5, 1.5),
        ]
        return [Request(p.tokens, n, s, None, p.prefix_len) for p, n, s in zip(prompts, budgets, samplers)]

    plain = [engine.generate(r) for r in requests()]
    engine.eos_ids = engine.eos_ids | {plain[4].tokens[6], plain[5].tokens[11]}
    one = [engine.generate(r) for r in requests()]
    many = engine.generate_batch(requests())
    assert [(g.tokens, g.finish_reason) for g in many] == [(g.tokens, g.finish_reason) for g in one]
    assert one[4].finish_reason == one[5].finish_reason == "stop" and one[3].finish_reason == "length"
    assert len({len(g.tokens) for g in one}) >= 4  # rows really left at different steps


def test_prefix_cache_does_not_change_answers(engine):
    game = make_game("kuhn_poker")
    with_cache = play_episode(game, [MLXPlayer(engine=engine, temperature=1.0, seed=s) for s in (1, 2)], 7)
    without = play_episode(
        game, [MLXPlayer(engine=engine, temperature=1.0, seed=s, prefix_cache=False) for s in (1, 2)], 7
    )
    assert [s.action for s in with_cache.steps] == [s.action for s in without.steps]


def test_tiny_model_cache_is_reused(tmp_path):
    first = ensure_tiny_model(tmp_path, game_ids=["kuhn_poker"])
    stamp = (first / "model.safetensors").stat().st_mtime_ns
    assert ensure_tiny_model(tmp_path, game_ids=["kuhn_poker"]) == first
    assert (first / "model.safetensors").stat().st_mtime_ns == stamp


def test_chat_encoding_equals_the_templates_own_tokenization(engine):
    """The cached-system-turn fast path gives exactly the tokens of the chat template."""
    from arena_core.match import Match
    from arena_players.batched import make_decision

    for game_id in ("kuhn_poker", "megagem"):
        game = make_game(game_id)
        for seed in range(3):
            m = Match(game, seed)
            messages = make_decision(m, m.to_act()).prompt().messages()
            for msgs in (
                messages,
                messages + [{"role": "assistant", "content": "hmm"}, {"role": "user", "content": "again"}],
            ):
                tokens, prefix = engine.encode_chat(msgs)
                assert tokens == list(engine.tokenizer.apply_chat_template(msgs, add_generation_prompt=True))
                head = list(engine.tokenizer.apply_chat_template(msgs[:1], add_generation_prompt=False))
                assert prefix == len(head) > 0 and tokens[:prefix] == head


def test_a_row_that_cannot_be_prompted_fails_alone_in_a_batch(engine):
    """Constrained mode needs listed legal strings; a decision without them is recorded as a
    player error while the other games of the batch play on."""
    from arena_core.text import Prompt
    from arena_games.kuhn import KuhnPoker
    from arena_players.batched import play_batch

    class Unlisted(KuhnPoker):
        def text_view(self):
            base = super().text_view()

            class View:
                def prompt(self, game, pos, player):
                    p = base.prompt(game, pos, player)
                    return Prompt(p.system, p.user, () if pos.state.cards[player] == 0 else p.legal)

                def parse(self, game, pos, player, text):
                    return base.parse(game, pos, player, text)

            return View()

    game = Unlisted()
    player = MLXPlayer(engine=engine)
    records = play_batch(game, [player, player], list(range(6)), policy=IllegalActionPolicy(mode="default"))
    failed = [e for r in records for e in r.events if e.type == "policy"]
    played = [s for r in records for s in r.steps if not s.substituted]
    assert failed and played
    assert all(e.telemetry == {"error_type": "ConfigError"} and "lists no legal strings" in e.detail for e in failed)
    assert all(s.telemetry["parse_method"] == "constrained" for s in played)


def test_tiny_model_command_line(tmp_path, capsys):
    from arena_players.tiny_model import main

    assert main([str(tmp_path / "m"), "--games", "kuhn_poker", "--seed", "3"]) == 0
    assert capsys.readouterr().out.strip() == str(tmp_path / "m")
    config = json.loads((tmp_path / "m" / "config.json").read_text())
    assert config["model_type"] == "llama" and config["arena_tiny_model"]["seed"] == 3
    assert {"model.safetensors", "tokenizer.json", "tokenizer_config.json"} <= {
        p.name for p in (tmp_path / "m").iterdir()
    }
