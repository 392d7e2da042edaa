"""The supervisor's eyes on the node and inside the processes: preflight, telemetry, stacks.

    c = Checkup(cfg, "gpt", home, cwd, say, journal, recovery, wall=time.time)
    c.preflight(attempt=3)                 # doctor's checks; a failure bans this node
    env = c.child_env(env, attempt_dir)    # faulthandler + PyTorch flight recorder for the child
    c.start_telemetry(); c.poll_telemetry(attempt)  # -> [Incident, ...]; c.stop_telemetry()
    report = c.stacks(handle, attempt)     # every process's stack, grouped, stored

A wiring module (sources, detect, act, views and the store meet here). Nothing in it may stop
the supervision: a check, a sampler or a stack dump that fails is reported and skipped.
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from babysit.act import process
from babysit.act.stackdump import dump_stacks, forensics_env
from babysit.config import Config
from babysit.detect.stacks import group_stacks
from babysit.detect.telemetry import TelemetryDetector
from babysit.parse.stacks import parse_stacks
from babysit.records import CheckStatus, EventKind, Incident, IncidentKind, StackReport
from babysit.sources.checkpoints import glob_directory
from babysit.sources.health import HealthTargets, failure_summary, preflight
from babysit.sources.telemetry import TelemetrySampler, TelemetryThread
from babysit.supervise.journal import Journal
from babysit.supervise.recovery import Recovery
from babysit.views.stacks import stacks_document, stacks_text

Say = Callable[[str, str], None]
STACKS_DIR = "stacks"
NODE_CHECKS = frozenset({"gpu", "matmul"})  # failures that condemn the node itself
STACKS_FILE = "stacks.txt"


_LAUNCHERS = {"torchrun", "accelerate", "deepspeed", "composer", "lightning"}


def training_python(command: Sequence[str]) -> str:
    """The interpreter the training runs in, for the matmul self-test (babysit's own may lack
    torch): `python...` itself, or the `python` next to torchrun & co; else babysit's."""
    if command:
        prog = Path(command[0]).name
        found = shutil.which(command[0])
        if found and prog.startswith("python"):
            return found
        if found and prog in _LAUNCHERS:
            sibling = Path(found).parent / "python"
            if sibling.exists():
                return str(sibling)
    return sys.executable


