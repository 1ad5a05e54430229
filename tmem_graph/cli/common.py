"""Helpers shared by the click commands: error handling, the store, JSON output."""

from __future__ import annotations

import functools
import json

import click

from ..config import Settings
from ..errors import TmemError, ValidationError
from ..store import Store


def friendly(fn):
    """Turn library errors into one-line click errors (exit 1)."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except ValidationError as exc:
            raise click.ClickException(str(exc)) from None
        except TmemError as exc:
            raise click.ClickException(str(exc).splitlines()[0] if str(exc) else type(exc).__name__) from None

    return wrapper


def settings_of(ctx: click.Context) -> Settings:
    return ctx.find_root().obj["settings"]


def store_of(ctx: click.Context) -> Store:
    root = ctx.find_root().obj
    if "store" not in root:
        root["store"] = Store(root["settings"])
        ctx.call_on_close(root["store"].close)
    return root["store"]


def echo_json(obj) -> None:
    click.echo(json.dumps(obj, ensure_ascii=False, indent=2, default=str))
