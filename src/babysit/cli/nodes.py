"""`babysit nodes`: the node registry and its ban list, as the operator sees and edits it.

    babysit nodes list [--json]
    babysit nodes ban gpu-17 --reason "Xid 79 twice" --hours 48
    babysit nodes unban gpu-17 --reason "GPU replaced"

A ban or unban is written to the store; the supervising loop of each run in the home reads
it before its next attempt.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import click

from babysit.cli.common import fail, home_dir, home_option, load_config, open_store, plain_console
from babysit.errors import BabysitError, UsageError
from babysit.records import Ban, node_key
from babysit.store import Store


@click.group("nodes")
def nodes_command() -> None:
    """The node registry: failures blamed on each host, health checks, bans.

    \b
    Examples:
      babysit nodes list
      babysit nodes ban gpu-17 --reason "Xid 79 twice" --hours 48
      babysit nodes unban gpu-17 --reason "GPU replaced"
    """


@nodes_command.command("list")
@home_option
@click.option("--json", "as_json", is_flag=True, help="Print one JSON document.")
def nodes_list(home: Path | None, as_json: bool) -> None:
    """Every host babysit knows: banned, on probation, or ok, with the reason."""
    from babysit.views.nodes import nodes_document, nodes_json, nodes_table

    try:
        window_s = load_config(None, {}).nodes.window_s
    except BabysitError:
        window_s = 86400.0
    try:
        with open_store(home) as store:
            docs = nodes_document(store.node_events(), store.bans(), time.time(), window_s)
    except BabysitError as exc:
        fail(exc)
    if as_json:
        click.echo(json.dumps({"nodes": nodes_json(docs)}, indent=2, allow_nan=False))
        return
    console = plain_console()
    if docs:
        console.print(nodes_table(docs, window_s))
    else:
        console.print("no nodes recorded yet: no failure was blamed on a host, none was banned")


@nodes_command.command("ban")
@click.argument("host")
@home_option
@click.option("--reason", required=True, help="Why (it goes to the logbook and `nodes list`).")
@click.option("--hours", type=float, default=0.0, help="How long (default: until unbanned).")
def nodes_ban(host: str, home: Path | None, reason: str, hours: float) -> None:
    """Ban HOST: the next attempt of every run in this home leaves it out."""
    now = time.time()
    try:
        if hours < 0:
            raise UsageError(f"--hours must be >= 0, got {hours:g}")
        with Store.open(home_dir(home)) as store:
            expires = now + hours * 3600 if hours > 0 else None
            probation = load_config(None, {}).nodes.probation_s
            store.add_ban(Ban(host, reason, now, expires, probation, "operator"))
    except BabysitError as exc:
        fail(exc)
    until = f"for {hours:g}h" if hours > 0 else "until `babysit nodes unban`"
    click.echo(f"banned {host} {until}: {reason}")


@nodes_command.command("unban")
@click.argument("host")
@home_option
@click.option("--reason", default="unbanned by the operator", help="Why (for the logbook).")
def nodes_unban(host: str, home: Path | None, reason: str) -> None:
    """Lift HOST's ban. It stays on probation: one more failure bans it again."""
    now = time.time()
    try:
        with open_store(home) as store:
            if node_key(host) not in {b.host for b in store.active_bans(now)}:
                raise UsageError(f"{host} is not banned (see `babysit nodes list`)")
            store.lift_bans(host, now, reason)
    except BabysitError as exc:
        fail(exc)
    click.echo(f"unbanned {host}: {reason}")
