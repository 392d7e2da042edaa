"""babysit.triage.scan: the streaming prefilter that hands candidate lines to the engine."""

from __future__ import annotations

import gzip
import importlib
import io
import os
import time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from babysit.triage import blocks, grepfind, triage_files
from babysit.triage.blocks import Blocks
from babysit.triage.middle import GREP_MIDDLE_NEEDLES, MIDDLE_NEEDLES, Middle, middle_needles
from babysit.triage.scan import (
    CHUNK_BYTES,
    MAX_LINE_BYTES,
    NEEDLES,
    RARE_NEEDLES,
    SMALL_FILE_BYTES,
    ScanStats,
    scan,
)

Handed = list[tuple[int, str]]


def run(
    data: bytes,
    inert: Callable[[int, str], bool] = lambda n, t: False,
    size: int | None = None,
    rare: bool | None = None,
) -> tuple[Handed, ScanStats]:
    """Scan `data`; the lines handed over and the stats. `inert` is the sink's answer."""
    handed: Handed = []

    def sink(lineno: int, text: str) -> bool:
        handed.append((lineno, text))
        return inert(lineno, text)

    stats = scan(io.BytesIO(data), sink, size=size, rare=rare)
    assert stats.handed == len(handed)
    return handed, stats


def lines(*texts: str) -> bytes:
    return ("\n".join(texts) + "\n").encode()


def filler(n: int, start: int = 0) -> list[str]:
    """`n` step lines that hold no needle, common or rare."""
    return [f"step {i:08d} loss 2.3417 lr 3.0e-04 tok/s 91234" for i in range(start, start + n)]


# Filler lines in one chunk: a log of k * PER_CHUNK of them spans about k chunks.
PER_CHUNK = CHUNK_BYTES // (len(filler(1)[0]) + 1)


def test_filler_holds_no_needle() -> None:
    low = "\n".join(filler(3)).lower().encode()
    assert not any(nd in low for nd in NEEDLES + RARE_NEEDLES)


# -- line numbers --------------------------------------------------------------------------------


def test_exact_line_numbers() -> None:
    handed, stats = run(
        lines(
            "step 1",
            "RuntimeError: boom",
            "step 2",
            "step 3",
            "NCCL WARN Net : Call failed",
            "[rank1]: something Timed Out",
            "step 4",
        )
    )
    assert handed == [
        (2, "RuntimeError: boom"),
        (5, "NCCL WARN Net : Call failed"),
        (6, "[rank1]: something Timed Out"),
    ]
    assert stats.lines == 7
    assert stats.last_line == "step 4"


def test_needles_are_case_insensitive() -> None:
    handed, _ = run(lines("ok", "ERROR: X", "Segmentation Fault", "ok"))
    assert handed == [(2, "ERROR: X"), (3, "Segmentation Fault")]


def test_each_needle_is_listed_once() -> None:
    # a needle listed twice is searched twice (grep -F's patterns, the middle's pass)
    listed = (*NEEDLES, *RARE_NEEDLES)
    assert sorted(nd for nd in set(listed) if listed.count(nd) > 1) == []


def test_no_needle_holds_a_line_break_or_is_empty() -> None:
    # grep -F reads each line of its patterns as one pattern, and an empty one finds every line
    for nd in (*NEEDLES, *RARE_NEEDLES):
        assert nd and b"\n" not in nd and b"\r" not in nd, nd
        assert nd == nd.lower(), nd


def test_line_numbers_after_many_chunks_of_nothing() -> None:
    before = filler(70_000)  # ~3.3 MiB: several chunks without a candidate
    between = filler(50_000, start=70_000)
    text = [*before, "RuntimeError: first", *between, "ValueError: second", "step end"]
    data = lines(*text)
    assert len(data) > 5 * CHUNK_BYTES
    handed, stats = run(data)
    assert handed == [(70_001, "RuntimeError: first"), (120_002, "ValueError: second")]
    assert stats.lines == len(text)
    assert stats.size_bytes == len(data)
    assert stats.last_line == "step end"


@pytest.mark.parametrize("before", [-7, 0, 1, 3, 11, 30])
def test_candidate_line_across_a_chunk_boundary(before: int) -> None:
    """The candidate line starts `before` bytes before the end of the first 1 MiB chunk."""
    start = CHUNK_BYTES - before
    n, extra = divmod(start, 10)  # n 10-byte lines, the first one `extra` bytes longer
    head = b"x" * (9 + extra) + b"\n" + b"xxxxxxxxx\n" * (n - 1)
    assert len(head) == start
    data = head + b"RuntimeError: across the boundary\nstep\n"
    handed, stats = run(data)
    assert handed == [(n + 1, "RuntimeError: across the boundary")]
    assert stats.lines == n + 2


def test_every_line_counted_with_many_candidates_across_chunks() -> None:
    text = [f"{i}: error number {i}" if i % 7 == 0 else f"{i}: fine" for i in range(1, 200_001)]
    handed, stats = run(lines(*text))
    assert stats.lines == 200_000
    assert [n for n, _ in handed] == list(range(7, 200_001, 7))
    assert all(t.startswith(f"{n}: error") for n, t in handed)


# -- line endings --------------------------------------------------------------------------------


def test_crlf() -> None:
    handed, stats = run(b"step 1\r\nRuntimeError: boom\r\nstep 2\r\n")
    assert handed == [(2, "RuntimeError: boom")]
    assert stats.lines == 3
    assert stats.last_line == "step 2"


