"""MLX player, transcript view: a seat's KV cache kept across its turns gives exactly what a full
prefill gives (same greedy tokens, logits within 1e-4), holds exactly its conversation's tokens,
falls back when the prompt does not extend it, and stays bounded (least recently used evicted)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

mx = pytest.importorskip("mlx.core")

from arena_core.registry import list_plugins, make_game  # noqa: E402
from arena_core.runner import play_episode  # noqa: E402
from arena_players.batched import play_batch  # noqa: E402
from arena_players.mlx_player import (  # noqa: E402
    MLXEngine,
    MLXPlayer,
    Request,
    TokenTrie,
    TrieConstraint,
    common_prefix,
    load_model,
)
from arena_players.tiny_model import TinyConfig, ensure_tiny_model  # noqa: E402

TOL = 1e-4
SYSTEM = {"role": "system", "content": "You play an auction game. Bid on gems; the highest bid wins the gem."}


@pytest.fixture(scope="module")
def tiny():
    return load_model("tiny")


def engine_of(tiny, **kw) -> MLXEngine:
    return MLXEngine(*tiny, **kw)


GAME_IDS = ("megagem", "kuhn_poker", "textarena/ConnectFour-v0")


def small_config(**kw) -> TinyConfig:
    """Smaller than the tiny model: hidden 32, 2 query heads sharing 1 key-value head. The
    whole-game tests prefill every prompt of a growing conversation in full for their reference,
    and on a CPU attention over thousands of tokens is what costs: with one layer, a prefill
    needs only the keys and values of the prompt (no attention), while every answer's logits
    still attend over the whole kept cache, so the cache's exactness is checked at every step."""
    base = {"hidden_size": 32, "num_hidden_layers": 1, "num_attention_heads": 2, "num_key_value_heads": 1}
    return TinyConfig(intermediate_size=64, vocab_size=2048, **{**base, **kw})


@pytest.fixture(scope="module")
def models():
    """Random-weight models, built offline (cached by fingerprint) with tokenizers trained on
    the games' text: ``merging`` (the tiny model's byte-level BPE, whose tokens may cross a
    message boundary such as a newline and the answer after it), ``split_words`` (Qwen2's
    architecture and pre-tokenizer: words, spaces and newlines apart, so no token crosses one),
    and ``two_layers`` (``merging`` with a second layer: keys and values that depend on attention
    over the kept cache)."""
    import mlx_lm

    installed = {p.name for p in list_plugins("games")}
    games = [g for g in GAME_IDS if g in installed]
    configs = {
        "merging": small_config(),
        "split_words": small_config(architecture="qwen2", split_words=True),
        "two_layers": small_config(num_hidden_layers=2),
    }
    return {name: mlx_lm.load(str(ensure_tiny_model(config=c, game_ids=games))) for name, c in configs.items()}


@pytest.fixture(scope="module")
def split_words_model(models):
    return models["split_words"]


LEGAL = ("pass", "bid 3", "bid 4", "bid 12", "bid 21")


def conversation(turn: int, answers=None) -> list[dict[str, str]]:
    """A hand-made conversation at the start of ``turn``; ``answers``: the assistant's earlier
    answers (fixed ones by default, the same for every engine)."""
    msgs = [SYSTEM, {"role": "user", "content": "Turn 0: gem Red is up. Your coins: 10. Bid?"}]
    for k in range(turn):
        msgs.append({"role": "assistant", "content": answers[k] if answers else f"bid {k + 3}"})
        msgs.append({"role": "user", "content": f"Turn {k + 1}: player 1 bid {k}, player 2 passed. Bid?"})
    return msgs


def ask(engine: MLXEngine, msgs, session):
    """One greedy constrained answer (one of :data:`LEGAL`)."""
    tokens, prefix = engine.encode_chat(msgs)
    trie = TokenTrie.from_strings(LEGAL, engine.encode_answer)
    constraint = TrieConstraint(trie, engine.eos)
    req = Request(tokens, trie.depth + 1, None, constraint, prefix, session=session, keep_logits=True)
    return req, engine.generate(req)


def assert_same(gen_a, gen_b) -> None:
    assert gen_a.tokens == gen_b.tokens
    assert len(gen_a.logits) == len(gen_b.logits)
    for a, b in zip(gen_a.logits, gen_b.logits):
        assert float(np.abs(a - b).max()) < TOL


