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

import numpy as np

from arena_core.seeding import make_rng

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
    for game_id in sorted(game_ids):
        game = make_game(game_id)
        collected: list[str] = []

        class _Recorder(RandomPlayer):
            def act(self, decision):
                prompt = decision.prompt()
                if not collected:
                    collected.append(prompt.system)
                collected.append(prompt.user)
                collected.append("\n".join(prompt.legal))
                return super().act(decision)

        for seed in range(episodes):
            try:
                play_episode(game, [_Recorder(seed=seat) for seat in range(game.num_players)], seed, turn_cap=200)
            except Exception:  # a game being written elsewhere must not break the build
                break
        texts.extend(collected)
    return texts


def train_tokenizer(corpus: Iterable[str], vocab_size: int):
    """A byte-level BPE (any text encodes, every id decodes) with digits split one per token."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tokenizer = Tokenizer(models.BPE())
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
    h.update(json.dumps(asdict(config), sort_keys=True).encode())
    for text in corpus:
        h.update(text.encode("utf-8"))
        h.update(b"\0")
    return h.hexdigest()


def _random_weights(model_config: dict, config: TinyConfig) -> dict[str, np.ndarray]:
    """Weights named as mlx-lm's Llama expects, drawn from a seeded generator."""
    h, f, v = config.hidden_size, config.intermediate_size, model_config["vocab_size"]
    head_dim = h // config.num_attention_heads
    kv = config.num_key_value_heads * head_dim
    shapes: dict[str, tuple[int, ...]] = {"model.embed_tokens.weight": (v, h), "model.norm.weight": (h,)}
    for i in range(config.num_hidden_layers):
        p = f"model.layers.{i}."
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
        weights[name] = (rng.standard_normal(shape) * std).astype(np.float32)
    return weights


def build_tiny_model(
    outdir: str | os.PathLike, *, config: TinyConfig = TinyConfig(), corpus: Sequence[str] | None = None
) -> Path:
    """Write config.json, model.safetensors, tokenizer.json and tokenizer_config.json to
    ``outdir`` (created); returns the path. Loadable with ``mlx_lm.load(outdir)``."""
    import mlx.core as mx

    out = Path(outdir)
    out.mkdir(parents=True, exist_ok=True)
    corpus = list(corpus) if corpus is not None else game_corpus()
    tokenizer = train_tokenizer(corpus, config.vocab_size)
    vocab = tokenizer.get_vocab_size()
    eos_id = tokenizer.token_to_id(EOS_TOKEN)
    model_config = {
        "model_type": "llama",
        "architectures": ["LlamaForCausalLM"],
        "hidden_size": config.hidden_size,
        "num_hidden_layers": config.num_hidden_layers,
        "num_attention_heads": config.num_attention_heads,
        "num_key_value_heads": config.num_key_value_heads,
        "intermediate_size": config.intermediate_size,
        "vocab_size": vocab,
        "rms_norm_eps": 1e-5,
        "rope_theta": 10000.0,
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
    cache_dir: str | os.PathLike | None = None,
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
    args = parser.parse_args(argv)
    games = args.games.split(",") if args.games else None
    path = build_tiny_model(args.outdir, config=TinyConfig(seed=args.seed), corpus=game_corpus(games))
    print(path)
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
