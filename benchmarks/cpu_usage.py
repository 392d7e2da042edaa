"""babysit's own CPU while the child prints 200 lines/s.

    python benchmarks/cpu_usage.py [--rate 200] [--seconds 20] [--quick]

Runs `babysit run` (echo on, to /dev/null) over a child printing RATE nanoGPT-style lines per
second, and reads the CPU time of the babysit process itself (user + system, children excluded)
and of the launcher from /proc at the end, over the wall time. Baseline in the same run: the
child's own CPU. Target (issue 2): babysit < 2% of one core. Checked every time (also with
--quick: 50 lines/s for 2 s): babysit exits 0 and the attempt's log holds the child's lines.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil
from _common import FIXTURES, babysit, check, check_exit, parse_args


def main() -> dict[str, float]:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rate", type=float, default=200)
    ap.add_argument("--seconds", type=float, default=20)
    args = parse_args(ap, quick={"rate": 50.0, "seconds": 2.0})
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        cmd = babysit(
            "run",
            "--home",
            str(work / "h"),
            "--name",
            "cpu",
            "--",
            sys.executable,
            str(FIXTURES / "chatty.py"),
            str(args.rate),
            str(args.seconds),
        )
        t0 = time.monotonic()
        errlog = work / "babysit.err"
        with errlog.open("w") as err:  # the child has its own copy of the descriptor
            proc = subprocess.Popen(cmd, cwd=work, stdout=subprocess.DEVNULL, stderr=err)
        me = psutil.Process(proc.pid)
        launcher = child = None
        samples: dict[str, float] = {}
        steady: tuple[float, float] | None = None  # (wall, babysit cpu) once the child runs
        while proc.poll() is None:
            try:
                cpu = me.cpu_times()
                samples["babysit"] = cpu.user + cpu.system
                if steady is None and "child" in samples:
                    steady = (time.monotonic(), samples["babysit"])
                kids = me.children()
                if kids:
                    launcher = kids[0]
                    lc = launcher.cpu_times()
                    samples["launcher"] = lc.user + lc.system
                    grand = launcher.children()
                    if grand:
                        child = grand[0]
                        cc = child.cpu_times()
                        samples["child"] = cc.user + cc.system
            except psutil.Error:
                pass
            time.sleep(0.5)
        end = time.monotonic()
        wall = end - t0
        check_exit(proc.returncode, 0, "babysit run", errlog.read_text(errors="replace"))
        log = work / "h" / "runs" / "cpu" / "attempt-0001" / "stdout.log"
        lines = log.read_text().count("\n") if log.exists() else 0
        check(lines > 0, f"no lines in {log} from the child (it prints {args.rate:g}/s)")
        check("babysit" in samples, "babysit's CPU time was never read")
    del launcher, child
    pct = {k: 100 * v / wall for k, v in samples.items()}
    if steady is not None:
        pct["babysit_steady"] = 100 * (samples["babysit"] - steady[1]) / (end - steady[0])
    print(f"{lines} lines in {wall:.1f}s ({lines / wall:.0f}/s)")
    print(
        f"CPU, % of one core: babysit {pct.get('babysit', 0):.2f}%  launcher "
        f"{pct.get('launcher', 0):.2f}%  child (baseline) {pct.get('child', 0):.2f}%"
    )
    print(
        f"babysit in steady state (after the child started): "
        f"{pct.get('babysit_steady', 0):.2f}% of one core"
    )
    return {
        "babysit_cpu_pct": pct.get("babysit", 0.0),
        "babysit_steady_cpu_pct": pct.get("babysit_steady", 0.0),
        "launcher_cpu_pct": pct.get("launcher", 0.0),
        "child_cpu_pct": pct.get("child", 0.0),
    }


if __name__ == "__main__":
    print(json.dumps(main()))
