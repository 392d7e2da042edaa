"""What watching a checkpoint directory costs babysit, against the full rescan it used to do.

    python benchmarks/checkpoint_scan.py [--files 100000] [--pulses 60] [--quick]

While an attempt runs, babysit looks at the checkpoint glob's directory once a second (a save
under way is a sign of life for the hang detector). It used to stat every file there at every
look: with 100,000 files, 7.7 s of babysit's CPU against 0.3 s for the same run without a glob.
Here, in the same run, on the same directory of FILES files (and a few subdirectories):
- baseline: the old look (scandir and stat every entry, and those of the direct
  subdirectories, every pulse);
- DirectoryPulse: quick looks (the directories' mtimes and the newest files) and a full scan
  at most 1% of the time; pulses are a simulated second apart (the schedule reads the clock).
Both are told the same events (a new file, the file growing, a file removed, nothing) and must
see the same: checked every time, with --quick too (2,000 files). Printed: the CPU of watching
for PULSES + 1 seconds (the first look, a full scan for both, included), and its share of a core.
Also the walk of a `**` glob over symbolic-link loops (`bin/X11 -> .` and `bin/up -> ..`):
glob.glob follows each, 40 links deep, two ways at every level, and does not end in a lifetime
(here it is cut after WALK_CAP_S and the paths it yielded counted); walk_glob must end, find
exactly the real checkpoints, and say nothing is wrong.
Target (issue 11): DirectoryPulse under 1% of a core with 100,000 files (not checked with
--quick).
"""

from __future__ import annotations

import argparse
import glob
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from _common import check, parse_args

from babysit.sources.globwalk import walk_glob
from babysit.sources.pulse import DirectoryPulse

WALK_CAP_S = 2.0  # how long the old glob is let run over the loop


class OldPulse:
    """The look babysit used to take at every pulse (sources/checkpoints.py before issue 11)."""

    def __init__(self, base: Path) -> None:
        self.base = base
        self._last: int | None = None

    def _signature(self) -> int:
        entries = []
        try:
            with os.scandir(self.base) as it:
                for entry in it:
                    st = entry.stat(follow_symlinks=False)
                    entries.append((entry.name, st.st_size, st.st_mtime_ns))
                    if entry.is_dir(follow_symlinks=False):
                        with os.scandir(entry.path) as sub:
                            for e in sub:
                                s2 = e.stat(follow_symlinks=False)
                                entries.append((e.path, s2.st_size, s2.st_mtime_ns))
        except OSError:
            return 0
        return hash(tuple(sorted(entries)))

    def changed(self) -> bool:
        sig = self._signature()
        before, self._last = self._last, sig
        return before is not None and sig != before


class SimClock:
    """Pulses one simulated second apart; within a pulse, real time passes (a scan's cost)."""

    def __init__(self) -> None:
        self.pulse = 0
        self._start = time.perf_counter()

    def tick(self) -> None:
        self.pulse += 1
        self._start = time.perf_counter()

    def __call__(self) -> float:
        return self.pulse + (time.perf_counter() - self._start)


def make_dir(base: Path, files: int) -> None:
    base.mkdir(parents=True)
    old = time.time() - 3600
    for i in range(files):
        path = base / f"shard_{i:06d}.bin"
        path.write_bytes(b"")
        os.utime(path, (old, old))
    for step in (100, 200):
        sub = base / f"checkpoint-{step}"
        sub.mkdir()
        (sub / "model.safetensors").write_bytes(b"w" * 64)


def bump(directory: Path) -> None:
    """A coarse filesystem clock must not hide a change from either look."""
    st = directory.stat()
    os.utime(directory, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))


def events(base: Path) -> list[tuple[str, Callable[[], None], bool]]:
    new = base / "ckpt_999.pt.tmp"

    def add() -> None:
        new.write_bytes(b"a")
        bump(base)

    def grow() -> None:
        with new.open("ab") as fh:
            fh.write(b"more bytes")

    def remove() -> None:
        new.unlink()
        bump(base)

    return [("new file", add, True), ("it grows", grow, True), ("removed", remove, True)]


