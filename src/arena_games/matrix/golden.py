"""Golden prompts: the full text view of a few seeded games, checked in and compared by a test.

Regenerate on purpose after a deliberate change to the prompt: ``python -m arena_games.matrix.golden --write``.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from . import MatrixGame  # the registered game: the rules with their text view

GOLDEN = Path(__file__).with_name("data") / "golden_prompts.json"
CASES = (
    ({"archetype": "battle_of_sexes", "k": 3, "rotation": 1}, 0),
    ({"archetype": "stag_hunt", "k": 4, "rotation": 2, "prompt_variant": "asymmetric_cue"}, 5),
    ({"archetype": "chicken", "k": 5, "independent_order": True, "counterpart": "other", "labels": "numbers"}, 11),
    ({"archetype": "hide_and_seek", "k": 2}, 3),
)


def transcripts() -> list[dict[str, Any]]:
    out = []
    for params, seed in CASES:
        game = MatrixGame(params)
        pos = game.start(seed)
        for player in (0, 1):
            prompt = game.text_view().prompt(game, pos, player)
            out.append(
                {
                    "params": params,
                    "seed": seed,
                    "player": player,
                    "system": prompt.system,
                    "user": prompt.user,
                    "legal": list(prompt.legal),
                }
            )
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--write", action="store_true", help="overwrite the checked-in golden prompts")
    args = parser.parse_args(argv)
    text = json.dumps(transcripts(), indent=1, ensure_ascii=False) + "\n"
    if args.write:
        GOLDEN.parent.mkdir(exist_ok=True)
        GOLDEN.write_text(text, encoding="utf-8")
        print(f"wrote {GOLDEN}")
    else:
        print(text)
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
