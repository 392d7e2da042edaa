"""Forensics: what babysit keeps of a hung attempt, and what it asks the run to keep.

    f = Forensics(ctx)                     # the run's context (supervise/context.py)
    env = f.child_env(env, attempt_dir)    # faulthandler + PyTorch's flight recorder in the child
    report = f.stacks(handle, attempt)     # every process's stack, grouped, stored, told
    look = f.look(handle, gpu_util)        # processes, stacks, files written: a looks.Look
    f.tell_evidence(evidence, attempt)     # what two looks said, to the logbook and the operator
    f.keep(look, evidence, attempt)        # the look's stacks, with the evidence, stored, told
    f.flight_recorder_dumps(attempt_dir)   # the NCCL flight recorder's files, if any

Nothing here may stand between a hang and its restart: a dump that fails is reported and
skipped. The stored document is documents.py's; the evidence rides in it ("evidence").
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
from pathlib import Path

from babysit.act.stackdump import dump_stacks, forensics_env
from babysit.detect.stacks import group_stacks
from babysit.documents import evidence_document, stacks_document, stacks_text
from babysit.engines.process import Handle
from babysit.looks import Evidence, HangVerdict, Look, ProcessStack, StackReport
from babysit.parse.stacks import parse_stacks
from babysit.records import EventKind, Level
from babysit.sources.procs import files_in, files_written, glob_root, look_at
from babysit.store.writes import AddStacks
from babysit.supervise.context import RunContext
from babysit.supervise.journal import Journal
from babysit.supervise.prepare import resolve_path

# Run on every node of a multi-node attempt (Forensics.node_stacks): argv is the attempt's
# token, the stacks directory and the budget. The node's own processes only: several Slurm
# nodes may share one host (SLURMD_NODENAME tells them apart).
NODE_STACKS = """
import json, os, sys
from dataclasses import asdict
from pathlib import Path
from babysit.act.stackdump import dump_stacks
token, where, budget = sys.argv[1], Path(sys.argv[2]), float(sys.argv[3])
node = os.environ.get("SLURMD_NODENAME", "")
want = {f"BABYSIT_ATTEMPT_TOKEN={token}".encode()}
here = f"SLURMD_NODENAME={node}".encode()
pids = []
for name in os.listdir("/proc"):
    if not name.isdigit() or int(name) == os.getpid():
        continue
    try:
        env = set(open(f"/proc/{name}/environ", "rb").read().split(b"\\0"))
    except OSError:
        continue
    if want <= env and (not node or here in env):
        pids.append(int(name))
rows = []
for s in dump_stacks(pids, where, budget):
    row = asdict(s)
    row["threads"] = []
    row["host"] = node or s.host
    rows.append(row)
