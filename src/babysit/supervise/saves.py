"""The checkpoint directory, watched while an attempt runs: its writes are a sign of life, and
a save that has finished ends the pause allowance the save's announcement opened.

    saves = SaveWatch(ctx, pattern)       # pattern: the run's checkpoint glob, or None
    saves.look(live)                      # every loop of Attempts.watch; cheap between looks

Writes (sources/pulse.py) become a `checkpoint_write` activity, at most every PULSE_S. While
the hang detector says a save is under way (its announcement was read), the checkpoints are
scanned (sources/checkpoints.py) for one of at least the last step seen, written since the
announcement and complete, and no write for checkpoint.settle_s: that is `checkpoint_saved`.
babysit only reads here: it never writes in the run's checkpoint directory.
"""

from __future__ import annotations

from babysit.records import Activity
from babysit.sources.checkpoints import scan_checkpoints
from babysit.sources.pulse import DirectoryPulse
from babysit.supervise.context import RunContext
from babysit.supervise.live import Live

PULSE_S = 1.0  # how often the checkpoint directory is looked at for writes
SAVED_SCAN_S = 2.0  # during an announced save: how often to look for the finished checkpoint
SAVED_SLACK_S = 2.0  # a finished save's file may predate the read of its announcement by this


class SaveWatch:
    def __init__(self, ctx: RunContext, pattern: str | None) -> None:
        self.ctx = ctx
        self.pattern = pattern
        self._pulse: DirectoryPulse | None = None  # made at the first look

    def look(self, live: Live) -> None:
        """Writes in the checkpoint directory are a sign of life (a save under way)."""
        pattern, seams = self.pattern, self.ctx.seams
        if pattern is None or seams.monotonic() - live.pulsed_at < PULSE_S:
            return
        live.pulsed_at = seams.monotonic()
        if self._pulse is None:
            self._pulse = DirectoryPulse(pattern, skip=str(self.ctx.home.resolve()))
        if self._pulse.changed():
            live.pipeline.activity(Activity("checkpoint_write", seams.wall()))
        self._finished(live, pattern)

    def _finished(self, live: Live, pattern: str) -> None:
        """While a save is announced: checkpoints of at least the last step seen, written since
        the announcement, all complete, and no write in the directory for checkpoint.settle_s,
        end the pause allowance (a rank that hangs right after the save is then flagged on the
        run's own cadence, at least the save's own length, not after 30 minutes). Looked for
        every SAVED_SCAN_S, less often when a scan is costly (a directory of 100,000 files)."""
        hang = live.pipeline.hang
        since = hang.saving_since()
        seams = self.ctx.seams
        if since is None or seams.monotonic() < live.saved_scan_at:
            return
        settle = self.ctx.cfg.checkpoint.settle_s
        if hang.alive_ts is not None and seams.wall() - hang.alive_ts < settle:
            return  # files are still being written: not finished, and no scan while they are
        t0 = seams.monotonic()
        found = scan_checkpoints(pattern, seams.wall(), settle)
        live.saved_scan_at = seams.monotonic() + max(SAVED_SCAN_S, 50 * (seams.monotonic() - t0))
        last = hang.last_step
        fresh = [
            c
            for c in found
            if c.mtime >= since - SAVED_SLACK_S
            and (c.step is None or last is None or c.step >= last)
        ]
        # Every file (or directory) of the save complete: a save in several parts is finished
        # when its last part is.
        if fresh and all(c.complete for c in fresh):
            live.pipeline.activity(Activity("checkpoint_saved", seams.wall()))