def test_bare_cr_splits_a_line_into_parts_with_one_number() -> None:
    data = b"start\n 10%|#   |\r 50%|##  |\rRuntimeError: at 60%\r\nafter\n"
    handed, stats = run(data)
    assert handed == [(2, " 10%|#   |"), (2, " 50%|##  |"), (2, "RuntimeError: at 60%")]
    assert stats.lines == 3


def test_last_line_of_a_progress_bar_is_its_last_part() -> None:
    _, stats = run(b"ok\n 10%|#\r 50%|##\r100%|###\n")
    assert stats.last_line == "100%|###"


def test_final_line_without_newline() -> None:
    handed, stats = run(b"step 1\nstep 2\nRuntimeError: no newline")
    assert handed == [(3, "RuntimeError: no newline")]
    assert stats.lines == 3
    assert stats.last_line == "RuntimeError: no newline"


def test_final_line_without_newline_and_no_candidate() -> None:
    handed, stats = run(b"step 1\nstep 2")
    assert handed == []
    assert stats.lines == 2
    assert stats.last_line == "step 2"


def test_empty_stream() -> None:
    handed, stats = run(b"")
    assert handed == []
    assert (stats.lines, stats.handed, stats.size_bytes, stats.binary) == (0, 0, 0, False)
    assert (stats.long_lines, stats.last_line) == (0, "")


def test_blank_lines_only() -> None:
    handed, stats = run(b"\n\n\n")
    assert handed == []
    assert stats.lines == 3
    assert stats.last_line == ""


# -- long lines, bad bytes, binary ---------------------------------------------------------------


def test_20_mb_line_is_cut_and_the_next_line_keeps_its_number() -> None:
    data = b"RuntimeError: at the start " + b"x" * (20 << 20) + b"\nValueError: after it\n"
    handed, stats = run(data)
    assert [n for n, _ in handed] == [1, 2]
    assert handed[0][1].startswith("RuntimeError: at the start xxx")
    assert len(handed[0][1]) == MAX_LINE_BYTES
    assert handed[1] == (2, "ValueError: after it")
    assert stats.long_lines == 1
    assert stats.lines == 2
    assert stats.size_bytes == len(data)
    assert stats.last_line == "ValueError: after it"


def test_20_mb_line_after_other_lines() -> None:
    data = (
        b"step 1\nstep 2\nRuntimeError: at the start "
        + b"x" * (20 << 20)
        + b"\nstep 3\nValueError: after it\nstep 4"
    )
    handed, stats = run(data)
    assert [n for n, _ in handed] == [3, 5]
    assert len(handed[0][1]) == MAX_LINE_BYTES
    assert handed[1] == (5, "ValueError: after it")
    assert (stats.long_lines, stats.lines, stats.last_line) == (1, 6, "step 4")


def test_huge_last_line_without_newline() -> None:
    handed, stats = run(b"step 1\nRuntimeError: " + b"y" * (3 * CHUNK_BYTES))
    assert [n for n, _ in handed] == [2]
    assert (stats.long_lines, stats.lines) == (1, 2)


def test_line_just_under_the_limit_is_whole() -> None:
    body = "RuntimeError: " + "z" * (MAX_LINE_BYTES - 20)
    handed, stats = run(lines("ok", body, "ok"))
    assert handed == [(2, body)]
    assert stats.long_lines == 0


def test_invalid_utf8_is_replaced() -> None:
    handed, stats = run(b"ok\nRuntimeError: bad \xff\xfe bytes \xc3\n\xe2\x82 step\n")
    assert handed == [(2, "RuntimeError: bad \ufffd\ufffd bytes \ufffd")]
    assert stats.lines == 3
    assert stats.last_line == "\ufffd step"


def test_a_zip_archive_is_binary_though_it_holds_text() -> None:
    handed, stats = run(b"PK\x03\x04\x00\x00RuntimeError: inside a zip\n" * 10)
    assert handed == []
    assert stats.binary
    assert stats.lines == 0


def test_nul_past_the_first_8_kib_is_no_binary() -> None:
    data = lines(*filler(400), "RuntimeError: boom") + b"tail \x00 byte\n"
    assert data.index(b"\x00") > 8192
    handed, stats = run(data)
    assert not stats.binary
    assert handed == [(401, "RuntimeError: boom")]


OOM = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB"


def test_a_nul_byte_early_in_a_log_is_still_text() -> None:
    # A NUL in the first block (a log truncated under its writer, a stray byte) made the whole
    # log "binary": triage saw nothing and a CUDA OOM became a restart storm.
    handed, stats = run(b"starting\n\x00\x01 garbage\n" + lines("x", OOM))
    assert not stats.binary
    assert handed == [(4, OOM)]
    assert stats.lines == 4


def test_a_hole_of_nul_bytes_before_the_text_is_skipped_not_binary() -> None:
    # copytruncate under a writer without O_APPEND: the file starts with a hole of NULs as
    # long as what was written before, then the new output (on the same line as the hole).
    data = b"\x00" * (3 * CHUNK_BYTES) + lines("step 1", OOM)
    handed, stats = run(data)
    assert not stats.binary
    assert handed == [(2, OOM)]
    assert stats.long_lines == 0


def test_nul_bytes_inside_a_line_are_dropped() -> None:
    handed, _ = run(b"ok\nRuntime\x00Error: boom\x00\n")
    assert handed == [(2, "RuntimeError: boom")]


def test_control_bytes_and_escapes_are_text() -> None:
    body = "\x1b[31mRuntimeError\x1b[0m: \x07bad\x08 \x1b]0;title\x07 \x01\x02 done"
    handed, stats = run(lines("ok", body) * 50)
    assert not stats.binary
    assert handed[0] == (2, body)


