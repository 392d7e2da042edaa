"""Hang on evidence against the fixed cap: the tiny GPT frozen, deadlocked, in a silent eval and
in a slow checkpoint write, babysat three ways in the same run.

    python benchmarks/hang_evidence.py [--eval-s 40] [--save-s 60] [--ways evidence,cap,eager]
    python benchmarks/hang_evidence.py --quick      # smoke test: evidence only, short, ~1 min

Scenarios (the tiny GPT of the demo, real PyTorch on the CPU, one step per 50 ms):
- frozen:   SIGSTOP from outside at step 40 (a trainer stopped, or asleep in a data read);
- deadlock: --hang-at 40, the main thread asleep forever (a lock that never comes);
- eval:     a busy eval that prints nothing for --eval-s seconds (nanoGPT's estimate_loss);
- save:     a checkpoint written in pieces over --save-s seconds (throttled storage), silent.
Ways:
- evidence: babysit's defaults (look twice, 5 s apart; stuck is killed, busy left alone);
- cap:      the behaviour before evidence (hang.evidence = false): kill 300 s after the last
            step, whatever the attempt is doing (the named baseline);
- eager:    kill at detection (hang.kill_after_s = 0), the other way to be fast.
Figures: for frozen and deadlock, seconds from the hang's detection to the next attempt's start;
for eval and save, the attempts killed. Targets (issue 11): frozen and deadlock restarted within
detection + 15 s, zero kills on the 40 s eval and the 60 s save. Checked every time, also with
--quick: with evidence, frozen is killed once on the evidence "stopped" and restarted, and the
eval is not killed (the 15 s target is checked in the full run only: it is a figure).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path
from typing import Any

import psutil
from _common import TINYGPT, babysit, check, check_exit, parse_args

TARGET_S = 15.0
WAYS = {
    "evidence": "",
    "cap": "[hang]\nevidence = false\n",
    "eager": "[hang]\nkill_after_s = 0\n",
}
STEP_S = 0.05
AT = 40  # the step at which the fault comes


def trainer_args(scenario: str, out: Path, eval_s: float, save_s: float) -> list[str]:
    common = [
        sys.executable, str(TINYGPT), "--out-dir", str(out), "--min-step-s", str(STEP_S),
        "--silent", "--keep-ckpts", "0",
    ]  # fmt: skip
    if scenario == "frozen":
        return [*common, "--max-steps", "80", "--ckpt-every", "20", "--eval-every", "0"]
    if scenario == "deadlock":
        return [*common, "--max-steps", "80", "--ckpt-every", "20", "--eval-every", "0",
                "--hang-at", str(AT)]  # fmt: skip
    if scenario == "eval":
        return [*common, "--max-steps", "60", "--ckpt-every", "0", "--eval-every", str(AT),
                "--eval-s", str(eval_s)]  # fmt: skip
    return [*common, "--max-steps", "60", "--ckpt-every", str(AT), "--eval-every", "0",
            "--save-s", str(save_s)]  # fmt: skip


def trial(work: Path, way: str, scenario: str, eval_s: float, save_s: float) -> dict[str, Any]:
    run = f"{scenario}-{way}"
    home, out = work / "h", work / run
    cfg = work / f"{run}.toml"
    cfg.write_text(WAYS[way])
    # The save runs without a checkpoint glob: writes in the glob's directory would keep the
    # hang from being flagged at all; without one, only the looks can tell the save.
    glob = [] if scenario == "save" else ["--checkpoint", f"{out}/ckpt_*.pt"]
    argv = babysit(
        "run", "--home", str(home), "--name", run, "--config", str(cfg), "-q", *glob,
        "--", *trainer_args(scenario, out, eval_s, save_s),
    )  # fmt: skip
    t0 = time.monotonic()
    with (work / f"{run}.err").open("wb") as err:
        proc = subprocess.Popen(argv, cwd=work, stdout=subprocess.DEVNULL, stderr=err)
        try:
            if scenario == "frozen":
                freeze(proc, home / "runs" / run / "attempt-0001" / "stdout.log")
            code = proc.wait(timeout=900)
        finally:
            if proc.poll() is None:
                proc.kill()
    stderr = (work / f"{run}.err").read_text(errors="replace")
    if way == "evidence":  # a baseline may give up (killing an eval in a loop): that is its figure
        check_exit(code, 0, f"babysit ({run})", stderr)
    status = subprocess.run(
        babysit("status", run, "--home", str(home), "--json"),
        capture_output=True, text=True, check=True, cwd=work,
    )  # fmt: skip
    doc = json.loads(status.stdout)
    kills = sum(1 for a in doc["attempts"] if a["outcome"] == "killed")
    hang = next((i for i in doc["incidents"] if i["kind"] == "hang"), None)
    started = [ts(e["ts"]) for e in doc["events"] if e["kind"] == "attempt_started"]
    after = started[1] - ts(hang["ts"]) if hang is not None and len(started) > 1 else None
    signs = [e["data"].get("sign") for e in doc["events"] if e["kind"] == "hang_evidence"]
    return {
        "way": way,
        "scenario": scenario,
        "exit": code,
        "kills": kills,
        "restart_after_detection_s": after,
        "evidence": signs,
        "wall_s": round(time.monotonic() - t0, 1),
    }


def freeze(proc: subprocess.Popen[bytes], log: Path) -> None:
    """SIGSTOP the trainer once it printed step AT."""
    deadline = time.monotonic() + 300
    while f"iter {AT}:" not in (log.read_text(errors="replace") if log.exists() else ""):
        check(time.monotonic() < deadline and proc.poll() is None, f"no step {AT} in {log}")
        time.sleep(0.05)
    trainer = [
        c.pid
        for c in psutil.Process(proc.pid).children(recursive=True)
        if c.cmdline()[1:2] == [str(TINYGPT)]
    ]
    check(bool(trainer), "the trainer's process was not found")
    for pid in trainer:
        os.kill(pid, signal.SIGSTOP)


def ts(iso: str) -> float:
    return datetime.fromisoformat(iso).timestamp()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--eval-s", type=float, default=40.0)
    ap.add_argument("--save-s", type=float, default=60.0)
    ap.add_argument("--ways", default="evidence,cap,eager")
    ap.add_argument("--scenarios", default="frozen,deadlock,eval,save")
    ap.add_argument("--json", type=Path, help="also write the results here")
    args = parse_args(ap, {"ways": "evidence", "scenarios": "frozen,eval", "eval_s": 14.0})
    ways = [w for w in args.ways.split(",") if w]
    check(all(w in WAYS for w in ways), f"--ways: pick from {', '.join(WAYS)}")
    results = []
    with tempfile.TemporaryDirectory(prefix="babysit-bench-hang-") as tmp:
        for scenario in args.scenarios.split(","):
            for way in ways:
                # Each trial in its own directory: the freeze finds its trainer by --out-dir.
                work = Path(tmp) / f"{scenario}-{way}"
                work.mkdir()
                r = trial(work, way, scenario, args.eval_s, args.save_s)
                results.append(r)
                after = r["restart_after_detection_s"]
                shown = f"{after:.1f}s" if after is not None else "-"
                signs = ",".join(s for s in r["evidence"] if s) or "-"
                print(
                    f"{scenario:9} {way:9} exit {r['exit']}  kills {r['kills']}  restarted "
                    f"{shown} after detection  evidence {signs}  ({r['wall_s']:.0f}s)",
                    flush=True,
                )
    for r in results:
        if r["way"] != "evidence":
            continue
        if r["scenario"] in ("frozen", "deadlock"):
            after = r["restart_after_detection_s"]
            check(r["kills"] == 1, f"{r['scenario']}: {r['kills']} kills, want 1")
            check(after is not None, f"{r['scenario']}: never restarted")
            if not args.quick:  # a figure: the machine's speed counts
                ok = after is not None and after <= TARGET_S
                check(ok, f"{r['scenario']}: restarted {after}s after detection (target 15 s)")
            if r["scenario"] == "frozen":
                check("stopped" in r["evidence"], f"frozen: evidence {r['evidence']}")
        else:
            check(r["kills"] == 0, f"{r['scenario']}: {r['kills']} kills, want 0")
            # The stall was long enough to be flagged and looked at: the evidence was tested.
            check("cpu" in r["evidence"] or "file_growing" in r["evidence"], f"{r}")
    if args.json:
        args.json.write_text(json.dumps({"results": results}, indent=2))
    print(json.dumps({"results": results}))


if __name__ == "__main__":
    main()