def measure(pulse: DirectoryPulse | OldPulse, clock: SimClock | None, pulses: int) -> float:
    """CPU seconds of the first look (a full scan for both) and `pulses` idle ones after it,
    a (simulated) second apart: what watching the directory for that long costs."""
    t0 = time.process_time()
    pulse.changed()
    for _ in range(pulses):
        if clock is not None:
            clock.tick()
        check(not pulse.changed(), f"{type(pulse).__name__} saw a change where there was none")
    return time.process_time() - t0


def verdicts(base: Path, old: OldPulse, new: DirectoryPulse, clock: SimClock) -> None:
    for what, act, expect in events(base):
        act()
        clock.tick()
        saw_old, saw_new = old.changed(), new.changed()
        check(saw_old == expect, f"the old look missed: {what}")
        check(saw_new == expect, f"DirectoryPulse missed: {what}")
        clock.tick()
        check(not new.changed() and not old.changed(), f"a change seen twice after: {what}")


def loop_walk(root: Path) -> None:
    tree = root / "usr"
    (tree / "bin").mkdir(parents=True)
    (tree / "bin" / "X11").symlink_to(".")
    (tree / "bin" / "up").symlink_to("..")
    (tree / "lib" / "run").mkdir(parents=True)
    (tree / "lib" / "run" / "ckpt_5.pt").write_bytes(b"w")
    (tree / "bin" / "ckpt_1.pt").write_bytes(b"w")
    pattern = str(tree / "**" / "ckpt_*.pt")
    t0 = time.process_time()
    found = walk_glob(pattern)
    walk_s = time.process_time() - t0
    want = sorted([str(tree / "bin" / "ckpt_1.pt"), str(tree / "lib" / "run" / "ckpt_5.pt")])
    check(sorted(found.paths) == want, f"walk_glob found {sorted(found.paths)}, want {want}")
    check(found.problem is None, f"walk_glob said: {found.problem}")
    deadline = time.monotonic() + WALK_CAP_S
    yielded = 0
    for _ in glob.iglob(pattern, recursive=True):
        yielded += 1
        if time.monotonic() > deadline:
            break
    print(
        f"** over a symlink loop: walk_glob {walk_s * 1000:.1f} ms CPU, {len(found.paths)} "
        f"checkpoints; baseline glob.glob: cut after {WALK_CAP_S:g} s having yielded "
        f"{yielded:,} paths (it does not end)"
    )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--files", type=int, default=100_000, help="files in the directory")
    ap.add_argument("--pulses", type=int, default=60, help="idle pulses timed (one a second)")
    args = parse_args(ap, {"files": 2_000, "pulses": 10})
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp) / "out"
        t0 = time.monotonic()
        make_dir(base, args.files)
        print(f"{args.files:,} files in {base} (made in {time.monotonic() - t0:.1f} s)")
        clock = SimClock()
        old, new = OldPulse(base), DirectoryPulse(str(base / "ckpt_*.pt"), timer=clock)
        old_s = measure(old, None, args.pulses)
        new_s = measure(new, clock, args.pulses)
        verdicts(base, old, new, clock)
        n = args.pulses + 1
        print(
            f"watching for {n} s (one look a second): baseline (stat everything) "
            f"{old_s:.2f} s CPU = {old_s / n * 100:.2f}% of a core; DirectoryPulse {new_s:.3f} s "
            f"CPU = {new_s / n * 100:.2f}% ({new.full_scans} full scan(s)); "
            f"{old_s / max(new_s, 1e-9):.0f}x less"
        )
        print("events (new file, growth, removal, idle): both looks saw the same")
        loop_walk(Path(tmp) / "loop")
        if not args.quick:
            share = new_s / (args.pulses + 1)
            check(share < 0.01, f"DirectoryPulse takes {share * 100:.2f}% of a core (target < 1%)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
