"""Language-model players: a local MLX model (constrained and free decoding) against bots,
a batch of concurrent games with batched generation, and an OpenAI-compatible player.

    python examples/llm_players.py [OUTDIR] [--model PATH_OR_HUB_ID]

Without ``--model`` it uses the tiny offline test model (random weights: it plays legally in
constrained mode and badly in every mode). Point ``--model`` at a real model, e.g. a local
``mlx_lm.convert`` output or ``mlx-community/Qwen2.5-0.5B-Instruct-4bit``, to see real play.
For the OpenAI-compatible player, start a server and set the variables, e.g.::

    mlx_lm.server --model PATH --port 8080 &
    ARENA_OPENAI_BASE_URL=http://127.0.0.1:8080/v1 ARENA_OPENAI_MODEL=PATH python examples/llm_players.py
"""

from __future__ import annotations

import argparse
import os
import tempfile
from collections import Counter
from pathlib import Path

from arena_core import IllegalActionPolicy, play_episode
from arena_core.registry import make_game, make_player
from arena_players.batched import BatchStats, play_batch
from arena_players.mlx_player import MLXPlayer


def main(outdir: str, model: str) -> None:
    out = Path(outdir)
    out.mkdir(parents=True, exist_ok=True)
    policy = IllegalActionPolicy(mode="retry", max_retries=1, after_retries="default")

    # 1. constrained decoding: every answer is one of the legal strings, sampled from a seeded key
    megagem = make_game("megagem")
    llm = MLXPlayer(model=model, temperature=0.7, seed=1)
    players = [llm, make_player("megagem_expert"), make_player("random", seed=2)]
    record = play_episode(megagem, players, seed=11, policy=policy, turn_cap=9, log_path=str(out / "megagem_llm.jsonl"))
    llm_steps = [s for s in record.steps if s.player == 0]
    print(
        "megagem constrained:",
        [s.action for s in llm_steps],
        "methods:",
        sorted({s.telemetry["parse_method"] for s in llm_steps}),
    )
    print(
        "  tokens in/out of the first decision:",
        llm_steps[0].telemetry["tokens_in"],
        llm_steps[0].telemetry["tokens_out"],
    )

    # 2. free decoding: the model writes, the game's parser reads; unreadable answers go to the policy
    kuhn = make_game("kuhn_poker")
    free = MLXPlayer(model=model, mode="free", max_tokens=16, retries=1, engine=llm.engine)
    record = play_episode(
        kuhn, [free, make_player("first_legal")], seed=3, policy=policy, log_path=str(out / "kuhn_free.jsonl")
    )
    print("kuhn free:", record.end.reason.value, "policy events:", sum(e.type == "policy" for e in record.events))

    # 3. many games at once: the pending decisions of one player object are generated in one batch
    stats = BatchStats()
    batch_player = MLXPlayer(model=model, temperature=1.0, seed=5, engine=llm.engine)
    records = play_batch(
        kuhn, [batch_player, batch_player], list(range(8)), stats=stats, log_path=str(out / "kuhn_batch.jsonl")
    )
    print(
        f"batched: {len(records)} games, {stats.decisions} decisions in {stats.player_calls} player calls;",
        "returns of seat 0:",
        dict(Counter(r.end.returns[0] for r in records)),
    )

    # 4. an OpenAI-compatible endpoint, when one is configured
    base_url = os.environ.get("ARENA_OPENAI_BASE_URL")
    if base_url:
        remote = make_player(
            "openai",
            base_url=base_url,
            model=os.environ.get("ARENA_OPENAI_MODEL", "default_model"),
            api_key_env=os.environ.get("ARENA_OPENAI_KEY_ENV", ""),
            max_tokens=64,
            cache_dir=str(out / "cache"),
        )
        record = play_episode(kuhn, [remote, make_player("first_legal")], seed=3, policy=policy)
        print("openai-compatible:", record.end.reason.value, record.end.returns)
    print("records in", out)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("outdir", nargs="?", default=None)
    parser.add_argument("--model", default="tiny", help="'tiny', a local model directory, or a hub id")
    args = parser.parse_args()
    main(args.outdir or tempfile.mkdtemp(prefix="arena-llm-"), args.model)
