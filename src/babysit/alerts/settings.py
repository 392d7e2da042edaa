"""[alerts] in babysit.toml: where alerts go, and how often they may.

    [alerts]
    notify = ["ntfy://ntfy.sh/my-run", { url = "pagerduty://KEY@TOKEN", min_severity = "page" }]
    cooldown_s = 600          # the same incident again within this long: folded, not re-sent
    burst_s = 60              # more of the same kind within this long: one digest at its end
    escalate_after = 3        # the same incident this many times (escalate_window_s): louder
    deadman_url = "https://hc-ping.com/UUID"   # pinged every deadman_every_s while babysit lives
    on_event = "python annotate.py"            # each alert as JSON on its stdin
    on_event_timeout_s = 30

The rule is babysit.config's [alerts] section as it is (one place for each default);
`destinations()` reads `notify` from TOML or flags. Shape only: whether apprise knows a URL is
asked when babysit starts (sender.check_urls).
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from babysit.alerts.message import SEVERITIES, Severity
from babysit.errors import ConfigError


@dataclass(frozen=True)
class Destination:
    """One apprise URL and the quietest severity it takes."""

    url: str
    min_severity: Severity = Severity.INFO

    def takes(self, severity: Severity) -> bool:
        return severity.rank >= self.min_severity.rank


@dataclass(frozen=True)
class AlertRule:
    notify: tuple[Destination, ...] = ()
    cooldown_s: float = 600.0
    burst_s: float = 60.0
    escalate_after: int = 3  # 0: never escalate
    escalate_window_s: float = 6 * 3600.0
    retries: int = 3  # tries per message and destination, with backoff between them
    drain_s: float = 10.0  # at exit, how long babysit waits for alerts still on their way
    deadman_url: str = ""
    deadman_every_s: float = 60.0
    on_event: str = ""
    on_event_timeout_s: float = 30.0

    @property
    def enabled(self) -> bool:
        return bool(self.notify or self.deadman_url or self.on_event)


_DEST_KEYS = ("url", "min_severity")


def destinations(key: str, value: Any) -> tuple[Destination, ...]:
    """`notify` as written: a URL, a list of URLs, or tables {url, min_severity}. Raises
    ConfigError naming the key and the entry."""
    if isinstance(value, (str, Mapping)):
        value = [value]
    if not isinstance(value, Sequence):
        raise ConfigError(f"{key} must be a list of URLs, got {value!r}")
    out: list[Destination] = []
    for i, item in enumerate(value):
        where = f"{key}[{i}]"
        if isinstance(item, Destination):
            out.append(item)
        elif isinstance(item, str):
            out.append(Destination(_url(where, item)))
        elif isinstance(item, Mapping):
            out.append(_table(where, item))
        else:
            raise ConfigError(
                f"{where} must be a URL or a table {{url, min_severity}}, got {item!r}"
            )
    return tuple(out)


def _table(where: str, item: Mapping[str, Any]) -> Destination:
    for k in item:
        if k not in _DEST_KEYS:
            close = difflib.get_close_matches(str(k), _DEST_KEYS, n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise ConfigError(
                f"{where}: unknown key {k!r}{hint}; known keys: {', '.join(_DEST_KEYS)}"
            )
    if "url" not in item:
        raise ConfigError(f"{where}: a destination needs a url")
    return Destination(
        _url(f"{where}.url", item["url"]),
        severity(f"{where}.min_severity", item.get("min_severity", "info")),
    )


def _url(where: str, url: Any) -> str:
    if not isinstance(url, str) or "://" not in url.strip():
        # Never quote the value: it may be a webhook with its token.
        raise ConfigError(
            f"{where} must be an apprise URL (scheme://...), e.g. "
            "ntfy://ntfy.sh/TOPIC or json://host:port/path"
        )
    return url.strip()


def severity(where: str, value: Any) -> Severity:
    if not isinstance(value, str) or value.lower() not in SEVERITIES:
        raise ConfigError(f"{where} must be one of {', '.join(SEVERITIES)}, got {value!r}")
    return Severity(value.lower())
