r"""What a rule's pattern asks of a line beyond its regex: the literals every match holds (the
hints that let a line without them skip the search), and, for a rule with `raised_only`, that the
line raised the error rather than only reported it.

    required_literals(r"NCCL WARN \w+ failed")       # -> (("NCCL WARN ",), False)
    raised(re.compile("FabricError: .*"), "probe skipped (FabricError: down)")   # -> None
"""

from __future__ import annotations

import re
from typing import Any

# A line that goes on after the error it names: it warns (`WARNING`, `UserWarning:`), skips or
# is falling back (a GPU monitor's `wandb: WARNING Failed to sample GPU power: ...`, a script's
# `..., falling back to the CPU`). Only the participles of falling back and defaulting: a raised
# message may advise one (`Set attn_implementation='sdpa' to fall back to PyTorch attention`).
_GOES_ON = re.compile(
    r"(?i)\b\w*warning\b|\bwarn(?:ed|s)?\b|\bskipp(?:ing|ed)\b|\bfall(?:s|ing)[ -]?back\b"
    r"|\bfallback to\b|\bdefault(?:s|ing) to\b|\busing (?:the )?cpu\b"
)
# A line that opens with an exception's name raised it, whatever it quotes in parentheses.
_OPENS_RAISED = re.compile(r"\s*(?:[\w.]+\.)?\w*(?:Error|Exception)\b")


def raised(rx: re.Pattern[str], body: str) -> re.Match[str] | None:
    """The first match of `rx` in the line where the error was raised, not only reported (a
    rule's `raised_only`): None where the line warns, skips or is falling back (_GOES_ON), and
    where every match is quoted, its error's name right after a parenthesis or a bracket
    (`probe failed (RuntimeError: nvml error: 13 ...)`), unless the line opens with an
    exception's own name (`RuntimeError: Failed to build the pipeline (RuntimeError: ...)`)."""
    if _GOES_ON.search(body):
        return None
    opens_raised = _OPENS_RAISED.match(body) is not None
    for m in rx.finditer(body):
        if opens_raised or not _quoted(body, m.start()):
            return m
    return None


def _quoted(body: str, start: int) -> bool:
    """Whether the name the match starts inside (`Error` of `RuntimeError`, a dotted module path)
    opens right after a parenthesis or a bracket."""
    while start > 0 and (body[start - 1].isalnum() or body[start - 1] in "._"):
        start -= 1
    return start > 0 and body[start - 1] in "(["


def _sre_parser() -> Any:
    parser = getattr(re, "_parser", None)  # Python >= 3.11
    if parser is None:  # pragma: no cover - 3.10
        import sre_parse as parser
    return parser


def required_literals(pattern: str) -> tuple[tuple[str, ...], bool] | None:
    """Literals (each >= 3 characters) one of which every match of the pattern contains,
    lowercased when the pattern ignores case: ((text, ...), lowercase?). The longest run of
    plain characters where there is one (`NCCL WARN `); else the alternatives of a group every
    match goes through (`(?:exit|return) ?code` -> ("exit", "return")). None when there is no
    such set (a pattern made of classes, an alternative without a literal of its own)."""
    parser = _sre_parser()
    try:
        parsed = parser.parse(pattern)
    except Exception:
        return None
    ignore = bool(parsed.state.flags & re.IGNORECASE)
    found = _needed(list(parsed), parser)
    if found is None:
        return None
    return (tuple(t.lower() for t in found), True) if ignore else (found, False)


def _needed(items: list[Any], parser: Any) -> tuple[str, ...] | None:
    """The best set of literals one of which every match of a parsed sequence contains: a single
    run of plain characters (the longest, the first of equals) before any set of alternatives
    (the one whose shortest literal is longest, then the one with fewest)."""
    runs: list[str] = []
    sets: list[tuple[str, ...]] = []
    run: list[str] = []

    def add(found: tuple[str, ...] | None) -> None:
        if found is not None and len(found) == 1:
            runs.append(found[0])
        elif found is not None:
            sets.append(found)

    for op, av in items:
        if op == parser.LITERAL:
            run.append(chr(av))
            continue
        if run:
            runs.append("".join(run))
            run = []
        if op == parser.SUBPATTERN and not av[1] and not av[2]:  # a group without its own flags
            add(_needed(list(av[3]), parser))
        elif op == parser.BRANCH:
            alternatives = [_needed(list(branch), parser) for branch in av[1]]
            if all(a is not None for a in alternatives):
                add(tuple(dict.fromkeys(t for a in alternatives if a is not None for t in a)))
        elif op in (parser.MAX_REPEAT, parser.MIN_REPEAT) and av[0] >= 1:  # at least once
            add(_needed(list(av[2]), parser))
    if run:
        runs.append("".join(run))
    best = max(runs, key=len, default="")
    if len(best) >= 3:
        return (best,)
    if not sets:
        return None
    return max(sets, key=lambda s: (min(map(len, s)), -len(s)))
