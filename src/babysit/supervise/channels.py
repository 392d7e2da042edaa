"""What an attempt's loop keeps up beside its output's lines: the echo of the output on the
terminal, TensorBoard's event files, a multi-node engine's rank -> node map, and the progress
committed to the store every PROGRESS_FLUSH_S.

    channels = Channels(ctx)
    channels.open_echo(status)                 # once per babysit, before the first attempt
    channels.echo(stream, data)                # each chunk of stdout or stderr that is read
    incidents = channels.tensorboard_metrics(live)   # every TENSORBOARD_S, else none
    channels.map_ranks(live)                   # the straggler detector's hosts
    channels.flush_progress(live)              # last step, offsets, metrics to the store
    channels.close_echo()

None of them decides anything: TensorBoard's values go to the pipeline, whose incidents the
attempt's loop acts on. A rank map that cannot be had is said and given up (stragglers go
unnamed); the store's writes go through the journal, which never stops the run; only
open_tensorboard raises, before the first attempt, when the config names TensorBoard and it is
missing.
"""

from __future__ import annotations

import threading
from typing import Any

from babysit.act.echo import Echo
from babysit.records import Incident, Level
from babysit.sources.tensorboard import TensorBoardSource
from babysit.store.writes import AddMetrics, UpdateAttempt
from babysit.supervise.cadence import save_cadence
from babysit.supervise.context import RunContext
from babysit.supervise.live import RANK_HOSTS_S, Live, StatusSink
from babysit.supervise.prepare import resolve_path

PROGRESS_FLUSH_S = 2.0  # how often the last step, log offsets and metrics are committed
RANK_HOSTS_MAX_S = 320.0  # ... at most, while the refreshes learn nothing (each doubles it)
TENSORBOARD_S = 2.0  # how often the TensorBoard event files are read


class Channels:
    def __init__(self, ctx: RunContext) -> None:
        self.ctx = ctx
        self.cfg = ctx.cfg
        self.echoes: dict[str, Echo] = {}
        self.tensorboard: TensorBoardSource | None = None
        self._tensorboard_at = 0.0
        self._failures_told = 0  # pipeline failures already reported to the operator

    # -- the terminal ----------------------------------------------------------------------------

    def open_echo(self, status: StatusSink | None) -> None:
        """The echo of the run's output; with a status line, writes to the terminal share
        one lock with it (views/console.py), and it draws only between whole sequences."""
        seams = self.ctx.seams
        lock = threading.Lock() if status is not None else None
        self.echoes = {
            "stdout": Echo(seams.stdout, lock=lock),
            "stderr": Echo(seams.stderr, lock=lock),
        }
        if status is not None and lock is not None:
            echoes = list(self.echoes.values())
            status.share_terminal(lock, lambda: all(e.clean for e in echoes))

    def echoed(self, stream: str) -> bool:
        """Whether the stream is the run's stdout or stderr (not a metrics file)."""
        return stream in self.echoes

    def echo(self, stream: str, data: bytes) -> None:
        if self.cfg.run.echo and stream in self.echoes:
            self.echoes[stream].write(data)

    def close_echo(self) -> None:
        for echo in self.echoes.values():
            echo.close()
            if echo.dropped:
                self.ctx.say(
                    Level.WARN,
                    f"the terminal was too slow: {echo.dropped} bytes of output "
                    "were not shown here (the log files have them all)",
                )

    # -- TensorBoard -----------------------------------------------------------------------------

    def open_tensorboard(self) -> None:
        """The run's TensorBoard directory as a source (raises when tensorboard is missing)."""
        if self.cfg.run.tensorboard:
            path = resolve_path(self.cfg.run.tensorboard, self.ctx.cwd)
            self.tensorboard = TensorBoardSource(path)

    def tensorboard_metrics(self, live: Live) -> list[Incident]:
        """The incidents of the event files' new values, read at most every TENSORBOARD_S."""
        seams = self.ctx.seams
        if self.tensorboard is None or seams.monotonic() - self._tensorboard_at < TENSORBOARD_S:
            return []
        self._tensorboard_at = seams.monotonic()
        return live.pipeline.metrics(self.tensorboard.poll(seams.wall()))

    # -- the rank map ----------------------------------------------------------------------------

    def map_ranks(self, live: Live) -> None:
        """A multi-node engine's rank -> node map for the straggler detector (Slurm learns it
        from srun's lines as they come), refreshed every RANK_HOSTS_S while ranks lack one,
        less often (up to RANK_HOSTS_MAX_S) while refreshes learn nothing: a rank whose node no
        line names would otherwise have the attempt's output reread every 10 s for the whole
        run; a re-attached attempt's too."""
        det = live.pipeline.straggler
        seams = self.ctx.seams
        if det is None or not self.ctx.engine.remote or seams.monotonic() < live.mapped_at:
            return
        live.mapped_at = seams.monotonic() + live.map_every
        unmapped = [r for r in det.ranks if r not in det.hosts]
        if not unmapped:
            return
        try:
            found = self.ctx.engine.rank_hosts(live.handle, unmapped)
        except Exception as exc:  # a map is a nicety: never in the way of the supervision
            self.ctx.say(Level.WARN, f"could not map ranks to nodes ({exc}); stragglers unnamed")
            live.mapped_at = float("inf")
            return
        if found:
            live.pipeline.set_hosts({**det.hosts, **found}, det.host)
            live.map_every = RANK_HOSTS_S
        else:
            live.map_every = min(2 * live.map_every, RANK_HOSTS_MAX_S)
        live.mapped_at = seams.monotonic() + live.map_every

    # -- progress --------------------------------------------------------------------------------

    def flush_due(self, live: Live) -> bool:
        return self.ctx.seams.monotonic() - live.flushed_at >= PROGRESS_FLUSH_S

    def flush_progress(self, live: Live) -> None:
        """The attempt's last step, log offsets, main pid, learned cadence and latest metrics to
        the store; output lines the pipeline could not parse are said (at most every flush)."""
        ctx = self.ctx
        live.flushed_at = ctx.seams.monotonic()
        fields: dict[str, Any] = {
            "first_step": live.first_step,
            "last_step": live.last_step,
            "stdout_offset": live.followers[0].consumed,
            "stderr_offset": live.followers[1].consumed,
        }
        pid = ctx.engine.main_pid(live.handle)
        if pid is not None:
            fields["pid"] = pid
        number = live.number
        ctx.journal.write(UpdateAttempt(ctx.name, number, fields))
        live.cadence_saved = save_cadence(
            live.handle.attempt_dir, live.pipeline.hang.learned_timeout_s(), live.cadence_saved
        )
        p = live.pipeline
        if p.failures > self._failures_told:
            # Skipped lines used to vanish silently: say so (rarely, at most every 2 s).
            ctx.say(
                Level.WARN,
                f"{p.failures - self._failures_told} output line(s) could not be parsed and were "
                f"skipped (last: {p.last_failure}); supervision goes on. Please report the line "
                f"(its file is in {live.handle.attempt_dir}).",
            )
            self._failures_told = p.failures
        if p.latest and p.metric_records != live.metrics_flushed:
            live.metrics_flushed = p.metric_records
            sample = (ctx.seams.wall(), p.latest_step, dict(p.latest))
            ctx.journal.write(AddMetrics(ctx.name, number, *sample), droppable=True)
