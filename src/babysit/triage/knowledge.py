"""The knowledge base: what each failure signature means, whom to blame, what to do. Data, not
code: `kb/rules.toml` and `kb/xid.toml` ship in the package; a team adds its own rules file
(its tribal knowledge), whose rules are tried first.

    kb = load_knowledge([Path("team-rules.toml")])
    kb.match("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB")
    # -> (Rule(id="cuda.oom", category=Category.CUDA_OOM, ...), <re.Match>)

A rules file:

    [[rule]]
    id = "team.bad-switch"              # unique; shown in the verdict
    category = "network"                # one of the categories (see records.Category)
    role = "cause"                      # or "consequence": follow-on errors, never the root cause
                                        #   while a cause is present; or "noise": dropped
    transient = true                    # true | false | "unknown"
    suspect = "network"                 # node|network|filesystem|code|data|config|scheduler|...
    patterns = ['ib0: link down on leaf-7']   # Python regexes, searched in the line without
                                        #   its prefixes; named groups host/rank/gpu are read
    explain = "The InfiniBand switch leaf-7 flaps."
    action = "Open a ticket with the network team; restart without the nodes on leaf-7."
    precedence = 75                     # optional: higher wins when several causes are present
    requires = ["ib0"]                  # optional: try the rule only on lines holding one of these
    transient_at_start = false          # optional: `transient` when the log shows no training
                                        #   step before the line (a set-up error: configuration)
    transient_in_training = true        # optional: `transient` when training steps came first
    min_count = 2                       # optional: the rule counts only when it matched at
                                        #   least this many different lines, in any file (the
                                        #   same line from every rank is one; 1 to 8)
    set_up_only = true                  # optional: a line of the job's set-up (a probe, a shell
                                        #   script's complaint, a retried wait): the cause only
                                        #   in a file that shows no training step
    advises = ["team.no-gpu"]           # optional: a warning that tells how to fix these
                                        #   rules' failures: when one of them is the root
                                        #   cause, the warning's explain and action come
                                        #   before that failure's own action (the driver too old
                                        #   for the torch build, under "no GPU seen")
    raised_only = true                  # optional: only where the error was raised: not on a
                                        #   line that warns, skips, is falling back or defaulting
                                        #   or using the CPU, nor quoted after a parenthesis or a
                                        #   bracket (a monitor that goes on; patterns.raised)

The first rule that matches a line wins, in order: the user's files, then the shipped rules
(specific messages first, Python exception classes last).
"""

from __future__ import annotations

import functools
import re
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from babysit.errors import RulesError
from babysit.records import SUSPECT_KINDS, Category
from babysit.triage.patterns import raised, required_literals

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib

# Which cause explains which when several are present: the higher one is the root cause
# (a dead GPU explains the CUDA errors and the NCCL timeouts that follow it; an OOM on one rank
# explains the watchdog timeouts of the others). A rule may set its own.
PRECEDENCE: Mapping[Category, int] = {
    Category.GPU_HARDWARE: 90,
    Category.HOST_OOM: 85,
    Category.PREEMPTION: 80,
    Category.FILESYSTEM_IO: 72,
    Category.CUDA_OOM: 70,
    Category.DATA: 68,
    Category.NUMERICAL: 66,
    Category.USER_CODE: 64,
    Category.CUDA_ERROR_OTHER: 60,
    Category.SEGFAULT: 50,
    Category.NCCL_ERROR: 40,
    Category.NETWORK: 35,
    Category.NCCL_TIMEOUT: 30,
    Category.HANG: 20,
    Category.UNKNOWN: 10,
}
ROLES = ("cause", "consequence", "noise")
MAX_MIN_COUNT = 8  # the most different lines a rule may ask for (findings.Group counts so many)
_RULE_KEYS = {
    "id",
    "category",
    "role",
    "transient",
    "suspect",
    "patterns",
    "explain",
    "action",
    "precedence",
    "confidence",
    "requires",
    "transient_at_start",
    "transient_in_training",
    "min_count",
    "set_up_only",
    "advises",
    "raised_only",
}
_XID_KEYS = {"code", "name", "category", "role", "transient", "suspect", "explain", "action"}


