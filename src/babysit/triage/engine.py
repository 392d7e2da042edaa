"""Read candidate lines into findings: which rule each line matches, on which rank and host,
with the traceback it ends. The root cause is chosen from the findings in `triage.verdict`.

    engine = Engine(load_knowledge())
    engine.feed(0, 12, "[rank3]:torch.OutOfMemoryError: CUDA out of memory. ...")
    engine.groups  # (rule id, Xid) -> Group: earliest finding, count, ranks, hosts (findings.py)

Memory stays bounded however many ranks repeat the same error: findings are grouped by rule
(an Xid by its code), each group keeps its earliest finding, a few samples, a count and the
ranks and hosts it was seen on. What a traceback's lines look like (its headers, the exception's
line, a paste's lost indentation) is in tracebacks.py. Pure: no I/O, no clock.
"""

from __future__ import annotations

import dataclasses
import re
from typing import NamedTuple

from babysit.records import Category
from babysit.triage.anatomy import Anatomy, anatomy
from babysit.triage.collectives import WORLD_HINTS, Collectives
from babysit.triage.cuts import cut_rule
from babysit.triage.findings import Finding, Group
from babysit.triage.frames import FRAME, cut_net, cut_raise
from babysit.triage.frames import frames as frames_of
from babysit.triage.knowledge import Knowledge, Rule, Xid
from babysit.triage.launchers import Launchers
from babysit.triage.logged import error_record
from babysit.triage.matching import Matcher
from babysit.triage.standins import (
    ERROR_RECORD,
    GENERIC_IDS,
    LONE_ID,
    UNCLASSIFIED,
    placed,
    worker_cut,
)
from babysit.triage.tracebacks import (
    CHAIN,
    EXC_LINE,
    EXC_REPR,
    GLUED_HEAD,
    GROUP_MARKS,
    IPYTHON_HEAD,
    RAY_HEAD,
    RERAISED,
    TB_HEADS,
    WORKER_WRAPPER,
    Traceback,
    argless,
    framed,
    glued_exception,
    unflattened,
    worker_quoted,
)

MAX_TEXT = 600  # characters of a line kept as evidence
MAXFRAMES = 10  # traceback lines kept per finding
MAX_MATCH = 4096  # characters of a line that anatomy and the rules read
# Categories whose glog warnings are mostly start-up chatter (c10d trying IPv6, then IPv4).
_CHATTY = frozenset({Category.NETWORK, Category.PREEMPTION})
# A run's own word that the whole training is over, a line of its own (Megatron's `[after
# training is done]`, HF's `Training completed. Do not forget to share your model`, Lightning's
# `` `Trainer.fit` stopped``, `Training complete.`): a time limit after it ended a job that did
# not exit. Not a stage's or an epoch's end (`Stage 1 training finished, starting stage 2`).
TRAINING_DONE = re.compile(
    r"\[after training is done\]|Training completed\. Do not forget|`Trainer\.fit` stopped|"
    r"(?i:^\W*(?:training (?:is )?(?:complete|completed|finished|done)|(?:finished|done) "
    r"training)\W*(?:\d[\w :.,-]*)?$)"
)


_LONE_ENDS = ("Error", "Exception")
_RECORDED_MAX = 4096  # different error records remembered, to skip their repeats
# The stand-in for an exception line without its traceback: weak, and the set-up's only in a
# log that shows no training step at all (with steps in it, the line may be one the program
# printed and went on after: diagnose() knows it by its id).
LONE_EXCEPTION = dataclasses.replace(UNCLASSIFIED, id=LONE_ID)


class _Pending(NamedTuple):
    """A finding not yet added: _add's arguments, held while its message or its worker's own
    error may still come."""

    rule: Rule
    xid: Xid | None
    file: int
    line: int
    text: str
    body: str
    anat: Anatomy
    frames: tuple[tuple[int, str], ...]
    exc_type: str | None


# A held exception line: its finding, its traceback, its place in the order of findings.
_Held = tuple[_Pending, Traceback | None, int]
# How many lines later a rank-labelled exception line's message may come (other ranks' lines
# interleaved in between); an unlabelled one's is the very next line.
_MESSAGE_SPAN = 64
# How a pattern written for a bare AssertionError's statement starts (the statement as
# cut_raise spells it: `AssertionError: assert not torch.isnan(loss).any()`).
_ASSERTED = "^AssertionError: assert"


