#!/usr/bin/env bash
# Clients we did not write, run on Arena the way their own docs show (issue 44, docs/ecosystem.md's
# table): OpenSpiel's own test suites, rl_environment, NFSP and DQN on exported games; Shimmy's
# OpenSpiel wrapper; Tianshou's DQN through its PettingZoo wrapper; SB3's make_vec_env, check_env
# and sb3-contrib's MaskablePPO; TextArena's ta.make and wrappers on every game (clients/test_*.py).
# They need torch, so they get their own venv and lock (clients/constraints.txt), kept out of the
# development install: torch==2.13.0 with pip (a CPU wheel this machine has on disk; uv would
# fetch a CUDA build of several GB), then the lock with uv, no resolution (`uv pip check` fails
# on a lock that misses a requirement). The venv is kept between runs, keyed by the lock's hash
# ($ARENA_CLIENTS_VENV, default ~/.cache/arena/clients-<hash>): a run reinstalls only the core,
# games and players from copies of their source, then runs clients/. .ci/run starts it niced in
# the background beside the other steps.
#   scripts/check_clients.sh          the check
#   scripts/check_clients.sh lock     refresh clients/constraints.txt from a fresh resolution
#   CLIENTS_PYTHON  the venv's Python (3.11: the torch wheel on disk is for 3.11; default python3.11)
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${CLIENTS_PYTHON:-python3.11}
LOCK=clients/constraints.txt
TORCH=torch==2.13.0
CLIENTS="tianshou==2.0.1 stable-baselines3==2.9.2 sb3-contrib==2.9.2 shimmy==2.0.1 open-spiel==2.0.2 dm-tree textarena==0.7.4 pygame pytest uv setuptools>=77 wheel"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
step() { echo "[check_clients ${SECONDS}s] $*"; }
quiet() { "$@" >"$work/cmd.log" 2>&1 || { grep -v "is ignored: it is neither" "$work/cmd.log" >&2; echo "check_clients: failed: $*" >&2; exit 1; }; }

for d in core games players; do  # copies (links followed: dists/*/src/<package> links into src/)
    cp -rL "dists/$d" "$work/$d"
    rm -rf "$work/$d/build" "$work/$d"/src/*.egg-info
    find "$work/$d" -name __pycache__ -prune -exec rm -rf {} +
done
ours="$work/core $work/games[openspiel,textarena] $work/players"

if [ "${1:-}" = lock ]; then
    step "resolving the clients and Arena's dependencies afresh"
    "$PY" -m venv "$work/venv"
    quiet "$work/venv/bin/pip" install -q --disable-pip-version-check "$TORCH"
    quiet "$work/venv/bin/pip" install -q --disable-pip-version-check $CLIENTS $ours
    {
        echo "# The clients' environment (scripts/check_clients.sh lock; Python $("$work/venv/bin/python" -c 'import platform; print(platform.python_version())'))."
        echo "# torch is installed first with pip (the CPU wheel on disk), everything else with uv --no-deps."
        "$work/venv/bin/pip" freeze --all --exclude-editable | grep -v -i -E "^(turn-arena|pip==)"
    } >"$LOCK"
    step "wrote $LOCK ($(grep -c == "$LOCK") pins)"
    exit 0
fi

key=$( (cat "$LOCK"; echo "$TORCH $PY") | sha256sum | cut -c1-16)
venv=${ARENA_CLIENTS_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/arena/clients-$key}
py="$venv/bin/python"
if [ ! -e "$venv/.complete" ]; then
    step "building the clients' venv at $venv ($(grep -c == "$LOCK") pins)"
    rm -rf "$venv"
    mkdir -p "$(dirname "$venv")"
    "$PY" -m venv "$venv"
    quiet "$venv/bin/pip" install -q --disable-pip-version-check --no-deps "$TORCH" "$(grep -i '^uv==' "$LOCK")"
    grep -v -i -E '^(torch|uv)==' "$LOCK" >"$work/rest.txt"
    quiet "$venv/bin/uv" pip install --python "$py" --no-deps -r "$work/rest.txt"
    touch "$venv/.complete"
else
    step "reusing the clients' venv at $venv"
fi
step "installing the core, games and players"
quiet "$venv/bin/uv" pip install --python "$py" --no-deps --no-build-isolation --reinstall-package turn-arena-core \
    --reinstall-package turn-arena-games --reinstall-package turn-arena-players $ours
quiet "$venv/bin/uv" pip check --python "$py"
step "clients/"
"$py" -m pytest -q -p no:cacheprovider -W ignore::DeprecationWarning clients

# The PettingZoo floor (dists/core: pettingzoo>=1.23; 1.22 fails parallel_api_test, its reset
# returned no infos): the core, games and players with PettingZoo 1.23.1 and no extras, then
# tests/test_envs.py (PettingZoo's api_test, seed_test, parallel_api_test and render_test on the
# adapters; no registry before 1.27, so no registry ids). A venv of its own, kept like the other.
floor="$venv-pettingzoo-floor"
[ -e "$floor/bin/python" ] || "$venv/bin/uv" venv -q --python "$PY" "$floor"
grep -v -i '^pettingzoo==' "$LOCK" >"$work/floor-constraints.txt"  # every other version as in the lock
quiet "$venv/bin/uv" pip install --python "$floor/bin/python" -c "$work/floor-constraints.txt" pettingzoo==1.23.1 pytest \
    --reinstall-package turn-arena-core --reinstall-package turn-arena-games --reinstall-package turn-arena-players \
    "$work/core" "$work/games" "$work/players"
step "tests/test_envs.py with PettingZoo $("$floor/bin/python" -c 'import pettingzoo; print(pettingzoo.__version__)')"
"$floor/bin/python" -W error::RuntimeWarning -m pytest -q -p no:cacheprovider -W ignore::DeprecationWarning tests/test_envs.py
echo "check_clients: ok in ${SECONDS}s"
