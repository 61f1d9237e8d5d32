"""A tiny language model for tests and demos, built offline by our own code.

Random weights in a small Llama-style config, a byte-level BPE tokenizer trained with the
``tokenizers`` library on game text (digits split one per token, so numeric actions are a few
tokens), and a chat template -- saved as the files ``mlx_lm.load`` reads::

    python -m arena_players.tiny_model OUTDIR

It plays badly on purpose (its weights are noise); it exists so the whole LLM path -- chat
template, tokenization, constrained and free decoding, batching, the HTTP server -- runs in
seconds on a CPU without a download. Every draw comes from ``make_rng(seed, ...)``, so the same
seed and corpus give byte-identical files.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from arena_core.seeding import make_rng

if TYPE_CHECKING:
    from tokenizers import Tokenizer

    from arena_core.players import Decision

SPECIAL_TOKENS = ("<|pad|>", "<|end|>", "<|system|>", "<|user|>", "<|assistant|>")
EOS_TOKEN = "<|end|>"
PAD_TOKEN = "<|pad|>"

CHAT_TEMPLATE = (
    "{% for message in messages %}<|{{ message['role'] }}|>\n{{ message['content'] }}<|end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>\n{% endif %}"
)

# A fixed slice of ordinary game-playing English, so free answers decode to words.
BASE_TEXT = """
You are playing a game. Think briefly, then answer with one of the legal actions.
The legal actions are listed below. Your observation, your hand, your cards, your coins.
I bid, I pass, I bet, I call, I fold, I reveal, I take the gem. My answer is: pass.
Player 0, player 1, player 2, player 3, player 4. The pot, the score, the round, the turn.
Red, blue, green, purple, yellow. Treasure, loan, investment, mission, value chart, auction.
Answer with exactly one line holding one legal action. {"action": "pass"} {"action": "bet"}
"""

_FINGERPRINT_VERSION = "2"
DEFAULT_GAMES = ("kuhn_poker", "megagem")


@dataclass(frozen=True)
class TinyConfig:
    """The architecture and tokenizer sizes of the tiny model."""

    hidden_size: int = 64
    num_hidden_layers: int = 2
    num_attention_heads: int = 4
    num_key_value_heads: int = 2
    intermediate_size: int = 128
    vocab_size: int = 1024  # upper bound for the BPE trainer; the real size is what it learns
    max_position_embeddings: int = 8192
    init_scale: float = 0.5  # std of embeddings; larger than usual so greedy output varies
    seed: int = 0
    # beyond the tiny model: the shape of a real small model, for benchmarks (speed does not
    # depend on the weights) and for tests of another tokenizer
    architecture: str = "llama"  # or "qwen2" (Llama plus q/k/v biases)
    split_words: bool = False  # pre-tokenize like Qwen2 (words, numbers, spaces, newlines apart)
    model_vocab_size: int = 0  # the model's vocabulary (0: the tokenizer's); ids past the tokenizer's decode to ''
    rope_theta: float = 10000.0
    float32_draws: bool = False  # draw weights directly in float32 (half the memory of a large model)


def qwen25_05b_shape(**changes: Any) -> TinyConfig:
    """Qwen2.5-0.5B's architecture (24 layers, hidden 896, 14 query / 2 key-value heads, MLP 4864,
    vocabulary 151,936, tied embeddings), random weights and our own word-splitting BPE."""
    base: dict[str, Any] = {
        "hidden_size": 896,
        "num_hidden_layers": 24,
        "num_attention_heads": 14,
        "num_key_value_heads": 2,
        "intermediate_size": 4864,
        "vocab_size": 8192,
        "model_vocab_size": 151936,
        "architecture": "qwen2",
        "split_words": True,
        "rope_theta": 1000000.0,
        "init_scale": 0.02,
        "float32_draws": True,
    }
    base.update(changes)
    return TinyConfig(**base)


_NEW_FIELDS = {"architecture": "llama", "split_words": False, "model_vocab_size": 0, "rope_theta": 10000.0}
_NEW_FIELDS["float32_draws"] = False

#: Qwen2's pre-tokenizer pattern: contractions, words, single digits, punctuation runs, newlines, spaces
QWEN2_SPLIT = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
)


def game_corpus(game_ids: Sequence[str] | None = None, *, episodes: int = 3) -> list[str]:
    """Text to train the tokenizer on: the fixed base text, numbers, and the rules and
    prompts of ``game_ids`` (default: :data:`DEFAULT_GAMES` that are installed) over a few
    seeded random episodes."""
    from arena_core.registry import list_plugins, make_game
    from arena_core.runner import play_episode

    from .random_player import RandomPlayer

    texts = [BASE_TEXT, " ".join(str(i) for i in range(200))]
    if game_ids is None:
        installed = {p.name for p in list_plugins("games")}
        game_ids = [g for g in DEFAULT_GAMES if g in installed]

    class _Recorder(RandomPlayer):
        def __init__(self, seed: int, collected: list[str]):
            super().__init__(seed=seed)
            self.collected = collected

        def act(self, decision: Decision) -> Any:
            prompt = decision.prompt()
            if not self.collected:
                self.collected.append(prompt.system)
            self.collected.append(prompt.user)
            self.collected.append("\n".join(prompt.legal))
            return super().act(decision)

    for game_id in sorted(game_ids):
        game = make_game(game_id)
        collected: list[str] = []
        for seed in range(episodes):
            players = [_Recorder(seat, collected) for seat in range(game.num_players)]
            try:
                play_episode(game, players, seed, turn_cap=200)
            except Exception:  # a game being written elsewhere must not break the build
                break
        texts.extend(collected)
    return texts


def train_tokenizer(corpus: Iterable[str], vocab_size: int, *, split_words: bool = False) -> Tokenizer:
    """A byte-level BPE (any text encodes, every id decodes) with digits split one per token;
    ``split_words``: pre-tokenized like Qwen2 (:data:`QWEN2_SPLIT`), so no token crosses a
    word, space or newline boundary."""
    from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers, trainers

    tokenizer = Tokenizer(models.BPE())
    if split_words:
        tokenizer.pre_tokenizer = pre_tokenizers.Sequence(
            [
                pre_tokenizers.Split(Regex(QWEN2_SPLIT), behavior="isolated"),
                pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
            ]
        )
    else:
        # no word-splitting regex: merges may cross spaces and punctuation, so the JSON of a game
        # state compresses to few tokens; digits stay one per token
        tokenizer.pre_tokenizer = pre_tokenizers.Sequence(
            [
                pre_tokenizers.Digits(individual_digits=True),
                pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
            ]
        )
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        min_frequency=2,
        special_tokens=list(SPECIAL_TOKENS),
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
        max_token_length=24,
    )
    tokenizer.train_from_iterator(list(corpus), trainer)
    return tokenizer


def fingerprint(config: TinyConfig, corpus: Sequence[str]) -> str:
    h = hashlib.blake2b(digest_size=8)
    h.update(_FINGERPRINT_VERSION.encode())
    fields = asdict(config)
    for name, default in _NEW_FIELDS.items():  # the tiny model's files keep the name they had
        if fields[name] == default:
            del fields[name]
    h.update(json.dumps(fields, sort_keys=True).encode())
    for text in corpus:
        h.update(text.encode("utf-8"))
        h.update(b"\0")
    return h.hexdigest()


def _random_weights(model_config: dict[str, Any], config: TinyConfig) -> dict[str, np.ndarray]:
    """Weights named as mlx-lm's Llama expects, drawn from a seeded generator."""
    h, f, v = config.hidden_size, config.intermediate_size, model_config["vocab_size"]
    head_dim = h // config.num_attention_heads
    kv = config.num_key_value_heads * head_dim
    shapes: dict[str, tuple[int, ...]] = {"model.embed_tokens.weight": (v, h), "model.norm.weight": (h,)}
    biases = {}
    for i in range(config.num_hidden_layers):
        p = f"model.layers.{i}."
        if config.architecture == "qwen2":
            biases.update(
                {p + "self_attn.q_proj.bias": h, p + "self_attn.k_proj.bias": kv, p + "self_attn.v_proj.bias": kv}
            )
        shapes.update(
            {
                p + "self_attn.q_proj.weight": (h, h),
                p + "self_attn.k_proj.weight": (kv, h),
                p + "self_attn.v_proj.weight": (kv, h),
                p + "self_attn.o_proj.weight": (h, h),
                p + "mlp.gate_proj.weight": (f, h),
                p + "mlp.up_proj.weight": (f, h),
                p + "mlp.down_proj.weight": (h, f),
                p + "input_layernorm.weight": (h,),
                p + "post_attention_layernorm.weight": (h,),
            }
        )
    weights = {}
    for name in sorted(shapes):
        shape = shapes[name]
        if name.endswith("norm.weight"):
            weights[name] = np.ones(shape, dtype=np.float32)
            continue
        rng = make_rng(config.seed, "tiny_model", name)
        std = config.init_scale if "embed" in name else 1.0 / np.sqrt(shape[1])
        if config.float32_draws:
            weights[name] = rng.standard_normal(shape, dtype=np.float32) * np.float32(std)
        else:
            weights[name] = (rng.standard_normal(shape) * std).astype(np.float32)
    for name, size in biases.items():
        weights[name] = np.zeros((size,), dtype=np.float32)
    return weights


