#!/usr/bin/env bash
# The verifiers bridge (dists/verifiers) in its own environment: verifiers 0.4 requires openai<3,
# and the development lock holds openai 3.x, so it cannot join the development install
# (docs/ecosystem.md). Builds the core, games and players wheels, installs them with verifiers
# 0.4 and the bridge into a throw-away venv, and runs dists/verifiers/tests (an end-to-end
# `vf-eval arena-verifiers` against a local fake streaming server included).
# Measured on 2 shared cores: the whole script 208 s (install with a warm pip cache; about 5 min cold:
# 100 packages, 572 MB), the tests 31-41 s.
#   PYTHON  builds the wheels (default: the dev venv's python)   VF_PYTHON  the venv's Python (3.11+)
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-.venv/bin/python}
VF_PYTHON=${VF_PYTHON:-python3.11}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for d in core games players; do
    rm -rf "dists/$d/build"
    "$PYTHON" -m pip wheel -q --no-deps --no-build-isolation -w "$work/wheels" "dists/$d"
done
"$VF_PYTHON" -m venv "$work/venv"
"$work/venv/bin/python" -m pip install -q --disable-pip-version-check --find-links "$work/wheels" \
    "./dists/verifiers[test]"
"$work/venv/bin/python" -m pytest -q -p no:cacheprovider dists/verifiers/tests
echo "check_verifiers: ok in ${SECONDS}s"