print(json.dumps(rows))
"""
NVIDIA_DEVICE = "/dev/nvidiactl"  # present wherever the NVIDIA driver is loaded
STACKS_DIR = "stacks"
STACKS_FILE = "stacks.txt"


class Forensics:
    def __init__(self, ctx: RunContext) -> None:
        self.ctx = ctx
        self.cfg = ctx.cfg
        self.run = ctx.name
        self.say = ctx.say
        self.engine = ctx.engine
        self.wall = ctx.seams.wall

    @property
    def journal(self) -> Journal:
        return self.ctx.journal

    def child_env(self, env: dict[str, str], attempt_dir: Path) -> dict[str, str]:
        f = self.cfg.forensics
        if not (f.faulthandler or f.flight_recorder):
            return env
        try:
            return forensics_env(env, attempt_dir / STACKS_DIR, f.flight_recorder, f.faulthandler)
        except OSError as exc:
            self.say(
                Level.WARN, f"cannot prepare {attempt_dir / STACKS_DIR} ({exc}); no stack dumps"
            )
            return env

    # -- stacks of a hung attempt --------------------------------------------------------------

    def stacks(self, handle: Handle, attempt: int) -> StackReport | None:
        """Every process's Python stack (py-spy, else faulthandler), grouped; stored with the
        attempt, written to its directory, and told. None when it could not be done."""
        if not self.cfg.forensics.stacks:
            return None
        try:
            if self.engine.remote:
                procs = self.node_stacks(handle)  # a multi-node engine: from every node
            else:
                pids = [r.pid for r in self.engine.ranks(handle)]
                procs = dump_stacks(
                    pids, handle.attempt_dir / STACKS_DIR, self.cfg.forensics.stacks_budget_s
                )
            report = group_stacks(parse_stacks(procs), self.wall())
        except Exception as exc:  # forensics must never stand between a hang and its restart
            self.say(Level.WARN, f"could not take the stacks of hung attempt {attempt}: {exc}")
            return None
        return self.keep(Look(report.ts, (), report), None, attempt, handle.attempt_dir)

    def node_stacks(self, handle: Handle) -> list[ProcessStack]:
        """The stacks of the attempt's processes on every node of an engine whose ranks are
        elsewhere (Slurm: `srun --overlap --jobid`): NODE_STACKS runs on each node, finds the
        processes that carry the attempt's token there, dumps them (py-spy, else
        faulthandler) and prints them as JSON."""
        budget = self.cfg.forensics.stacks_budget_s
        argv = [
            sys.executable, "-c", NODE_STACKS, handle.token,
            str(handle.attempt_dir / STACKS_DIR), str(budget),
        ]  # fmt: skip
        out: list[ProcessStack] = []
        for node in self.engine.on_each_node(handle, argv, budget + 15.0):
            try:
                rows = json.loads(node.stdout) if node.returncode == 0 else None
            except ValueError:
                rows = None
            if not isinstance(rows, list):
                why = (node.stderr.strip() or "no output")[-300:]
                self.say(Level.WARN, f"no stacks from node {node.host}: {why}")
                continue
            for row in rows:
                with contextlib.suppress(TypeError, KeyError):
                    out.append(ProcessStack(**{**row, "threads": ()}))
        return out

    # -- looking at a hung attempt -------------------------------------------------------------

    def look(self, handle: Handle, gpu_util: float | None = None) -> Look:
        """The attempt's processes (state, CPU, I/O), the files they write and what the
        checkpoint directory holds, then their stacks (grouped, not stored)."""
        ts = self.wall()
        try:
            pids = [r.pid for r in self.engine.ranks(handle)]
            procs = look_at(pids)
            home = self.ctx.home.resolve()  # babysit's own writes (the output it captures)
            files = files_written(pids, skip=home)
            if self.cfg.checkpoint.glob:
                pattern = str(resolve_path(self.cfg.checkpoint.glob, self.ctx.cwd))
                files.update(files_in(glob_root(pattern), skip=home))
        except Exception as exc:  # looking must never stand between a hang and its restart
            self.say(Level.WARN, f"could not look at the hung attempt's processes: {exc}")
            return Look(ts, ())
        report = None
        if self.cfg.forensics.stacks and procs:
            try:
                dumped = dump_stacks(
                    [p.pid for p in procs],
                    handle.attempt_dir / STACKS_DIR,
                    self.cfg.forensics.stacks_budget_s,
                )
                report = group_stacks(parse_stacks(dumped), self.wall())
            except Exception as exc:
                self.say(Level.WARN, f"could not take the stacks of the hung attempt: {exc}")
        gpus = gpu_util is not None or os.path.exists(NVIDIA_DEVICE)
        return Look(ts, procs, report, files, gpu_util, gpus)

    def any_stopped(self, handle: Handle) -> bool:
        """Whether a process of the attempt is stopped (state T): it acts on no signal but
        SIGKILL until it is continued."""
        try:
            procs = look_at(self.engine.survivors(handle))  # the launcher too
        except Exception:
            return False
        return any(p.state == "stopped" for p in procs)

    def tell_evidence(self, evidence: Evidence, attempt: int) -> None:
        what = {
            HangVerdict.STUCK: "stuck",
            HangVerdict.WORKING: "busy, not hung",
            HangVerdict.UNSURE: "no evidence either way",
        }[evidence.verdict]
        msg = f"attempt {attempt} looks {what}: {evidence.reason}"
        self.journal.event(EventKind.HANG_EVIDENCE, msg, attempt, **evidence_document(evidence))
        level = Level.WARN if evidence.verdict == HangVerdict.STUCK else Level.INFO
        self.say(level, msg)

    def keep(
        self, look: Look, evidence: Evidence | None, attempt: int, attempt_dir: Path
    ) -> StackReport | None:
        """Store the look's stacks with the evidence that decided, write them to the attempt's
        directory and tell them."""
        report = look.stacks
        if report is None:
            return None
        try:
            doc = stacks_document(report)
            if evidence is not None:
                doc["evidence"] = evidence_document(evidence)
            text = stacks_text(doc)
        except Exception as exc:  # forensics must never stand between a hang and its restart
            self.say(Level.WARN, f"could not keep the stacks of hung attempt {attempt}: {exc}")
            return None
        path = attempt_dir / STACKS_FILE
        try:
            path.write_text(text, encoding="utf-8")
        except OSError as exc:
            self.say(Level.WARN, f"cannot write {path}: {exc}")
        summary = report.summary
        self.journal.write(AddStacks(self.run, attempt, report.ts, summary, doc))
        self.journal.event(
            EventKind.STACKS,
            f"stacks of hung attempt {attempt}: {summary}",
            attempt,
            file=str(path),
            suspect=doc.get("suspect"),
        )
        self.say(Level.WARN, f"stacks of hung attempt {attempt}: {summary} (all of them: {path})")
        return report

    def flight_recorder_dumps(self, attempt_dir: Path) -> list[Path]:
        """PyTorch's NCCL flight recorder files the attempt left (one per rank that dumped)."""
        try:
            return sorted((attempt_dir / STACKS_DIR).glob("nccl_trace_rank_*"))
        except OSError:
            return []
