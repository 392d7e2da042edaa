"""Choose the root cause among the findings and say it in plain words.

    diagnose(engine, files=["rank0.log", "rank1.log"], lines=120_000, last_line="...")
    # -> Diagnosis(category=Category.CUDA_OOM, transient=False, suspect=Suspect("config",
    #              rank=3), summary="A GPU ran out of memory on rank 3: torch.OutOfMemoryError:
    #              ...", consequences=(Consequence(nccl_timeout, ..., count=63), ...), ...)

The root cause is the earliest failure that is not a consequence of another: among the findings
whose rule is a cause, the highest precedence wins (a dead GPU explains the CUDA errors and
the NCCL timeouts after it; an OOM on one rank explains the other ranks' watchdog timeouts),
then the earliest. Follow-on noise (torchrun's ChildFailedError, peers closing connections,
SIGTERM to the survivors) is named only when nothing else is there, with low confidence. Pure.
"""

from __future__ import annotations

import dataclasses
import hashlib
import re
from collections.abc import Iterable, Mapping

from babysit.records import Category, Consequence, Diagnosis, LogLine, Suspect
from babysit.triage.engine import LONE_EXCEPTION, Engine
from babysit.triage.findings import Finding, Group, earlier, meaning
from babysit.triage.frames import FRAME
from babysit.triage.launchers import srun_stopped_step
from babysit.triage.silence import ending_tells, nothing_found, quote
from babysit.triage.stall import Ending, Stall
from babysit.triage.standins import ERROR_RECORD
from babysit.triage.waited import silent_rank_error

_NORMALISE = (
    (re.compile(r"\x1b\[[0-9;]*[A-Za-z]"), ""),
    (
        re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"),
        "<uuid>",
    ),
    (re.compile(r"0x[0-9a-fA-F]+"), "<hex>"),
    (re.compile(r"(?:[\w.-]*/)+[\w.-]+"), "<path>"),
    (re.compile(r"\b\d+(?:\.\d+)*\b"), "<n>"),
    (re.compile(r"\d+"), "<n>"),
    (re.compile(r"'[^']{0,200}'"), "'<s>'"),
    (re.compile(r"\s+"), " "),
)


def normalise(text: str) -> str:
    """The text with what differs between two occurrences of the same failure removed: paths,
    numbers, addresses, ids, quoted names, ranks, timestamps."""
    for rx, repl in _NORMALISE:
        text = rx.sub(repl, text)
    return text.strip()


def _fingerprint(f: Finding) -> str:
    rule = f.rule
    sig = f"xid {f.xid.code}" if f.xid is not None else normalise(f.body)[:300]
    sig = f"{rule.category.value}|{rule.id}|{sig}"
    if f.frames:
        # The innermost frame's function tells two KeyErrors apart; its line number does not.
        for _, fl in reversed(f.frames):
            m = FRAME.match(fl)
            if m and m["func"]:
                sig += f"|{m['file'].rsplit('/', 1)[-1]}:{m['func']}"
                break
    return hashlib.sha1(sig.encode("utf-8", "replace")).hexdigest()[:16]


def _raised_at(f: Finding) -> str | None:
    """`train.py:88 in train_step`: the innermost frame of the traceback outside the standard
    library and site-packages (where a human can fix something), else the innermost one."""
    frames = []
    for _, fl in f.frames:
        m = FRAME.match(fl)
        if m:
            frames.append((m["file"], m["line"], m["func"]))
    if not frames:
        return None
    own = [fr for fr in frames if "site-packages" not in fr[0] and "/lib/python" not in fr[0]]
    path, line, func = (own or frames)[-1]
    short = "/".join(path.split("/")[-2:])
    return f"{short}:{line}" + (f" in {func}" if func else "")


def _where(rank: int | None, host: str | None, gpu: str | None) -> str:
    parts = []
    if rank is not None:
        parts.append(f"rank {rank}")
    if host is not None:
        parts.append(f"host {host}")
    if gpu is not None:
        parts.append(f"GPU {gpu}")
    return ", ".join(parts)


def _action(f: Finding) -> str:
    return f.xid.action if f.xid is not None else f.rule.action


def _pick(groups: list[Group]) -> Group:
    best = groups[0]
    for g in groups[1:]:
        pb, pg = meaning(best.first).precedence, meaning(g.first).precedence
        if pg > pb or (pg == pb and earlier(g.first, best.first)):
            best = g
    return best


