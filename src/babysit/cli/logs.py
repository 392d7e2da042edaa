"""`babysit logs RUN`: an attempt's output, as the training wrote it; -f follows it.

    babysit logs train                  # the last 50 lines of the current attempt
    babysit logs train -f               # ... then follow, into the next attempts, to the run's end
    babysit logs train --attempt 2 -n 0 --stream stderr

The output is the attempt's files in the home (runs/NAME/attempt-NNNN/{stdout,stderr}.log),
copied byte for byte, as `tail` would. With both streams, each piece is headed by its file's
name (`==> attempt-0003/stderr.log <==`), as `tail` does with several files. Following ends
when the run is over (succeeded, failed, stopped) and its last attempt's files are read, or on
Ctrl-C (exit 0); a closed pipe (`| head`) ends it quietly.
"""

from __future__ import annotations

import io
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

import click

from babysit.cli.common import fail, home_option, open_store
from babysit.errors import BabysitError, UsageError
from babysit.store import Store

OVER = ("succeeded", "failed", "stopped")
POLL_S = 0.2
STORE_EVERY_S = 1.0
STREAMS = {
    "stdout": ("stdout.log",),
    "stderr": ("stderr.log",),
    "both": ("stdout.log", "stderr.log"),
}


@click.command("logs")
@click.argument("run_name", metavar="RUN")
@home_option
@click.option("--follow", "-f", is_flag=True, help="Keep printing as it grows, to the run's end.")
@click.option(
    "--attempt", "number", type=click.IntRange(min=1), help="Attempt N (default: the latest)."
)
@click.option(
    "--lines",
    "-n",
    type=click.IntRange(min=0),
    default=50,
    show_default=True,
    help="Lines to show from the end of each file first (0: none; with -f, only new output).",
)
@click.option("--all", "whole", is_flag=True, help="Show the files whole (ignores -n).")
@click.option(
    "--stream",
    type=click.Choice(list(STREAMS)),
    default="both",
    show_default=True,
    help="Which of the attempt's outputs.",
)
def logs_command(
    run_name: str,
    home: Path | None,
    follow: bool,
    number: int | None,
    lines: int,
    whole: bool,
    stream: str,
) -> None:
    """The output of RUN's current attempt (or of --attempt N); -f follows it, into the next
    attempts, until the run ends or Ctrl-C.

    \b
    Examples:
      babysit logs train
      babysit logs train -f
      babysit logs train --attempt 2 --stream stderr -n 200
    """
    try:
        with open_store(home) as store:
            attempts = store.attempts(run_name) if store.run(run_name) else []
            home_path = store.home
        if not attempts:
            raise UsageError(f"run {run_name!r} has no attempt yet: nothing to show")
        numbers = [a["number"] for a in attempts]
        current = numbers[-1] if number is None else number
        if current not in numbers:
            raise UsageError(
                f"run {run_name!r} has no attempt {current} (attempts: {numbers[0]}..{numbers[-1]})"
            )
    except BabysitError as exc:
        fail(exc)
    out: IO[bytes] = sys.stdout.buffer
    if isinstance(out, io.RawIOBase):  # python -u, PYTHONUNBUFFERED: a raw write may be short
        out = io.BufferedWriter(out)  # writes it all, or raises (a closed pipe: exit 141)
    names = STREAMS[stream]
    row = next(a for a in attempts if a["number"] == current)
    files = _files(home_path, run_name, row, names)
    heads = len(names) > 1
    tails = {f: _tail(f, None if whole else lines) for f in files}
    last: list[Path | None] = [None]
    for f, (data, _) in tails.items():
        _write(out, f, data, heads, last)
    out.flush()
    if not follow:
        return
    try:
        _follow(
            out,
            home_path,
            run_name,
            current,
            names,
            {f: end for f, (_, end) in tails.items()},
            heads,
            last,
        )
    except KeyboardInterrupt:
        out.flush()


def _files(home: Path, run: str, row: dict[str, Any], names: tuple[str, ...]) -> list[Path]:
    directory = (
        Path(row["log_dir"])
        if row.get("log_dir")
        else home / "runs" / run / f"attempt-{row['number']:04d}"
    )
    return [directory / n for n in names]


def _tail(path: Path, lines: int | None) -> tuple[bytes, int]:
    """The last `lines` lines of the file (all of it for None) and the offset of its end.
    Reads backwards in blocks: a 50 GB log costs what its tail costs."""
    try:
        fh = path.open("rb")
    except FileNotFoundError:
        return b"", 0
    with fh:
        end = os.fstat(fh.fileno()).st_size
        if lines is None:
            return fh.read(end), end
        if lines == 0:
            return b"", end
        pos, data = end, b""
        while pos > 0 and data.count(b"\n") <= lines:
            step = min(1 << 16, pos)
            pos -= step
            fh.seek(pos)
            data = fh.read(step) + data
        body = data[:-1] if data.endswith(b"\n") else data
        cut = body.split(b"\n")[-lines:]
        return b"\n".join(cut) + (b"\n" if data.endswith(b"\n") else b""), end


def _write(out: IO[bytes], path: Path, data: bytes, heads: bool, last: list[Path | None]) -> None:
    if not data:
        return
    if heads and last[0] != path:
        nl = b"\n" if last[0] is not None else b""
        out.write(nl + f"==> {path.parent.name}/{path.name} <==\n".encode())
        last[0] = path
    out.write(data)


def _follow(
    out: IO[bytes],
    home: Path,
    run: str,
    number: int,
    names: tuple[str, ...],
    offsets: dict[Path, int],
    heads: bool,
    last: list[Path | None],
    sleep: Callable[[float], None] = time.sleep,
) -> None:
    """Print what the files gain until the run is over; a newer attempt's files take over once
    the current ones are read to their end."""
    checked = 0.0
    while True:
        grew = False
        for f in list(offsets):
            data, offsets[f] = _read_from(f, offsets[f])
            grew = grew or bool(data)
            _write(out, f, data, heads, last)
        out.flush()
        if grew or time.monotonic() - checked < STORE_EVERY_S:
            sleep(POLL_S)
            continue
        checked = time.monotonic()
        with Store.open(home, create=False) as store:
            state = store.run(run)["state"]
            attempts = store.attempts(run)
        newer = [a for a in attempts if a["number"] > number]
        if newer:
            row = newer[0]
            number = row["number"]
            out.write(f"==> babysit: attempt {number} <==\n".encode())
            last[0] = None
            offsets = {f: 0 for f in _files(home, run, row, names)}
            continue
        if state in OVER:
            for f in offsets:  # what the last attempt wrote after the read above
                _write(out, f, _read_from(f, offsets[f])[0], heads, last)
            return
        sleep(POLL_S)


def _read_from(path: Path, offset: int) -> tuple[bytes, int]:
    """What the file holds past `offset` (from 0 again when it was truncated), at most 8 MiB."""
    try:
        fh = path.open("rb")
    except FileNotFoundError:
        return b"", offset
    with fh:
        size = os.fstat(fh.fileno()).st_size
        if size < offset:
            offset = 0
        fh.seek(offset)
        data = fh.read(min(size - offset, 8 << 20))
    return data, offset + len(data)