def build_tiny_model(
    outdir: str | os.PathLike[str], *, config: TinyConfig = TinyConfig(), corpus: Sequence[str] | None = None
) -> Path:
    """Write config.json, model.safetensors, tokenizer.json and tokenizer_config.json to
    ``outdir`` (created); returns the path. Loadable with ``mlx_lm.load(outdir)``."""
    import mlx.core as mx

    out = Path(outdir)
    out.mkdir(parents=True, exist_ok=True)
    corpus = list(corpus) if corpus is not None else game_corpus()
    tokenizer = train_tokenizer(corpus, config.vocab_size, split_words=config.split_words)
    vocab = max(tokenizer.get_vocab_size(), config.model_vocab_size)
    eos_id = tokenizer.token_to_id(EOS_TOKEN)
    qwen = config.architecture == "qwen2"
    model_config = {
        "model_type": "qwen2" if qwen else "llama",
        "architectures": ["Qwen2ForCausalLM" if qwen else "LlamaForCausalLM"],
        "hidden_size": config.hidden_size,
        "num_hidden_layers": config.num_hidden_layers,
        "num_attention_heads": config.num_attention_heads,
        "num_key_value_heads": config.num_key_value_heads,
        "intermediate_size": config.intermediate_size,
        "vocab_size": vocab,
        "rms_norm_eps": 1e-5,
        "rope_theta": config.rope_theta,
        "max_position_embeddings": config.max_position_embeddings,
        "tie_word_embeddings": True,
        "eos_token_id": eos_id,
        "pad_token_id": tokenizer.token_to_id(PAD_TOKEN),
        "torch_dtype": "float32",
        "arena_tiny_model": {"fingerprint": fingerprint(config, corpus), **asdict(config)},
    }
    weights = _random_weights(model_config, config)
    mx.save_safetensors(
        str(out / "model.safetensors"), {k: mx.array(w) for k, w in weights.items()}, metadata={"format": "mlx"}
    )
    tokenizer.save(str(out / "tokenizer.json"))
    tokenizer_config = {
        "tokenizer_class": "PreTrainedTokenizerFast",
        "eos_token": EOS_TOKEN,
        "pad_token": PAD_TOKEN,
        "bos_token": None,
        "unk_token": None,
        "add_bos_token": False,
        "add_eos_token": False,
        "clean_up_tokenization_spaces": False,
        "model_max_length": config.max_position_embeddings,
        "chat_template": CHAT_TEMPLATE,
    }
    (out / "tokenizer_config.json").write_text(json.dumps(tokenizer_config, indent=2))
    (out / "special_tokens_map.json").write_text(json.dumps({"eos_token": EOS_TOKEN, "pad_token": PAD_TOKEN}, indent=2))
    (out / "config.json").write_text(json.dumps(model_config, indent=2))
    return out


