"""The core distribution on its own: everything here uses arena_core and the toy games in tests/
only, so CI runs this file in a venv that holds turn-arena-core and nothing else
(scripts/check_split.sh); it runs in the full suite as well."""

from __future__ import annotations

import subprocess
import sys

from arena_core.env import aec_env
from arena_core.players import BasePlayer
from arena_core.replay import replay_file
from arena_core.runner import play_episode
from arena_core.testing import assert_conformance
from toy_games import CountToTwenty, RepeatedPennies


class FirstLegal(BasePlayer):
    def act(self, decision):
        return decision.legal_actions[0]


def test_the_kit_runs_on_a_game_with_the_core_alone():
    results = assert_conformance(CountToTwenty(), max_examples=8)
    assert any(r.status == "passed" for r in results)


def test_an_episode_is_logged_and_replays_exactly(tmp_path):
    game = RepeatedPennies()
    log = tmp_path / "ep.jsonl"
    record = play_episode(game, [FirstLegal(), FirstLegal()], 11, log_path=str(log))
    (again,) = replay_file(log, game)
    assert again.end.returns == record.end.returns and len(again.steps) == len(record.steps) > 0


def test_the_pettingzoo_env_plays_to_the_end():
    env = aec_env(CountToTwenty())
    env.reset(seed=3)
    for _ in range(200):
        agent = env.agent_selection
        if env.terminations[agent] or env.truncations[agent]:
            env.step(None)
        else:
            mask = env.observe(agent)["action_mask"]
            env.step(int(mask.nonzero()[0][0]))
        if not env.agents:
            break
    assert not env.agents


def test_the_core_imports_no_optional_package_until_asked():
    """hypothesis (the kit's extra), the tournament extras and every plugin stay unimported by
    `import arena_core`, the CLI, the registry and the kit's entry module."""
    code = (
        "import sys, arena_core, arena_core.cli, arena_core.registry, arena_core.testing, arena_core.playerspec, arena_core.env\n"
        "bad = sorted(m for m in ('hypothesis', 'rich', 'matplotlib', 'openskill', 'yaml', 'ray', 'arena_games', 'arena_players', 'arena_train') if m in sys.modules)\n"
        "print(','.join(bad))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "", f"imported at start-up: {out.stdout.strip()}"