def _srun_s_stop(g: Group, groups: Iterable[Group]) -> bool:
    """Whether g is a launcher's agent told to stop (torchrun's `Received 15 death signal`)
    after srun said a task had exited on an error: srun stopping the step's other tasks, not the
    scheduler or an operator."""
    if g.first.rule.id != "sched.death_signal":
        return False
    return any(
        srun_stopped_step(f.body) and earlier(f, g.first)
        for other in groups
        if other.first.rule.id == "launcher.child_failed"
        for f in (other.first, *other.samples)
    )


def _python_error_of(groups: Iterable[Group], rank: int | None) -> bool:
    """Whether `rank` (or a line naming no rank) printed a Python error of its own besides its
    timeouts (one babysit has no rule for: `RuntimeError: Invalid mt19937 state`)."""
    return any(
        g.first.rule.id.startswith("python.") and (not g.ranks or rank in g.ranks) for g in groups
    )


_MISSED_BARRIER = re.compile(r"Rank (?P<rank>\d+) failed to pass monitoredBarrier")


_EXIT_HANG = (
    "The training said it was done, then the scheduler's time limit ended the job: the "
    "processes did not exit after the training (a thread, a profiler or a process group that "
    "never shuts down)."
)
_EXIT_HANG_ACTION = (
    "The training's work is saved up to its last checkpoint; make the script exit when it is "
    "done (destroy_process_group(), join or daemonize its threads, stop profilers and loggers) "
    "and check with a short run that it ends. A restart would only finish and hang again."
)
_DESYNC_ACTION = (
    "Make every rank call the same collectives in the same order: look for a collective "
    "inside a branch that depends on the rank or on the data (a log or a save on rank 0 only, "
    "a loader with a different number of batches per rank: drop_last=True), then restart. "
    "TORCH_DISTRIBUTED_DEBUG=DETAIL names the mismatch at the first such call."
)

_FIRST_COLLECTIVE_ACTION = (
    "Not every rank reached the process group's first collectives within the timeout: one was "
    "still preparing (rank 0 tokenising or caching a dataset, downloading a model) or never "
    "joined, and a restart waits the same way. Prepare the data before the process group "
    "starts (or on every rank), or raise the timeout (init_process_group(timeout=...), HF's "
    "ddp_timeout); if a rank never joined, read its own log first."
)


def _evidence(
    f: Finding, files: list[str], group: Group, before: tuple[int, str] | None = None
) -> tuple[LogLine, ...]:
    name = files[f.file] if f.file < len(files) else "?"
    out: list[LogLine] = [LogLine(name, *before)] if before is not None else []
    for number, fl in f.frames:
        out.append(LogLine(name, number, fl))
    out.append(LogLine(name, f.line, f.text))
    for s in group.samples[:3]:
        if s is not f and (s.rank != f.rank or s.host != f.host):
            out.append(LogLine(files[s.file] if s.file < len(files) else "?", s.line, s.text))
    return tuple(out)


def _consequence(g: Group, files: list[str]) -> Consequence:
    f = g.first
    m = meaning(f)
    return Consequence(
        m.category,
        m.explain,
        g.count,
        tuple(sorted(g.ranks))[:64],
        tuple(sorted(g.hosts))[:64],
        LogLine(files[f.file] if f.file < len(files) else "?", f.line, f.text),
    )


def _consequences(groups: Iterable[Group], files: list[str]) -> tuple[Consequence, ...]:
    """The findings beside the root cause, the most frequent first (then the earliest), 20."""
    ordered = sorted(groups, key=lambda g: (-g.count, g.first.seq))
    return tuple(_consequence(g, files) for g in ordered[:20])


def _set_up_chatter(g: Group, progress: Mapping[int, int] | None, engine: Engine) -> bool:
    f = g.first
    if f.rule.id == "hang.store_barrier" and f.file in engine.barrier_passed:
        return True  # the barrier completed after the wait it logged
    if f.rule.id == ERROR_RECORD.id:  # a logged error line: only where no log shows a step
        return bool(progress)
    # A rule's `set_up_only` (a shell script's complaint, a build probe, a retried wait).
    return f.rule.set_up_only and progress is not None and f.file in progress


