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
