"""Headless Chromium for the report tests: the page as the browser renders it (its DOM after the
page's own scripts ran), with retries for a browser that fails to start on a loaded machine."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess

import pytest


def chromium_dom(path, fragment: str = "") -> str:
    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    if exe is None:
        pytest.skip("chromium is not installed (apt-get install chromium)")
    profile = path.parent / "chromium-profile"
    # --in-process-gpu: no separate GPU process, whose launch can fail on a loaded CI machine
    args = [
        exe,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--in-process-gpu",
        "--disable-dev-shm-usage",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        f"--user-data-dir={profile}",
        "--virtual-time-budget=10000",  # wait for the page's own asynchronous work (unpacking the viewer's data)
        "--dump-dom",
        path.resolve().as_uri() + fragment,
    ]
    # not LD_PRELOAD: the OpenBLAS that `make test` preloads for MLX starts threads in every
    # Chromium process, and its forked zygote children then hang
    env = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}
    failures = []
    for _ in range(3):  # the browser itself can crash or hang at start-up under load; the page is what we test
        proc = subprocess.Popen(
            args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True, env=env
        )
        try:
            out, err = proc.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)  # the whole browser: its helpers hold the pipes too
            out, err = proc.communicate()
            failures.append(f"hung for 60 s: {err[-500:]}")
            continue
        if proc.returncode == 0:
            return out
        failures.append(f"exit {proc.returncode}: {err[-500:]}")
    pytest.fail("chromium did not render the page in 3 tries:\n" + "\n".join(failures))
