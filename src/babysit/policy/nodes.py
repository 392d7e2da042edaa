"""When to stop trusting a node, and whether the run still has the nodes it needs. Pure.

    ban = ban_for("gpu-17", failures=[t1, t2, t3], last_ban=None, now=t3, rule=BanRule())
    usable, missing = usable_hosts(["a", "b", "c"], banned={"b"}, needed=3)

- A host blamed for `ban_after` failures within `window_s` is banned for `ban_s` (0: until a
  human unbans it). Failures from before its last ban ended do not count again.
- After a ban ends (it expired, or the operator lifted it), the host is on probation for
  `probation_s`: one more failure bans it again, for twice as long as the last time (at least
  twice `ban_s`). `ban_after = 0` turns automatic bans off, probation included.
- A failing preflight health check bans the host at once (by="preflight").
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass

from babysit.records import Ban, node_key


@dataclass(frozen=True)
class BanRule:
    """The ban fields of the [nodes] section of babysit.toml."""

    ban_after: int = 3  # failures blamed on one host within window_s that ban it (0: never)
    window_s: float = 86400.0
    ban_s: float = 86400.0  # how long a ban lasts (0: until `babysit nodes unban`)
    probation_s: float = 86400.0  # after a ban: one failure in this long bans the host again


def duration(seconds: float) -> str:
    """`24h`, `30 min`, `45s`: a length of time in a message."""
    if seconds >= 3600:
        return f"{seconds / 3600:g}h"
    return f"{seconds / 60:g} min" if seconds >= 60 else f"{seconds:g}s"


def in_force(ban: Ban, now: float) -> bool:
    return ban.expires is None or ban.expires > now


def ban_for(
    host: str,
    failures: Sequence[float],
    last_ban: Ban | None,
    now: float,
    rule: BanRule,
    run: str | None = None,
) -> Ban | None:
    """`failures`: when failures were blamed on `host` (any order); `last_ban`: its most recent
    ban, in force or not (a lifted ban ends when it was lifted)."""
    if rule.ban_after <= 0:
        return None  # automatic bans are off (the operator's and preflight's stay)
    if last_ban is not None and in_force(last_ban, now):
        return None  # already banned
    ended = last_ban.expires if last_ban is not None else None
    counted = [t for t in failures if t >= now - rule.window_s and (ended is None or t > ended)]
    if not counted:
        return None
    if last_ban is not None and ended is not None and now < ended + last_ban.probation_s:
        previous = (ended - last_ban.since) if ended > last_ban.since else rule.ban_s
        length = 2 * max(previous, rule.ban_s) if rule.ban_s > 0 else 0.0
        return Ban(
            host,
            f"failed again while on probation after its ban ({last_ban.reason})",
            now,
            now + length if length > 0 else None,
            rule.probation_s,
            "policy",
            run,
        )
    if len(counted) < rule.ban_after:
        return None
    return Ban(
        host,
        f"{len(counted)} failures blamed on it within {duration(rule.window_s)}",
        now,
        now + rule.ban_s if rule.ban_s > 0 else None,
        rule.probation_s,
        "policy",
        run,
    )


def usable_hosts(
    hosts: Sequence[str], banned: Collection[str], needed: int
) -> tuple[list[str], int]:
    """The hosts left after the bans, and how many are missing to reach `needed` (0: every
    host of the list is needed). Names are compared by node_key: a ban of `gpu-3` takes
    `GPU-3.cluster.local` out."""
    keys = {node_key(h) for h in banned}
    usable = [h for h in hosts if node_key(h) not in keys]
    want = needed if needed > 0 else len(hosts)
    return usable, max(0, want - len(usable))