@dataclass(frozen=True)
class Rule:
    id: str
    category: Category
    role: str  # "cause" or "consequence"
    transient: bool | None
    suspect: str
    patterns: tuple[re.Pattern[str], ...]
    explain: str
    action: str
    precedence: int
    confidence: float  # how sure a match of this rule alone makes triage
    origin: str  # the file it came from
    # Per pattern, literals one of which every match contains ((texts, lowercase?) or None): a
    # line without them skips the regex, which makes a line that matches nothing cost `in`
    # checks, not searches.
    hints: tuple[tuple[tuple[str, ...], bool] | None, ...] = ()
    requires: tuple[str, ...] = ()  # the rule is tried only on lines holding one of these
    # `transient` when the log shows no training step before the line (a rendezvous, DNS or
    # port error at start-up is configuration), and when steps came first (the same error
    # hours into training is a node or the network); None: `transient` either way.
    phase: tuple[bool | None, bool | None] | None = None
    # The rule counts only when it matched at least this many different lines (findings.Group's
    # bodies, at most MAX_MIN_COUNT): NCCL's trace of an error passing up its calls has a line a
    # frame, and a lone one, on every rank alike, is a probe NCCL got over.
    min_count: int = 1
    # A line of the job's set-up that the run may well get past (a build probe, a shell script's
    # complaint, a retried wait): the cause only in a file that shows no training step.
    set_up_only: bool = False
    # A warning that tells how to fix the failures of these rules (their ids): when one of them
    # is the root cause, its explain and action come before that failure's own action (torch's
    # "driver too old" under "no GPU seen"); under any other root the warning is no advice.
    advises: tuple[str, ...] = ()
    # Only where the error was raised: a line that goes on past it is no match (patterns.raised).
    raised_only: bool = False

    def transient_given(self, progress: bool | None) -> bool | None:
        """`transient`, knowing whether the log showed training steps before the line
        (None: the log does not say)."""
        if progress is None or self.phase is None:
            return self.transient
        return self.phase[1] if progress else self.phase[0]

    def search(self, body: str, low: str) -> re.Match[str] | None:
        """The first pattern's match in the line (`low` is the line lowercased)."""
        if self.requires and not any(r in body for r in self.requires):
            return None
        for i, rx in enumerate(self.patterns):
            hint = self.hints[i] if i < len(self.hints) else None
            if hint is not None:
                text = low if hint[1] else body
                if not any(t in text for t in hint[0]):
                    continue
            m = raised(rx, body) if self.raised_only else rx.search(body)
            if m is not None:
                return m
        return None


def standin(
    rid: str,
    category: Category,
    explain: str,
    action: str,
    *,
    confidence: float,
    role: str = "cause",
    transient: bool | None = None,
    suspect: str = "unknown",
    precedence: int | None = None,
    phase: tuple[bool | None, bool | None] | None = None,
) -> Rule:
    """A rule of babysit's own that no pattern matches: the engine applies it where a place in
    a traceback, not a message, says what happened."""
    return Rule(
        id=rid,
        category=category,
        role=role,
        transient=transient,
        suspect=suspect,
        patterns=(),
        explain=explain,
        action=action,
        precedence=PRECEDENCE[category] if precedence is None else precedence,
        confidence=confidence,
        origin="babysit",
        phase=phase,
    )


_PREVIOUS_XID = re.compile(r"previous Xid (?P<xid>\d{1,3})")


@dataclass(frozen=True)
class Xid:
    code: int
    name: str
    category: Category
    role: str
    transient: bool | None
    suspect: str
    explain: str
    action: str


@dataclass(frozen=True)
class Knowledge:
    rules: tuple[Rule, ...]
    xid: Mapping[int, Xid]

    def match(self, body: str) -> tuple[Rule, re.Match[str]] | None:
        """The first rule whose pattern is found in the line, with the match."""
        low = body.lower()
        for rule in self.rules:
            m = rule.search(body, low)
            if m is not None:
                return rule, m
        return None

    def xid_for(self, code: int, line: str) -> Xid:
        """The catalogue's entry for an Xid the line reports: the earlier Xid when this one is
        a consequence the line says it was caused by (`Xid 45 ... caused by previous Xid 149`),
        and a hardware fault to look up when the catalogue lacks the code."""
        xid = self.xid.get(code)
        prev = _PREVIOUS_XID.search(line)
        if prev and xid is not None and xid.role == "consequence":
            code = int(prev["xid"])
            xid = self.xid.get(code)
        if xid is not None:
            return xid
        return Xid(
            code,
            f"Xid {code}",
            Category.GPU_HARDWARE,
            "cause",
            True,
            "node",
            f"Xid {code} is not in babysit's catalogue.",
            "Look it up in NVIDIA's Xid catalogue; drain the node if it repeats.",
        )