# ---------------------------------------------------------------- the engine
@pytest.mark.parametrize("model", ["tiny", "split_words"])
def test_growing_conversation_reuses_cache_exactly(model, tiny, split_words_model):
    loaded = tiny if model == "tiny" else split_words_model
    cached, fresh = MLXEngine(*loaded), MLXEngine(*loaded, max_sessions=0)
    events, answers = [], []
    previous = last_answer = 0
    for turn in range(6):
        msgs = conversation(turn, answers)
        req, gen = ask(cached, msgs, "seat")
        _, ref = ask(fresh, msgs, None)
        assert_same(gen, ref)
        held = cached.session_tokens("seat")
        # the kept cache holds the prompt, then the answer tokens that went through the model
        assert held == (req.tokens + gen.tokens)[: len(held)]
        assert len(req.tokens) <= len(held) <= len(req.tokens) + len(gen.tokens)
        assert gen.cache.cached + gen.cache.prefilled == len(req.tokens)
        events.append(gen.cache.event)
        if turn:
            assert gen.cache.cached >= previous - 1  # at least the last prompt (its last token may re-merge)
            assert gen.cache.new == len(req.tokens) - previous - last_answer
        previous, last_answer = len(req.tokens), len(gen.tokens)
        answers.append(cached.decode(gen.tokens))
    assert events[0] == "miss" and set(events[1:]) <= {"hit", "partial"}
    if model == "split_words":  # no token crosses a message boundary: every later turn extends the cache
        assert events[1:] == ["hit"] * 5


def test_fixed_answers_tokens_extend(split_words_model):
    """With a word-splitting tokenizer the chat template of a longer conversation starts with the
    shorter one's tokens plus the answer's: a message boundary never re-merges."""
    engine = MLXEngine(*split_words_model)
    for turn in range(4):
        short, _ = engine.encode_chat(conversation(turn))
        answer = engine.encode_answer(f"bid {turn + 3}")
        longer, _ = engine.encode_chat(conversation(turn + 1))
        assert longer[: len(short) + len(answer)] == short + answer


def test_prompt_that_does_not_extend_falls_back(tiny):
    cached, fresh = engine_of(tiny), engine_of(tiny, max_sessions=0)
    ask(cached, conversation(3), "seat")
    # other rules: the kept conversation shares less than the rules -> the new rules, then the rest, prefilled
    changed = conversation(4)
    changed[0] = {"role": "system", "content": "New rules: every gem goes to the lowest bid."}
    req, gen = ask(cached, changed, "seat")
    assert gen.cache.event == "miss" and gen.cache.cached == 0 and gen.cache.prefilled == len(req.tokens)
    assert_same(gen, ask(fresh, changed, None)[1])
    # the first user message changed: trimmed back to the common prefix (the rules and a little more)
    ask(cached, conversation(3), "seat")
    for index, content in ((1, "Turn 0: gem Blue is up. Your coins: 12. Bid?"), (5, "Turn 2: everyone passed.")):
        later = conversation(4)
        later[index] = {"role": "user", "content": content}
        before = cached.session_tokens("seat")
        req, gen = ask(cached, later, "seat")
        assert gen.cache.event == "partial" and gen.cache.cached > req.prefix_len
        assert gen.cache.cached == common_prefix(req.tokens, before, len(req.tokens) - 1)
        assert_same(gen, ask(fresh, later, None)[1])
        held = cached.session_tokens("seat")
        assert held == (req.tokens + gen.tokens)[: len(held)]


def test_lru_eviction_and_freeing(tiny):
    engine = engine_of(tiny, max_sessions=2)
    for seat in ("a", "b", "c"):
        ask(engine, conversation(1), seat)
    assert engine.session_tokens("a") is None and engine.session_tokens("c") is not None
    assert engine.stats.session_evictions == 1
    ask(engine, conversation(2), "b")  # b becomes the most recently used: c is evicted next
    ask(engine, conversation(1), "d")
    assert engine.session_tokens("c") is None and engine.session_tokens("b") is not None
    _, gen = ask(engine, conversation(2), "a")
    assert gen.cache.event == "miss"
    assert engine.session_tokens("b") is None and engine.stats.session_evictions == 3
    assert engine.drop_sessions(lambda key: key in ("a", "b")) == 1
    assert engine.session_tokens("d") is not None and len(engine._sessions) == 1


def test_same_session_twice_in_one_batch_is_safe(tiny):
    """Two requests under one key in one batch: only one may own the kept cache (the other
    prefills in full); both answers are still exact."""
    engine, fresh = engine_of(tiny), engine_of(tiny, max_sessions=0)
    ask(engine, conversation(1), "s")
    reqs = []
    for turn in (2, 3):
        tokens, prefix = engine.encode_chat(conversation(turn))
        reqs.append(Request(tokens, 3, prefix_len=prefix, session="s"))
    gens = engine.generate_batch(reqs)
    assert sorted(g.cache.event for g in gens) == ["hit", "miss"] or sorted(g.cache.event for g in gens) == [
        "miss",
        "partial",
    ]
    refs = fresh.generate_batch([dataclasses.replace(r, session=None) for r in reqs])
    assert [g.tokens for g in gens] == [g.tokens for g in refs]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 3), max_size=30), st.lists(st.integers(0, 3), max_size=30), st.integers(0, 40))
def test_common_prefix(a, b, limit):
    naive = 0
    while naive < min(len(a), len(b), limit) and a[naive] == b[naive]:
        naive += 1
    assert common_prefix(a, b, limit) == naive


