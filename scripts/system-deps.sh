#!/bin/sh
# Install the Debian packages some tests use, when we can (root with apt-get); never fails.
set -u
want=""
command -v chromium >/dev/null 2>&1 || want="$want chromium"
[ -e /usr/lib/x86_64-linux-gnu/libopenblas.so.0 ] || [ "$(uname -m)" != "x86_64" ] || want="$want libopenblas0-pthread"
[ -z "$want" ] && exit 0
if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
    echo "installing system packages:$want"
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $want) >/dev/null 2>&1 \
        || echo "warning: could not install$want; the tests that need them will say so"
else
    echo "note: not root or no apt-get; install$want yourself for the full test suite"
fi
exit 0
