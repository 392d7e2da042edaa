"""A click type for options that take seconds: `--grace 90s`, `--timeout 1h30m`, `--backoff 10`.

    @click.option("--grace", type=DURATION, help="...")   # the command gets float seconds

A bad value is a usage error that names the option and the forms accepted:
`Invalid value for '--grace': expected a duration: 90s, 5m, ... got '5x'`.
"""

from __future__ import annotations

from typing import Any

import click

from babysit.durations import parse_duration

__all__ = ["DURATION", "Duration"]


class Duration(click.ParamType[float]):
    name = "duration"

    def convert(
        self, value: Any, param: click.Parameter | None, ctx: click.Context | None
    ) -> float:
        if isinstance(value, float):
            return value
        try:
            return parse_duration(value)
        except ValueError as exc:
            self.fail(str(exc), param, ctx)


DURATION = Duration()
