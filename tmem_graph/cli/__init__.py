"""The `tmem` command line (`main`), a front end over the library like any other."""

from .main import main

__all__ = ["main"]