class _At(NamedTuple):
    """A line fed, as feed() took it apart: its file and number, its text, its body (without a
    rank's or a logger's prefix), the body stripped, its anatomy, its (file, rank); the
    traceback it ends, if any, with the frames kept of it, the exception's type and its line's
    match (EXC_LINE)."""

    file: int
    line: int
    text: str
    body: str
    stripped: str
    a: Anatomy
    tb_key: tuple[int, int | None]
    tb: Traceback | None
    frames: tuple[tuple[int, str], ...]
    exc_type: str | None
    em: re.Match[str] | None


class Engine:
    def __init__(self, kb: Knowledge) -> None:
        self.kb = kb
        self.groups: dict[tuple[str, int | None], Group] = {}
        self.collectives = Collectives()  # what the collective timeouts say
        self.launchers = Launchers()  # what torchrun and srun say of the first failure
        # file -> (number, text) of the line that first said the training was done
        self.training_done: dict[int, tuple[int, str]] = {}
        # files in which torch's store-based barrier completed (after the waits it logged)
        self.barrier_passed: set[int] = set()
        self._started: set[int] = set()  # files that have handed a line with words
        # the C++ exception type of the last `terminate called after throwing an instance of`
        self._threw: dict[tuple[int, int | None], str] = {}
        self._recorded: set[str] = set()  # the error records found (see ERROR_RECORD)
        self._match = Matcher(kb).match
        self._tb: dict[tuple[int, int | None], Traceback] = {}
        self._seq = 0
        # A wrapper's finding (`KeyError: Caught KeyError in DataLoader worker process 3.`)
        # waits for the worker's own error, which replaces it; kept if the log ends first.
        self._wrapper: dict[tuple[int, int | None], _Pending] = {}
        self._reraising = False  # the line fed is an exception re-raising the traceback after it
        # An exception line with nothing after its colon (`AssertionError:`), ending its frames:
        # its message is the next line of its rank (torch's driver check, bitsandbytes' set-up),
        # which may name the error where the exception's type does not. Held, with its place in
        # the order of findings, until the next line of the same (file, rank) or finish().
        self._bare: dict[tuple[int, int | None], _Held] = {}

    # -- matching ---------------------------------------------------------------------------

    def _rule_for(self, said: str) -> Rule:
        """The rule for an exception line triage wrote itself (a notebook's header, a C++
        exception's message as Python raises it): the one its words match, else UNCLASSIFIED."""
        hit = self._match(said)
        if hit is None or self.kb.rules[hit[0]].role == "noise":
            return UNCLASSIFIED
        return self.kb.rules[hit[0]]

    # -- feeding ----------------------------------------------------------------------------

    def feed(self, file: int, line: int, text: str) -> bool:
        """One candidate line of file number `file` (1-based line number). True when the line
        meant nothing and would mean nothing whatever came before it (the scanner then skips
        its repeats)."""
        if len(text) > MAX_MATCH:
            text = text[:MAX_MATCH]  # bounds the work of every regex on a monster line
        a = anatomy(text)
        body = a.body
        if a.rank is not None:
            self.collectives.note_rank(a.rank)
        stripped = body.strip()
        if not stripped:
            self._release((file, a.rank))  # a blank line of its own: no message follows
            return False
        first = file not in self._started  # the file's first words: an excerpt may start here
        if first:
            self._started.add(file)
        if any(h in body for h in WORLD_HINTS):
            self.collectives.note_world(body)
        tb_key = (file, a.rank)
        self.launchers.feed(file, stripped, text)
        held = self._bare.get(tb_key)
        if held is not None and self._messaged(held, line, text, stripped, a):
            del self._bare[tb_key]
            return False
        self._release(tb_key)
        if stripped.startswith("terminate called after throwing an instance of '"):
            self._threw[tb_key] = stripped[48:].split("'", 1)[0]
        tb = self._tb.get(tb_key)
        if tb is None and body[:1] in (" ", "\t") and stripped.startswith('File "'):
            # A SyntaxError raised while compiling the script has frames but no header; so has
            # a log that begins inside a traceback (an excerpt, a rotated log: its head cut).
            tb = self._tb[tb_key] = Traceback([], headed=first and line <= 2)
        if tb is not None and body[:1] in (" ", "\t"):
            glued = glued_exception(tb, line, body)
            if glued is not None:  # read as the line of its own it was: it ends the frames
                body = stripped = glued
                a = dataclasses.replace(a, body=body)
        if (
            stripped.endswith(GLUED_HEAD)
            and not stripped.startswith(TB_HEADS)
            and not GROUP_MARKS.match(stripped[: -len(GLUED_HEAD)])
        ):
            stripped = self._unglued(file, line, text, body, tb)
        if stripped.startswith(TB_HEADS):
            worker = stripped.startswith("Original") and tb_key in self._wrapper
            self._tb[tb_key] = Traceback([(line, stripped)], worker=worker)
            return False
        if "ray::" in stripped and RAY_HEAD.search(stripped):
            self._tb[tb_key] = Traceback([(line, stripped)])
            return False
        ipy = IPYTHON_HEAD.match(stripped) if "Traceback" in stripped else None
        if ipy is not None:
            # A notebook's traceback names its exception first; its message ends it (and is
            # the finding, when the log holds it): weak, the exception's type alone.
            rule = self._rule_for(f"{ipy['type']}: ")
            head = dataclasses.replace(a, warning=True)
            self._emit(tb_key, _Pending(rule, None, file, line, text, body, head, (), ipy["type"]))
            return False
        if tb is not None and body[:1] not in (" ", "\t"):
            body = unflattened(tb, stripped, body)
        if tb is not None and framed(tb, line, body, stripped):
            return False
        if stripped.startswith(CHAIN):
            return False
        frames: tuple[tuple[int, str], ...] = ()
        exc_type: str | None = None
        em = EXC_LINE.match(stripped)
        if em:
            exc_type = em["type"]
        if tb is not None:
            # The first unindented line after the frames is the exception that ends them.
            del self._tb[tb_key]
            frames = tuple(tb.lines[:2] + tb.lines[2:][-(MAXFRAMES - 2) :])
            if tb.func and exc_type is None:
                exc_type = (
                    stripped.split(":", 1)[0][:80] if ":" in stripped else argless(tb, stripped)
                )
        hit = self._match(body)
        if tb is not None and not tb.worker and worker_quoted(tb):
            tb.worker = True  # its wrapper's `Caught ... in DataLoader worker` cut from the log
        if tb is not None and tb.worker:
            self._wrapper.pop(tb_key, None)  # the worker's own error replaces its wrapper
        at = _At(file, line, text, body, stripped, a, tb_key, tb, frames, exc_type, em)
        return self._unmatched(at) if hit is None else self._matched(at, hit)

    def _matched(self, at: _At, hit: tuple[int, re.Match[str]]) -> bool:
        """A line a rule knows (`hit`: the rule's index and its match): its finding, with the
        rank, host and GPU the line or its launcher's block names, weak where it is a chatty
        warning or a Python error's words not raised. True for noise outside a traceback and a
        launcher's block."""
        file, line, text, body, _, a, tb_key, tb, frames, exc_type, em = at
        idx, m = hit
        rule = self.kb.rules[idx]
        if rule.role == "noise":
            return tb is None and self.launchers.block is None
        xid: Xid | None = None
        groups = m.groupdict()
        if groups.get("xid"):
            xid = self.kb.xid_for(int(groups["xid"]), body)
        host = a.host or groups.get("host")
        rank = a.rank
        if rank is None and groups.get("rank"):
            rank = int(groups["rank"])
        gpu = a.gpu or groups.get("gpu")
        block = self.launchers.block
        if block is not None and self.launchers.block_file == file:
            host = host or block.host
            rank = rank if rank is not None else block.rank
        if rule.id == "nccl.watchdog_timeout" or rule.id == "nccl.watchdog_teardown":
            self.collectives.note_watchdog(rank, body, text)
        # (a bare `Exception: ...` alone is as weak as no exception line: scripts print them)
        unraised = em is None or em["type"] == "Exception"
        weak = (a.warning and rule.category in _CHATTY) or (
            rule.id.startswith("python.") and unraised and not frames
        )
        anat = Anatomy(body, rank, host, gpu, a.ts, a.ts_kind, weak, a.kernel)
        rule = placed(rule, tb, exc_type, body)
        found = _Pending(rule, xid, file, line, text, body, anat, frames, exc_type)
        self._raised(tb_key, found, tb, em is not None and not em["msg"])
        return False

    def _unmatched(self, at: _At) -> bool:
        """A line no rule knows: the training's word that it is done, an exception no rule
        knows after its frames, the message of torch's C++
        exception, an exception quoted as its repr, one alone on its line, a program's own error
        record. True when it meant nothing and would mean nothing whatever came before it."""
        file, line, text, body, stripped, a, tb_key, tb, frames, exc_type, em = at
        # `rain` first: every candidate line comes through here, few say training/Trainer
        if "rain" in body and file not in self.training_done and TRAINING_DONE.search(body):
            self.training_done[file] = (line, text)
        if "Completed store-based barrier" in body:
            self.barrier_passed.add(file)
        if frames and exc_type is not None:  # an exception no rule knows, after its frames
            rule = placed(UNCLASSIFIED, tb, exc_type, body)
            pending = _Pending(rule, None, file, line, text, body, a, frames, exc_type)
            self._raised(tb_key, pending, tb, em is not None and not em["msg"])
            return False
        threw = self._threw.pop(tb_key, None)
        if threw == "c10::Error" and stripped.startswith("what():") and stripped[7:].strip():
            # The message of torch's C++ exception that ended the process (`terminate called
            # after throwing an instance of 'c10::Error'`): a TORCH_CHECK's failure, a
            # RuntimeError in Python, and read as one when no rule knows its words.
            rule = self._rule_for(f"RuntimeError: {stripped[7:].strip()}")
            self._emit(tb_key, _Pending(rule, None, file, line, text, body, a, (), "RuntimeError"))
            return False
        rep = EXC_REPR.match(stripped) if stripped.endswith(")") else None
        if rep is not None:
            # An exception quoted as its repr by what wrapped it: read as the exception line
            # it stands for; weak, as a lone exception line is (its stand-in, when no rule
            # knows its words).
            rule = self._rule_for(f"{rep['type']}: {rep['msg']}")
            if rule is UNCLASSIFIED:
                rule = LONE_EXCEPTION
            quoted = dataclasses.replace(a, warning=True)
            self._emit(
                tb_key, _Pending(rule, None, file, line, text, body, quoted, (), rep["type"])
            )
            return False
        if em is not None and em["msg"] and exc_type and exc_type.endswith(_LONE_ENDS):
            # The same alone on its line (a big log's middle, where frames are not searched
            # for; an excerpt that starts at it): weak, for the line may be one the program
            # printed and went on after.
            lone = dataclasses.replace(a, warning=True)
            self._emit(
                tb_key, _Pending(LONE_EXCEPTION, None, file, line, text, body, lone, (), exc_type)
            )
            return False
        if tb is None and exc_type is None and not a.warning:
            # A program's own error line (see ERROR_RECORD): weak, and only in the set-up.
            # Its repeats add nothing (a logger's complaint on every step): the scanner may
            # skip them.
            if stripped in self._recorded:
                return True
            if error_record(text):
                if len(self._recorded) < _RECORDED_MAX:
                    self._recorded.add(stripped)
                self._emit(
                    tb_key, _Pending(ERROR_RECORD, None, file, line, text, body, a, (), None)
                )
                return False
        return (
            tb is None
            and exc_type is None
            and self.launchers.block is None
            and body[:1] not in (" ", "\t")
        )

    def _unglued(self, file: int, line: int, text: str, body: str, tb: Traceback | None) -> str:
        """A traceback's header glued to the end of other words: the words before it are fed as
        a line of their own (`^C`, a progress bar's redraw); the header is what is left.
        `text` may hold the header with colour codes in it, the body never does."""
        cut = text.rfind(GLUED_HEAD)
        before = text[:cut] if cut >= 0 else body[: body.rfind(GLUED_HEAD)]
        original = before.rstrip().endswith("Original")
        if original:
            before = before.rstrip()[: -len("Original")]
        reraised = (
            tb is not None
            and tb.func == "_process_next_batch"  # torch's own re-raise, not any wrapper's
            and RERAISED.match(body[: body.rfind(GLUED_HEAD)].strip()) is not None
        )
        if reraised:
            # An exception whose message is the traceback that follows: torch before 1.0
            # re-raised a DataLoader worker's error so (`RuntimeError: Traceback (most recent
            # call last):`, then the worker's frames and its own error). Its finding is held
            # back as a wrapper's, which the worker's own error replaces (torch's later
            # `Caught ... in DataLoader worker` and `Original Traceback` say the same).
            original = self._reraising = True
        self.feed(file, line, before)
        self._reraising = False
        return ("Original " if original else "") + GLUED_HEAD

    def _raised(
        self, tb_key: tuple[int, int | None], args: _Pending, tb: Traceback | None, empty: bool
    ) -> None:
        """A finding, held back (see _bare) when it is a generic exception's that ends its
        frames with nothing after the colon (`empty`: its exception line has no message); not
        torch's old re-raise, `RuntimeError: Traceback ...`, whose message is the frames."""
        if empty and args.frames and args.rule.id in GENERIC_IDS and not self._reraising:
            self._seq += 1  # its place in the order of findings is where it was raised
            self._bare[tb_key] = (args, tb, self._seq)
        else:
            self._emit(tb_key, args)

    def _release(self, tb_key: tuple[int, int | None]) -> None:
        """The finding held for `tb_key`, if any: its message did not come. A bare
        `AssertionError` says what failed in its innermost frame's `assert` statement (`assert
        not torch.isnan(loss).any()`), read as its message where a pattern is written for the
        statement itself (one that starts `^AssertionError: assert`), not for an error's words,
        which a comment or a string in the statement may hold; else the finding as it was."""
        held = self._bare.pop(tb_key, None)
        if held is None:
            return
        args = held[0]
        where = frames_of(list(args.frames)) if args.exc_type == "AssertionError" else []
        said = cut_raise(where[-1][2], where[-1][1]) if where else None
        hit = self._match(said) if said is not None else None
        if (
            said is None
            or hit is None
            or not hit[1].re.pattern.startswith(_ASSERTED)
            or not self._read_as(held, said)
        ):
            self._add(*args, seq=held[2])

    def _messaged(self, held: _Held, line: int, text: str, stripped: str, a: Anatomy) -> bool:
        """Whether the next line of a held exception line's rank is its message and names the
        error: then the exception is read with it (`AssertionError: The NVIDIA driver on your
        system is too old`) and found so, in place of the generic finding. Not a line of its
        own kind: another exception, a frame, a header, a logger's timestamped line."""
        args = held[0]
        exc_type = args.exc_type or ""
        span = 1 if a.rank is None else _MESSAGE_SPAN
        if (
            not 0 < line - args.line <= span
            or stripped.startswith(TB_HEADS)
            or stripped.startswith(CHAIN)
            or EXC_LINE.match(stripped) is not None
            or FRAME.match(a.body) is not None
            or a.ts is not None
            or a.warning
        ):
            return False
        return self._read_as(held, f"{exc_type}: {stripped}", line, text)

    def _read_as(self, held: _Held, said: str, line: int = 0, text: str = "") -> bool:
        """Whether a held exception line, read as `said` (the exception with its message), names
        the error: then it is found so, in place of the generic finding, at `line` (the
        message's; 0: the exception line's own)."""
        args, tb, seq = held
        rule = self._rule_for(said)
        if rule is UNCLASSIFIED or rule.id in GENERIC_IDS or rule.role != "cause":
            return False
        exc_type = args.exc_type or ""
        rule = placed(rule, tb, exc_type, said)
        anat = dataclasses.replace(args.anat, body=said)
        line, text = (line, text) if line else (args.line, args.text)
        self._add(rule, None, args.file, line, text, said, anat, args.frames, exc_type, seq=seq)
        return True

    def _emit(self, tb_key: tuple[int, int | None], args: _Pending) -> None:
        """A finding, or for a DataLoader worker's wrapper, a finding held back until the
        worker's own error comes (which replaces it: the innermost cause wins)."""
        if self._reraising or WORKER_WRAPPER.search(args.body):
            old = self._wrapper.pop(tb_key, None)
            if old is not None:  # an earlier wrapper whose worker's error never came
                self._add(*old)
            self._wrapper[tb_key] = args
            return
        self._add(*args)

    def finish(self) -> None:
        """The input ended: a traceback cut before its exception line (a truncated log) is read
        from its last lines, which often name the error (`raise ReadError("unexpected end of
        data")`). A wrapper whose worker's error never came stands for it, as worker_cut says
        (a sample's, a request's or a dataset's missing file)."""
        for key in list(self._bare):  # its message never came
            self._release(key)
        requests: set[tuple[int, int | None]] = set()
        for (file, rank), tb in list(self._tb.items()):
            del self._tb[(file, rank)]
            known = self._cut_known(file, rank, tb)
            if not known and tb.worker and cut_net(frames_of(tb.lines)):
                requests.add((file, rank))
            if not known and tb.headed and tb.func and not tb.worker:
                # Nothing in its last lines names the error: say where it was raised (not for
                # frames without a header: a SyntaxError's, `traceback.print_stack()`'s).
                frames = tuple(tb.lines[:2] + tb.lines[2:][-(MAXFRAMES - 2) :])
                number, body = next(
                    ((n, b) for n, b in reversed(tb.lines) if FRAME.match(b)), tb.lines[-1]
                )
                rule = cut_rule(tb.lines)
                anat = Anatomy(body, rank)
                self._add(rule, None, file, number, body, body.strip(), anat, frames, None)
        for key, args in list(self._wrapper.items()):
            del self._wrapper[key]
            # (the type as the wrapper names it, where its line was not read as an exception's:
            # a harness's summary quoting it, `* 1 x [rank0]: FileNotFoundError: Caught ...`)
            caught = WORKER_WRAPPER.search(args.body)
            exc_type = args.exc_type or (caught["type"] if caught else None)
            self._add(worker_cut(args.rule, exc_type, request=key in requests), *args[1:])

    def _cut_known(self, file: int, rank: int | None, tb: Traceback) -> bool:
        """A traceback cut before its exception line: a rule for one of its last lines (`raise
        ReadError("unexpected end of data")`, an `assert`), added as its finding; False when
        none names the error."""
        for number, body in reversed(tb.lines[-3:]):
            hit = self._match(body)
            weak = False
            if hit is None and not FRAME.match(body):
                # no rule in the words: the statement itself (`assert ...`, `raise X(`)
                said = cut_raise(body.strip(), tb.func)
                hit = self._match(said) if said is not None else None
                # an import runs the module's code: the error may be anything raised in it
                weak = said is not None and said.startswith("ImportError")
            if hit is None or self.kb.rules[hit[0]].role == "noise":
                continue
            rule = self.kb.rules[hit[0]]
            if weak:
                rule = dataclasses.replace(rule, confidence=min(rule.confidence, 0.45))
            frames = tuple(tb.lines[:2] + tb.lines[2:][-(MAXFRAMES - 2) :])
            if tb.worker:
                self._wrapper.pop((file, rank), None)
            self._add(
                rule, None, file, number, body, body.strip(), Anatomy(body, rank), frames, None
            )
            return True
        return False

    def _add(
        self,
        rule: Rule,
        xid: Xid | None,
        file: int,
        line: int,
        text: str,
        body: str,
        a: Anatomy,
        frames: tuple[tuple[int, str], ...],
        exc_type: str | None,
        seq: int | None = None,
    ) -> None:
        """A finding, in its group; `seq` is its place in the order of findings (the next one,
        unless it was taken when the finding was held back)."""
        if seq is None:
            self._seq += 1
            seq = self._seq
        f = Finding(
            rule,
            xid,
            file,
            line,
            text[:MAX_TEXT],
            body[:MAX_TEXT],
            a.rank,
            a.host,
            a.gpu,
            a.ts,
            a.ts_kind,
            seq,
            frames,
            exc_type,
            a.warning,
            a.kernel,
        )
        key = (rule.id, xid.code if xid else None)
        group = self.groups.get(key)
        if group is None:
            group = Group(f)
            if f.rank is not None:
                group.ranks.add(f.rank)
            if f.host is not None:
                group.hosts.add(f.host)
            self.groups[key] = group
        else:
            group.add(f)
