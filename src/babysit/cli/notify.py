"""`babysit notify --test`: one test message to every alert destination, each said ok or not.

    babysit notify --test                                  # [alerts] of babysit.toml
    babysit notify --test --notify ntfy://ntfy.sh/my-run   # these URLs instead
    babysit notify --test --json

Every notify URL gets the message (whatever its min_severity), the on_event command gets it on
its stdin, the dead-man URL one ping. Exit 0 when every one took it, 1 when one did not, 2 for
a URL apprise refuses or nothing to test. URLs are shown masked (scheme://host): their tokens
never reach the terminal.
"""

from __future__ import annotations

import json
import socket
import sys
import time
from pathlib import Path
from typing import Any

import click

from babysit.cli.common import config_option, fail, load_config, plain_console
from babysit.errors import BabysitError, UsageError
from babysit.views.safe import markup


@click.command("notify")
@click.option("--test", "test", is_flag=True, help="Send one test message to every destination.")
@click.option(
    "--notify",
    "notify",
    multiple=True,
    metavar="URL",
    help="An apprise URL to test (repeatable); default: [alerts] notify of babysit.toml.",
)
@config_option
@click.option("--json", "as_json", is_flag=True, help="Print the results as one JSON document.")
def notify_command(
    test: bool, notify: tuple[str, ...], config_path: Path | None, as_json: bool
) -> None:
    """Check that alerts reach you: a test message to every destination ([alerts] in
    babysit.toml, or --notify URL), each reported ok or failed.

    \b
    Example:
      babysit notify --test --notify ntfy://ntfy.sh/my-run
    """
    try:
        if not test:
            raise UsageError("say what to do: babysit notify --test [--notify URL ...]")
        rule = load_config(config_path, {"alerts.notify": notify or None}).alerts
        if not rule.enabled:
            raise UsageError(
                "no alert destination to test: give --notify URL, or [alerts] notify in "
                "babysit.toml"
            )
        results = _send_all(rule)
    except BabysitError as exc:
        fail(exc)
    if as_json:
        click.echo(json.dumps({"results": results}, indent=2))
    else:
        console = plain_console()
        for r in results:
            if r["ok"]:
                console.print(f"[green]ok[/]      {markup(r['destination'])}")
            else:
                console.print(
                    f"[red]failed[/]  {markup(r['destination'])}: {markup(r['error'] or '')}"
                )
    sys.exit(0 if all(r["ok"] for r in results) else 1)


def _send_all(rule: Any) -> list[dict[str, Any]]:
    from babysit.alerts.deadman import Deadman
    from babysit.alerts.hook import HookSender
    from babysit.alerts.message import Alert, Severity
    from babysit.alerts.sender import AppriseSender, SendFailed, check_urls

    check_urls([d.url for d in rule.notify])  # a URL apprise refuses: exit 2 before sending
    host = socket.gethostname()
    alert = Alert(
        Severity.INFO,
        "test",
        "babysit",
        host,
        "test message from `babysit notify --test`",
        what="a test: if you read this, babysit's alerts reach you here",
        action="nothing to do",
        more="babysit notify --test",
        ts=time.time(),
    )
    senders: list[Any] = [AppriseSender(d.url) for d in rule.notify]
    if rule.on_event:
        senders.append(HookSender(rule.on_event, rule.on_event_timeout_s))
    results: list[dict[str, Any]] = []
    for sender in senders:
        try:
            sender.send(alert)
        except SendFailed as exc:
            results.append({"destination": sender.name, "ok": False, "error": str(exc)})
        else:
            results.append({"destination": sender.name, "ok": True, "error": None})
    if rule.deadman_url:
        pinger = Deadman(rule.deadman_url, rule.deadman_every_s, lambda _l, _t: None)
        try:
            pinger.get(rule.deadman_url)
        except Exception as exc:
            error = f"dead-man ping failed ({type(exc).__name__})"
            results.append({"destination": pinger.name, "ok": False, "error": error})
        else:
            results.append({"destination": pinger.name, "ok": True, "error": None})
    return results
