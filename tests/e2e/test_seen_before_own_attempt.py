"""`babysit triage` of an attempt's own logs does not count that attempt's own verdict as
"seen before" (issue 12); another attempt's verdict still counts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import run_babysit

pytestmark = pytest.mark.e2e

FAIL = """\
import sys
print("step 1 loss: 2.5", flush=True)
print("Traceback (most recent call last):", file=sys.stderr)
print('  File "fail.py", line 5, in <module>', file=sys.stderr)
print("KeyError: 'label'", file=sys.stderr)
sys.exit(1)
"""


def test_triaging_an_attempt_does_not_count_its_own_record(workdir: Path) -> None:
    (workdir / "fail.py").write_text(FAIL)
    home = workdir / "home"
    res = run_babysit(
        "run", "--home", str(home), "--name", "rep", "-q", "--", "python", "fail.py", cwd=workdir
    )
    assert res.returncode == 3, res.stderr  # a bug: babysit gives up
    attempt1 = home / "runs" / "rep" / "attempt-0001"
    assert attempt1.is_dir()

    own = run_babysit("triage", "--home", str(home), "--json", str(attempt1), cwd=workdir)
    assert own.returncode == 0, own.stderr
    assert json.loads(own.stdout)["seen_before"] == []
    text = run_babysit("triage", "--home", str(home), str(attempt1), cwd=workdir)
    assert "seen before" not in text.stdout

    # A second run of the same bug: attempt 1 of the run is another attempt, seen before.
    res = run_babysit(
        "run", "--home", str(home), "--name", "rep", "-q", "--", "python", "fail.py", cwd=workdir
    )
    assert res.returncode == 3, res.stderr
    attempt2 = home / "runs" / "rep" / "attempt-0002"
    again = run_babysit("triage", "--home", str(home), "--json", str(attempt2), cwd=workdir)
    seen = json.loads(again.stdout)["seen_before"]
    assert [(s["run"], s["attempt"]) for s in seen] == [("rep", 1)]