# ---------------------------------------------------------------- whole games
def _recording(engine: MLXEngine, log: list) -> None:
    """Make ``engine`` keep every step's logits (one decision at a time), appended to ``log``."""
    generate = engine.generate

    def wrapped(req):
        gen = generate(dataclasses.replace(req, keep_logits=True))
        log.append(gen)
        return gen

    engine.generate = wrapped


GAMES = [("megagem", 50), ("textarena/ConnectFour-v0", 50), ("kuhn_poker", 50)]


@pytest.mark.parametrize(
    ("game_id", "decisions", "tokenizer"),
    [(g, n, t) for g, n in GAMES for t in ("merging", "split_words")] + [("megagem", 15, "two_layers")],
)
def test_transcript_play_cached_equals_uncached(game_id, decisions, tokenizer, models):
    """Greedy play in the transcript view, the seats' caches kept (and the rules' cache) against
    every prompt prefilled in full: the same moves, every step's logits within 1e-4."""
    if game_id not in {p.name for p in list_plugins("games")}:
        pytest.skip(f"{game_id} is not installed")
    game = make_game(game_id)
    runs = {}
    for label, options in (("cached", {}), ("uncached", {"max_cached_seats": 0, "prefix_cache": False})):
        engine = MLXEngine(*models[tokenizer])
        log: list = []
        _recording(engine, log)
        players = [MLXPlayer(engine=engine, view="transcript", **options) for _ in range(game.num_players)]
        records, seed = [], 0
        while len(log) < decisions:  # short games (Kuhn, a won Connect Four) play several episodes
            records.append(play_episode(game, players, seed, turn_cap=decisions - len(log)))
            seed += 1
        runs[label] = (records, log, engine.stats)
    (rec_c, log_c, stats_c), (rec_u, log_u, _) = runs["cached"], runs["uncached"]
    assert [[s.action for s in r.steps] for r in rec_c] == [[s.action for s in r.steps] for r in rec_u]
    assert len(log_c) == len(log_u) == decisions
    for a, b in zip(log_c, log_u):
        assert_same(a, b)
    # every decision of a seat that already played in the episode reuses its conversation's cache
    later = [s.telemetry for r in rec_c for i, s in enumerate(r.steps) if s.player in {t.player for t in r.steps[:i]}]
    first = [
        s.telemetry for r in rec_c for i, s in enumerate(r.steps) if s.player not in {t.player for t in r.steps[:i]}
    ]
    assert stats_c.session_hits + stats_c.session_partial == len(later)
    assert all(t["kv_cache"] == "miss" and t["new_tokens"] is None for t in first)
    for t in later:
        assert t["kv_cache"] in ("hit", "partial") and t["cached_tokens"] + t["prefill_tokens"] == t["tokens_in"]
        assert t["new_tokens"] < t["prefill_tokens"] <= t["new_tokens"] + 8  # the answer re-read at most
        if tokenizer == "split_words":  # no boundary re-merges: only the new tokens are prefilled
            assert t["kv_cache"] == "hit" and t["prefill_tokens"] == t["new_tokens"] + 1


class Watching(MLXPlayer):
    """Notes how many seats' caches the engine keeps whenever an episode ends."""

    def __init__(self, **kw):
        super().__init__(**kw)
        self.kept_at_end: list[int] = []

    def end_episode(self, end) -> None:
        self.kept_at_end.append(len(self.engine._sessions))
        super().end_episode(end)


def test_batched_transcript_play_matches_one_at_a_time(models):
    """Batched play over per-row kept caches gives the moves of unbatched, uncached play."""
    game = make_game("megagem")
    seeds = [11, 12, 13, 14]
    moves = {}
    for batched, options in ((True, {}), (False, {"max_cached_seats": 0})):
        engine = MLXEngine(*models["merging"])
        player = Watching(engine=engine, view="transcript", **options)
        records = play_batch(game, [player] * 3, seeds, turn_cap=12, batched=batched)
        moves[batched] = [[s.action for s in r.steps] for r in records]
        if batched:
            assert engine.stats.session_hits + engine.stats.session_partial == 4 * 9
            assert player.kept_at_end[0] == 12  # every seat of every game kept its conversation's cache until the end
            assert len(engine._sessions) == 0  # the runner ended every episode: their caches are freed
    assert moves[True] == moves[False]


def test_free_episode_frees_only_that_players_episode(tiny):
    engine = engine_of(tiny)
    mine, other = MLXPlayer(engine=engine, view="transcript"), MLXPlayer(engine=engine, view="transcript")
    for player in (mine, other):
        for seed, seat in ((5, 0), (5, 1), (6, 0)):
            ask(engine, conversation(1), player._session(seed, seat))
    assert len(engine._sessions) == 6
    assert mine.free_episode(5, seat=1) == 1
    assert mine.free_episode(5) == 1 and mine.free_episode(5) == 0
    assert engine.session_tokens(mine._session(6, 0)) is not None
    assert all(engine.session_tokens(other._session(s, t)) is not None for s, t in ((5, 0), (5, 1), (6, 0)))
