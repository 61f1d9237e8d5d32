#!/usr/bin/env bash
# The verifiers bridge (dists/verifiers) in its own environment: verifiers 0.4 requires openai<3,
# and the development lock holds openai 3.x, so it cannot join the development install
# (docs/ecosystem.md). A throw-away venv gets uv (pip), then with uv the versions of
# dists/verifiers/constraints.txt (its own lock, installed with --no-deps: no resolution; `uv pip
# check` then fails on a lock that misses a requirement), then the core, games, players and the
# bridge from copies of their source (no dev venv needed; builds in dists/ by a concurrent
# `make check-split` are not touched) and the plugin template (examples/plugin_example, a
# third-party game), then runs dists/verifiers/tests (an end-to-end `vf-eval
# arena-verifiers` against a local fake streaming server included). .ci/run starts it in the
# background beside `make lint` and `make test` and waits for it at the end.
# Measured on 2 shared cores holding the team's CPU lock (load 1.5-2.7): 50 s wall, 55 s CPU with
# uv's cache warm (install 11 s, 16 tests 36 s); 62 s wall, 70 s CPU with an empty uv cache
# (UV_CACHE_DIR, 403 MB fetched: install 14 s, tests 44 s). Before (pip, resolver): 163-208 s.
#   scripts/check_verifiers.sh         the check
#   scripts/check_verifiers.sh lock    refresh dists/verifiers/constraints.txt from a fresh resolution
#   scripts/check_verifiers.sh latest  drift: the newest verifiers release the bridge's range allows (and
#                                      the newest of what it needs), no lock; says which version broke what
#   VF_PYTHON  the venv's Python (3.11+; default python3.11)
# uv is in the lock because verifiers' null harness runs its chat program with `uv sync --script`
# (the venv's bin/ is put first on PATH, else verifiers installs uv with `pip install --user`).
set -euo pipefail
cd "$(dirname "$0")/.."
VF_PYTHON=${VF_PYTHON:-python3.11}
LOCK=dists/verifiers/constraints.txt
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
step() { echo "[check_verifiers ${SECONDS}s] $*"; }
# a command's output goes to a log shown only when it fails
quiet() { "$@" >"$work/cmd.log" 2>&1 || { grep -v "is ignored: it is neither" "$work/cmd.log" >&2; echo "check_verifiers: failed: $*" >&2; exit 1; }; }

# copies of the four distributions (links followed: dists/*/src/<package> links into src/)
for d in core games players verifiers; do
    cp -rL "dists/$d" "$work/$d"
    rm -rf "$work/$d/build" "$work/$d"/src/*.egg-info
    find "$work/$d" -name __pycache__ -prune -exec rm -rf {} +
done
cp -r examples/plugin_example "$work/plugin"  # a third-party game, for the tests
rm -rf "$work/plugin/build" "$work/plugin"/src/*.egg-info
ours="$work/core $work/games $work/players $work/verifiers"
"$VF_PYTHON" -m venv "$work/venv"
py="$work/venv/bin/python"
uv="$work/venv/bin/uv"
pin() { grep -i "^$1==" "$LOCK" || echo "$1"; }
quiet "$py" -m pip install -q --disable-pip-version-check "$(pin uv)"

if [ "${1:-}" = lock ]; then
    step "resolving verifiers and the bridge's dependencies afresh"
    quiet "$uv" pip install --python "$py" "setuptools>=77" wheel uv $ours "$work/verifiers[test]"
    {
        echo "# The verifiers environment's lock: scripts/check_verifiers.sh lock (Python $("$py" -c 'import platform; print(platform.python_version())'))"
        "$uv" pip freeze --python "$py" | grep -v -i -E "^(turn-arena|pip==)"
    } >"$LOCK"
    step "wrote $LOCK ($(grep -c == "$LOCK") pins)"
    exit 0
fi

if [ "${1:-}" = latest ]; then
    step "resolving the newest verifiers and the bridge's dependencies (no lock)"
    quiet "$uv" pip install --python "$py" --upgrade "setuptools>=77" wheel uv $ours "$work/verifiers[test]" "$work/plugin"
    now=$("$py" -c 'import importlib.metadata as m; print(m.version("verifiers"))')
    was=$(grep -i '^verifiers==' "$LOCK" | cut -d= -f3)
    step "verifiers $now (the lock has $was); dists/verifiers/tests"
    if PATH="$work/venv/bin:$PATH" env -u PYTHONDONTWRITEBYTECODE "$py" -m pytest -q -p no:cacheprovider -rfE dists/verifiers/tests >"$work/tests.log" 2>&1; then
        tail -1 "$work/tests.log"
        echo "check_verifiers latest: verifiers $now passes (lock: $was); refresh with: scripts/check_verifiers.sh lock"
        exit 0
    fi
    cat "$work/tests.log"
    echo "check_verifiers latest: DRIFT: verifiers $now (lock: $was) breaks the bridge:" >&2
    grep -E "^(FAILED|ERROR) " "$work/tests.log" >&2 || tail -5 "$work/tests.log" >&2
    exit 1
fi

step "installing the lock ($(grep -c == "$LOCK") packages, no resolution)"
quiet "$uv" pip install --python "$py" --no-deps -r "$LOCK"
step "installing the core, games, players, the bridge and the plugin template"
quiet "$uv" pip install --python "$py" --no-deps --no-build-isolation $ours "$work/plugin"
quiet "$uv" pip check --python "$py"
step "dists/verifiers/tests"
# bytecode written (the venv is thrown away): verifiers is imported by pytest, vf-eval and each chat program
PATH="$work/venv/bin:$PATH" env -u PYTHONDONTWRITEBYTECODE "$py" -m pytest -q -p no:cacheprovider dists/verifiers/tests
echo "check_verifiers: ok in ${SECONDS}s"
