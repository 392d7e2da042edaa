"""Nodes: the hosts an attempt may use, failures blamed on a host, bans, and preflight.

    nodes = Nodes(cfg, "gpt", cwd, say, journal, wall=time.time, targets=targets)
    nodes.preflight(attempt=3)                         # doctor's checks; a failure bans this node
    hostfile, hosts, banned = nodes.hosts(attempt_dir) # raises NodesExhausted
    nodes.blame(3, host="gpu-17", why="NCCL error ...", category="nccl_error")
    nodes.blame(3, "gpu-17", "rank 17 ... a ban candidate", "throughput_drop", kind="straggler")

Host names are compared by their registry key (records.node_key: `GPU-3.cluster.local.` is
`gpu-3`), and handed back to the engine in its own spelling: a host the hostfile (or the engine)
calls `gpu-3.cluster.local` is left out, and named in BABYSIT_EXCLUDE_HOSTS, as
`gpu-3.cluster.local`, however the ban spelled it. Whether to ban is the pure rule in
policy/nodes.py; this room reads the registry, writes through the Journal and tells the
operator. Nothing here may stop the supervision: a failed read is reported and taken as
"nothing known".
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable, Collection, Iterable, Sequence
from pathlib import Path

from babysit.config import Config
from babysit.engines import NodeResult
from babysit.engines.jobcheck import checks_of, failed, words
from babysit.errors import ConfigError, LaunchError, NodesExhausted, StoreError
from babysit.policy.nodes import ban_for, usable_hosts
from babysit.records import (
    CHECK_ERROR,
    NODE_CHECKS,
    Ban,
    CheckStatus,
    EventKind,
    Level,
    Say,
    node_key,
)
from babysit.sources.health import HealthTargets, failure_summary, not_checked, preflight
from babysit.store.writes import AddBan, AddNodeEvent
from babysit.supervise.journal import Journal
from babysit.supervise.prepare import HostLine, read_hostfile, resolve_path, write_hostfile

EachNode = Callable[[Sequence[str], float], "list[NodeResult] | None"]
HOSTFILE_NAME = "hostfile"
# Node events the ban rule counts: failures blamed on the host, and stragglers that persisted
# over the long window (detect/straggler.py: its own steps came late for hundreds of steps, the
# node's own evidence, not a peer's word). Either counts once toward nodes.ban_after.
BAN_EVIDENCE = frozenset({"failure", "straggler"})


class Nodes:
    def __init__(
        self,
        cfg: Config,
        run: str,
        cwd: Path,
        say: Say,
        journal: Callable[[], Journal],
        wall: Callable[[], float],
        targets: HealthTargets,
        host: str | None = None,
    ) -> None:
        self.cfg = cfg
        self.run = run
        self.say = say
        self._journal = journal
        self.wall = wall
        self.targets = targets
        self.host = host or os.uname().nodename  # this node: where babysit launches
        self.rule = cfg.nodes  # the section is the ban rule
        self.hostfile: list[HostLine] | None = None
        # A multi-node engine's way to run a command on every node of the attempt (Slurm: srun
        # --overlap); preflight then checks those nodes, not this one. Set by run.py.
        self.each_node: EachNode | None = None
        if cfg.nodes.hostfile:
            self.hostfile = read_hostfile(resolve_path(cfg.nodes.hostfile, cwd))
            if cfg.nodes.min_nodes > len(self.hostfile):
                raise ConfigError(
                    f"nodes.min_nodes is {cfg.nodes.min_nodes} but the hostfile "
                    f"{cfg.nodes.hostfile} lists only {len(self.hostfile)} hosts"
                )
        elif cfg.nodes.min_nodes:
            say(Level.WARN, "--min-nodes is ignored without --hostfile (nodes.hostfile)")

    @property
    def journal(self) -> Journal:
        return self._journal()

    # -- preflight -----------------------------------------------------------------------------

    def preflight(self, attempt: int) -> None:
        """The doctor's checks of this node before an attempt. A failure is recorded against
        the node and bans it (the launch then refuses a banned node without a hostfile)."""
        if not self.cfg.health.preflight:
            return
        if self.each_node is not None and self._preflight_nodes(attempt, self.each_node):
            return  # a multi-node engine (Slurm) checked its nodes
        try:
            ok, results = preflight(self.targets, self.cfg.health.preflight_budget_s)
        except Exception as exc:  # a bug in a check must not stop the run
            self.say(Level.WARN, f"preflight could not run ({type(exc).__name__}: {exc}); skipped")
            return
        failed = [r for r in results if r.status == CheckStatus.FAIL]
        warned = [r for r in results if r.status == CheckStatus.WARN]
        took = max((r.elapsed_s for r in results), default=0.0)
        host = self.host
        if ok:
            ran = sum(r.status != CheckStatus.SKIP for r in results)
            unseen = not_checked(results)
            msg = f"preflight of {host} passed ({ran} checks in {took:.1f}s"
            msg += f"; {unseen})" if unseen else ")"
            if warned:
                msg += "; worth a look: " + "; ".join(f"{r.name}: {r.summary}" for r in warned)
            self.say(Level.INFO, msg)
        else:
            msg = f"preflight of {host} FAILED: {failure_summary(results)}"
            self.say(Level.ERROR, msg)
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
        sick = [r for r in failed if r.name in NODE_CHECKS and not r.details.get(CHECK_ERROR)]
        now = self.wall()
        if ok:
            self.journal.write(AddNodeEvent(now, host, "health_pass", msg, self.run, attempt))
        elif sick:
            # The node itself is broken (a GPU, its memory, wrong results): ban it.
            self.blame(attempt, host, failure_summary(sick), None, kind="health_fail")
        else:
            # A full disk, a slow mount, little free memory: the node's surroundings, which a
            # ban would not fix (and would keep every run off the node for a day). Say so, and
            # go on: the run's own failure, if it comes, is triaged and budgeted as usual.
            self.journal.write(AddNodeEvent(now, host, "health_warn", msg, self.run, attempt))
            self.say(
                Level.WARN,
                "not banning this node for that (its disk, filesystem or memory, not its "
                "hardware); launching anyway: free the space or fix the mount",
            )

    def _preflight_nodes(self, attempt: int, each_node: EachNode) -> bool:
        """`babysit doctor --json` on every node of the allocation, through the engine (srun
        --overlap); a node whose own hardware fails (gpu, matmul) is banned before the attempt
        uses it, one whose surroundings fail is said. A node that cannot be checked is said,
        not blamed. False when the engine has no nodes of its own (then this node is checked)."""
        budget = self.cfg.health.preflight_budget_s
        argv = [sys.executable, "-m", "babysit", "doctor", "--json"]
        try:
            answers = each_node(argv, budget + 30.0)
        except Exception as exc:  # preflight must never stop the run
            self.say(Level.WARN, f"preflight could not run on the nodes ({exc}); skipped")
            return True
        if answers is None:
            return False  # no nodes of its own: this node is checked
        self.checked(attempt, answers)  # none: a job per attempt checks its nodes itself
        return True

    def checked(self, attempt: int, answers: Sequence[NodeResult]) -> dict[str, str]:
        """The doctor's answers from the nodes (`babysit doctor --json` on each): a node whose
        own hardware failed (gpu, matmul) is banned, one whose surroundings failed is said, one
        that could not be checked is said, not blamed. The sick nodes, with what failed."""
        passed: list[str] = []
        sick: dict[str, str] = {}
        for node in answers:
            checks = checks_of(node)
            if checks is None:
                why = (node.stderr.strip() or "no answer")[-200:]
                self.say(Level.WARN, f"preflight of node {node.host} could not run: {why}")
                continue
            bad, own = failed(checks)
            ok = not bad
            msg = f"preflight of {node.host} " + ("passed" if ok else f"FAILED: {words(bad)}")
            self.journal.event(
                EventKind.PREFLIGHT, msg, attempt, host=node.host, passed=ok, checks=checks
            )
            now = self.wall()
            if ok:
                passed.append(node.host)
                self.journal.write(AddNodeEvent(now, node.host, "health_pass", msg, self.run,
                                                attempt))
            elif own:
                self.say(Level.ERROR, msg)
                sick[node.host] = words(own)
                self.blame(attempt, node.host, words(bad), None, kind="health_fail")
            else:
                self.say(Level.WARN, f"{msg} (its disk, filesystem or memory: not banned)")
                self.journal.write(AddNodeEvent(now, node.host, "health_warn", msg, self.run,
                                                attempt))
        if passed:
            self.say(Level.INFO, f"preflight passed on {len(passed)} node(s): {', '.join(passed)}")
        return sick

    # -- the node registry ---------------------------------------------------------------------

    def _active(self) -> list[Ban]:
        try:
            return self.journal.store.active_bans(self.wall())
        except StoreError as exc:
            self.say(Level.WARN, f"cannot read the ban list ({exc}); launching as if none")
            return []

    def hosts(self, attempt_dir: Path) -> tuple[Path | None, list[str], set[str]]:
        """The attempt's hostfile (the run's minus banned hosts), its hosts, the banned hosts
        (spelled as the hostfile or the engine spells them, for BABYSIT_EXCLUDE_HOSTS and the
        engine). Raises NodesExhausted when the bans leave fewer hosts than the run needs."""
        active = self._active()
        banned_keys = {node_key(b.host) for b in active}
        if self.hostfile is None:
            ban = next((b for b in active if node_key(b.host) == node_key(self.host)), None)
            if ban is not None:
                raise NodesExhausted(
                    f"this node ({self.host}) is banned ({ban.reason}) and the run has no "
                    "hostfile to go elsewhere: requeue the job on other nodes, or lift the ban "
                    f"with `babysit nodes unban {self.host}` once it is fixed"
                )
            return None, [self.host], spelled(banned_keys, [self.host])
        all_hosts = [line.host for line in self.hostfile]
        banned = spelled(banned_keys, [*all_hosts, self.host])
        out = [h for h in all_hosts if node_key(h) in banned_keys]
        usable, missing = usable_hosts(all_hosts, set(out), self.cfg.nodes.min_nodes)
        if missing:
            need = self.cfg.nodes.min_nodes or len(all_hosts)
            raise NodesExhausted(
                f"{len(usable)} of the hostfile's {len(all_hosts)} hosts are usable, the run "
                f"needs {need}: banned {', '.join(out)}. Add spare hosts to the hostfile, "
                "set nodes.min_nodes if the job can run on fewer, or `babysit nodes unban "
                "HOST` once a node is fixed"
            )
        if out:
            self.say(Level.INFO, f"leaving banned host(s) out of this attempt: {', '.join(out)}")
        here = node_key(self.host)
        if here in banned_keys and here not in map(node_key, all_hosts):
            self.say(
                Level.WARN,
                f"this node ({self.host}) is banned but not in the hostfile: the launch goes on "
                "from here (only the hostfile's hosts run the training)",
            )
        path = attempt_dir / HOSTFILE_NAME
        try:
            kept = write_hostfile(path, self.hostfile, set(out))
        except OSError as exc:
            raise LaunchError(
                f"cannot write the attempt's hostfile {path} ({exc.strerror or exc}): is the "
                "disk under the babysit home full?"
            ) from exc
        return path, kept, banned

    def can_ban(self, host: str) -> bool:
        """Whether a ban could still take `host` out and leave the run somewhere to go:
        automatic bans are on, it is not banned yet, it is not the one node there is, and with
        a hostfile it is listed there and the hosts left without it still make min_nodes (a
        multi-node engine without one, Slurm, requeues the job elsewhere when they do not)."""
        if self.rule.ban_after <= 0:
            return False
        if self.hostfile is None and node_key(host) == node_key(self.host):
            return False
        try:
            active = self.journal.store.active_bans(self.wall())
        except StoreError:
            return False  # nothing known: no promise of a ban
        banned = {node_key(b.host) for b in active}
        if node_key(host) in banned:
            return False
        if self.hostfile is None:
            return True
        listed = [line.host for line in self.hostfile]
        if node_key(host) not in {node_key(h) for h in listed}:
            return False
        _, missing = usable_hosts(listed, banned | {node_key(host)}, self.cfg.nodes.min_nodes)
        return missing == 0

    def blame(
        self,
        attempt: int,
        host: str,
        why: str,
        category: str | None,
        gpu: str | None = None,
        kind: str = "failure",
        peer: bool = False,
    ) -> Ban | None:
        """Record a failure (or a failed health check, or a persistent straggler: kind
        "straggler") against `host`; ban it when the policy says so (a failed health check bans
        at once). Returns the new ban."""
        now = self.wall()
        if peer and kind == "failure" and not self._corroborated(host, now):
            # Named only by its peers, the first time: a suspect, not a culprit (a public
            # report revised such a diagnosis). The same node again, a failed health check or
            # its own error corroborates it; until then it counts toward no ban.
            self.journal.write(
                AddNodeEvent(now, host, "suspect", why, self.run, attempt, gpu, category)
            )
            self.say(
                Level.INFO,
                f"node {host} is a suspect, not a culprit (a network error between nodes "
                "names it, and the fault may be its peer's): not banned unless corroborated "
                "(the same node again, a failed health check, its own error)",
            )
            return None
        self.journal.write(AddNodeEvent(now, host, kind, why, self.run, attempt, gpu, category))
        if kind == "health_fail":
            ban: Ban | None = Ban(
                host,
                f"failed its health check: {why}",
                now,
                now + self.rule.ban_s if self.rule.ban_s > 0 else None,
                self.rule.probation_s,
                "preflight",
                self.run,
            )
            if any(node_key(b.host) == node_key(host) for b in self._active()):
                ban = None
        elif self.hostfile is None and node_key(host) == node_key(self.host):
            # One node and nowhere else to go: a ban would only end the run; the restart
            # budgets decide instead. The failure stays on the node's record.
            return None
        else:
            try:
                store = self.journal.store
                events = store.node_events(host)
                # This failure counts: it corroborates the earlier suspicions of the node
                # (named by its peers), which then count toward the ban as well.
                failures = [
                    e["ts"] for e in events if e["kind"] in BAN_EVIDENCE or e["kind"] == "suspect"
                ]
                last = store.last_bans().get(node_key(host))
            except StoreError as exc:
                self.say(Level.WARN, f"cannot read the node registry ({exc}); not banning {host}")
                return None
            if now not in failures:
                failures.append(now)  # the write above may still be queued
            ban = ban_for(host, failures, last, now, self.rule, self.run)
        if ban is None:
            return None
        new_ban = ban
        self.journal.write(AddBan(new_ban))
        until = (
            f"until {_clock(new_ban.expires)}" if new_ban.expires is not None else "until unbanned"
        )
        msg = f"banned node {host} {until}: {new_ban.reason}"
        self.say(Level.WARN, msg)
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


    def _corroborated(self, host: str, now: float) -> bool:
        """Whether anything but this peer's word already speaks against `host` within the ban
        window: an earlier suspicion, failure or failed health check."""
        try:
            events = self.journal.store.node_events(host)
        except StoreError:
            return False
        kinds = {"suspect", "failure", "health_fail"}
        return any(
            e["kind"] in kinds and e["ts"] >= now - self.rule.window_s for e in events
        )


short = node_key  # the registry key of a host name (the older name, kept for callers)


def spelled(keys: Collection[str], known: Iterable[str]) -> set[str]:
    """The hosts of `keys` (registry keys) in the spelling of `known` (the hostfile's lines, the
    engine's host name) where one of those is the same node; the key itself otherwise."""
    spelling: dict[str, str] = {}
    for host in known:
        spelling.setdefault(node_key(host), host)
    return {spelling.get(key, key) for key in keys}


def _clock(ts: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(ts))
