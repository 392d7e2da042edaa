"""Notice writes in the directory a checkpoint glob points into (a save under way), cheaply.

    pulse = DirectoryPulse("/abs/out/ckpt_*.pt")
    pulse.changed()   # True when a file there was added, removed, grew or was touched

The glob's fixed directory and its direct subdirectories are looked at, as names, sizes and
modification times. Looking at all of them every second cost babysit most of a core with
100,000 files there (7.7 s of CPU against 0.3 s for the same run without a glob: one stat per
file per pulse). So there are two kinds of look:
- a full scan (every file's size and mtime), at most `budget` of the time: a scan that took
  20 ms is not done again for 2 s, one of 200 ms for 20 s. A directory of a few hundred files
  is still scanned fully at every pulse, as before;
- in between, a quick look: the directories' own mtimes (a file added, removed or renamed
  changes its directory's; then that directory's names are listed again, and only the new
  ones are stat-ed), and the `hot` files: the newest ones, where a save writes. A write into an
  old file in place is seen by the next full scan.
benchmarks/checkpoint_scan.py measures both against the full scan every time.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable

from babysit.sources.checkpoints import glob_directory

FULL_SCAN_BUDGET = 0.01  # share of the time full scans may take (of one core)
HOT_FILES = 64  # the newest files, looked at at every pulse
MAX_DIRS = 256  # subdirectories whose mtime is looked at at every pulse (the newest)

_Stamp = tuple[int, int]  # (size, mtime_ns)


class DirectoryPulse:
    def __init__(
        self,
        pattern: str,
        timer: Callable[[], float] = time.perf_counter,
        budget: float = FULL_SCAN_BUDGET,
        skip: str | None = None,
    ) -> None:
        self.base = str(glob_directory(pattern))
        # babysit's own home, when it sits in the checkpoint directory (`.babysit` next to
        # `ckpt_*.pt`): its writes every few seconds are no save, and would hide every hang.
        self.skip = os.path.abspath(skip) if skip else None
        self.timer = timer
        self.budget = budget
        self.full_scans = 0  # for the benchmark and the tests
        self._files: dict[str, _Stamp] = {}
        self._names: dict[str, set[str]] = {}  # directory -> names of the files in it
        self._dirs: dict[str, int] = {}  # the base and its subdirectories -> mtime_ns
        self._hot: list[str] = []
        self._next_full: float | None = None  # None: not primed yet

    def changed(self) -> bool:
        return self._full() if self._due() else self._quick()

    def _due(self) -> bool:
        """A full scan now: the first look, or the last one's cost is paid off."""
        return self._next_full is None or self.timer() >= self._next_full

    # -- full scan ----------------------------------------------------------------------------

    def _full(self) -> bool:
        start = self.timer()
        before = (self._files, self._dirs)
        self._files, self._names, self._dirs = {}, {}, {}
        self._dirs[self.base] = _mtime(self.base)
        for sub in self._list(self.base, stat_all=True):
            self._dirs[sub] = _mtime(sub)
            self._list(sub, stat_all=True)
        self._hot = self._newest(self._files)
        primed = self._next_full is not None
        self.full_scans += 1
        end = self.timer()
        self._next_full = end + (end - start) / self.budget
        return primed and (self._files, self._dirs) != before

    def _list(self, directory: str, stat_all: bool) -> list[str]:
        """Record the files in `directory` (stat-ing those not known yet, or all of them);
        returns its subdirectories. Files gone since are forgotten."""
        names: set[str] = set()
        subdirs = []
        try:
            with os.scandir(directory) as it:
                for entry in it:
                    if self.skip is not None and os.path.abspath(entry.path) == self.skip:
                        continue
                    try:
                        if entry.is_dir(follow_symlinks=False):
                            subdirs.append(entry.path)
                            continue
                        if stat_all or entry.path not in self._files:
                            st = entry.stat(follow_symlinks=False)
                            self._files[entry.path] = (st.st_size, st.st_mtime_ns)
                            if not stat_all:
                                self._hot.append(entry.path)  # new: maybe a save starting
                    except OSError:
                        continue  # gone meanwhile
                    names.add(entry.path)
        except OSError:
            pass
        for gone in self._names.get(directory, set()) - names:
            self._files.pop(gone, None)
        self._names[directory] = names
        return subdirs

    # -- quick look ---------------------------------------------------------------------------

    def _quick(self) -> bool:
        changed = False
        watched = sorted(self._dirs, key=self._dirs.__getitem__, reverse=True)[:MAX_DIRS]
        if self.base not in watched:
            watched.append(self.base)
        for directory in watched:
            mtime = _mtime(directory)
            if mtime == self._dirs.get(directory):
                continue
            changed = True
            self._dirs[directory] = mtime
            subdirs = self._list(directory, stat_all=False)
            if directory == self.base:
                for sub in subdirs:
                    if sub not in self._dirs:  # a new subdirectory: its files are new too
                        self._dirs[sub] = _mtime(sub)
                        self._list(sub, stat_all=False)
                for gone in [d for d in self._dirs if d != self.base and d not in subdirs]:
                    del self._dirs[gone]
                    for name in self._names.pop(gone, set()):
                        self._files.pop(name, None)
        for path in self._hot:
            try:
                st = os.stat(path, follow_symlinks=False)
                stamp = (st.st_size, st.st_mtime_ns)
            except OSError:
                stamp = None
            if stamp != self._files.get(path):
                changed = True
                if stamp is None:
                    self._files.pop(path, None)
                else:
                    self._files[path] = stamp
        self._hot = self._newest({p: self._files[p] for p in self._hot if p in self._files})
        return changed

    @staticmethod
    def _newest(files: dict[str, _Stamp]) -> list[str]:
        return sorted(files, key=lambda p: files[p][1], reverse=True)[:HOT_FILES]


def _mtime(path: str) -> int:
    try:
        return os.stat(path, follow_symlinks=False).st_mtime_ns
    except OSError:
        return -1
