"""The transcript view: an OpenAI-compatible player whose prompts extend one conversation per
seat, so the server's prompt cache reads the earlier turns and only the new tokens are prefilled.

    python examples/transcript_play.py [--turns N] [--seed S] [--game megagem|textarena/LiarsDice-v0]

Without ``ARENA_OPENAI_BASE_URL`` it starts a local ``mlx_lm.server`` with the tiny offline
model (random weights: its answers are unreadable and the default action is played, which is
fine for watching the tokens). Against another server::

    ARENA_OPENAI_BASE_URL=http://127.0.0.1:8080/v1 ARENA_OPENAI_MODEL=NAME python examples/transcript_play.py

It plays the same opening twice, in the snapshot view and in the transcript view, and prints
per decision the prompt tokens and how many of them the server reports as cached
(``usage.prompt_tokens_details.cached_tokens``), then seat 0's conversation in the transcript view.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys

from arena_core import IllegalActionPolicy, play_episode
from arena_core.registry import make_game
from arena_players.openai_player import OpenAIPlayer


@contextlib.contextmanager
def endpoint():
    url = os.environ.get("ARENA_OPENAI_BASE_URL")
    if url:
        yield url, os.environ.get("ARENA_OPENAI_MODEL", "default_model"), os.environ.get("ARENA_OPENAI_KEY_ENV", "")
        return
    from arena_players.mlx_server import mlx_server

    with mlx_server() as (url, model):
        yield url, model, ""


def play(url: str, model: str, key_env: str, game_id: str, view: str, turns: int, seed: int):
    game = make_game(game_id, num_players=3) if game_id == "megagem" else make_game(game_id)
    player = OpenAIPlayer(
        base_url=url, model=model, api_key_env=key_env, max_tokens=8, temperature=0.0, view=view, record_prompt="full"
    )
    record = play_episode(
        game,
        [player] * game.num_players,
        seed=seed,
        policy=IllegalActionPolicy(mode="default"),
        turn_cap=turns,
    )
    # a decision's telemetry is on its step, or on the policy event when its answer was unreadable
    return player, [(e.player, e.telemetry) for e in record.events if getattr(e, "telemetry", None)]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--turns", type=int, default=9, help="decisions to play (default 9)")
    ap.add_argument("--game", default="megagem", help="megagem (3 players) or a TextArena title id")
    ap.add_argument("--seed", type=int, default=7, help="the episode seed (default 7)")
    args = ap.parse_args()
    if args.turns < 1 or args.seed < 0:
        print("--turns must be at least 1 and --seed at least 0", file=sys.stderr)
        return 2
    with endpoint() as (url, model, key_env):
        for view in ("snapshot", "transcript"):
            player, steps = play(url, model, key_env, args.game, view, args.turns, args.seed)
            print(f"{view}: decision (seat): prompt tokens / cached by the server")
            for i, (seat, tel) in enumerate(steps):
                print(f"  {i:2d} (seat {seat}): {tel['tokens_in']:5d} / {tel['cached_tokens']:5d}")
            later = [t for _, t in steps[3:]]
            new = sum(t["tokens_in"] - t["cached_tokens"] for t in later) / max(len(later), 1)
            s = player.spend
            print(
                f"{view}: {s.calls} calls, prompt tokens {s.prompt_tokens} of which cached {s.cached_prompt_tokens}; "
                f"uncached tokens per decision after the first round: {new:.0f}"
            )
        print("seat 0's conversation in the transcript view (each turn adds only the new messages):")
        for seat, tel in steps:
            if seat == 0:
                print(f"--- turn {tel['conversation_turn']} adds {tel['prompt_chars']} characters:")
                print(tel["prompt"][:600])
    return 0


if __name__ == "__main__":
    sys.exit(main())