def findings(engine: Engine, progress: Mapping[int, int] | None) -> list[Group]:
    """The engine's groups that count: without the set-up's chatter in a log that trained, nor
    a rule's different lines fewer than it needs (its `min_count`: the same line from every
    rank counts once)."""
    return [
        g
        for g in engine.groups.values()
        if len(g.bodies) >= g.first.rule.min_count and not _set_up_chatter(g, progress, engine)
    ]


# The frames of a process joining its group: torch's init_process_group and the rendezvous
# handlers and stores it calls (`store = TCPStore(...)` in `_tcp_rendezvous_handler`); and c10d's
# words for a client that could not reach the store, which it connects to once, as it joins
# (`The client socket has timed out after 900000ms while trying to connect to (10.0.0.1, 29500)`).
_JOINING = re.compile(r"\bin (?:init_process_group|_\w*rendezvous_handler|_create_c10d_store)\b")
_JOIN_WORDS = re.compile(
    r"The client socket has (?:timed out after \d+m?s while trying to connect|failed to connect)"
)


def found_cause(engine: Engine, progress: Mapping[int, int] | None) -> bool:
    """Whether a finding that counts is a cause, not only what follows one or warns of one (a
    client that retried, a peer that closed, the launcher's report): a log whose findings are
    only those is read for a stall too, which explains it better."""
    return any(meaning(g.first).role == "cause" for g in findings(engine, progress))


def _joining(f: Finding) -> bool:
    return bool(_JOIN_WORDS.search(f.body)) or any(_JOINING.search(t) for _, t in f.frames)


def trained_before(f: Finding, progress: Mapping[int, int] | None) -> bool | None:
    """Whether the log shows training steps before the finding: `progress` maps a file index
    to the line of its first training step, for the files that show one (None: not known).
    No step in any file: the failure came before training started. Steps only in other files:
    their lines cannot be compared with this one, so the log does not say."""
    if progress is None:
        return None
    if f.file in progress:
        return progress[f.file] < f.line
    return False if not progress else None


# Words of the hardware, the network or the scheduler in an error no rule knows: not the code.
_INFRA = re.compile(
    r"(?i)Dist\w*Error|nccl|gloo|\bcuda\b|\bgpus?\b|nvml|nvidia|driver|socket|connect|"
    r"timed? ?out|memory|killed|signal|network|preempt|I/O|"
    # a process that died without a word of its own (a DataLoader worker: memory, /dev/shm)
    r"exited unexpectedly(?! with exit code [1-9])|no longer alive"
)
# The same, and more, in a line a program logged (log.error_record): a server's or a name's
# failure (`HTTP 503`, `Unable to resolve host`, a proxy, a certificate), a link or a device by
# its kind (InfiniBand, mlx5, HIP), the hardware itself.
_INFRA_LOGGED = re.compile(
    r"(?i)\bhttps?\b|\b(?:HTTP|status|returned|response)\W{0,3}[45]\d\d\b|resolve|unreachable|"
    r"infiniband|\bmlx\d|\bhip\b|hardware (?:error|fault|failure)|\bssl\b|certificate|proxy"
)
_AT_START = (
    "It happened before the first training step, so it is the set-up (addresses, ports, "
    "host names, network interfaces, the environment), not a flaky node: fix it, then restart."
)
# The same for what is not the network's: a crash or an allocation that the set-up repeats.
_AT_START_OTHER = (
    "It happened before the first training step, so it is the set-up (the config, the "
    "environment, what the job loads), which a restart repeats: fix it, then restart."
)
_NETWORKED = (Category.NETWORK, Category.NCCL_ERROR, Category.NCCL_TIMEOUT)


