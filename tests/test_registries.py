"""Every available Arena game through PettingZoo's and Gymnasium's own registries (issue 33, point 1).

Cost (2 shared cores, measured): 49 tests in 40 s wall, 22 s CPU; api_test at num_cycles=10 plus
check_env on every available game (Battleship's api_test alone 6.6 s), the three subprocess
checks about 3 s each.
"""

import subprocess
import sys

import gymnasium
import pettingzoo
import pytest
from gymnasium.utils.env_checker import check_env
from pettingzoo.test import api_test, parallel_api_test

import arena_core  # noqa: F401  (the registration)
from arena_core import ConfigError
from arena_core.registration import registry_id
from arena_core.registry import availability, list_plugins

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")


def _available() -> list[str]:
    return [p.name for p in list_plugins("games") if availability("games", p.name)[0]]


@pytest.mark.parametrize(
    ("game_id", "name"),
    [
        ("kuhn_poker", "arena/kuhn_poker-v0"),
        ("textarena/TicTacToe-v0", "arena/textarena.TicTacToe-v0"),
        ("my/deep/game", "arena/my.deep.game-v0"),
        ("chess-v12", "arena/chess-v12"),
        ("poker-vx", "arena/poker-vx-v0"),
    ],
)
def test_the_name_rule(game_id, name):
    assert registry_id(game_id) == name


def _run(code: str) -> str:
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return out.stdout.strip()


def test_import_arena_core_registers_lazily_and_imports_no_game():
    code = (
        "import sys, arena_core\n"
        "print(sorted(m for m in ('pettingzoo', 'gymnasium') if m in sys.modules))\n"
        "import pettingzoo, gymnasium\n"
        "from arena_core.registry import list_plugins\n"
        "ids = [p.name for p in list_plugins('games')]\n"
        "from arena_core.registration import registry_id\n"
        "print(all(registry_id(i) in pettingzoo.aec_registry and registry_id(i) in pettingzoo.parallel_registry"
        " and registry_id(i) in gymnasium.registry for i in ids), len(ids))\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('arena_games', 'arena_players', 'textarena')))\n"
    )
    lines = _run(code).splitlines()
    assert lines[0] == "[]", "import arena_core imported PettingZoo or Gymnasium"
    assert lines[1].startswith("True ") and int(lines[1].split()[1]) >= 3
    assert lines[2] == "[]", f"registering imported game plugins: {lines[2]}"


def test_registration_when_the_libraries_came_first():
    code = (
        "import pettingzoo, gymnasium, arena_core\n"
        "print('arena/kuhn_poker-v0' in pettingzoo.aec_registry, 'arena/kuhn_poker-v0' in gymnasium.registry)\n"
    )
    assert _run(code) == "True True"


def test_gymnasium_module_id_form_without_importing_arena_core():
    code = (
        "import gymnasium\n"
        "env = gymnasium.make('arena_core:arena/kuhn_poker-v0')\n"
        "env.reset(seed=3)\n"
        "print(env.unwrapped.game.spec.id, env.get_wrapper_attr('action_masks')().tolist())\n"
    )
    assert _run(code) == "kuhn_poker [True, True]"


@pytest.mark.parametrize("game_id", _available())
def test_api_test_and_check_env_through_the_registries(game_id):
    rid = registry_id(game_id)
    api_test(pettingzoo.make("aec", rid), num_cycles=10)
    check_env(gymnasium.make(rid).unwrapped, skip_render_check=True)


def test_parallel_through_the_registry_where_the_game_offers_it():
    parallel_api_test(pettingzoo.make("parallel", "arena/matrix-v0"), num_cycles=20)
    with pytest.raises(ConfigError, match="aec"):
        pettingzoo.make("parallel", "arena/kuhn_poker-v0")


def test_the_factories_take_the_registries_keywords():
    env = pettingzoo.make("aec", "arena/kuhn_poker-v0", max_cycles=2, render_mode="ansi")
    assert env.unwrapped.turn_cap == 4  # two decisions per player
    env.reset(seed=0)
    assert "kuhn_poker ply 0" in env.render()
    gym = gymnasium.make("arena/kuhn_poker-v0", render_mode="ansi", seat=1, opponents=["first_legal"])
    gym.reset(seed=0)
    assert gym.unwrapped.seat == 1 and "player_1" in gym.render()
    with pytest.warns(UserWarning, match="render_mode 'rgb_array' is not supported"):
        env = pettingzoo.make("aec", "arena/kuhn_poker-v0", render_mode="rgb_array")
    env.reset(seed=0)
    assert env.render() is None
    with pytest.raises(ValueError, match="max_cycles"):
        pettingzoo.make("aec", "arena/kuhn_poker-v0", max_cycles=0)


def test_game_parameters_by_name_and_player_count():
    env = pettingzoo.make("aec", "arena/megagem-v0", num_players=4, value_chart="B")
    assert len(env.possible_agents) == 4 and env.unwrapped.game.params.value_chart == "B"
    matrix = pettingzoo.make("parallel", "arena/matrix-v0", params={"k": 4}, archetype="coordination")
    assert matrix.game.params.k == 4
