"""What an attempt's loop keeps up beside its output's lines (supervise/channels.py), on fakes:
the echo of the run's stdout and stderr (not of a metrics file), the echo turned off, and no
TensorBoard configured. The rank map's backoff and the progress flushes are tested through a
whole attempt (test_attempt.py, test_run.py)."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any, cast

from babysit.config import build_config
from babysit.supervise.channels import Channels
from babysit.supervise.context import RunContext, Seams
from babysit.supervise.live import Live
from tests.fakes import FakeClock, FakeEngine, Said
from tests.unit.supervise.harness import BASE, COMMAND, NAME


def channels(tmp_path: Path, out: io.BytesIO, err: io.BytesIO, **config: Any) -> Channels:
    clock = FakeClock()
    seams = Seams(clock.sleep, clock.monotonic, clock.wall, lambda: 0.5, out, err)
    cfg = build_config({**BASE, **config})
    engine = FakeEngine(clock, [])
    ctx = RunContext(cfg, COMMAND, NAME, tmp_path / ".babysit", tmp_path, Said(), seams, engine)
    return Channels(ctx)


def test_the_echo_shows_the_runs_stdout_and_stderr_and_nothing_else(tmp_path: Path) -> None:
    out, err = io.BytesIO(), io.BytesIO()
    ch = channels(tmp_path, out, err)
    ch.open_echo(None)
    ch.echo("stdout", b"step 1 | loss 2.31\n")
    ch.echo("stderr", b"UserWarning: a warning\n")
    ch.echo("metrics", b'{"step": 1, "loss": 2.31}\n')  # a --metrics-file's: not shown
    ch.close_echo()
    assert out.getvalue() == b"step 1 | loss 2.31\n"
    assert err.getvalue() == b"UserWarning: a warning\n"
    assert ch.echoed("stdout") and ch.echoed("stderr") and not ch.echoed("metrics")


def test_with_the_echo_off_nothing_reaches_the_terminal(tmp_path: Path) -> None:
    out, err = io.BytesIO(), io.BytesIO()
    ch = channels(tmp_path, out, err, **{"run.echo": False})
    ch.open_echo(None)
    ch.echo("stdout", b"step 1 | loss 2.31\n")
    ch.close_echo()
    assert out.getvalue() == b"" and err.getvalue() == b""
    assert ch.echoed("stdout")  # still the run's output (a status line counts its progress)


def test_without_tensorboard_in_the_config_there_is_nothing_to_read(tmp_path: Path) -> None:
    ch = channels(tmp_path, io.BytesIO(), io.BytesIO())
    ch.open_tensorboard()
    assert ch.tensorboard is None
    assert ch.tensorboard_metrics(cast(Live, None)) == []  # the attempt is not even looked at
