"""The seam to the outside world: a Sender delivers one alert to one destination.

    check_urls(["ntfy://ntfy.sh/x"])        # at start: ConfigError for a URL apprise refuses
    sender = AppriseSender("ntfy://ntfy.sh/x")
    sender.send(alert)                      # raises SendFailed; the outbox retries
    mask_url("slack://T0/B0/XXXX")          # "slack://***": what logs may show of a URL

Unit tests use a fake Sender; the end-to-end tests use real apprise (`json://127.0.0.1:PORT/`).
apprise is the optional extra babysit[alerts], imported only here and only when a URL is given.
"""

from __future__ import annotations

import contextlib
import ipaddress
import re
import warnings
from collections.abc import Iterator, Sequence
from typing import Any, Protocol

from babysit.alerts.message import Alert, Severity
from babysit.errors import ConfigError
from babysit.redact import redact_text

CONNECT_TIMEOUT_S = 4.0  # apprise's own default; a destination that is down costs the outbox this
READ_TIMEOUT_S = 8.0


class SendFailed(Exception):
    """A destination did not take the message (down, refused, timed out)."""


class Sender(Protocol):
    name: str  # masked: safe to log
    attachments: bool  # whether the destination takes files

    def send(self, alert: Alert) -> None: ...


_HOST = re.compile(r"^[a-z][a-z0-9+.-]*://(?:[^/@?#]*@)?(\[[^\]]+\]|[^/:?#]*)", re.IGNORECASE)


def mask_url(url: str) -> str:
    """scheme://host, and only when the host looks like a host (a dotted name, an address,
    localhost); many apprise URLs carry their token where the host goes (slack://T/B/X,
    discord://ID/TOKEN): those show as scheme://***."""
    scheme = url.split("://", 1)[0].lower() if "://" in url else "?"
    m = _HOST.match(url.strip())
    host = m.group(1) if m else ""
    if host.lower() == "localhost" or _ip(host) or ("." in host and not _secretish(host)):
        return f"{scheme}://{host}"
    return f"{scheme}://***"


def _ip(host: str) -> bool:
    try:
        ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return False
    return True


def _secretish(host: str) -> bool:
    return redact_text(host) != host


@contextlib.contextmanager
def _quiet() -> Iterator[None]:
    """apprise loads its plugins lazily, and some import deprecated modules (imghdr): their
    DeprecationWarnings are apprise's to fix, not the operator's to read (nor an error under
    pytest's -W error)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        yield


def _apprise() -> Any:
    try:
        with _quiet():
            import apprise
    except ImportError as exc:
        raise ConfigError(
            "alerts need apprise: pip install 'babysit[alerts]' (or remove the notify URLs)"
        ) from exc
    return apprise


def check_urls(urls: Sequence[str]) -> None:
    """Raise ConfigError (one line, the URL masked) for the first URL apprise does not take."""
    if not urls:
        return
    apprise = _apprise()
    for i, url in enumerate(urls):
        with _quiet():
            plugin = apprise.Apprise.instantiate(url)
        if plugin is None:
            raise ConfigError(
                f"notify URL #{i + 1} ({mask_url(url)}) is not a URL apprise can send to: check "
                "its scheme and parts (https://github.com/caronc/apprise/wiki lists them)"
            )


_TYPES = {Severity.PAGE: "failure", Severity.WARN: "warning", Severity.INFO: "info"}


class AppriseSender:
    """One apprise destination. The plugin is made once; apprise's own retries are off (the
    outbox retries, with backoff, and says when it gives up)."""

    def __init__(self, url: str) -> None:
        self._apprise = _apprise()
        self.name = mask_url(url)
        with _quiet():
            plugin = self._apprise.Apprise.instantiate(url)
        if plugin is None:
            raise ConfigError(f"notify URL {self.name} is not a URL apprise can send to")
        plugin.socket_connect_timeout = CONNECT_TIMEOUT_S
        plugin.socket_read_timeout = READ_TIMEOUT_S
        self._plugin = plugin
        self.attachments = bool(getattr(plugin, "attachment_support", False))

    def send(self, alert: Alert) -> None:
        kind = "success" if alert.kind in ("recovered", "test") else _TYPES[alert.severity]
        attach = None
        if self.attachments and alert.attachments:
            attach = self._apprise.AppriseAttachment()
            for path in alert.attachments:
                attach.add(path)
        try:
            with _quiet():
                ok = self._plugin.notify(
                    body=alert.body(), title=alert.title(), notify_type=kind, attach=attach
                )
        except Exception as exc:  # a plugin's own bug must not look like ours
            # Only the type: the message of a plugin's error may quote its URL, token and all.
            raise SendFailed(f"apprise's plugin raised {type(exc).__name__}") from exc
        if not ok:
            raise SendFailed("the destination did not accept it (down, refused or timed out)")
