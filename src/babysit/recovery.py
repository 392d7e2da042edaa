"""Recovery for the supervisor: checkpoints, rollbacks, the node registry, preflight, stacks.

    rec = Recovery(cfg, "gpt", cwd, say, journal, wall=time.time)
    rec.seed(store.attempts("gpt"), history)      # rollback windows and anomalies so far
    ckpt = rec.pick_checkpoint(settle_s=2.0, before_step=1199)
    decision = rec.on_incident(incident)          # KEEP_WATCHING, ROLLBACK or GIVE_UP_...
    hostfile, hosts, banned = rec.hosts(attempt_dir)   # raises NodesExhausted
    rec.blame(number, host="gpu-17", why="NCCL error ...", category="nccl_error")

A wiring module, like the supervisor that uses it: it may import policy, sources, act and the
store. Every write goes through the Journal (a store that refuses writes never stops the run);
reads that fail are reported and treated as "nothing known".
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from babysit.config import Config
from babysit.errors import NodesExhausted, StoreError
from babysit.journal import Journal
from babysit.policy.checkpoint import choose_checkpoint
from babysit.policy.nodes import BanRule, ban_for, in_force, usable_hosts
from babysit.policy.rollback import RollbackRule, Window, merge, on_incident
from babysit.prepare import HostLine, read_hostfile, write_hostfile
from babysit.records import (
    AttemptRecord,
    Ban,
    Checkpoint,
    Decision,
    DecisionKind,
    EventKind,
    Incident,
    IncidentKind,
)
from babysit.sources.checkpoints import scan_checkpoints, validate_checkpoint

Say = Callable[[str, str], None]
HOSTFILE_NAME = "hostfile"


def rollback_rule(cfg: Config) -> RollbackRule:
    r = cfg.rollback
    return RollbackRule(
        r.on_nan,
        r.on_divergence,
        r.margin_steps,
        r.skip_before,
        r.skip_after,
        r.lr_scale,
        r.max_at_same_place,
    )


def ban_rule(cfg: Config) -> BanRule:
    n = cfg.nodes
    return BanRule(n.ban_after, n.window_s, n.ban_s, n.probation_s)


class Recovery:
    def __init__(
        self,
        cfg: Config,
        run: str,
        cwd: Path,
        say: Say,
        journal: Callable[[], Journal],
        wall: Callable[[], float],
    ) -> None:
        self.cfg = cfg
        self.run = run
        self.cwd = cwd
        self.say = say
        self._journal = journal
        self.wall = wall
        self.host = os.uname().nodename
        glob = cfg.checkpoint.glob
        self.checkpoint_pattern = str(self.resolve(glob)) if glob else None
        self.rollback_rule = rollback_rule(cfg)
        self.ban_rule = ban_rule(cfg)
        self.windows: tuple[Window, ...] = ()  # data windows skipped so far (all attempts)
        self.anomalies: list[int] = []  # steps of the anomalies rolled back for
        self.hostfile: list[HostLine] | None = None
        if cfg.nodes.hostfile:
            self.hostfile = read_hostfile(self.resolve(cfg.nodes.hostfile))

    @property
    def journal(self) -> Journal:
        return self._journal()

    def resolve(self, path: str) -> Path:
        """A path from the config or the flags: `~` expanded, relative to the run's cwd."""
        p = Path(os.path.expanduser(path))
        return p if p.is_absolute() else self.cwd / p

    def seed(
        self, rows: Sequence[dict[str, Any]], history: Sequence[AttemptRecord]
    ) -> Decision | None:
        """What earlier attempts (before a babysit restart) left: skipped windows, anomalies.
        Returns the rollback still to do when babysit died between deciding it and launching
        (the last attempt ended for an anomaly): the same decision, made again."""
        for row in rows:
            if row.get("skip_steps"):
                self.windows = merge([*self.windows, *row["skip_steps"]])
        anomalies = [a.anomaly_step for a in history if a.anomaly_step is not None]
        last = history[-1] if history else None
        if last is None or last.anomaly_step is None or last.ended is None:
            self.anomalies = anomalies
            return None
        self.anomalies = anomalies[:-1]
        again = Incident(IncidentKind.NONFINITE, "", last.ended, last.anomaly_step, "loss")
        decision = self.on_incident(again)
        if decision.kind != DecisionKind.ROLLBACK:
            self.anomalies = anomalies
            return None
        self.rolled_back(decision, last.anomaly_step)
        return decision

    # -- checkpoints ---------------------------------------------------------------------------

    def scan(self, settle_s: float) -> list[Checkpoint]:
        if self.checkpoint_pattern is None:
            return []
        return scan_checkpoints(self.checkpoint_pattern, self.wall(), settle_s)

    def newest_step(self) -> int | None:
        """The step the next attempt would resume from (the validation command is not run)."""
        chosen, _ = choose_checkpoint(self.scan(0.0))
        return chosen.step if chosen is not None else None

    def pick_checkpoint(self, settle_s: float, before_step: int | None = None) -> Checkpoint | None:
        """The newest complete (and, with --validate-checkpoint, valid) checkpoint, at or before
        `before_step` for a rollback. What was passed over, and why, goes to the logbook."""
        pattern = self.checkpoint_pattern
        if pattern is None:
            return None
        found = self.scan(settle_s)
        rejected: list[Checkpoint] = []
        while True:
            chosen, passed_over = choose_checkpoint(found, before_step)
            if chosen is None or not self.cfg.checkpoint.validate:
                break
            problem = validate_checkpoint(
                self.cfg.checkpoint.validate,
                chosen.path,
                self.cwd,
                self.cfg.checkpoint.validate_timeout_s,
            )
            if problem is None:
                break
            bad = Checkpoint(chosen.path, chosen.step, chosen.mtime, chosen.size, False, problem)
            rejected.append(bad)
            found = [bad if c.path == chosen.path else c for c in found]
        passed_over = list({c.path: c for c in [*passed_over, *rejected]}.values())
        for ckpt in passed_over:
            self.say("warn", f"skipping checkpoint {ckpt.path}: {ckpt.problem}")
        limit = f" at or before step {before_step}" if before_step is not None else ""
        if chosen is None and found:
            self.say(
                "warn",
                f"no usable checkpoint{limit} among {len(found)} matching {pattern!r}: "
                "starting from scratch",
            )
        elif not found:
            self.say("info", f"no checkpoint matches {pattern!r} yet: starting from scratch")
        if chosen is not None and passed_over:
            newest = passed_over[0]
            self.say(
                "warn",
                f"the newest checkpoint{limit} ({Path(newest.path).name}) is not usable; "
                f"falling back to {Path(chosen.path).name} (step {chosen.step})",
            )
        if chosen is not None or passed_over or before_step is not None:
            if chosen:
                message = f"resuming from {chosen.path}"
            else:
                message = f"no usable checkpoint{limit}: starting from scratch"
            if chosen is not None and passed_over:
                message += " (newer ones passed over: " + "; ".join(
                    f"{Path(c.path).name}: {c.problem}" for c in passed_over
                ) + ")"
            self.journal.event(
                EventKind.CHECKPOINT,
                message,
                path=chosen.path if chosen else None,
                step=chosen.step if chosen else None,
                before_step=before_step,
                passed_over=[{"path": c.path, "problem": c.problem} for c in passed_over],
            )
        return chosen

    # -- rollbacks -----------------------------------------------------------------------------

    def on_incident(self, inc: Incident) -> Decision:
        return on_incident(inc, self.rollback_rule, self.anomalies, self.windows)

    def rolled_back(self, decision: Decision, anomaly_step: int | None) -> None:
        self.windows = merge([*self.windows, *decision.skip_steps])
        if anomaly_step is not None:
            self.anomalies.append(anomaly_step)

    # -- the node registry ---------------------------------------------------------------------

    def _active(self) -> list[Ban]:
        try:
            return self.journal.store.active_bans(self.wall())
        except StoreError as exc:
            self.say("warn", f"cannot read the ban list ({exc}); launching as if none")
            return []

    def hosts(self, attempt_dir: Path) -> tuple[Path | None, list[str], set[str]]:
        """The attempt's hostfile (the run's minus banned hosts), its hosts, the banned hosts.
        Raises NodesExhausted when the bans leave fewer hosts than the run needs."""
        banned = {b.host for b in self._active()}
        if self.hostfile is None:
            if self.host in banned:
                ban = next(b for b in self._active() if b.host == self.host)
                raise NodesExhausted(
                    f"this node ({self.host}) is banned ({ban.reason}) and the run has no "
                    "hostfile to go elsewhere: requeue the job on other nodes, or lift the ban "
                    f"with `babysit nodes unban {self.host}` once it is fixed"
                )
            return None, [self.host], banned
        all_hosts = [line.host for line in self.hostfile]
        usable, missing = usable_hosts(all_hosts, banned, self.cfg.nodes.min_nodes)
        out = [h for h in all_hosts if h in banned]
        if missing:
            need = self.cfg.nodes.min_nodes or len(all_hosts)
            raise NodesExhausted(
                f"{len(usable)} of the hostfile's {len(all_hosts)} hosts are usable, the run "
                f"needs {need}: banned {', '.join(out)}. Add spare hosts to the hostfile, "
                "set nodes.min_nodes if the job can run on fewer, or `babysit nodes unban "
                "HOST` once a node is fixed"
            )
        if out:
            self.say("info", f"leaving banned host(s) out of this attempt: {', '.join(out)}")
        path = attempt_dir / HOSTFILE_NAME
        kept = write_hostfile(path, self.hostfile, banned)
        return path, kept, banned

    def blame(
        self,
        attempt: int,
        host: str,
        why: str,
        category: str | None,
        gpu: str | None = None,
        kind: str = "failure",
    ) -> Ban | None:
        """Record a failure (or a failed health check) against `host`; ban it when the policy
        says so (a failed health check bans at once). Returns the new ban."""
        now = self.wall()
        self.journal.write(
            lambda s: s.add_node_event(now, host, kind, why, self.run, attempt, gpu, category)
        )
        if kind == "health_fail":
            ban: Ban | None = Ban(
                host,
                f"failed its health check: {why}",
                now,
                now + self.ban_rule.ban_s if self.ban_rule.ban_s > 0 else None,
                self.ban_rule.probation_s,
                "preflight",
                self.run,
            )
            if any(b.host == host for b in self._active()):
                ban = None
        else:
            try:
                store = self.journal.store
                failures = [e["ts"] for e in store.node_events(host) if e["kind"] == "failure"]
                last = store.last_bans().get(host)
            except StoreError as exc:
                self.say("warn", f"cannot read the node registry ({exc}); not banning {host}")
                return None
            if now not in failures:
                failures.append(now)  # the write above may still be queued
            ban = ban_for(host, failures, last, now, self.ban_rule, self.run)
            if last is not None and in_force(last, now):
                ban = None
        if ban is None:
            return None
        new_ban = ban
        self.journal.write(lambda s: s.add_ban(new_ban))
        until = (
            f"until {_clock(new_ban.expires)}" if new_ban.expires is not None else "until unbanned"
        )
        msg = f"banned node {host} {until}: {new_ban.reason}"
        self.say("warn", msg)
        self.journal.event(
            EventKind.BANNED,
            msg,
            attempt,
            host=host,
            reason=new_ban.reason,
            expires=new_ban.expires,
            by=new_ban.by,
        )
        return new_ban


def _clock(ts: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(ts))