def test_utf16_log_is_read_as_text() -> None:
    handed, stats = run(lines("ok", OOM).decode().encode("utf-16-le"))
    assert not stats.binary
    assert handed == [(2, OOM)]


@pytest.mark.parametrize(
    "head",
    [
        b"\x1f\x8b\x08\x00",  # gzip not named .gz
        b"PK\x03\x04",  # zip: a torch.save checkpoint
        b"\x7fELF\x02\x01\x01\x00",  # a core dump
        b"\x93NUMPY\x01\x00",
        b"\x80\x04\x95",  # a pickle
        b"\x89HDF\r\n\x1a\n",
        (24).to_bytes(8, "little") + b'{"__metadata__":{}}    ',  # safetensors
    ],
)
def test_known_binary_formats_are_skipped(head: bytes) -> None:
    handed, stats = run(head + b"RuntimeError: inside\n" * 100)
    assert stats.binary
    assert handed == []


@pytest.mark.parametrize("encoding", ["gbk", "latin-1", "shift_jis"])
def test_a_log_in_a_legacy_encoding_is_text(encoding: str) -> None:
    words = "Fehler à l'étape" + (" 训练失败 セグメンテーション" if encoding != "latin-1" else "")
    body = "\n".join(f"step {i} {words} {words}" for i in range(200)) + "\n" + OOM + "\n"
    data = body.encode(encoding, "replace")
    handed, stats = run(data)
    assert not stats.binary
    assert handed[-1] == (201, OOM)


def test_a_raw_tensor_dump_is_binary() -> None:
    import random
    import struct

    rng = random.Random(3)
    data = b"".join(struct.pack("<f", rng.gauss(0, 0.02)) for _ in range(1 << 14))
    _, stats = run(data + b"\nRuntimeError: x\n")
    assert stats.binary


def test_random_bytes_are_binary() -> None:
    import random

    rng = random.Random(7)
    data = bytes(rng.randrange(256) for _ in range(1 << 16)) + b"\nRuntimeError: x\n"
    handed, stats = run(data)
    assert stats.binary
    assert handed == []


def test_mostly_control_bytes_make_a_binary_file() -> None:
    data = bytes(b for b in range(1, 32) if b not in (9, 10, 11, 12, 13)) * 200 + b"\nerror\n"
    handed, stats = run(data)
    assert stats.binary
    assert handed == []


# -- follow windows ------------------------------------------------------------------------------


def test_traceback_frames_are_handed_without_a_needle() -> None:
    handed, _ = run(
        lines(
            "step 1",
            "Traceback (most recent call last):",
            '  File "train.py", line 10, in <module>',
            "    main()",
            '  File "data.py", line 3, in load',
            "    return pq.read_table(path)",
            "pyarrow.lib.ArrowInvalid: Parquet magic bytes not found",
            "step 2",
        ),
        rare=False,
    )
    assert [n for n, _ in handed] == [2, 3, 4, 5, 6, 7, 8]


def test_traceback_window_is_200_lines() -> None:
    # A 60-frame Python 3.11 traceback (file, code, carets) and the exception after it.
    frames = [f"    frame_{i}()" for i in range(300)]
    handed, _ = run(lines("Traceback (most recent call last):", *frames), rare=False)
    assert [n for n, _ in handed] == list(range(1, 202))


def test_traceback_window_crosses_chunks() -> None:
    size = len(filler(1)[0]) + 1
    head = filler(PER_CHUNK - 1)  # the traceback starts just before the chunk ends
    tb = [
        "Traceback (most recent call last):",
        '  File "train.py", line 10, in <module>',
        "    main()",
        "pyarrow.lib.ArrowInvalid: bad row",
    ]
    data = lines(*head, *tb, *filler(30_000))
    first = len(head) + 1
    assert CHUNK_BYTES - 2 * size < (first - 1) * size < CHUNK_BYTES
    handed, _ = run(data, rare=False)
    assert handed[:4] == [(first + i, t) for i, t in enumerate(tb)]
    assert len(handed) == 201


def test_file_frame_hands_three_lines() -> None:
    # Python 3.11: the frame, its code line, its carets; then the next frame or the exception.
    handed, _ = run(
        lines('  File "a.py", line 1, in f', "    g()", "    ^^^", "    more", "    not handed"),
        rare=True,
    )
    assert [n for n, _ in handed] == [1, 2, 3, 4]


def test_torchrun_failure_summary_is_handed() -> None:
    summary = [
        "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: ",
        "============================================================",
        "train.py FAILED",
        "------------------------------------------------------------",
        "Failures:",
        "  <NO_OTHER_FAILURES>",
        "------------------------------------------------------------",
        "Root Cause (first observed failure):",
        "[0]:",
        "  time      : 2024-01-02_03:04:05",
        "  host      : node-7",
        "  rank      : 3 (local_rank: 3)",
        "  exitcode  : -9 (pid: 1234)",
        "  error_file: <N/A>",
        "  traceback : Signal 9 (SIGKILL) received by PID 1234",
        "============================================================",
    ]
    handed, _ = run(lines(*filler(5), *summary, *filler(20)), rare=False)
    got = [t for _, t in handed]
    assert "  host      : node-7" in got
    assert "  rank      : 3 (local_rank: 3)" in got
    # `Root Cause` inside the `Failures:` window opens a window of its own.
    root = 5 + summary.index("Root Cause (first observed failure):") + 1
    assert max(n for n, _ in handed) == root + 12


