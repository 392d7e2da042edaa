"""babysit.sources.follow.Follower on real files in tmp_path."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from babysit.sources.follow import READ_CHUNK, Follower


def texts(chunk) -> list[str]:
    return [line.text for line in chunk.lines]


@pytest.fixture
def log(tmp_path: Path) -> Path:
    path = tmp_path / "stdout.log"
    path.write_bytes(b"")
    return path


def append(path: Path, data: bytes) -> None:
    with path.open("ab") as fh:
        fh.write(data)


def test_missing_file_is_empty_chunk(tmp_path: Path) -> None:
    f = Follower(tmp_path / "absent.log", "stdout")
    chunk = f.poll(1.0, final=True)
    assert chunk.data == b""
    assert chunk.lines == []
    assert f.offset == 0


def test_empty_file(log: Path) -> None:
    f = Follower(log, "stdout")
    assert texts(f.poll(1.0)) == []
    assert texts(f.poll(1.0, final=True)) == []


@pytest.mark.parametrize(
    "data",
    [
        b"a\nb\nc\n",
        b"a\rb\rc\r",
        b"a\r\nb\r\nc\r\n",
        b"a\n\n\nb\r\r\nc\n",  # empty lines are not emitted
        b"\n\r\na\nb\r\nc\n",
    ],
)
def test_line_endings(log: Path, data: bytes) -> None:
    log.write_bytes(data)
    f = Follower(log, "stdout")
    chunk = f.poll(1.0)
    assert texts(chunk) == ["a", "b", "c"]
    assert f.consumed == len(data)


def test_line_records(log: Path) -> None:
    log.write_bytes(b"one\ntwo\n")
    f = Follower(log, "stderr")
    lines = f.poll(42.0).lines
    assert [(ln.stream, ln.number, ln.text, ln.ts, ln.truncated) for ln in lines] == [
        ("stderr", 1, "one", 42.0, False),
        ("stderr", 2, "two", 42.0, False),
    ]
    append(log, b"three\n")
    assert [ln.number for ln in f.poll(43.0).lines] == [3]


def test_tqdm_carriage_returns(log: Path) -> None:
    log.write_bytes(b" 10%|#   |\r 20%|##  |\r 30%|### |\n")
    assert texts(Follower(log, "stderr").poll(0.0)) == [" 10%|#   |", " 20%|##  |", " 30%|### |"]


def test_crlf_split_across_polls_gives_no_empty_line(log: Path) -> None:
    f = Follower(log, "stdout")
    append(log, b"a\r")
    assert texts(f.poll(0.0)) == ["a"]
    append(log, b"\nb\r\n")
    assert texts(f.poll(0.0)) == ["b"]


def test_partial_line_is_kept_until_completed(log: Path) -> None:
    f = Follower(log, "stdout")
    append(log, b"iter 1: lo")
    chunk = f.poll(0.0)
    assert chunk.lines == []
    assert chunk.data == b"iter 1: lo"
    assert f.offset == 10
    assert f.consumed == 0
    append(log, b"ss 2.5\niter 2")
    chunk = f.poll(0.0)
    assert texts(chunk) == ["iter 1: loss 2.5"]
    assert f.consumed == len(b"iter 1: loss 2.5\n")


def test_final_flushes_partial_line(log: Path) -> None:
    log.write_bytes(b"done\nno newline at end")
    f = Follower(log, "stdout")
    assert texts(f.poll(0.0)) == ["done"]
    chunk = f.poll(0.0, final=True)
    assert texts(chunk) == ["no newline at end"]
    assert chunk.lines[0].truncated is False
    assert f.consumed == f.offset
    assert texts(f.poll(0.0, final=True)) == []  # flushed once only


def test_final_in_the_same_poll_as_the_data(log: Path) -> None:
    log.write_bytes(b"a\nb")
    assert texts(Follower(log, "stdout").poll(0.0, final=True)) == ["a", "b"]


def test_invalid_utf8_is_replaced(log: Path) -> None:
    log.write_bytes(b"ok \xff\xfe bytes\n\xc3\n")
    lines = texts(Follower(log, "stdout").poll(0.0))
    assert lines == ["ok \ufffd\ufffd bytes", "\ufffd"]


def test_utf8_char_split_across_polls(log: Path) -> None:
    f = Follower(log, "stdout")
    snowman = "☃".encode()
    append(log, b"x" + snowman[:1])
    assert f.poll(0.0).lines == []
    append(log, snowman[1:] + b"\n")
    assert texts(f.poll(0.0)) == ["x☃"]


def test_chunk_data_is_raw_bytes(log: Path) -> None:
    raw = b"a\r\n\xffb\rpartial"
    log.write_bytes(raw)
    chunk = Follower(log, "stdout").poll(0.0)
    assert isinstance(chunk.data, bytes)
    assert chunk.data == raw


def test_max_bytes_limits_one_poll(log: Path) -> None:
    log.write_bytes(b"a\n" * 100)
    f = Follower(log, "stdout")
    chunk = f.poll(0.0, max_bytes=10)
    assert len(chunk.data) == 10
    assert texts(chunk) == ["a"] * 5
    rest = f.poll(0.0)
    assert len(texts(rest)) == 95


def test_final_does_not_flush_when_more_is_unread(log: Path) -> None:
    log.write_bytes(b"abcdef\n")
    f = Follower(log, "stdout")
    chunk = f.poll(0.0, final=True, max_bytes=3)
    assert chunk.lines == []  # "abc" is not a line: the rest of it is still unread
    assert texts(f.poll(0.0, final=True)) == ["abcdef"]


def test_long_line_with_newline_in_one_read_is_cut(log: Path) -> None:
    log.write_bytes(b"x" * 100 + b"\nnext\n")
    f = Follower(log, "stdout", max_line_bytes=10)
    lines = f.poll(0.0).lines
    assert [(ln.text, ln.truncated) for ln in lines] == [("x" * 10, True), ("next", False)]


def test_line_of_exactly_max_bytes_is_not_truncated(log: Path) -> None:
    log.write_bytes(b"y" * 10 + b"\n")
    lines = Follower(log, "stdout", max_line_bytes=10).poll(0.0).lines
    assert [(ln.text, ln.truncated) for ln in lines] == [("y" * 10, False)]


def test_huge_line_is_truncated_and_memory_bounded(log: Path) -> None:
    max_line = 64 * 1024
    with log.open("wb") as fh:
        fh.write(b"HEAD")
        block = b"z" * READ_CHUNK
        for _ in range(20):
            fh.write(block)
        fh.write(b"\nstep 5: loss 1.0\n")
    f = Follower(log, "stdout", max_line_bytes=max_line)
    lines = []
    polls = 0
    while True:
        chunk = f.poll(0.0)
        polls += 1
        assert len(f._pending) <= max_line
        lines += chunk.lines
        if not chunk.data:
            break
    assert polls > 2  # the default max_bytes spreads 20 MB over several polls
    assert len(lines) == 2
    first, second = lines
    assert first.truncated is True
    assert len(first.text) == max_line
    assert first.text.startswith("HEADzzz")
    assert (second.text, second.truncated, second.number) == ("step 5: loss 1.0", False, 2)
    assert f.consumed == log.stat().st_size


def test_huge_line_without_end_then_final(log: Path) -> None:
    log.write_bytes(b"q" * 1000)
    f = Follower(log, "stdout", max_line_bytes=100)
    chunk = f.poll(0.0)
    assert [(len(ln.text), ln.truncated) for ln in chunk.lines] == [(100, True)]
    assert f._pending == b""
    append(log, b"q" * 1000)
    assert f.poll(0.0).lines == []  # still the same over-long line: skipped
    assert f.poll(0.0, final=True).lines == []  # already emitted (truncated): nothing more
    append(log, b"after\n")
    assert texts(f.poll(0.0)) == ["after"]


def test_huge_line_ended_by_cr(log: Path) -> None:
    log.write_bytes(b"w" * 500 + b"\r\nnext\r\n")
    f = Follower(log, "stdout", max_line_bytes=100)
    assert f.poll(0.0, max_bytes=200).lines[0].truncated
    assert texts(f.poll(0.0)) == ["next"]


def test_truncation_restarts_from_zero(log: Path) -> None:
    log.write_bytes(b"old line 1\nold line 2\npart")
    f = Follower(log, "stdout")
    assert texts(f.poll(0.0)) == ["old line 1", "old line 2"]
    log.write_bytes(b"new\n")  # truncated and rewritten, shorter than before
    chunk = f.poll(0.0)
    assert texts(chunk) == ["new"]  # the old partial "part" is dropped
    assert chunk.data == b"new\n"
    assert f.offset == 4


def test_truncation_to_empty(log: Path) -> None:
    log.write_bytes(b"abc\n")
    f = Follower(log, "stdout")
    f.poll(0.0)
    log.write_bytes(b"")
    assert f.poll(0.0).lines == []
    assert f.offset == 0
    append(log, b"x\n")
    assert texts(f.poll(0.0)) == ["x"]


def test_consumed_lets_a_new_follower_resume(log: Path) -> None:
    log.write_bytes(b"line 1\nline 2\r\nline 3 partial")
    f = Follower(log, "stdout")
    assert texts(f.poll(0.0)) == ["line 1", "line 2"]
    resume_at, number = f.consumed, f.line_number
    assert resume_at == len(b"line 1\nline 2\r\n")
    append(log, b" done\nline 4\n")
    g = Follower(log, "stdout", offset=resume_at, line_number=number)
    lines = g.poll(0.0).lines
    assert [(ln.number, ln.text) for ln in lines] == [(3, "line 3 partial done"), (4, "line 4")]


def test_resume_after_cr_before_lf(log: Path) -> None:
    log.write_bytes(b"a\r")
    f = Follower(log, "stdout")
    f.poll(0.0)
    append(log, b"\nb\n")
    g = Follower(log, "stdout", offset=f.consumed)
    assert texts(g.poll(0.0)) == ["b"]


def test_resume_inside_an_over_long_line(log: Path) -> None:
    log.write_bytes(b"HEAD" + b"x" * 1000)
    f = Follower(log, "stdout", max_line_bytes=100)
    assert f.poll(0.0).lines[0].truncated
    append(log, b"x" * 10 + b"\nstep 5\n")
    g = Follower(log, "stdout", offset=f.consumed, max_line_bytes=100)
    got = [(line.text[:4], line.truncated) for line in g.poll(0.0).lines]
    assert got == [("HEAD", True), ("step", False)]


# -- paths that are not regular files -------------------------------------------------------------


def poll_in_thread(f: Follower, deadline_s: float = 10.0) -> bool:
    """True when poll() returned within the deadline. A poll blocked opening the FIFO is freed
    (a writer comes and goes) so that the test fails instead of hanging."""
    done = threading.Event()

    def go() -> None:
        f.poll(1.0, final=True)
        done.set()

    threading.Thread(target=go, daemon=True).start()
    if done.wait(deadline_s):
        return True
    os.close(os.open(f.path, os.O_WRONLY | os.O_NONBLOCK))
    return False


def test_a_fifo_is_never_opened_and_is_reported_once(tmp_path: Path) -> None:
    fifo = tmp_path / "metrics.fifo"
    os.mkfifo(fifo)
    f = Follower(fifo, "metrics")
    assert poll_in_thread(f), "poll() blocked opening a FIFO"
    problem = f.take_problem()
    assert problem is not None and "FIFO" in problem and str(fifo) in problem
    assert "regular file" in problem
    assert f.take_problem() is None  # said once
    assert f.poll(2.0).data == b"" and f.take_problem() is None


def test_a_writer_waiting_on_the_fifo_is_not_woken(tmp_path: Path) -> None:
    """Opening the pipe would let a writer's open() through, then close under it (EPIPE)."""
    fifo = tmp_path / "metrics.fifo"
    os.mkfifo(fifo)
    f = Follower(fifo, "metrics")
    assert poll_in_thread(f), "poll() blocked opening a FIFO"
    with pytest.raises(OSError):  # ENXIO: still nobody reading it
        os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)


