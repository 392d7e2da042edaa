"""What every command shares: the --home option, where the home is, one-line errors.

    home_option                 # the --home flag, the same on every command that has it
    open_store(home)            # the home's existing store (--home, babysit.toml, .babysit),
                                # opened read-only: status and logbook work on a home they
                                # cannot write; a command that writes gets a writer's connection
    fail(exc)                   # "babysit: error: ..." on stderr and exit 2

Commands catch BabysitError (what babysit expects can go wrong) and hand it to fail(); any
other exception is a bug and keeps its traceback.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar

import click
from rich.console import Console

from babysit.errors import BabysitError
from babysit.records import ExitCode
from babysit.store import Store
from babysit.views.safe import plain

if TYPE_CHECKING:
    from babysit.config import Config

F = TypeVar("F", bound=Callable[..., Any])


def load_config(path: Path | None, overrides: Mapping[str, Any]) -> Config:
    """babysit.config.load_config, imported when a command runs, not when the CLI loads: the
    config is made of every policy's and detector's rule, which `babysit --help` does not need."""
    from babysit.config import load_config as load

    return load(path, overrides)


def fail(exc: BabysitError) -> NoReturn:
    """One line and exit 2: babysit's own expected errors (bad flags or config, a store it
    cannot use) all need the operator to change something before trying again."""
    click.echo(f"babysit: error: {plain(str(exc), newlines=True)}", err=True)  # may quote a log
    sys.exit(int(ExitCode.USAGE))


def home_option(f: F) -> F:
    return click.option(
        "--home",
        type=click.Path(path_type=Path),
        default=None,
        help="babysit's home directory (the store, the logs). Default: .babysit in the working "
        "directory, or [run] home in babysit.toml.",
    )(f)


def config_option(f: F) -> F:
    return click.option(
        "--config",
        "config_path",
        type=click.Path(path_type=Path),
        help="Config file (default: ./babysit.toml when present).",
    )(f)


def home_dir(home: Path | None) -> Path:
    """--home, else [run] home in babysit.toml, else .babysit (also when the config is bad:
    reading a store must not depend on a config the run may not use)."""
    if home is not None:
        return home
    try:
        return Path(load_config(None, {}).run.home)
    except BabysitError:
        return Path(".babysit")


def open_store(home: Path | None) -> Store:
    """The home's existing store, read-only until the command writes; a missing one is an error
    (StoreError), not a new store, and an emptied or damaged one names `babysit rebuild`."""
    return Store.open(home_dir(home), create=False)


def plain_console() -> Console:
    """A console for results: no guessed highlighting, long lines left whole for grep."""
    return Console(highlight=False, soft_wrap=True)
