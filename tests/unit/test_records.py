"""babysit.records: the run state machine, one test per edge; pinned public values."""

from __future__ import annotations

import dataclasses
import itertools

import pytest

from babysit.records import (
    RUN_TRANSITIONS,
    AttemptRecord,
    ExitCode,
    Progress,
    RunState,
    can_transition,
)

S = RunState
ALLOWED = {
    # A babysit (re)starting on the run moves it to STARTING, whatever state it was left in.
    (S.STARTING, S.STARTING),
    (S.RUNNING, S.STARTING),
    (S.BACKOFF, S.STARTING),
    (S.STOPPING, S.STARTING),
    (S.STARTING, S.RUNNING),
    (S.STARTING, S.STOPPING),
    (S.STARTING, S.FAILED),
    (S.RUNNING, S.RUNNING),
    (S.RUNNING, S.BACKOFF),
    (S.RUNNING, S.SUCCEEDED),
    (S.RUNNING, S.FAILED),
    (S.RUNNING, S.STOPPING),
    (S.BACKOFF, S.RUNNING),
    (S.BACKOFF, S.STOPPING),
    (S.BACKOFF, S.FAILED),
    (S.STOPPING, S.STOPPED),
    (S.SUCCEEDED, S.STARTING),
    (S.FAILED, S.STARTING),
    (S.STOPPED, S.STARTING),
}
PAIRS = list(itertools.product(RunState, RunState))


@pytest.mark.parametrize(("old", "new"), PAIRS, ids=[f"{a.name}->{b.name}" for a, b in PAIRS])
def test_transition(old: RunState, new: RunState) -> None:
    assert can_transition(old, new) == ((old, new) in ALLOWED)


def test_table_is_exactly_the_documented_edges() -> None:
    table = {(old, new) for old, news in RUN_TRANSITIONS.items() for new in news}
    assert table == ALLOWED
    assert set(RUN_TRANSITIONS) == set(RunState)


@pytest.mark.parametrize("state", list(RunState))
def test_final(state: RunState) -> None:
    assert state.final == (state in {S.SUCCEEDED, S.FAILED, S.STOPPED})


def test_final_states_only_go_back_to_starting() -> None:
    for state in RunState:
        if state.final:
            assert RUN_TRANSITIONS[state] == frozenset({S.STARTING})


def test_every_state_is_reachable_from_starting() -> None:
    seen, todo = {S.STARTING}, [S.STARTING]
    while todo:
        for nxt in RUN_TRANSITIONS[todo.pop()]:
            if nxt not in seen:
                seen.add(nxt)
                todo.append(nxt)
    assert seen == set(RunState)


def test_run_state_values_are_stable() -> None:
    assert {s.name: s.value for s in RunState} == {
        "STARTING": "starting",
        "RUNNING": "running",
        "BACKOFF": "backoff",
        "STOPPING": "stopping",
        "SUCCEEDED": "succeeded",
        "FAILED": "failed",
        "STOPPED": "stopped",
    }


def test_exit_codes_are_pinned() -> None:
    assert {c.name: int(c) for c in ExitCode} == {
        "OK": 0,
        "INTERNAL": 1,
        "USAGE": 2,
        "NEEDS_HUMAN": 3,
        "BUDGET_EXHAUSTED": 4,
        "STOPPED": 5,
    }


@pytest.mark.parametrize(
    ("first", "last", "progress"),
    [
        (None, None, False),
        (0, None, False),
        (None, 5, True),
        (0, 0, False),
        (5, 5, False),
        (5, 6, True),
        (0, 100, True),
        (100, 50, False),  # went backwards (resumed from an older checkpoint)
    ],
)
def test_made_progress(first: int | None, last: int | None, progress: bool) -> None:
    assert AttemptRecord(1, 0.0, first_step=first, last_step=last).made_progress is progress


def test_records_are_frozen() -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        Progress(1, 0.0).step = 2  # type: ignore[misc]


def test_a_level_prints_as_its_word() -> None:
    from babysit.records import Level

    assert f"{Level.WARN}" == str(Level.WARN) == "warn" and Level.WARN == "warn"