def default_cache_dir() -> Path:
    root = os.environ.get("ARENA_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "arena"
    )
    return Path(root)


def ensure_tiny_model(
    cache_dir: str | os.PathLike[str] | None = None,
    *,
    config: TinyConfig = TinyConfig(),
    game_ids: Sequence[str] | None = None,
) -> Path:
    """The tiny model's directory, built on first use and cached by the fingerprint of its
    config and training corpus (a changed game text builds a new one)."""
    corpus = game_corpus(game_ids)
    path = Path(cache_dir or default_cache_dir()) / f"tiny-llama-{fingerprint(config, corpus)}"
    if not (path / "config.json").exists():
        tmp = path.with_name(path.name + f".tmp{os.getpid()}")
        build_tiny_model(tmp, config=config, corpus=corpus)
        try:
            os.replace(tmp, path)
        except OSError:  # another process won the race; its copy is identical
            import shutil

            shutil.rmtree(tmp, ignore_errors=True)
    return path


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m arena_players.tiny_model", description=__doc__.split("\n\n")[0])
    parser.add_argument("outdir", help="directory to write the model files into")
    parser.add_argument(
        "--games", default=None, help="comma-separated game ids for the tokenizer corpus (default: kuhn_poker,megagem)"
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--shape",
        choices=("tiny", "qwen2.5-0.5b"),
        default="tiny",
        help="'qwen2.5-0.5b': Qwen2.5-0.5B's architecture and vocabulary size with random weights (2 GB)",
    )
    args = parser.parse_args(argv)
    games = args.games.split(",") if args.games else None
    config = TinyConfig(seed=args.seed) if args.shape == "tiny" else qwen25_05b_shape(seed=args.seed)
    path = build_tiny_model(args.outdir, config=config, corpus=game_corpus(games))
    print(path)
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