def _transient(value: Any, where: str) -> bool | None:
    if isinstance(value, bool):
        return value
    if value == "unknown":
        return None
    raise RulesError(f'{where}: transient must be true, false or "unknown", got {value!r}')


def _choice(value: Any, allowed: Iterable[str], key: str, where: str) -> str:
    allowed = tuple(allowed)
    if value not in allowed:
        raise RulesError(f"{where}: {key} must be one of {', '.join(allowed)}; got {value!r}")
    return str(value)


def _text(entry: Mapping[str, Any], key: str, where: str) -> str:
    value = entry.get(key)
    if not isinstance(value, str) or not value.strip():
        raise RulesError(f"{where}: {key} must be a non-empty string")
    return value.strip()


def _rule(entry: Mapping[str, Any], origin: str, index: int) -> Rule:
    where = f"{origin}: rule #{index + 1}"
    if not isinstance(entry, Mapping):
        raise RulesError(f"{where}: each [[rule]] must be a table")
    rid = _text(entry, "id", where)
    where = f"{origin}: rule {rid!r}"
    unknown = set(entry) - _RULE_KEYS
    if unknown:
        raise RulesError(
            f"{where}: unknown key(s) {', '.join(sorted(unknown))}; "
            f"allowed: {', '.join(sorted(_RULE_KEYS))}"
        )
    category = Category(
        _choice(entry.get("category"), (c.value for c in Category), "category", where)
    )
    patterns = entry.get("patterns")
    if isinstance(patterns, str):
        patterns = [patterns]
    if not isinstance(patterns, list) or not patterns:
        raise RulesError(f"{where}: patterns must be a non-empty list of regular expressions")
    compiled = []
    hints: list[tuple[tuple[str, ...], bool] | None] = []
    for p in patterns:
        if not isinstance(p, str) or not p:
            raise RulesError(f"{where}: every pattern must be a non-empty string")
        try:
            compiled.append(re.compile(p))
            hints.append(required_literals(p))
        except re.error as e:
            raise RulesError(f"{where}: pattern {p!r} is not a valid regex: {e}") from None
    precedence = entry.get("precedence", PRECEDENCE[category])
    if not isinstance(precedence, int) or isinstance(precedence, bool):
        raise RulesError(f"{where}: precedence must be an integer, got {precedence!r}")
    confidence = entry.get("confidence", 0.9)
    if (
        not isinstance(confidence, (int, float))
        or isinstance(confidence, bool)
        or not 0 <= confidence <= 1
    ):
        raise RulesError(f"{where}: confidence must be a number from 0 to 1, got {confidence!r}")
    min_count = entry.get("min_count", 1)
    if (
        not isinstance(min_count, int)
        or isinstance(min_count, bool)
        or not 1 <= min_count <= MAX_MIN_COUNT
    ):
        raise RulesError(
            f"{where}: min_count must be a whole number from 1 to {MAX_MIN_COUNT}, "
            f"got {min_count!r}"
        )
    transient = _transient(entry.get("transient", "unknown"), where)
    at_start, in_training = (
        _transient(entry[k], f"{where} ({k})") if k in entry else transient
        for k in ("transient_at_start", "transient_in_training")
    )
    phase = None
    if "transient_at_start" in entry or "transient_in_training" in entry:
        phase = (at_start, in_training)
    return Rule(
        id=rid,
        category=category,
        role=_choice(entry.get("role", "cause"), ROLES, "role", where),
        transient=transient,
        phase=phase,
        suspect=_choice(entry.get("suspect", "unknown"), SUSPECT_KINDS, "suspect", where),
        patterns=tuple(compiled),
        explain=_text(entry, "explain", where),
        action=_text(entry, "action", where),
        precedence=precedence,
        confidence=float(confidence),
        origin=origin,
        hints=tuple(hints),
        requires=_strings(entry.get("requires", []), where, "requires", "non-empty strings"),
        min_count=min_count,
        set_up_only=_flag(entry, "set_up_only", where),
        raised_only=_flag(entry, "raised_only", where),
        advises=_strings(entry.get("advises", []), where, "advises", "rule ids"),
    )


