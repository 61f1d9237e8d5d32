"""The matrix study's LLM path end to end, against a local fake OpenAI-compatible server.

    python examples/matrix_fake_llm.py [OUT_DIR]

The server (``arena_games.matrix.fakellm.FakeChatServer``) picks labels uniformly at random and
answers in well-formed, hedged and prose-wrapped formats, logging every pick. The study runs
through the ``arena study`` CLI with an ``openai`` player at temperature 1; afterwards every
answer the study read is checked against the server's log, and the verdicts are printed: a
uniformly random player must not be found to coordinate above (or below) chance.
"""

import json
import sys
from pathlib import Path

from arena_games.matrix.fakellm import FakeChatServer
from arena_games.matrix.study import main

out = Path(sys.argv[1] if len(sys.argv) > 1 else "matrix_fake_llm_out")
with FakeChatServer(seed=7) as server:
    spec = f"openai:base_url={server.url},model=fake-random,api_key_env=,temperature=1,concurrency=8,max_retries=0,record_response=full"
    code = main(
        [
            "--player",
            spec,
            "--archetypes",
            "coordination,battle_of_sexes",
            "--k",
            "2-3",
            "--trials",
            "24",
            "--out",
            str(out),
            "--quiet",
            "--no-plot",
        ]
    )
    log = {entry["text"]: entry for entry in server.log}
if code != 0:
    sys.exit(code)

read = misread = unreadable = unreadable_well_formed = 0
for line in (out / "episodes.jsonl").read_text(encoding="utf-8").splitlines():
    event = json.loads(line)
    if event["type"] == "step":
        read += 1
        misread += event["action"] != log[event["telemetry"]["response"]]["pick"]
    elif event["type"] == "policy":
        unreadable += 1
        unreadable_well_formed += log[event["telemetry"]["response"]]["well_formed"]
print(
    f"answers read: {read}, misread: {misread}; unreadable: {unreadable} (of them well-formed: {unreadable_well_formed})"
)
summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
print(f"error control: {summary['error_control']['procedure']} at alpha {summary['error_control']['alpha']}")
for cell in summary["cells"]:
    print(
        f"{cell['listing']:11s} {cell['archetype']:16s} k={cell['k']}  scored {cell['scored']:2d}/{cell['trials']}  "
        f"unparseable {cell['unparseable']:2d}  vs Nash {cell['vs_nash']:17s} vs uniform {cell['vs_uniform']:17s} => {cell['verdict']}"
    )
