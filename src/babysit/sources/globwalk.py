"""A checkpoint glob's matches: `**` never follows a symbolic link to a directory, and the walk is
bounded.

    found = walk_glob("out/**/ckpt_*.pt")   # found.paths: ["out/a/ckpt_1.pt", ...]
    found.problem                           # None, or why the walk stopped early

glob.glob(recursive=True) follows links to directories under `**`: one `bin/X11 -> .` link
makes the walk endless (minutes at 100% CPU, with babysit deaf to SIGTERM and Ctrl-C meanwhile).
Here:
- `**` (a whole path component) matches zero or more directories, never descends into a symbolic
  link to a directory, and never twice into the same directory (device and inode: bind mounts);
- the other components follow links as glob does (`out/latest/*.pt` with `latest -> run3`);
- a wildcard matches a name starting with '.' only when the pattern's component starts with
  '.', as in glob;
- the walk stops after `max_entries` directory entries (or `max_depth` levels below a `**`)
  and says so: the caller reports it rather than trust a partial list silently.
A pattern without `**` is glob.glob's: it cannot loop (one level per component).
"""

from __future__ import annotations

import fnmatch
import glob
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass, field

MAX_ENTRIES = 1_000_000  # directory entries looked at by one walk (about a second)
MAX_DEPTH = 40  # directory levels below a `**`


@dataclass
class Found:
    paths: list[str] = field(default_factory=list)
    problem: str | None = None


def walk_glob(pattern: str, max_entries: int = MAX_ENTRIES, max_depth: int = MAX_DEPTH) -> Found:
    if "**" not in pattern:
        return Found(glob.glob(pattern))
    root, parts = _split(pattern)
    walk = _Walk(pattern, parts, max_entries, max_depth)
    dirs_only = pattern.endswith(os.sep)  # `out/**/`: directories, as glob
    for path in walk.expand(root, 0):
        if not dirs_only:
            walk.found.paths.append(path)
        elif os.path.isdir(path):
            walk.found.paths.append(path if path.endswith(os.sep) else path + os.sep)
    return walk.found


def _split(pattern: str) -> tuple[str, list[str]]:
    """('/', ['out', '**', 'ckpt_*.pt']) for `/out/**/ckpt_*.pt`; ('', [...]) when relative.
    Repeated `**` components collapse into one (they match the same)."""
    root = os.sep if pattern.startswith(os.sep) else ""
    parts: list[str] = []
    for part in pattern.split(os.sep):
        if part in ("", ".") and parts:
            continue  # `a//b`, `a/./b`
        if part == "" or (part == "**" and parts and parts[-1] == "**"):
            continue
        parts.append(part)
    return root, parts


def _join(directory: str, name: str) -> str:
    return os.path.join(directory, name) if directory else name


class _Walk:
    def __init__(self, pattern: str, parts: list[str], max_entries: int, max_depth: int) -> None:
        self.pattern = pattern
        self.parts = parts
        self.left = max_entries
        self.max_entries = max_entries
        self.max_depth = max_depth
        self.found = Found()
        self.matchers = [_matcher(p) for p in parts]

    def stop(self, why: str) -> None:
        if self.found.problem is None:
            self.found.problem = f"the checkpoint glob {self.pattern!r} {why}: narrow it"

    def entries(self, directory: str) -> list[os.DirEntry[str]]:
        if self.left <= 0:
            return []
        try:
            with os.scandir(directory or ".") as it:
                out = []
                for entry in it:
                    out.append(entry)
                    self.left -= 1
                    if self.left <= 0:
                        self.stop(f"holds more than {self.max_entries:,} entries; only those seen")
                        break
                return out
        except OSError:
            return []

    def expand(
        self,
        directory: str,
        i: int,
        listing: list[os.DirEntry[str]] | None = None,
    ) -> Iterator[str]:
        """The matches of parts[i:] in `directory` (`listing`: its entries, when already read)."""
        last = i == len(self.parts) - 1
        part = self.parts[i]
        if part == "**":
            yield from self.recurse(directory, i, 0, last, frozenset())
            return
        matcher = self.matchers[i]
        if matcher is None:  # no wildcard: no listing
            path = _join(directory, part)
            if last:
                if os.path.lexists(path):
                    yield path
            elif os.path.isdir(path):
                yield from self.expand(path, i + 1)
            return
        for entry in self.entries(directory) if listing is None else listing:
            if not matcher.match(entry.name):
                continue
            path = _join(directory, entry.name)
            if last:
                yield path
            elif _is_dir(entry, follow=True):  # as glob: `latest -> run3` is followed here
                yield from self.expand(path, i + 1)

    def recurse(
        self, directory: str, i: int, depth: int, last: bool, above: frozenset[tuple[int, int]]
    ) -> Iterator[str]:
        """`**` at parts[i]: zero directories, then each real subdirectory in turn. `above`: the
        directories this `**` came through (device, inode): a bind mount of one of them inside
        itself is not walked again."""
        try:
            st = os.stat(directory or ".")
        except OSError:
            return
        key = (st.st_dev, st.st_ino)
        if key in above:
            return
        above = above | {key}
        listing = self.entries(directory)
        if last:  # `out/**`: the directory and everything below it, as glob
            if depth == 0 and directory:
                yield _join(directory, "")
        else:
            yield from self.expand(directory, i + 1, listing)
        if depth >= self.max_depth:
            self.stop(f"goes deeper than {self.max_depth} directories")
            return
        for entry in listing:
            if entry.name.startswith("."):
                continue
            path = _join(directory, entry.name)
            if last:
                yield path
            if _is_dir(entry, follow=False):  # a link to a directory is never walked into
                yield from self.recurse(path, i, depth + 1, last, above)


def _is_dir(entry: os.DirEntry[str], follow: bool) -> bool:
    try:
        return entry.is_dir(follow_symlinks=follow)
    except OSError:
        return False


def _matcher(part: str) -> re.Pattern[str] | None:
    """None for a component without wildcards; else its regex. A leading '.' is matched only
    by a component that starts with one."""
    if not glob.has_magic(part):
        return None
    hidden = "" if part.startswith(".") else r"(?!\.)"
    return re.compile(hidden + fnmatch.translate(part))
