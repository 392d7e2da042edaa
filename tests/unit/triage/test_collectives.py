"""What collective timeouts say beyond their rule (triage.collectives): pure, on lines alone."""

from __future__ import annotations

from babysit.triage.collectives import Collectives, ranks_text


def _line(rank: int, seq: int, op: str = "ALLREDUCE", numel: int = 1, pg: str = "") -> str:
    return (
        f"[{pg}Rank {rank}] Watchdog caught collective operation timeout: WorkNCCL(SeqNum={seq}, "
        f"OpType={op}, NumelIn={numel}, NumelOut={numel}, Timeout(ms)=600000) ran for 600012 "
        "milliseconds before timing out."
    )


def _fed(*lines: tuple[int, str]) -> Collectives:
    c = Collectives()
    for rank, line in lines:
        c.note_rank(rank)
        c.note_watchdog(rank, line, line)
    return c


def test_the_silent_rank_is_named_from_the_stated_world_size() -> None:
    c = _fed(*[(r, _line(r, 80)) for r in range(7)])
    c.note_world("ProcessGroupNCCL initialization options: size: 8, global rank: 0, TIMEOUT(ms)")
    note, suspect = c.suspects(set(range(7)))
    assert suspect == 7 and "7 of 8 ranks timed out; rank(s) 7 never reported" in note
    # a subgroup's smaller size does not shrink the world
    c.note_world("world_size=4")
    assert c.world_size == 8


def test_the_rank_behind_in_completed_collectives_is_the_suspect() -> None:
    c = Collectives()
    for rank, done in ((0, 1579), (1, 1570), (2, 1579)):
        text = f"[PG 0 Rank {rank}] Timeout at NCCL work: 1580, last completed NCCL work: {done}."
        c.note_watchdog(rank, text, text)
    note, suspect = c.suspects({0, 1, 2})
    assert suspect == 1 and "rank(s) 1 completed the fewest collectives (1570)" in note


def test_different_collectives_at_one_number_are_a_desync_a_send_and_its_receive_not() -> None:
    split = _fed((0, _line(0, 80, "BROADCAST")), (1, _line(1, 80, "ALLGATHER"))).desync()
    assert split is not None and "rank(s) 0 in BROADCAST" in split
    assert "rank(s) 1 in ALLGATHER" in split
    assert _fed((0, _line(0, 80, "SEND")), (1, _line(1, 80, "RECV"))).desync() is None
    groups = _fed((0, _line(0, 80, "BROADCAST", pg="PG ID 1 PG GUID 1 ")),
                  (1, _line(1, 80, "ALLGATHER", pg="PG ID 2 PG GUID 2 ")))  # fmt: skip
    assert groups.desync() is None


def test_one_collective_with_different_sizes_on_two_ranks_is_a_desync() -> None:
    pg = "PG ID 0 PG GUID 0(default_pg) "
    split = _fed(
        (0, _line(0, 202558, "_ALLGATHER_BASE", numel=75264, pg=pg)),
        *[(r, _line(r, 202558, "_ALLGATHER_BASE", numel=2359296, pg=pg)) for r in (1, 2, 6)],
    ).desync()
    assert split is not None and "with different sizes" in split
    assert "rank(s) 0 with 75,264 elements" in split and "1, 2, 6 with 2,359,296" in split
    # the same size everywhere, or a collective whose sizes differ by design: no desync
    same = _fed((0, _line(0, 9, numel=64, pg=pg)), (1, _line(1, 9, numel=64, pg=pg)))
    assert same.desync() is None
    uneven = _fed((0, _line(0, 9, "ALLTOALL_BASE", numel=64, pg=pg)),
                  (1, _line(1, 9, "ALLTOALL_BASE", pg=pg)))  # fmt: skip
    assert uneven.desync() is None
    # two groups at one number are two collectives, and a PG ID names a group only on its own
    # ranks (each process counts the groups it made): a pipeline's stages all-reduce their own
    # sizes at the same numbers, in groups that older logs do not name at all
    groups = _fed((0, _line(0, 9, numel=64, pg="PG ID 1 PG GUID 1 ")),
                  (1, _line(1, 9, numel=8, pg="PG ID 1 PG GUID 5 ")))  # fmt: skip
    assert groups.desync() is None
    stages = _fed(*[(r, _line(r, 4021, numel=123456789)) for r in range(4)],
                  *[(r, _line(r, 4021, numel=98765432)) for r in range(4, 8)])  # fmt: skip
    assert stages.desync() is None


def test_the_set_up_is_a_groups_first_collective_or_a_barrier_among_its_first_few() -> None:
    assert _fed((1, _line(1, 1, "BROADCAST", numel=54607872))).at_set_up() is not None
    barrier = _fed((1, _line(1, 3))).at_set_up()
    assert barrier == "in a barrier after only 2 collective(s): the set-up"
    assert _fed((1, _line(1, 3, numel=6572160))).at_set_up() is None  # not a barrier
    assert _fed((1, _line(1, 5))).at_set_up() is not None  # the fifth
    assert _fed((1, _line(1, 6))).at_set_up() is None  # past the first five
    assert _fed((1, _line(1, 1)), (2, _line(2, 1580))).at_set_up() is None  # a rank was past it
    assert Collectives().at_set_up() is None  # no watchdog line: the log does not say
    # A line without its rank still counts.
    c = Collectives()
    c.note_watchdog(None, _line(0, 1), _line(0, 1))
    assert c.at_set_up() is not None and c.watchdog == {}


def test_ranks_are_kept_bounded_and_listed_short() -> None:
    c = Collectives()
    for r in range(100_005):
        c.note_rank(r)
    assert len(c.ranks_seen) == 100_000
    assert ranks_text(range(12)) == "0, 1, 2, 3, 4, 5, 6, 7 and 4 more"
