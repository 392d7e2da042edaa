"""Slurm hostlists: `node[01-16,20]` <-> node01 ... node16, node20. Pure.

    expand("node[01-03,10],gpu-[1-2]-[3-4]")
    # -> ["node01", "node02", "node03", "node10", "gpu-1-3", "gpu-1-4", "gpu-2-3", "gpu-2-4"]
    compress(["node3", "node1", "node2", "login"])   # -> "node[1-3],login"

The grammar is Slurm's own (`scontrol show hostnames` / `show hostlist`, Slurm 22.05): a comma
separated list of names; a name may hold several bracket groups (`rack[1-2]-n[1,3]`, expanded
as their product, left to right), each a comma separated list of numbers and ranges. The width
of a range's low end is kept (`x[001-2]` is x001, x002); ranges are numeric only (`[a,b]` is an
error, as in Slurm); nothing may follow the last bracket (`a[1-2]b` is an error, as in Slurm).
compress() writes one range per name prefix (the digits at the end of the name), in Slurm's own
spelling, so that an --exclude list stays short on a thousand nodes; expand(compress(h)) gives
the same hosts, sorted. Errors are ValueError with the hostlist and what is wrong in it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

MAX_HOSTS = 1_000_000  # a typo like node[1-1000000000] must not eat the memory
_TAIL_DIGITS = re.compile(r"^(.*?)(\d+)$")


def _split_top(text: str) -> list[str]:
    """Split on the commas outside brackets."""
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        if ch == "[":
            if depth:
                raise ValueError(f"invalid hostlist {text!r}: nested '['")
            depth = 1
        elif ch == "]":
            if not depth:
                raise ValueError(f"invalid hostlist {text!r}: ']' without '['")
            depth = 0
        elif ch == "," and not depth:
            parts.append(text[start:i])
            start = i + 1
    if depth:
        raise ValueError(f"invalid hostlist {text!r}: '[' without ']'")
    parts.append(text[start:])
    return parts


def _range(text: str, whole: str) -> list[str]:
    """`01-03,10` -> ["01", "02", "03", "10"] (the width of each low end kept)."""
    out: list[str] = []
    for item in text.split(","):
        lo, sep, hi = item.strip().partition("-")
        if not lo.isdigit() or (sep and not hi.isdigit()):
            raise ValueError(f"invalid hostlist {whole!r}: {item!r} is not a number or a range")
        if not sep:
            out.append(lo)
            continue
        a, b = int(lo), int(hi)
        if b < a:
            raise ValueError(f"invalid hostlist {whole!r}: range {item!r} goes down")
        if b - a + 1 > MAX_HOSTS:
            raise ValueError(f"invalid hostlist {whole!r}: range {item!r} is too large")
        width = len(lo) if lo.startswith("0") and len(lo) > 1 else 0
        out.extend(str(n).zfill(width) for n in range(a, b + 1))
    return out


def _expand_one(name: str, whole: str) -> list[str]:
    if "[" not in name and "]" not in name:
        return [name]
    if not name.endswith("]"):
        raise ValueError(
            f"invalid hostlist {whole!r}: {name[name.rfind(']') + 1 :]!r} after the last ']'"
        )
    pieces = re.split(r"\[([^\]]*)\]", name)  # literal, range, literal, range, ..., ''
    hosts = [""]
    for i, piece in enumerate(pieces):
        if i % 2 == 0:
            hosts = [h + piece for h in hosts]
        else:
            numbers = _range(piece, whole)
            hosts = [h + n for h in hosts for n in numbers]
            if len(hosts) > MAX_HOSTS:
                raise ValueError(f"invalid hostlist {whole!r}: more than {MAX_HOSTS} hosts")
    return hosts


def expand(hostlist: str) -> list[str]:
    """Every host of a Slurm hostlist, in its order, each once. "" and "(null)" are empty."""
    text = hostlist.strip()
    if not text or text in ("(null)", "None"):
        return []
    out: dict[str, None] = {}
    for name in _split_top(text):
        name = name.strip()
        if not name:
            continue
        for host in _expand_one(name, text):
            out.setdefault(host, None)
    return list(out)


def expand_all(hostlists: Iterable[str]) -> list[str]:
    """Several hostlists (and plain names) as one list of hosts, each once."""
    out: dict[str, None] = {}
    for item in hostlists:
        for host in expand(item):
            out.setdefault(host, None)
    return list(out)


def _ranges(numbers: list[str]) -> str:
    """["1", "2", "3", "7"] (one width) -> "1-3,7"."""
    values = sorted(set(numbers), key=int)
    parts: list[str] = []
    start = prev = values[0]
    for v in values[1:]:
        if int(v) == int(prev) + 1:
            prev = v
            continue
        parts.append(start if start == prev else f"{start}-{prev}")
        start = prev = v
    parts.append(start if start == prev else f"{start}-{prev}")
    return ",".join(parts)


def compress(hosts: Iterable[str]) -> str:
    """The hosts as one Slurm hostlist: `node[1-3,7],login` (prefixes in order of first
    appearance). A name whose number is zero-padded keeps its width (`node[01-03]`); numbers
    of another width go in a range of their own."""
    groups: dict[tuple[str, int], list[str]] = {}
    for host in dict.fromkeys(h.strip() for h in hosts):
        if not host:
            continue
        if "[" in host or "]" in host or "," in host:
            raise ValueError(f"not a host name: {host!r}")
        m = _TAIL_DIGITS.match(host)
        if m is None:
            groups.setdefault((host, -1), [])
            continue
        prefix, digits = m.group(1), m.group(2)
        width = len(digits) if digits.startswith("0") and len(digits) > 1 else 0
        if width == 0 and (prefix, len(digits)) in groups:
            width = len(digits)  # node10 with node09: one padded range, node[09-10]
        groups.setdefault((prefix, width), []).append(digits)
    out: list[str] = []
    for (prefix, width), numbers in groups.items():
        if width < 0:
            out.append(prefix)
        elif len(numbers) == 1:
            out.append(prefix + numbers[0])
        else:
            out.append(f"{prefix}[{_ranges(numbers)}]")
    return ",".join(out)
