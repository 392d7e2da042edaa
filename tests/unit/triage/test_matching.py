"""The matcher: the rule a line matches, the same whatever lines came before it."""

from __future__ import annotations

import random
from pathlib import Path

from babysit.triage.anatomy import anatomy
from babysit.triage.knowledge import load_knowledge
from babysit.triage.matching import Matcher

KB = load_knowledge()


def _lines_with_digits() -> list[str]:
    """Lines of the corpus that hold a digit and a rule's words, each as the engine sees it."""
    corpus = Path(__file__).parents[2] / "corpus" / "real"
    out: list[str] = []
    for log in sorted(corpus.glob("*/*.log"))[::40]:
        for line in log.read_text(errors="replace").splitlines():
            body = anatomy(line).body
            if any(c.isdigit() for c in body) and Matcher(KB).match(body) is not None:
                out.append(body)
    return out


def test_a_line_matches_the_rule_it_would_whatever_lines_of_its_shape_came_before() -> None:
    # Lines alike but for their digits (a step's warning on every rank with other numbers) share
    # a plan made from those seen first: it must find what the whole plan finds in each, where
    # the digits decide (`exit code 137`, `Xid 79`, `[Errno 28]`) and where they do not.
    rng = random.Random(12)
    bodies = _lines_with_digits()
    assert len(bodies) > 200
    bodies += ["exit code 137", "Xid 79", "[Errno 28] No space left on device", "signal 11"]
    warm = Matcher(KB)
    for body in bodies:
        variants = [body] + [
            "".join(rng.choice("0123456789") if c.isdigit() else c for c in body) for _ in range(4)
        ]
        for v in variants:
            fresh = Matcher(KB).match(v)
            got = warm.match(v)
            assert (got and (got[0], got[1].span())) == (fresh and (fresh[0], fresh[1].span())), v


def test_every_corpus_line_a_pattern_matches_holds_one_of_its_hints() -> None:
    # A pattern with no literal run of its own is skipped on a line that holds none of its
    # alternatives (`(?:exit|return) ?co...`): on real lines, each match must hold one of them,
    # or the skip would lose a verdict.
    corpus = Path(__file__).parents[2] / "corpus" / "real"
    several = [
        (rx, hint)
        for rule in KB.rules
        for rx, hint in zip(rule.patterns, rule.hints, strict=True)
        if hint is not None and len(hint[0]) > 1
    ]
    assert len(several) >= 15
    matched = 0
    for log in sorted(corpus.glob("*/*.log"))[::3]:
        for line in log.read_text(errors="replace").splitlines():
            body = anatomy(line).body
            low = body.lower()
            for rx, (texts, lower) in several:
                if rx.search(body) is not None:
                    matched += 1
                    assert any(t in (low if lower else body) for t in texts), (rx.pattern, body)
    assert matched > 50
