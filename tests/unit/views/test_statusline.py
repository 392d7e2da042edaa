"""views.statusline (the words of `babysit run`'s live status line) and views.console's
LiveStatus (when and how it is drawn), against a pipe instead of a terminal."""

from __future__ import annotations

import os
import re
import threading
import time
from collections.abc import Callable, Iterator

import pytest

from babysit.act.echo import Echo, ends_mid_sequence
from babysit.records import Level
from babysit.views.console import LiveStatus, status_mode
from babysit.views.statusline import StatusState, StatusTracker, status_parts, status_text

SAVE, RESTORE = "\x1b7", "\x1b8"


def test_the_line_says_attempt_step_total_loss_throughput_age_and_incident() -> None:
    track = StatusTracker(total=5000)
    track.progress(100.0, 2, 1000, {"loss": 2.5})
    track.progress(110.0, 2, 1234, {"loss": 2.31, "tokens_per_s": 91234.0, "mfu": 40.0})
    track.incident(111.0, "loss_spike", "loss 9.1 at step 1200 is 4x its baseline", 1200)
    text = status_text(track.state(113.0))
    assert text == (
        "attempt 2 · step 1,234/5,000 (24.7%) · loss 2.31 · 91,234 tokens/s · "
        "last step 3.0s ago · last incident: loss spike 2.0s ago at step 1,200: "
        "loss 9.1 at step 1200 is 4x its baseline"
    )


def test_without_a_throughput_metric_the_step_rate_is_shown() -> None:
    track = StatusTracker()
    track.progress(0.0, 1, 10, {})
    track.progress(4.0, 1, 30, {})
    assert status_text(track.state(5.0)) == "attempt 1 · step 30 · 5 steps/s · last step 1.0s ago"
    slow = StatusTracker()
    slow.progress(0.0, 1, 1, {})
    slow.progress(40.0, 1, 2, {})
    assert "40 s/step" in status_text(slow.state(40.0))


def test_before_the_first_step_and_before_the_first_attempt() -> None:
    assert status_text(StatusState()) == "babysit: starting"
    track = StatusTracker()
    track.progress(10.0, 1, None, {})
    assert status_text(track.state(22.0)) == "attempt 1 · no step yet (12s)"


def test_a_new_attempt_starts_its_own_step_rate_and_clock_but_keeps_the_incident() -> None:
    track = StatusTracker()
    track.progress(0.0, 1, 100, {"loss": 2.0, "samples_per_s": 12.5})
    track.incident(1.0, "hang", "no progress for 600s", None)
    track.progress(700.0, 2, None, {})
    text = status_text(track.state(701.0))
    assert text.startswith("attempt 2 · no step yet (1.0s) · last incident: hang 11m40s ago: ")
    assert "loss" not in text and "samples/s" not in text


def test_a_rollback_to_an_earlier_step_restarts_the_rate() -> None:
    track = StatusTracker()
    for t, step in [(0.0, 100), (1.0, 110), (2.0, 60), (3.0, 61)]:
        track.progress(t, 1, step, {})
    assert track.state(3.0).steps_per_s == pytest.approx(1.0)


def test_the_total_from_a_progress_bar_in_the_output() -> None:
    track = StatusTracker()
    track.output(b"  5%|5         | 50/1000 [00:10<03:10, 5.00it/s]")
    track.progress(0.0, 1, 50, {})
    assert "step 50/1,000 (5.0%)" in status_text(track.state(1.0))
    fixed = StatusTracker(total=300)
    fixed.output(b"50/1000 [00:10<03:10, 5.00it/s]")
    fixed.progress(0.0, 1, 50, {})
    assert "step 50/300" in status_text(fixed.state(1.0))


def test_past_the_total_the_percentage_is_left_out() -> None:
    state = StatusState(attempt=1, step=310, total=300, since_step_s=1.0)
    assert status_parts(state)[1] == ("step 310", "cyan")


def test_the_runs_words_cannot_drive_the_terminal_and_secrets_are_hidden() -> None:
    track = StatusTracker()
    track.progress(0.0, 1, 5, {"loss": "nan\x1b[2J"})
    secret = "token=hf_abcdefghijklmnopqrstuvwxyz0123"
    track.incident(0.0, "nonfinite", f"loss nan\x1b]0;pwned\x07\r\n {secret}")
    text = status_text(track.state(1.0))
    assert "\x1b" not in text and "\x07" not in text and "\r" not in text and "\n" not in text
    assert "loss nan\\x1b[2J" in text
    assert "hf_abcdefghijklmnopqrstuvwxyz0123" not in text


