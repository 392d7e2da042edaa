"""The chaos suite's process half: run the tiny GPT under torchrun (gloo, on the CPU) one of
three ways, inject the driver's faults (babysit SIGKILLed and started again), enforce the
wall-clock cap, clean up every process, and hand back what the run left behind.

    res = run_way("babysit", sched, cfg, workdir)   # -> Ran(events, marks, bevents, stderr)
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psutil
from _chaos_schedule import Marks, Schedule, trainer_flags
from _common import TINYGPT, babysit

WAYS = ("babysit", "loop", "torchrun")
TORCHRUN_MAX_RESTARTS = 10  # as many as babysit's default --max-restarts: a generous baseline


@dataclass(frozen=True)
class Config:
    steps: int
    ckpt_every: int
    step_s: float
    ranks: int
    hang_rank: int
    slow_ckpt_s: float
    caps_s: dict[str, float]
    seed: int


@dataclass
class Ran:
    events: list[dict[str, Any]]
    marks: Marks
    bevents: list[dict[str, Any]] = field(default_factory=list)
    stderr_tail: str = ""
    babysit_extra: dict[str, Any] = field(default_factory=dict)


def torchrun_argv() -> list[str]:
    exe = Path(sys.executable).parent / "torchrun"
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "torch.distributed.run"]


def trainer_argv(
    sched: Schedule, cfg: Config, out: Path, events: Path, hostfile: str | None, restarts: int
) -> list[str]:
    tr = [*torchrun_argv(), "--standalone", "--nproc-per-node", str(cfg.ranks)]
    if restarts:
        tr += ["--max-restarts", str(restarts)]
    argv = [
        *tr, str(TINYGPT), "--out-dir", str(out), "--max-steps", str(sched.steps),
        "--ckpt-every", str(cfg.ckpt_every), "--eval-every", str(sched.steps),
        "--min-step-s", f"{cfg.step_s:g}", "--events-log", str(events),
        *trainer_flags(sched, cfg.hang_rank, cfg.slow_ckpt_s),
    ]  # fmt: skip
    if hostfile is not None:
        argv += ["--hostfile", hostfile]
    return argv


def clean_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("BABYSIT_", "TORCHELASTIC"))}
    env["OMP_NUM_THREADS"] = "1"
    env["PYTHONUNBUFFERED"] = "1"
    return env


def kill_leftovers(out: Path, home: Path | None) -> None:
    """SIGKILL every process of this run: babysit's launcher lives in its own session and the
    trainer outlives babysit by design, so they are found by the out-dir (or home) in their
    argv, not by the session the driver started."""
    marks = {str(out)} | ({str(home)} if home is not None else set())
    me = os.getpid()
    for p in psutil.process_iter(["pid", "cmdline"]):
        try:
            cmd = p.info["cmdline"] or []
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            continue
        if p.pid != me and any(any(m in a for m in marks) for a in cmd):
            with contextlib.suppress(psutil.NoSuchProcess):
                p.kill()


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    out = []
    for line in path.read_text(errors="replace").splitlines():
        try:
            out.append(json.loads(line))
        except ValueError:
            continue  # a line cut by a kill
    return out


def high_step(path: Path) -> int:
    steps = [e["step"] for e in read_jsonl(path) if e.get("kind") == "step"]
    return max(steps, default=-1)


def run_way(way: str, sched: Schedule, cfg: Config, work: Path) -> Ran:
    """Run `sched` one way, to its end or to the cap; return what it left behind."""
    name = f"{sched.name}-{way}"
    out, events = work / name / "out", work / f"{name}.events.jsonl"
    out.mkdir(parents=True)
    home = work / name / "babysit-home" if way == "babysit" else None
    hostfile = None
    if sched.hosts:
        hf = work / name / "hosts.txt"
        hf.write_text("".join(f"{h}\n" for h in sched.hosts))
        hostfile = "{hostfile}" if way == "babysit" else str(hf)
    restarts = TORCHRUN_MAX_RESTARTS if way == "torchrun" else 0
    targv = trainer_argv(sched, cfg, out, events, hostfile, restarts)
    if way == "loop":
        argv = ["bash", "-c", 'while true; do "$@" && break; done', "bash", *targv]
    elif way == "torchrun":
        argv = targv
    else:
        assert home is not None
        # What the README tells a user to set: the checkpoints, how to resume, the hosts.
        opts = ["--checkpoint", f"{out}/ckpt_*.pt", "--resume-args", "--resume {checkpoint}"]
        if sched.hosts:
            opts += ["--hostfile", str(work / name / "hosts.txt"),
                     "--min-nodes", str(cfg.ranks)]  # fmt: skip
        argv = babysit("run", "--home", str(home), "--name", sched.name, "-q", *opts, "--", *targv)
    kill_at = next((f.step for f in sched.faults if f.name == "babysit_kill"), None)
    errpath = work / f"{name}.stderr.log"
    marks = Marks(t0=time.time(), t_end=0.0, exit_code=None, capped=False)
    deadline = time.monotonic() + cfg.caps_s[sched.name]
    with errpath.open("ab") as err:

        def start() -> subprocess.Popen[bytes]:
            return subprocess.Popen(
                argv, cwd=work / name, stdout=subprocess.DEVNULL, stderr=err, env=clean_env(),
                start_new_session=True,
            )  # fmt: skip

        proc = start()
        try:
            while proc.poll() is None:
                if time.monotonic() > deadline:
                    marks.capped = True
                    break
                if way == "babysit" and kill_at is not None and high_step(events) >= kill_at:
                    kill_at = None
                    os.kill(proc.pid, signal.SIGKILL)  # babysit only: the trainer lives on
                    proc.wait()
                    marks.babysit_killed_at.append(time.time())
                    proc = start()
                    marks.babysit_restarted_at.append(time.time())
                time.sleep(0.1)
        finally:
            marks.t_end = time.time()
            marks.exit_code = proc.poll()
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
            kill_leftovers(out, home)
    stderr = errpath.read_text(errors="replace")
    ran = Ran(read_jsonl(events), marks, stderr_tail=stderr[-3000:])
    if home is not None:
        ran.bevents = read_jsonl(home / "events.jsonl")
        ran.babysit_extra = logbook_facts(home, sched.name, work / name)
        ran.babysit_extra["gave_up"] = gave_up(stderr)
    shutil.rmtree(out, ignore_errors=True)  # checkpoints: megabytes each, not needed after
    return ran


def gave_up(stderr: str) -> str:
    """babysit's own words when it gave up ("giving up: restart storm: ..."), if it did."""
    lines = [ln for ln in stderr.splitlines() if ln.startswith("babysit: giving up")]
    return lines[-1].removeprefix("babysit: ")[:300] if lines else ""


def logbook_facts(home: Path, run: str, cwd: Path) -> dict[str, Any]:
    """What babysit's logbook says: each attempt's cause, each incident's kind, the bans."""
    try:
        res = subprocess.run(
            babysit("logbook", run, "--home", str(home), "--format", "json"),
            capture_output=True, text=True, cwd=cwd, timeout=60, env=clean_env(),
        )  # fmt: skip
        doc = json.loads(res.stdout)
    except (subprocess.TimeoutExpired, ValueError):
        return {"logbook": None}
    return {"logbook_keys": sorted(doc)[:20], "logbook": summarize_logbook(doc)}


def summarize_logbook(doc: dict[str, Any]) -> dict[str, Any]:
    attempts = doc.get("attempts") or []
    incidents = doc.get("incidents") or []
    return {
        "causes": [
            (a.get("cause") or a.get("category") or (a.get("verdict") or {}).get("category"))
            for a in attempts
        ],
        "outcomes": [a.get("outcome") for a in attempts],
        "incidents": [i.get("kind") for i in incidents],
    }