def test_terminate_called_hands_the_what_line() -> None:
    handed, _ = run(
        lines(
            "terminate called after throwing an instance of 'c10::DistBackendError'",
            "  what():  [PG 0 Rank 3] Process group watchdog thread terminated with exception",
            "step",
            "step",
        ),
        rare=False,
    )
    assert [n for n, _ in handed] == [1, 2, 3]


@pytest.mark.parametrize("kind", ["chained", "torchrun"])
def test_trigger_inside_a_window_restarts_it(kind: str) -> None:
    text = ["Traceback (most recent call last):", '  File "a.py", line 1, in <module>', "    f()"]
    if kind == "chained":
        text += [
            "KeyError: 'x'",
            "",
            "During handling of the above exception, another exception occurred:",
            "",
            "Traceback (most recent call last):",
        ]
        for i in range(38):
            text += [f'  File "m{i}.py", line {i}, in g{i}', f"    g{i + 1}()"]
        last = "pyarrow.lib.ArrowInvalid: bad row"
        text.append(last)
    else:
        for i in range(37):  # Root Cause inside the traceback's window, its host past it
            text += [f'  File "launch{i}.py", line {i}, in run{i}', f"    run{i + 1}()"]
        text += [
            "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: ",
            "Root Cause (first observed failure):",
            "[0]:",
            "  time      : 2024-01-02_03:04:05",
            "  host      : node-7",
        ]
        last = "  host      : node-7"
    handed, _ = run(lines(*text), rare=False)
    assert (len(text), last) in handed


# -- rare needles --------------------------------------------------------------------------------

RARE_ONLY = "rm: cannot remove 'ckpt': Stale file handle"  # "stale file" is a rare needle


def test_rare_only_line_holds_only_rare_needles() -> None:
    low = RARE_ONLY.lower().encode()
    assert not any(nd in low for nd in NEEDLES)
    assert any(nd in low for nd in RARE_NEEDLES)