def test_a_long_message_is_cut() -> None:
    track = StatusTracker()
    track.progress(0.0, 1, 5, {})
    track.incident(0.0, "hang", "x" * 1000)
    assert len(status_text(track.state(0.0))) < 300


def test_a_step_without_progress_for_long_is_yellow() -> None:
    state = StatusState(attempt=1, step=5, since_step_s=300.0)
    assert ("last step 5m00s ago", "yellow") in status_parts(state)


# -- when the line is drawn ------------------------------------------------------------------


def test_status_mode_follows_the_terminal_the_flag_and_term_dumb() -> None:
    r, w = os.pipe()
    try:
        assert status_mode(None, w, {"TERM": "xterm"}) == "off"  # a pipe or a Slurm file
        assert status_mode(True, w, {"TERM": "xterm"}) == "plain"
        assert status_mode(False, w, {}) == "off"
        assert status_mode(None, None, {}) == "off"
        master, slave = os.openpty()
        try:
            assert status_mode(None, slave, {"TERM": "xterm"}) == "live"
            assert status_mode(None, slave, {"TERM": "dumb"}) == "off"
            assert status_mode(True, slave, {"TERM": "dumb"}) == "plain"
            assert status_mode(False, slave, {"TERM": "xterm"}) == "off"
        finally:
            os.close(master)
            os.close(slave)
    finally:
        os.close(r)
        os.close(w)


@pytest.fixture
def pipe() -> Iterator[tuple[int, int]]:
    r, w = os.pipe()
    os.set_blocking(r, False)
    yield r, w
    os.close(r)
    os.close(w)


def read_until(fd: int, predicate: Callable[[str], bool], timeout: float = 10.0) -> str:
    out = ""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            out += os.read(fd, 65536).decode()
        except BlockingIOError:
            time.sleep(0.01)
        if predicate(out):
            return out
    raise AssertionError(f"not seen in time: {out!r}")


def test_live_draws_in_the_last_row_under_a_scroll_region_and_gives_it_back(
    pipe: tuple[int, int],
) -> None:
    r, w = pipe
    status = LiveStatus("live", fd=w, size=lambda: (24, 80), hz=50.0)
    status.start()
    status.progress(1, 7, {"loss": 2.5})
    out = read_until(r, lambda s: "step 7" in s)
    status.close()
    out += read_until(r, lambda s: "\x1b[r\x1b[24;1H\x1b[2K" in s)
    assert out.startswith(f"\x1bD\x1bM{SAVE}\x1b[1;23r{RESTORE}")  # the last row kept
    draw = re.search(f"{SAVE}\x1b\\[24;1H\x1b\\[2K(.*?){RESTORE}", out)
    assert draw is not None and "attempt 1" in draw.group(1) and "loss 2.5" in draw.group(1)
    assert out.endswith(f"{SAVE}\x1b[r\x1b[24;1H\x1b[2K{RESTORE}")


def test_live_cuts_the_line_to_the_width_and_honours_no_color(pipe: tuple[int, int]) -> None:
    r, w = pipe
    status = LiveStatus("live", fd=w, size=lambda: (10, 40), hz=50.0, no_color=True)
    status.start()
    status.progress(1, 7, {"loss": 2.5})
    status.incident(1, "hang", "a long message " * 10)
    out = read_until(r, lambda s: "…" in s)
    status.close()
    draw = re.findall(f"{SAVE}\x1b\\[10;1H\x1b\\[2K(.*?){RESTORE}", out)[-1]
    shown = re.sub("\x1b\\[[0-9;]*m", "", draw)
    assert len(shown) <= 39 and shown.endswith("…")
    assert re.search("\x1b\\[[0-9;]*3[0-7]m", draw) is None  # no colour, bold allowed


