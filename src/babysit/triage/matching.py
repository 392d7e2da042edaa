"""Which rule of the knowledge base a line matches, fast: the same answer as trying every
pattern of every rule in order, for a fraction of the cost.

    matcher = Matcher(load_knowledge())
    matcher.match("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB")
    # -> (index of cuda.oom in kb.rules, <re.Match>)

A line is looked for in a cache of the lines seen (by hash), then through a plan: every pattern
in order, each skipped where its literal hint (or none of its hints) is not in the line; and
from the second line of a shape on (its digits all made 0), through that shape's own plan
(_plan, below).
"""

from __future__ import annotations

import re
from array import array

from babysit.triage.knowledge import Knowledge
from babysit.triage.patterns import raised

_CACHE_MAX = 50_000
_PLANS_MAX = 4_096  # the shapes of line whose plans are kept (a few tens of entries, 4 bytes each)
_ZEROS = str.maketrans("123456789", "000000000")
# A pattern that can match one line and not another of the same shape: one that names digits,
# or refers back to a group (`(\w)\1` matches `11`, not `12`).
_DIGIT_AWARE = re.compile(r"\\d|\\D|[0-9]|\(\?P=")
_QUANTIFIER = re.compile(r"(?<!\\)\{\d*,?\d*\}")


# (the rule's index, the pattern, its literal hint or None, lowercase?, the rule's `requires`,
# the literals one of which every match holds where there are several, else ())
_Entry = tuple[int, re.Pattern[str], str | None, bool, tuple[str, ...], tuple[str, ...]]
_Zeroed = tuple[str, ...] | None
_PLAN_CACHE: dict[int, tuple[Knowledge, list[_Entry], list[bool], list[_Zeroed]]] = {}


def _plan(kb: Knowledge) -> tuple[list[_Entry], list[bool], list[_Zeroed]]:
    """The matching loop's plan: every pattern of every rule in order, with its rule's index,
    its literal hint (or the literals one of which every match holds), lowercase?, and the
    rule's `requires`; per pattern, whether it tells one digit from another, and its hints with
    their digits made 0. Made once a knowledge base.

    Lines of one shape (their digits all made 0: `step 1200 error 3`, `step 1300 error 7`)
    differ only where a pattern tells one digit from another (`exit code 137`, `\\d`,
    `[0-9a-f]`): every other pattern matches all of them at the same place or none, and a hint
    (a literal every match holds) that is not in the shape, its digits made 0 too, is in none of
    them. So from the second line of a shape on (the first goes through the whole plan), the
    shape's plan (Matcher._plan_of) is the patterns that tell digits apart and whose hint the
    shape may hold, and the others that match the line: what the whole plan would find, at a
    fraction of the cost where a log says the same thing every step with other numbers (~1,250
    patterns a line against a few tens)."""
    cached = _PLAN_CACHE.get(id(kb))
    if cached is not None and cached[0] is kb:
        return cached[1], cached[2], cached[3]
    plan: list[_Entry] = []
    zeroed: list[_Zeroed] = []
    for i, rule in enumerate(kb.rules):
        for rx, hint in zip(rule.patterns, rule.hints or (None,) * len(rule.patterns), strict=True):
            texts, lower = hint if hint is not None else ((), False)
            one = texts[0] if len(texts) == 1 else None
            plan.append((i, rx, one, lower, rule.requires, texts if len(texts) > 1 else ()))
            zeroed.append(tuple(t.translate(_ZEROS) for t in texts) if texts else None)
    digits = [_DIGIT_AWARE.search(_QUANTIFIER.sub("", e[1].pattern)) is not None for e in plan]
    if len(_PLAN_CACHE) >= 4:
        _PLAN_CACHE.clear()
    _PLAN_CACHE[id(kb)] = (kb, plan, digits, zeroed)
    return plan, digits, zeroed


class Matcher:
    """The rule a line matches, for one log's lines (its caches grow with the log, bounded)."""

    def __init__(self, kb: Knowledge) -> None:
        self.kb = kb
        # Keyed by hash, not by the line: 50k lines of 4 KiB would hold 200 MB.
        self._cache: dict[int, int] = {}
        self._plan, self._digits, self._zeroed = _plan(kb)
        # a line's shape (_plan_of) -> its plan; None: seen once
        self._plans: dict[int, array[int] | None] = {}

    def match(self, body: str) -> tuple[int, re.Match[str]] | None:
        """The first rule that matches the line (its index in the knowledge base), with the
        match; None when none does."""
        key = hash(body)
        idx = self._cache.get(key)
        low = body.lower()
        if idx is not None:
            if idx < 0:
                return None
            m = self.kb.rules[idx].search(body, low)
            if m is not None:
                return idx, m
        # The first rule that matches wins, except that after a consequence a later, specific
        # (confidence >= 0.7) cause of at least its precedence, found further on in the line,
        # still may: a line pasted flat (`... terminate called ... what(): NCCL error ...
        # ncclRemoteError: ... NET/IB : Got completion from peer ... with error 12`).
        rules, plan = self.kb.rules, self._plan
        found: tuple[int, re.Match[str]] | None = None
        skip = -1  # a rule known not to apply to this line
        for k in self._plan_of(body, low):
            i, rx, hint, lower, requires, anyof = plan[k]
            if i == skip:
                continue
            if found is not None:
                r = rules[i]
                if (
                    r.role != "cause"
                    or r.confidence < 0.7
                    or r.precedence < rules[found[0]].precedence
                ):
                    skip = i
                    continue
            if hint is not None:
                if hint not in (low if lower else body):
                    continue
            elif anyof and not any(t in (low if lower else body) for t in anyof):
                continue
            if requires and not any(q in body for q in requires):
                skip = i
                continue
            m = raised(rx, body) if rules[i].raised_only else rx.search(body)
            if m is None or (found is not None and m.start() < found[1].end()):
                continue
            found = (i, m)
            if rules[i].role != "consequence":
                break  # a cause, or noise: done
            skip = i
        if len(self._cache) >= _CACHE_MAX:
            self._cache.clear()
        self._cache[key] = found[0] if found is not None else -1
        return found

    def _plan_of(self, body: str, low: str) -> array[int] | range:
        """The entries of the plan worth trying on the line (its indices, in order): all of them
        for the first line of its shape, the shape's own plan from the second on."""
        shaped = body.translate(_ZEROS)
        shape = hash(shaped)
        if shape not in self._plans:
            if len(self._plans) >= _PLANS_MAX:
                self._plans.clear()
            self._plans[shape] = None
            return range(len(self._plan))
        mine = self._plans[shape]
        if mine is None:
            shaped_low = shaped.lower()
            mine = self._plans[shape] = array("I")
            for k, (_, rx, hint, lower, _, anyof) in enumerate(self._plan):
                if self._digits[k]:
                    zeroed = self._zeroed[k]
                    text = shaped_low if lower else shaped
                    if zeroed is None or any(t in text for t in zeroed):
                        mine.append(k)
                    continue
                text = low if lower else body
                if hint is not None and hint not in text:
                    continue
                if anyof and not any(t in text for t in anyof):
                    continue
                if rx.search(body):
                    mine.append(k)
        return mine