def diagnose(
    engine: Engine,
    files: list[str],
    lines: int,
    last_line: str = "",
    note: str = "",
    read: list[str] | None = None,
    progress: Mapping[int, int] | None = None,
    trained: bool | None = None,
    ending: Ending | None = None,
    still: bool = False,
) -> Diagnosis:
    """`files` names the engine's file indexes; `read` the files actually read (default: all);
    `progress` the line of each file's first training step (see trained_before); `trained`
    True when the caller knows the attempt trained (its supervisor saw steps, or it ran long)
    although its logs show no step that triage reads; `still`: the logs' last lines show no
    sign that the process ended (stall.quiet)."""
    groups = findings(engine, progress)
    if trained:  # the caller saw the attempt train: a logged error line says nothing then
        groups = [g for g in groups if g.first.rule.id != ERROR_RECORD.id]
    if not groups:
        # No step in any log, and the caller does not know of one: it stopped in the set-up.
        untrained = progress is not None and not progress and trained is not True
        return nothing_found(
            files if read is None else read, lines, last_line, note, ending, untrained, still
        )
    groups = [g for g in groups if not _srun_s_stop(g, groups)]
    causes = [g for g in groups if meaning(g.first).role == "cause"]
    fallback = not causes
    records = all(g.first.rule.id == ERROR_RECORD.id for g in groups)
    if fallback and (isinstance(ending, Stall) or (records and ending_tells(last_line, ending))):
        # Only what follows or warns of a failure (a retry the run went on after, a launcher's
        # report), and progress that stopped long before the log did: the stall is the story,
        # the rest its consequences. So is any ending that tells more than a line the program
        # logged at its error level (the run says it finished, stacks, a loop, a loss's jump).
        hung = nothing_found(files if read is None else read, lines, last_line, note, ending)
        return dataclasses.replace(hung, consequences=_consequences(groups, files))
    root = _pick(causes or groups)
    waited = silent_rank_error(engine, groups, root)
    waiting = ""  # the note on the ranks that timed out waiting for the root's rank
    if waited is not None:
        waiting = (
            f"{len(root.ranks)} other rank(s) then timed out in a collective, waiting for this rank"
        )
        root = waited
    f = root.first
    category, _, transient, suspect_kind, explain, precedence, confidence = meaning(f)
    in_log = trained_before(f, progress)
    if f.rule.id == LONE_EXCEPTION.id and progress:
        in_log = None  # a lone exception line in a log that trains: perhaps handled, says nothing
    if trained and (in_log is None or (in_log is False and not progress)):
        in_log = True  # no step in the logs, but the attempt trained: not its set-up
    trained = in_log
    at_start = False
    joining = False
    if f.xid is None and f.rule.phase is not None:
        transient = f.rule.transient_given(trained)
        if (trained or (trained is None and progress)) and transient is True and _joining(f):
            # Raised while this process joined the job (its traceback passes through
            # init_process_group) after steps of the job, in the logs or as the caller knows:
            # a node that joined late or anew (its set-up), or the job re-forming after another
            # failure. The log does not say which.
            transient, joining = None, True
        at_start = trained is False and transient is False
        if at_start:
            suspect_kind = "config"
        if (
            at_start
            and category == Category.UNKNOWN
            and (not fallback or f.rule.id == ERROR_RECORD.id)
            and not _INFRA.search(f.body)
            and not (f.rule.id == ERROR_RECORD.id and _INFRA_LOGGED.search(f.body))
        ):
            # An error no rule knows (a bare RuntimeError), raised in the set-up before any
            # step, with no sign of the hardware or the network: the code or its configuration,
            # which a restart meets again.
            category = Category.USER_CODE
    # Where the root line was printed, and whom to suspect (the same, except for a timeout,
    # where the ranks that report it are the victims, not the culprit).
    loc_rank, loc_host, loc_gpu = f.rank, f.host, f.gpu
    launched = engine.launchers.first_failure()  # torchrun's "first observed failure", srun's
    if loc_rank is None and loc_host is None and launched is not None:
        loc_host, loc_rank = launched.host, launched.rank
    rank, host, gpu = loc_rank, loc_host, loc_gpu
    notes = []
    desynced = first_collective = False
    done = engine.training_done.get(f.file)
    exit_hang = f.rule.id == "sched.time_limit" and done is not None and done[0] < f.line
    if exit_hang:  # the run said its training was over, then the time limit came
        category, transient, suspect_kind = Category.HANG, False, "code"
        explain = _EXIT_HANG
    barrier = _MISSED_BARRIER.search(f.body) if f.rule.id == "dist.monitored_barrier" else None
    if barrier is not None:  # the barrier names the rank that never came; whoever printed it
        rank, host, gpu = int(barrier["rank"]), None, None
    elif category == Category.NCCL_TIMEOUT and not fallback:
        note_t, behind = engine.collectives.suspects(set(root.ranks))
        if note_t:
            notes.append(note_t)
        rank, host, gpu = (behind, None, None) if behind is not None else (None, None, None)
        split = engine.collectives.desync()
        if split is not None:  # no rank is behind: they wait in different collectives
            transient, desynced, suspect_kind = False, True, "code"
            rank, host, gpu = None, None, None
            notes.append(split)
        first = launched.rank if launched is not None else None
        python_first = False  # the first failure was a Python error, before the timeouts
        if (
            launched is not None
            and launched.exit == 1
            and (first is not None or launched.by == "torchrun")
            and transient is not False
            and (first not in root.ranks or _python_error_of(groups, first))
        ):
            # A rank that times out aborts (SIGABRT); exit code 1 is a Python exception, raised
            # on a rank before the others timed out: it is the cause, and the log does not say
            # what it was (or babysit has no rule for it), so neither can a restart be promised.
            transient, python_first = None, True
            notes.append(
                f"{launched.by}'s first observed failure"
                f"{'' if first is None else f', rank {first},'}"
                " exited with code 1 (a Python error) before the timeouts: find its error"
            )
            if first is not None:
                rank, host = first, launched.host
        set_up = engine.collectives.at_set_up()
        unseen = trained is False or (trained is None and not progress)
        if set_up is not None and transient is not False and unseen and not python_first:
            # The group's first collective never completed, or a barrier among its first few
            # did not, and the logs show no training step before (none in this file before
            # it, none in any other): the set-up's wait.
            transient, first_collective, suspect_kind = False, True, "config"
            notes.append(set_up)
        elif python_first and unseen:
            # That Python error came before any training step: the set-up's (the code, its
            # config, the environment), which a restart meets again, as the same error alone
            # would be (an error no rule knows, raised in the set-up, is the code's).
            transient, suspect_kind = False, "config"
            notes.append("no training step shows before it: a restart meets the same error")
    if waiting:
        notes.append(waiting)
    if joining:
        notes.append(
            "this process failed while joining the job (in init_process_group), after the "
            "job had trained: if it is a node that joined late or anew, fix its "
            "set-up (the address, name or port it was given); if the job was re-forming after "
            "another failure, find that failure first"
        )
    others = [g for g in groups if g is not root]
    rivals = [
        m
        for m in (meaning(g.first) for g in others)
        if m.role == "cause" and m.category != category and abs(m.precedence - precedence) <= 5
    ]
    if rivals:  # another cause almost as fundamental: less sure which came first
        confidence -= 0.15
    if fallback and not records:
        confidence = min(confidence, 0.35)
        notes.append(
            "no root cause in the log, only this: it usually follows another failure (or "
            "warns of one), so look for an error on the other ranks or nodes, in a log not "
            "given here"
        )
    where = _where(loc_rank, loc_host, loc_gpu)
    spread = ""
    if root.count > 1 and len(root.ranks) > 1:
        spread = f", on {len(root.ranks)} ranks"
    elif root.count > 1 and len(root.hosts) > 1:
        spread = f", on {len(root.hosts)} hosts"
    summary = explain.rstrip(".")
    if where:
        summary += f" ({where}{spread})"
    elif spread:
        summary += f" ({spread[2:]})"
    at = _raised_at(f)
    if at:
        summary += f" at {at}"
    summary += f": {quote(f.body)}"
    if notes:
        summary += " [" + "; ".join(notes) + "]"
    action = (
        _DESYNC_ACTION
        if desynced
        else _FIRST_COLLECTIVE_ACTION
        if first_collective
        else _EXIT_HANG_ACTION
        if exit_hang
        else _action(f)
    )
    advice = [g.first.rule for g in others if f.rule.id in g.first.rule.advises]
    if advice:
        # a warning that tells how to fix this failure (the driver too old for the torch build,
        # under "the process sees no GPU"): the likeliest fix, so it comes first, before the
        # failure's own advice (what the phase and the suspect node add holds for either)
        told = " ".join(f"{r.explain} {r.action}" for r in advice)
        action = f"Warned in the log: {told} Otherwise: {action}"
    if at_start:
        action = f"{_AT_START if category in _NETWORKED else _AT_START_OTHER} {action}"
    if suspect_kind == "node" and host is not None and transient is not False:
        action += f" Suspect node: {host}."
    return Diagnosis(
        category=category,
        transient=transient,
        suspect=Suspect(suspect_kind, host, rank, gpu),
        summary=summary,
        action=action,
        evidence=_evidence(f, files, root, done if exit_hang else None),
        consequences=_consequences(others, files),
        fingerprint=_fingerprint(f),
        confidence=round(max(0.05, min(confidence, 1.0)), 2),
        rule=f.rule.id if f.xid is None else f"{f.rule.id}.{f.xid.code}",
    )


__all__ = ["diagnose", "normalise", "trained_before"]