def test_a_rendering_error_turns_it_off_with_one_warning(pipe: tuple[int, int]) -> None:
    _r, w = pipe
    said: list[tuple[Level, str]] = []

    def broken() -> tuple[int, int]:
        raise RuntimeError("no size today")

    status = LiveStatus("live", lambda lv, t: said.append((lv, t)), fd=w, size=broken, hz=50.0)
    status.start()
    status.progress(1, 7, {})
    deadline = time.monotonic() + 10
    while status.mode != "off" and time.monotonic() < deadline:
        time.sleep(0.01)
    status.progress(1, 8, {})  # off: nothing more, no second warning
    status.close()
    assert status.mode == "off"
    assert said == [
        (Level.WARN, "the status line failed and is off (RuntimeError: no size today); "
         "supervision goes on")
    ]


def test_plain_mode_says_one_line_per_attempt_then_every_few_minutes() -> None:
    said: list[tuple[Level, str]] = []
    now = [0.0]
    status = LiveStatus(
        "plain", lambda lv, t: said.append((lv, t)), clock=lambda: now[0], plain_every_s=300
    )
    status.start()  # no thread in plain mode
    status.progress(1, None, {})
    status.progress(1, 1, {"loss": 3.0})
    now[0] = 100.0
    status.progress(1, 50, {})
    now[0] = 301.0
    status.progress(1, 90, {})
    now[0] = 302.0
    status.progress(2, None, {})
    status.progress(2, 91, {})
    status.close()
    assert [t for _, t in said] == [
        "status: attempt 1 · step 1 · loss 3 · last step 0.0s ago",
        "status: attempt 1 · step 90 · loss 3 · 0.199 steps/s · last step 0.0s ago",
        "status: attempt 2 · step 91 · last step 0.0s ago",
    ]
    assert {lv for lv, _ in said} == {Level.INFO}


def test_off_mode_does_nothing() -> None:
    status = LiveStatus("off", fd=None)
    status.start()
    status.progress(1, 1, {"loss": 1.0})
    status.incident(1, "hang", "x")
    status.output(b"1/10 [00:01<")
    status.close()
    assert status.tracker.attempt is None


def test_the_line_waits_while_the_output_stops_inside_an_escape_sequence(
    pipe: tuple[int, int],
) -> None:
    # Regression (left alone last session): the echo of the run's output and the drawing
    # thread wrote to the terminal unsynchronised, so a line could land inside a colour code
    # split across two output chunks. Now both write under one lock, and the line is drawn
    # only where the output written so far ends between sequences.
    r, w = pipe
    target = os.fdopen(os.dup(w), "wb", buffering=0)
    echo = Echo(target, lock=threading.Lock())
    assert echo.lock is not None
    status = LiveStatus("live", fd=w, size=lambda: (24, 80), hz=50.0)
    status.share_terminal(echo.lock, lambda: echo.clean)
    echo.write(b"iter 7: \x1b[3")  # a colour code cut by the chunk boundary
    read_until(r, lambda s: s.endswith("\x1b[3"))
    status.start()
    status.progress(1, 7, {"loss": 2.5})
    # Held back: nothing is drawn while the output ends mid-sequence (10 frames at 50 Hz).
    deadline = time.monotonic() + 0.2
    held = ""
    while time.monotonic() < deadline:
        try:
            held += os.read(r, 65536).decode()
        except BlockingIOError:
            time.sleep(0.01)
    assert "attempt 1" not in held
    echo.write(b"1mred\x1b[0m\n")  # the rest of the sequence: now the line may come
    out = read_until(r, lambda s: "attempt 1" in s)
    assert out.index("1mred") < out.index("attempt 1")
    status.close()
    echo.close()
    target.close()


@pytest.mark.parametrize(
    ("tail", "mid"),
    [
        (b"plain", False),
        (b"a\x1b", True),
        (b"a\x1b[31", True),
        (b"a\x1b[31m", False),
        (b"\x1b]8;;https://x.org", True),  # a hyperlink's OSC, its BEL to come
        (b"\x1b]8;;https://x.org\x07link", False),
        (b"caf\xc3", True),  # half of a UTF-8 character
        (b"caf\xc3\xa9", False),
        (b"\xe2\x82", True),
        (b"\xe2\x82\xac", False),
    ],
)
def test_ends_mid_sequence(tail: bytes, mid: bool) -> None:
    assert ends_mid_sequence(tail) is mid