class Checkup:
    def __init__(
        self,
        cfg: Config,
        run: str,
        home: Path,
        say: Say,
        journal: Callable[[], Journal],
        recovery: Recovery,
        wall: Callable[[], float],
        command: Sequence[str] = (),
    ) -> None:
        self.cfg = cfg
        self.run = run
        self.say = say
        self._journal = journal
        self.recovery = recovery
        self.wall = wall
        self.targets = HealthTargets(
            self._checkpoint_dirs(), self._data_dirs(), home, training_python(command)
        )
        self._telemetry: TelemetryThread | None = None
        self._telemetry_told = False
        self._detector: TelemetryDetector | None = None

    @property
    def journal(self) -> Journal:
        return self._journal()

    def _checkpoint_dirs(self) -> tuple[Path, ...]:
        pattern = self.recovery.checkpoint_pattern
        return (glob_directory(pattern) if pattern else self.recovery.cwd,)

    def _data_dirs(self) -> tuple[Path, ...]:
        dirs = [d for d in self.cfg.health.data_dirs.split(os.pathsep) if d.strip()]
        return tuple(self.recovery.resolve(d.strip()) for d in dirs)

    # -- preflight -----------------------------------------------------------------------------

    def preflight(self, attempt: int) -> None:
        """The doctor's checks of this node before an attempt. A failure is recorded against
        the node and bans it (the launch then refuses a banned node without a hostfile)."""
        if not self.cfg.health.preflight:
            return
        try:
            ok, results = preflight(self.targets, self.cfg.health.preflight_budget_s)
        except Exception as exc:  # a bug in a check must not stop the run
            self.say("warn", f"preflight could not run ({type(exc).__name__}: {exc}); skipped")
            return
        failed = [r for r in results if r.status == CheckStatus.FAIL]
        warned = [r for r in results if r.status == CheckStatus.WARN]
        took = max((r.elapsed_s for r in results), default=0.0)
        host = self.recovery.host
        if ok:
            msg = f"preflight of {host} passed ({len(results)} checks in {took:.1f}s)"
            if warned:
                msg += "; worth a look: " + "; ".join(f"{r.name}: {r.summary}" for r in warned)
            self.say("info", msg)
        else:
            msg = f"preflight of {host} FAILED: {failure_summary(results)}"
            self.say("error", msg)
        self.journal.event(
            EventKind.PREFLIGHT,
            msg,
            attempt,
            host=host,
            passed=ok,
            checks=[
                {"name": r.name, "status": r.status.value, "target": r.target, "summary": r.summary}
                for r in results
            ],
        )
        sick = [r for r in failed if r.name in NODE_CHECKS]
        now = self.wall()
        if ok:
            self.journal.write(
                lambda s: s.add_node_event(now, host, "health_pass", msg, self.run, attempt)
            )
        elif sick:
            # The node itself is broken (a GPU, its memory, wrong results): ban it.
            self.recovery.blame(attempt, host, failure_summary(sick), None, kind="health_fail")
        else:
            # A full disk, a slow mount, little free memory: the node's surroundings, which a
            # ban would not fix (and would keep every run off the node for a day). Say so, and
            # go on: the run's own failure, if it comes, is triaged and budgeted as usual.
            self.journal.write(
                lambda s: s.add_node_event(now, host, "health_warn", msg, self.run, attempt)
            )
            self.say(
                "warn",
                "not banning this node for that (its disk, filesystem or memory, not its "
                "hardware); launching anyway: free the space or fix the mount",
            )

    # -- the child's environment ---------------------------------------------------------------

    def child_env(self, env: dict[str, str], attempt_dir: Path) -> dict[str, str]:
        f = self.cfg.forensics
        if not (f.faulthandler or f.flight_recorder):
            return env
        try:
            return forensics_env(env, attempt_dir / STACKS_DIR, f.flight_recorder, f.faulthandler)
        except OSError as exc:
            self.say("warn", f"cannot prepare {attempt_dir / STACKS_DIR} ({exc}); no stack dumps")
            return env

    # -- stacks of a hung attempt --------------------------------------------------------------

    def stacks(self, handle: process.Handle, attempt: int) -> StackReport | None:
        """Every process's Python stack (py-spy, else faulthandler), grouped; stored with the
        attempt, written to its directory, and told. None when it could not be done."""
        if not self.cfg.forensics.stacks:
            return None
        try:
            pids = [p for p in process.survivors(handle) if p != handle.launcher_pid]
            procs = dump_stacks(
                pids, handle.attempt_dir / STACKS_DIR, self.cfg.forensics.stacks_budget_s
            )
            report = group_stacks(parse_stacks(procs), self.wall())
            doc = stacks_document(report)
            text = stacks_text(doc)
        except Exception as exc:  # forensics must never stand between a hang and its restart
            self.say("warn", f"could not take the stacks of hung attempt {attempt}: {exc}")
            return None
        path = handle.attempt_dir / STACKS_FILE
        try:
            path.write_text(text, encoding="utf-8")
        except OSError as exc:
            self.say("warn", f"cannot write {path}: {exc}")
        summary = report.summary
        self.journal.write(lambda s: s.add_stacks(self.run, attempt, report.ts, summary, doc))
        self.journal.event(
            EventKind.STACKS,
            f"stacks of hung attempt {attempt}: {summary}",
            attempt,
            file=str(path),
            suspect=doc.get("suspect"),
        )
        self.say("warn", f"stacks of hung attempt {attempt}: {summary} (all of them: {path})")
        return report

    def flight_recorder_dumps(self, attempt_dir: Path) -> list[Path]:
        """PyTorch's NCCL flight recorder files the attempt left (one per rank that dumped)."""
        try:
            return sorted((attempt_dir / STACKS_DIR).glob("nccl_trace_rank_*"))
        except OSError:
            return []

    # -- telemetry -----------------------------------------------------------------------------

    def start_telemetry(self) -> None:
        h = self.cfg.health
        if not h.telemetry or self._telemetry is not None:
            return
        try:
            sampler = TelemetrySampler(
                self.targets, fs_every_s=h.fs_probe_every_s, stall_s=h.telemetry_every_s
            )
            self._detector = TelemetryDetector(dirs=sampler.fs_labels)
            self._telemetry = TelemetryThread(sampler, h.telemetry_every_s, self.wall)
            self._telemetry.start()
        except Exception as exc:
            self.say("warn", f"node telemetry is off: {type(exc).__name__}: {exc}")
            self._telemetry = None

    def poll_telemetry(self, attempt: int | None) -> list[Incident]:
        """Store what was sampled since the last call; the incidents it shows."""
        if self._telemetry is None:
            return []
        out: list[Incident] = []
        if self._telemetry.error and not self._telemetry_told:
            self._telemetry_told = True
            self.say(
                "warn",
                f"node telemetry stopped ({self._telemetry.error}), a babysit bug (please report "
                "it): GPU, host and filesystem figures are off for this run; the run goes on",
            )
        for m in self._telemetry.drain():
            self._store_sample(attempt, m.ts, dict(m.values))
            if self._detector is None:
                continue  # it failed before: the figures are still stored
            try:
                found = self._detector.feed(m)
            except Exception as exc:
                self._detector = None
                self.say(
                    "warn",
                    f"node telemetry: the detector failed ({type(exc).__name__}: {exc}), a "
                    "babysit bug (please report it); the figures are still stored, but GPU and "
                    "filesystem incidents are off for this run",
                )
                continue
            for inc in found:
                if inc.kind in (IncidentKind.GPU_ECC, IncidentKind.GPU_THROTTLE):
                    self._node_incident(attempt, inc)
            out += found
        return out

    def _node_incident(self, attempt: int | None, inc: Incident) -> None:
        """GPU trouble goes on the node's record too (`babysit nodes list`), not only the run's;
        it does not count as a failure for bans: the run may still be fine."""
        host, now, what = self.recovery.host, self.wall(), inc.message
        cat = inc.category.value
        self.journal.write(
            lambda s: s.add_node_event(now, host, "incident", what, self.run, attempt, None, cat)
        )

    def _store_sample(self, attempt: int | None, ts: float, values: dict[str, float]) -> None:
        self.journal.write(
            lambda s: s.add_metrics(self.run, attempt, ts, None, values), droppable=True
        )

    def stop_telemetry(self) -> None:
        if self._telemetry is not None:
            self._telemetry.stop()
            self._telemetry = None