@pytest.fixture
def small_edges(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    """The scan module with edges of one chunk each and a 'small file' of two chunks, so that
    a test log of a few MB has a head, a middle and a tail."""
    mod = importlib.import_module("babysit.triage.scan")  # the package shadows the name
    monkeypatch.setattr(mod, "SMALL_FILE_BYTES", 2 * CHUNK_BYTES)
    monkeypatch.setattr(mod, "RARE_HEAD_BYTES", CHUNK_BYTES)
    monkeypatch.setattr(mod, "RARE_TAIL_BYTES", CHUNK_BYTES)
    return mod


def three_parts(middle: str = RARE_ONLY) -> tuple[bytes, list[str]]:
    """A log of about 5 chunks: RARE_ONLY-like lines in its head, middle and tail."""
    n = PER_CHUNK
    text = [
        "step start",
        RARE_ONLY,
        *filler(2 * n),
        middle,
        *filler(2 * n, 2 * n),
        RARE_ONLY + " (the end)",
    ]
    return lines(*text), text


@pytest.mark.parametrize(
    ("size", "rare", "everywhere"),
    [
        (1000, None, True),
        (SMALL_FILE_BYTES, None, True),
        (SMALL_FILE_BYTES + 1, None, False),
        (None, None, True),  # a stream of unknown size starts with them
        (10 * SMALL_FILE_BYTES, True, True),
        (None, True, True),
        (1000, False, False),
    ],
)
def test_rare_needles_by_size_or_forced(
    size: int | None, rare: bool | None, everywhere: bool
) -> None:
    handed, stats = run(lines("step 1", RARE_ONLY, "step 2"), size=size, rare=rare)
    assert handed == [(2, RARE_ONLY)]  # a short log is all edges: found whatever the size says
    assert (stats.needles == NEEDLES + RARE_NEEDLES) is everywhere
    assert stats.lines == 3


@pytest.mark.parametrize("rare", [False, None])
def test_a_big_log_is_searched_for_rare_needles_at_its_edges_only(
    small_edges: ModuleType, rare: bool | None
) -> None:
    data, text = three_parts()
    handed, stats = run(data, size=len(data), rare=rare)
    assert handed == [(2, RARE_ONLY), (len(text), text[-1])]  # not the one in the middle
    assert stats.needles == NEEDLES and stats.lines == len(text)
    every, _ = run(data, size=len(data), rare=True)
    assert [t for _, t in every] == [RARE_ONLY, RARE_ONLY, text[-1]]


def test_a_stream_of_unknown_size_keeps_rare_needles_for_its_start_and_its_end(
    small_edges: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(small_edges, "SMALL_FILE_BYTES", CHUNK_BYTES)
    data, text = three_parts()
    handed, stats = run(data, size=None)
    # The start (the first SMALL_FILE_BYTES of a stream) and the end; not the middle.
    assert [t for _, t in handed] == [RARE_ONLY, text[-1]]
    assert stats.needles == NEEDLES


def test_kernel_looking_head_turns_rare_needles_on(small_edges: ModuleType) -> None:
    kernel = "Jan  2 03:04:06 gpu-17 kernel: nfs: server fs01 not responding, still trying"
    data, _ = three_parts(kernel)
    data = lines("Jan  2 03:04:05 gpu-17 kernel: usb 1-1: new device") + data
    handed, _ = run(data, size=len(data))
    assert kernel in [t for _, t in handed]
    handed, _ = run(data, size=len(data), rare=False)  # forced off: the edges only
    assert kernel not in [t for _, t in handed]


def scan_file(
    path: Path, rare: bool | None = None, deadline: float | None = None
) -> tuple[Handed, ScanStats]:
    handed: Handed = []

    def sink(lineno: int, text: str) -> bool:
        handed.append((lineno, text))
        return False

    with path.open("rb") as f:
        size = path.stat().st_size
        stats = scan(f, sink, size=size, rare=rare, path=str(path), deadline=deadline)
    return handed, stats


@pytest.fixture
def recounted(small_edges: ModuleType, monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The bytes each scan read again to count lines it had left uncounted (small_edges')."""
    seen: list[int] = []
    real = Blocks.count_the_uncounted

    def spy(self: Any, upto: int) -> None:
        if self.counted_to is not None:
            seen.append(upto - self.counted_to)
        real(self, upto)

    monkeypatch.setattr(Blocks, "count_the_uncounted", spy)
    return seen


@pytest.mark.parametrize("how", ["sparse", "strings", "sparse, more matches than the sample"])
@pytest.mark.parametrize("odd", ["", "nul", "long line"])
def test_grep_finds_the_same_lines_as_python(
    small_edges: ModuleType, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, odd: str, how: str
) -> None:
    # grep's pass over a big file, the needles as one regular expression (a sample that
    # promises few matches) or as fixed strings, or the first and then the second (more matches
    # than the sample promised): the lines Python finds, and one pass but for the last
    n = PER_CHUNK
    text = [*filler(n), "[rank3]: RuntimeError: CUDA error: an illegal memory access", *filler(n)]
    text += ["Traceback (most recent call last):", '  File "x.py", line 3, in f', "Boom: e"]
    text += [f"[rank{r}]: Watchdog caught collective operation timeout" for r in range(50)]
    text += [*filler(3 * n), "ERROR: upper case", "torch.distributed.DistBackendError: x"]
    if odd == "nul":
        text.insert(n + 3, "\x00" * 100 + "NCCL WARN after a hole")
    if odd == "long line":
        text.insert(n + 3, "x" * (MAX_LINE_BYTES + 10) + " error")
    text += [*filler(3 * n), "the last error"]
    log = tmp_path / "big.log"
    log.write_bytes(lines(*text))
    assert grepfind.grep_path() is not None  # grep is everywhere babysit runs
    calls: list[str] = []
    real = grepfind.match_offsets_in_file
    real_two = grepfind.match_offsets_of_two_sets

    def spy(*a: Any, **kw: Any) -> Any:
        calls.append(f"common {a[0]}")
        return real(*a, **kw)

    def spy_two(*a: Any, **kw: Any) -> Any:
        calls.append(f"both {a[0]}{' sparse' if kw.get('sparse') else ''}")
        return real_two(*a, **kw)

    monkeypatch.setattr(small_edges, "match_offsets_in_file", spy)
    monkeypatch.setattr(small_edges, "match_offsets_of_two_sets", spy_two)
    few = Middle(GREP_MIDDLE_NEEDLES, 0.0 if how.startswith("sparse") else float("inf"))
    monkeypatch.setattr(small_edges, "middle_needles", lambda path, size, most: few)
    if how != "sparse":
        monkeypatch.setattr(small_edges, "SPARSE_MATCHES", 10)  # the log holds 50 and more
    with_grep = scan_file(log)
    # the big file went through grep once, common and rare needles together
    want = {"sparse": [f"both {log} sparse"], "strings": [f"both {log}"]}
    assert calls == want.get(how, [f"both {log} sparse", f"both {log}"])
    monkeypatch.setattr(grepfind, "grep_path", lambda: None)
    without = scan_file(log)
    assert with_grep[0] == without[0] and with_grep[1].lines == without[1].lines
    assert any("illegal memory access" in t for _, t in with_grep[0])
    assert any("upper case" in t for _, t in with_grep[0])
    assert with_grep[0][-1][1] == "the last error"


@pytest.mark.parametrize("layout", ["a match in the middle", "none in the middle", "a NUL"])
def test_a_big_log_s_middle_is_numbered_by_grep_s_lines_not_counted(
    small_edges: ModuleType,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    recounted: list[int],
    layout: str,
) -> None:
    # Issue 12, item 7: the middle's lines are not counted in Python (a tenth of the time of
    # a 1 GB log); grep numbers the lines it found, and the next match's number counts the
    # lines before a block that needs it (the tail). Every line handed keeps its number.
    n = PER_CHUNK
    text = ["step start", "Traceback (most recent call last):", "ValueError: head", *filler(5 * n)]
    if layout == "a match in the middle":
        text += ["[rank3]: RuntimeError: CUDA error: an illegal memory access", *filler(3 * n)]
    if layout == "a NUL":
        text += [*filler(n), "\x00" * 100 + "NCCL WARN after a hole", *filler(2 * n)]
    text += [*filler(n // 2, 9 * n), "the last error", *filler(5)]
    log = tmp_path / "big.log"
    log.write_bytes(lines(*text))
    handed, stats = scan_file(log, rare=False)
    assert stats.lines == len(text)
    for lineno, line in handed:
        assert text[lineno - 1].replace("\x00", "").startswith(line), (lineno, line[:100])
    assert handed[-1][1] == "the last error"
    # The middle is never read again: grep's match in the tail (`the last error`), held in
    # memory, numbers the lines before the tail. Except past a NUL (dropped from the blocks),
    # where grep's offsets no longer line up with them.
    assert bool(recounted) == (layout == "a NUL")
    monkeypatch.setattr(grepfind, "grep_path", lambda: None)
    without, python_stats = scan_file(log, rare=False)
    assert without == handed and python_stats.lines == stats.lines


@pytest.mark.parametrize("how", ["rotated", "deleted", "under a deadline"])
def test_lines_left_uncounted_are_counted_in_the_file_that_was_read(
    small_edges: ModuleType,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    recounted: list[int],
    how: str,
) -> None:
    # From a review: a log rotated (renamed, a new empty file at its path) or deleted after
    # grep's pass lost the lines its reading left uncounted, since they were read again from the
    # path. They are read through the open file now, and a path that names another file than the
    # one read is not grep's to number. Under a deadline no line is left uncounted: reading them
    # again, past the deadline, could take as long as reading them did.
    n = PER_CHUNK
    text = ["step start", *filler(3 * n), "[rank3]: RuntimeError: CUDA error", *filler(2 * n)]
    text += ["\x00" + "NCCL WARN after a hole", *filler(2 * n, 5 * n), "the last error"]
    log = tmp_path / "big.log"
    log.write_bytes(lines(*text))
    real_grep = small_edges._grep_whole_file

    def grep_then(path: str, size: int, deadline: float | None) -> Any:
        found = real_grep(path, size, deadline)
        if how == "rotated":
            os.rename(path, path + ".1")
            Path(path).write_bytes(b"")
        elif how == "deleted":
            os.unlink(path)
        return found

    monkeypatch.setattr(small_edges, "_grep_whole_file", grep_then)
    deadline = time.monotonic() + 600 if how == "under a deadline" else None
    handed, stats = scan_file(log, rare=False, deadline=deadline)
    assert stats.lines == len(text)
    assert handed[-1] == (len(text), "the last error")
    # rotated: grep's pass is not used; deleted: not known to be the file read, so nothing is
    # left to count later (as under a deadline)
    assert recounted == []


def test_triage_hands_scan_the_open_file_s_descriptor(
    small_edges: ModuleType, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # The 1 GB benchmark's path: triage_files' stream gives scan the file's descriptor, so
    # that the middle's lines are left for grep to number (and read again through it, never
    # through the path); a .gz's stream has none to give (its bytes are packed).
    data, _ = three_parts("[rank3]: RuntimeError: CUDA error: an illegal memory access")
    log = tmp_path / "big.log"
    log.write_bytes(data)
    seen: list[object] = []
    real = small_edges._file_read

    def spy(stream: Any, path: str) -> Any:
        seen.append(real(stream, path))
        return seen[-1]

    monkeypatch.setattr(small_edges, "_file_read", spy)
    plain = triage_files([log])
    assert len(seen) == 1 and seen[0][0] is True and type(seen[0][1]) is int
    packed = tmp_path / "big.log.gz"
    packed.write_bytes(gzip.compress(data))
    unpacked = triage_files([packed])
    assert len(seen) == 1  # no grep over packed bytes, so no descriptor asked for
    assert (unpacked.lines, unpacked.diagnosis.category) == (plain.lines, plain.diagnosis.category)


def test_rare_words_in_a_big_log_s_head_do_not_cost_its_middle_the_rare_needles(
    small_edges: ModuleType, tmp_path: Path
) -> None:
    # The middle's density is judged from its middle, not from start-up output that happens to
    # hold needles as parts of words (bloom -> `oom`, skill -> `kill`).
    evicted = "Reason: Evicted  Message: The node was low on resource: memory."
    data, _ = three_parts(evicted)
    head = lines(
        *[f"loading bigscience/bloom-560m shard {i} (skill: terminating)" for i in range(2000)]
    )
    log = tmp_path / "big.log"
    log.write_bytes(head + data)
    handed, _ = scan_file(log, rare=False)
    assert evicted in [t for _, t in handed]


def test_a_middle_that_holds_the_rare_needles_on_every_line_is_searched_for_the_common_ones(
    small_edges: ModuleType, tmp_path: Path
) -> None:
    # Megatron prints `number of nan iterations: 0` on every step: the middle is dense in `nan`,
    # judged from a sample of it, and grep looks for the other needles (an error there is found).
    n = PER_CHUNK
    step = "iteration 7 | lm loss: 2.3 | number of nan iterations: 0 |"
    text = [
        "step start",
        *[step] * (4 * n),
        "[rank3]: RuntimeError: CUDA error: an illegal memory access was encountered",
        *[step] * (4 * n),
        "the last line",
    ]
    log = tmp_path / "megatron.log"
    log.write_bytes(lines(*text))
    middle = middle_needles(str(log), log.stat().st_size, small_edges.MIDDLE_MATCHES).needles
    assert b"nan" not in middle and b"evict" in middle
    handed, _ = scan_file(log, rare=False)
    assert any("illegal memory access" in t for _, t in handed)
    assert not any(t == step for _, t in handed[1:-5])  # the NaN counter's lines stay out
    missing = middle_needles(str(tmp_path / "missing.log"), 10**9, small_edges.MIDDLE_MATCHES)
    assert missing == Middle(GREP_MIDDLE_NEEDLES, float("inf"))  # and searched as strings


def test_a_middle_that_holds_many_rare_needles_is_searched_for_the_common_ones(
    small_edges: ModuleType, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # Six rare needles on one line in a thousand: each under its own limit (a quarter of
    # MIDDLE_MATCHES), all six together over MIDDLE_MATCHES: none of them.
    n = PER_CHUNK
    chatty = "ssh refused: daemon deadline, socket corrupt, truncated"
    text = [chatty if i % 1000 == 0 else f for i, f in enumerate(filler(8 * n))]
    log = tmp_path / "chatty.log"
    log.write_bytes(lines("step start", *text, "the last line"))
    expected = 8 * n // 1000  # each needle's lines in the whole log
    monkeypatch.setattr(small_edges, "MIDDLE_MATCHES", 5 * expected)
    assert middle_needles(str(log), log.stat().st_size, small_edges.MIDDLE_MATCHES).needles == ()
    _, stats = scan_file(log, rare=False)
    assert stats.needles == NEEDLES


def test_a_big_log_s_middle_is_searched_for_the_rare_needles_from_their_first_letter(
    small_edges: ModuleType, tmp_path: Path
) -> None:
    # Issue 12, item 7: a rare needle that starts with a colon or a blank costs grep time, one
    # that starts with a letter does not: grep looks for each from its first letter, and the
    # rules still see the whole line (a shell that cannot find the launcher, mid-log).
    line = "/bin/sh: 1: torchrun: not found"
    low = line.lower().encode()
    assert not any(nd in low for nd in NEEDLES + MIDDLE_NEEDLES)
    assert b"not found" in GREP_MIDDLE_NEEDLES and b": not found" not in GREP_MIDDLE_NEEDLES
    # a needle in another script is kept whole: its first byte is no blank, colon or digit
    assert all(nd in GREP_MIDDLE_NEEDLES for nd in RARE_NEEDLES if nd[:1] >= b"\x80")
    trimmed = set(GREP_MIDDLE_NEEDLES) - set(RARE_NEEDLES) - set(MIDDLE_NEEDLES)
    assert trimmed and all(len(nd) >= 6 and b"\n" not in nd for nd in trimmed)
    data, _ = three_parts(line)
    log = tmp_path / "big.log"
    log.write_bytes(data)
    handed, _ = scan_file(log, rare=False)
    assert line in [t for _, t in handed]


def test_grep_that_fails_or_is_missing_falls_back(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(grepfind, "grep_path", lambda: "/nonexistent/grep")
    assert grepfind.line_starts_in_bytes(b"a\nerror\n", [b"error"]) is None
    assert grepfind.match_offsets_in_file("/etc/hostname", [b"x"], 5.0) is None
    monkeypatch.undo()
    assert grepfind.line_starts_in_bytes(b"a\nb error\nc\nerror error\n", [b"error"]) == [2, 12]


def test_grep_takes_every_needle_literally(tmp_path: Path) -> None:
    # The needles reach grep as fixed strings or, for a file expected to hold few, as one
    # extended regular expression: what it gives a meaning to (`.`, `*`, brackets, parentheses,
    # `|`, `^`, `$`, a backslash, braces) must match itself alone either way.
    needles = NEEDLES + RARE_NEEDLES + (b"a.b", b"x|y", b"^top", b"end$", b"c:\\d", b"q{2}")
    lines = [
        b"loss [nan] at step 9",  # `[nan]`, a bracket expression if unescaped
        b"make: *** [all] Error 2",
        b"axb x y top end here c:d qq",  # what the needles would match as expressions
        b"a.b",
        b"x|y",
        b"^top",
        b"end$",
        b"c:\\d",
        b"q{2}",
        b"(gdb) bt",
    ]
    text = b"\n".join(lines) + b"\n"
    at = [sum(len(ln) + 1 for ln in lines[:i]) for i in range(len(lines))]
    want = [s for i, s in enumerate(at) if i != 2]
    assert [any(nd in ln.lower() for nd in needles) for ln in lines].count(False) == 1
    assert grepfind.line_starts_in_bytes(text.lower(), needles) == want
    log = tmp_path / "x.log"
    log.write_bytes(text)
    for sparse in (False, True):
        found = grepfind.match_offsets_of_two_sets(str(log), needles, (), 30.0, sparse=sparse)
        assert found is not None
        assert sorted({text.rfind(b"\n", 0, o) + 1 for o in found[0].offsets}) == want


# -- inert repeats -------------------------------------------------------------------------------


def test_inert_repeats_are_skipped_rank_label_aside() -> None:
    warn = "UserWarning: error-prone default, pass use_reentrant explicitly"
    text = [f"[rank{r}]: {warn}" for r in range(8)] + ["[rank3]: RuntimeError: boom"]
    handed, stats = run(lines(*text), inert=lambda n, t: "UserWarning" in t)
    assert handed == [(1, f"[rank0]: {warn}"), (9, "[rank3]: RuntimeError: boom")]
    assert stats.handed == 2


def test_repeats_are_handed_when_the_sink_says_they_matter() -> None:
    text = ["[rank0]: RuntimeError: boom"] * 3
    handed, _ = run(lines(*text))
    assert [n for n, _ in handed] == [1, 2, 3]


def test_repeats_differing_in_message_digits_are_handed() -> None:
    text = [
        "[rank0]: worker failed with exit code 0",
        "[rank1]: worker failed with exit code 0",  # a repeat, rank label aside
        "[rank0]: worker failed with exit code 137",
        "[rank1]: worker failed with exit code 137",
    ]
    handed, _ = run(lines(*text), inert=lambda n, t: t.endswith("code 0"))
    assert [n for n, _ in handed] == [1, 3, 4]


def test_short_repeats_differing_in_message_digits_are_handed() -> None:
    handed, _ = run(
        lines("exit code 0", "exit code 137"), inert=lambda n, t: t == "exit code 0", rare=True
    )
    assert [n for n, _ in handed] == [1, 2]


def test_cr_parts_are_never_remembered_as_inert() -> None:
    text = ["error 1%\rerror 2%"] * 2
    handed, _ = run(lines(*text), inert=lambda n, t: True)
    assert [n for n, _ in handed] == [1, 1, 2, 2]


def test_a_big_file_is_searched_for_rare_needles_in_its_middle_by_grep(
    small_edges: ModuleType, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # Issue 12, item 7: the needle path as accurate as the full one. A big file on disk goes
    # through grep twice (common needles, then the middle's rare ones), so the eviction or the
    # NaN in its middle is found; a stream (no path) or a file without grep keeps the edges.
    evicted = "Reason: Evicted  Message: The node was low on resource: memory."
    data, text = three_parts(evicted)
    log = tmp_path / "big.log"
    log.write_bytes(data)
    handed, stats = scan_file(log, rare=False)
    assert [t for _, t in handed] == [RARE_ONLY, evicted, text[-1]]
    assert stats.needles == NEEDLES + GREP_MIDDLE_NEEDLES
    # More rare matches than MIDDLE_MATCHES lines: the middle goes without them, whether the
    # head says so (one pass, for the common needles) or grep's pass does (two passes when grep
    # stopped before it found every common one).
    monkeypatch.setattr(small_edges, "MIDDLE_MATCHES", 1)
    capped, _ = scan_file(log, rare=False)
    assert [t for _, t in capped] == [RARE_ONLY, text[-1]]
    every = Middle(GREP_MIDDLE_NEEDLES, float("inf"))
    monkeypatch.setattr(small_edges, "middle_needles", lambda path, size, most: every)
    capped, _ = scan_file(log, rare=False)
    assert [t for _, t in capped] == [RARE_ONLY, text[-1]]
    monkeypatch.setattr(grepfind, "MAX_MATCHES", 1)
    capped, _ = scan_file(log, rare=False)
    assert [t for _, t in capped] == [RARE_ONLY, text[-1]]
    monkeypatch.setattr(grepfind, "grep_path", lambda: None)
    without, _ = scan_file(log, rare=False)
    assert [t for _, t in without] == [RARE_ONLY, text[-1]]


@pytest.mark.parametrize(
    "middle",
    [
        # a traceback whose header the log cut: its frames and statement still tell
        '  File "/w/model_parallel.py", line 211, in __init__',
        # a stuck process's stacks: py-spy's threads, gdb's
        'Thread 61130 (idle): "QueueFeederThread"',
        "Thread 3 (Thread 0x7f2a (LWP 4411)):",
        # the shell's missing path, a socket that closed, a file found corrupt, Chinese `error`
        "run.sh: line 169: cd: tools: No such file or directory",
        "Aborting RingReduce with Unavailable: Socket closed",
        "ignoring corrupt image/label: Label class 3 exceeds dataset class count 1",
        "train.py：错误：需要以下参数：-c/--config",
        # a loss gone infinite, a cloud's power-button press on a VM it takes back
        "Training  [     40/5000000]  lr: 0.0000 (0.0000)  total_loss: inf ",
        "Jan 30 10:33:08 gpu-vm-1 systemd-logind[812]: Power key pressed.",
        # an image cut short, a package built for another NumPy, two ranks on one GPU
        "jpeg_mem.cc:323] Premature end of JPEG data. Stopped at line 1214/2593",
        "A module that was compiled using NumPy 1.x cannot be run in",
        "misc/nvmlwrap.cc:183 NCCL WARN Duplicate GPU detected : rank 1 and rank 0 both on CUDA "
        "device 1a000",
        # the terminal's Ctrl-C; TensorFlow's allocator map, printed only when it failed
        "^C",
        "2018-05-16 14:46:52.011159: W tensorflow/core/common_runtime/bfc_allocator.cc:279] "
        "*************************************************************************************"
        "************___",
    ],
)
def test_kinds_of_evidence_without_a_common_needle_are_found_in_a_big_logs_middle(
    small_edges: ModuleType, tmp_path: Path, middle: str
) -> None:
    data, _ = three_parts(middle)
    log = tmp_path / "big.log"
    log.write_bytes(data)
    handed, _ = scan_file(log, rare=False)
    assert middle in [t for _, t in handed]


@pytest.mark.parametrize("how", ["unreadable", "cut short"])
def test_lines_that_cannot_be_counted_again_are_said_not_hidden(
    small_edges: ModuleType, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, how: str
) -> None:
    # Past a NUL the middle's lines are read again through the open file to be counted; where
    # that read fails (an I/O error) or finds the file shorter, the line numbers after them are
    # too low, and triage's report says so instead of numbering them silently.
    n = PER_CHUNK
    text = ["step start", "Traceback (most recent call last):", "ValueError: head", *filler(6 * n)]
    text += ["\x00" * 100 + "NCCL WARN after a hole", *filler(2 * n), *filler(n // 2, 9 * n)]
    text += ["the last error", *filler(5)]
    log = tmp_path / "big.log"
    log.write_bytes(lines(*text))

    def pread(fd: int, size: int, offset: int) -> bytes:
        if how == "unreadable":
            raise OSError(5, "Input/output error")
        return b""

    monkeypatch.setattr(blocks.os, "pread", pread)
    handed, stats = scan_file(log, rare=False)
    assert stats.lines < len(text) and handed[-1][1] == "the last error"  # found all the same
    assert stats.uncounted and 0 < stats.uncounted_at < log.stat().st_size
    assert ("Input/output error" in stats.uncounted) == (how == "unreadable")
    report = triage_files([log], rare=False)
    assert any("line numbers after byte" in s and "too low" in s for s in report.skipped)