def _flag(entry: Mapping[str, Any], key: str, where: str) -> bool:
    """An optional true-or-false key (`set_up_only`, `raised_only`), false when absent."""
    flag = entry.get(key, False)
    if not isinstance(flag, bool):
        raise RulesError(f"{where}: {key} must be true or false, got {flag!r}")
    return flag


def _strings(value: Any, where: str, key: str, what: str) -> tuple[str, ...]:
    """A key that lists names (`requires`, `advises`): one string is a list of one."""
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise RulesError(f"{where}: {key} must be a list of {what}, got {value!r}")
    return tuple(value)


def _xid(entry: Mapping[str, Any], origin: str) -> Xid:
    where = f"{origin}: xid {entry.get('code')!r}"
    missing = _XID_KEYS - set(entry)
    if missing:
        raise RulesError(f"{where}: missing key(s) {', '.join(sorted(missing))}")
    code = entry["code"]
    if not isinstance(code, int) or isinstance(code, bool) or code < 0:
        raise RulesError(f"{where}: code must be a non-negative integer")
    return Xid(
        code=code,
        name=_text(entry, "name", where),
        category=Category(
            _choice(entry["category"], (c.value for c in Category), "category", where)
        ),
        role=_choice(entry["role"], ROLES, "role", where),
        transient=_transient(entry["transient"], where),
        suspect=_choice(entry["suspect"], SUSPECT_KINDS, "suspect", where),
        explain=_text(entry, "explain", where),
        action=_text(entry, "action", where),
    )


def _parse(text: str, origin: str) -> dict[str, Any]:
    try:
        doc: dict[str, Any] = tomllib.loads(text)
        return doc
    except tomllib.TOMLDecodeError as e:
        raise RulesError(f"{origin}: not valid TOML: {e}") from None


def parse_rules(text: str, origin: str) -> tuple[list[Rule], dict[int, Xid]]:
    """The rules and Xid entries of one file's text; RulesError names the file and the rule."""
    doc = _parse(text, origin)
    unknown = set(doc) - {"rule", "xid"}
    if unknown:
        raise RulesError(
            f"{origin}: unknown table(s) {', '.join(sorted(unknown))}; expected [[rule]] "
            "(and [[xid]])"
        )
    rules = [_rule(e, origin, i) for i, e in enumerate(doc.get("rule", []))]
    xids = {x.code: x for x in (_xid(e, origin) for e in doc.get("xid", []))}
    return rules, xids


def _shipped() -> list[tuple[str, str]]:
    kb = resources.files("babysit.triage") / "kb"
    return [
        (f"babysit/triage/kb/{n}", (kb / n).read_text("utf-8")) for n in ("rules.toml", "xid.toml")
    ]


@functools.cache
def _shipped_parsed() -> tuple[tuple[list[Rule], dict[int, Xid]], ...]:
    """The shipped rules, parsed once per process (their records are frozen: sharing is safe;
    each load copies the lists it extends)."""
    return tuple(parse_rules(text, origin) for origin, text in _shipped())


def load_knowledge(extra: Iterable[Path] = ()) -> Knowledge:
    """The shipped knowledge plus the user's rules files (tried first; their Xid entries
    override the shipped ones). RulesError for a missing or malformed file."""
    rules: list[Rule] = []
    xids: dict[int, Xid] = {}
    for path in extra:
        try:
            text = Path(path).read_text("utf-8")
        except (OSError, UnicodeDecodeError) as e:
            raise RulesError(f"cannot read the rules file {path}: {e}") from None
        r, x = parse_rules(text, str(path))
        rules += r
        for code, entry in x.items():
            xids.setdefault(code, entry)
    for r, x in _shipped_parsed():
        rules += r
        for code, entry in x.items():
            xids.setdefault(code, entry)
    seen: set[tuple[str, str]] = set()
    for rule in rules:
        if (rule.origin, rule.id) in seen:
            raise RulesError(f"{rule.origin}: rule id {rule.id!r} is used twice")
        seen.add((rule.origin, rule.id))
    ids = {rule.id for rule in rules}
    for rule in rules:
        unknown = [a for a in rule.advises if a not in ids]
        if unknown:  # a typo would make the advice silent
            raise RulesError(
                f"{rule.origin}: rule {rule.id!r} advises {', '.join(map(repr, unknown))}, "
                "which no rule file defines"
            )
    return Knowledge(tuple(rules), xids)