def test_a_regular_file_again_is_read_and_the_problem_clears(tmp_path: Path) -> None:
    path = tmp_path / "metrics.jsonl"
    os.mkfifo(path)
    f = Follower(path, "metrics")
    assert poll_in_thread(f), "poll() blocked opening a FIFO"
    assert f.take_problem() is not None
    path.unlink()
    path.write_bytes(b'{"step": 1}\n')
    assert texts(f.poll(2.0)) == ['{"step": 1}']
    assert f.problem is None


def test_a_character_device_is_not_read(tmp_path: Path) -> None:
    f = Follower(Path("/dev/zero"), "metrics")
    assert f.poll(1.0).data == b""
    problem = f.take_problem()
    assert problem is not None and "not a regular file" in problem


def test_a_log_deleted_under_the_follower_is_read_on_through_its_descriptor(log: Path) -> None:
    """The home removed mid-run: the writer still appends to the unlinked file; so does the
    follower read it, through the descriptor it keeps."""
    writer = log.open("ab")
    try:
        writer.write(b"step 1\n")
        writer.flush()
        f = Follower(log, "stdout")
        assert texts(f.poll(1.0)) == ["step 1"]
        log.unlink()
        writer.write(b"step 2\n")
        writer.flush()
        assert texts(f.poll(2.0)) == ["step 2"]
        assert texts(f.poll(3.0, final=True)) == []
    finally:
        writer.close()


def test_a_new_file_at_the_path_is_followed_instead(log: Path) -> None:
    append(log, b"old 1\n")
    f = Follower(log, "stdout")
    assert texts(f.poll(1.0)) == ["old 1"]
    log.unlink()
    log.write_bytes(b"new\n")  # rotated: a new (shorter) file under the name
    assert texts(f.poll(2.0)) == ["new"]


def test_a_file_babysit_may_not_read_is_said_not_raised(
    log: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A --metrics-file in a directory babysit may not read used to end supervision.
    log.write_bytes(b"step 1\n")
    f = Follower(log, "metrics")

    def denied(*args: object, **kwargs: object) -> int:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(os, "open", denied)
    assert f.poll(1.0).lines == []
    problem = f.take_problem()
    assert problem is not None and "Permission denied" in problem
    monkeypatch.undo()
    assert [x.text for x in f.poll(2.0).lines] == ["step 1"]
    f.close()
