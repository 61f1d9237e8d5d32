#!/usr/bin/env bash
# CI, after `make test`: the five distributions build (wheel + sdist each), the core installs and
# runs alone, the games then appear, and the base installs run on the lowest declared Python.
#   PYTHON      builds the distributions (default: the dev venv's python; needs setuptools, wheel)
#   LOW_PYTHON  the lowest Python that pyproject.toml declares (found under pyenv when not on PATH)
#   LOCK        the constraints file whose pins the installs follow (default constraints.txt)
#   WHEELS      a folder the distributions were built into (`make check-split` passes `make dists`'s);
#               unset: they are built here into a temporary folder
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-.venv/bin/python}
LOCK=${LOCK:-constraints.txt}
# test files that need the core and nothing else (tests/test_packaging.py checks their imports)
CORE_TESTS="tests/test_core_alone.py tests/test_core_position.py tests/test_stats.py tests/test_faults_outputs.py"
# test files for the base installs of all four (no extras) on the lowest Python
BASE_TESTS="tests/test_kuhn.py tests/test_megagem_rules.py tests/test_episode_replay.py tests/test_playerspec.py tests/test_tournament_imports.py"

low=${LOW_PYTHON:-python3.10}
if ! "$low" -c "" 2>/dev/null; then
    low=$(ls -d "$(pyenv root 2>/dev/null || echo "$HOME/.pyenv")"/versions/3.10*/bin/python 2>/dev/null | tail -1 || true)
fi
if [ -z "$low" ] || ! "$low" -c "import sys; assert sys.version_info[:2] == (3, 10)" 2>/dev/null; then
    echo "check_split: no Python 3.10 found (the declared floor); set LOW_PYTHON=/path/to/python3.10" >&2
    exit 1
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
wheels="$work/wheels"

echo "== every module compiles on $low"
"$low" -c "import pathlib, sys; [compile(p.read_text(), str(p), 'exec') for p in pathlib.Path('src').rglob('*.py')]"

if [ -n "${WHEELS:-}" ]; then
    echo "== the distributions built by make dists, in $WHEELS"
    wheels=$(cd "$WHEELS" && pwd)
else
    echo "== build: a wheel and an sdist of each distribution"
    "$PYTHON" scripts/dists.py build "$wheels"
fi

echo "[${SECONDS}s] == the core alone, on $("$low" -c 'import platform; print("Python", platform.python_version())')"
"$low" -m venv "$work/core"
pip="$work/core/bin/python -m pip -q --disable-pip-version-check"
install="$pip install -c $LOCK"
# an install that fails fails the step (its output shown without the index's noise lines)
quiet_install() {
    $install "$@" >"$work/pip.log" 2>&1 || {
        grep -v "is ignored: it is neither" "$work/pip.log" >&2
        echo "check_split: pip install $* failed" >&2
        exit 1
    }
}
# the project's own distributions come from $wheels only; their dependencies from the index
quiet_install --find-links "$wheels" "turn-arena-core[testing]==0.1.0"
"$work/core/bin/python" -c "import importlib.util as u, sys; sys.exit(any(u.find_spec(m) for m in ('arena_games', 'arena_players', 'arena_train')))" \
    || { echo "check_split: the core venv holds more than the core" >&2; exit 1; }
listing=$("$work/core/bin/arena" list)
echo "$listing"
grep -q "^games (0):" <<<"$listing" || { echo "check_split: a core-only install lists games" >&2; exit 1; }
grep -q "pip install turn-arena-games" <<<"$listing" || { echo "check_split: no line saying how to get games" >&2; exit 1; }
"$work/core/bin/python" -m pytest -q -p no:cacheprovider $CORE_TESTS
# a tournament command without the tournament distribution: one line naming the install, exit 2
set +e
said=$("$work/core/bin/arena" tournament examples/tournament_demo.toml 2>&1); code=$?
set -e
echo "$said"
{ [ "$code" = 2 ] && [ "$(wc -l <<<"$said")" = 1 ] && grep -q "pip install turn-arena-tournament" <<<"$said"; } \
    || { echo "check_split: 'arena tournament' without the distribution must say what to install (exit 2)" >&2; exit 1; }

echo "[${SECONDS}s] == the plugin template installs beside the core alone, from the built wheels only"
# it depends on published names (turn-arena-core); --no-index: nothing of ours may come from the index
quiet_install "setuptools>=77"
$install --no-index --find-links "$wheels" --no-build-isolation ./examples/plugin_example >"$work/pip.log" 2>&1 \
    || { cat "$work/pip.log" >&2; echo "check_split: the plugin template does not install from the built wheels" >&2; exit 1; }
"$work/core/bin/arena" list games | grep -q "^  example_nim " || { echo "check_split: example_nim not listed" >&2; exit 1; }
"$work/core/bin/python" -m pytest -q -p no:cacheprovider examples/plugin_example/tests
# a player of another distribution: the error names it (exit 2)
set +e
said=$("$work/core/bin/arena" play example_nim --players random,example_last_legal 2>&1); code=$?
set -e
echo "$said"
{ [ "$code" = 2 ] && grep -q "pip install 'turn-arena-players'" <<<"$said"; } \
    || { echo "check_split: an unknown player must name the distribution that provides it (exit 2)" >&2; exit 1; }
"$work/core/bin/python" -m pip uninstall -q -y arena-example-plugin

echo "[${SECONDS}s] == add the games"
$install --no-index --find-links "$wheels" "turn-arena-games==0.1.0"
listing=$("$work/core/bin/arena" list games)
for game in kuhn_poker megagem matrix; do
    grep -q "^  $game .*turn-arena-games .*available" <<<"$listing" || { echo "$listing"; echo "check_split: $game did not appear" >&2; exit 1; }
done
echo "$listing" | head -4
"$work/core/bin/arena" play matrix --players matrix_focal,matrix_max_payoff --quiet

echo "[${SECONDS}s] == players, trainers and tournaments too (no extras), their tests on the floor Python"
quiet_install --find-links "$wheels" "turn-arena-players==0.1.0" "turn-arena-train==0.1.0" "turn-arena-tournament==0.1.0"
# (the MLX-server test needs the mlx extra: it runs in `make test`)
"$work/core/bin/python" -m pytest -q -p no:cacheprovider $BASE_TESTS -k "not examples_mlx_server"
echo "check_split: ok in ${SECONDS}s"
