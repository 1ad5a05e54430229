"""docs/cli.md against the command line `tmem --help` describes: every command and option the
reference names exists, and every command and option of the CLI appears in the reference (a
command under its `### tmem …` heading, an option in that command's section). The CLI is read
from its click objects, which `--help` prints; `tmem --help` itself is run once as a check."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import click

from tmem_graph.cli.main import main

REFERENCE = Path(__file__).parents[2] / "docs" / "cli.md"
HEADING = re.compile(r"^### `tmem ([a-z -]+?)(?: [A-Z_ ]+)?`$", re.M)
OPTION = re.compile(r"(?<![\w-])(--[a-z][a-z0-9-]*|-[a-zA-Z])(?![\w-])")


def commands(group: click.Group = main, path: tuple[str, ...] = ()) -> dict[str, click.Command]:
    """Every leaf command of the CLI by its path ("db start"), hidden ones left out."""
    found = {}
    for name, cmd in group.commands.items():
        if getattr(cmd, "hidden", False):
            continue
        if isinstance(cmd, click.Group):
            found.update(commands(cmd, path + (name,)))
        else:
            found[" ".join(path + (name,))] = cmd
    return found


def options(cmd: click.Command) -> set[str]:
    return {o for p in cmd.params if isinstance(p, click.Option) and not p.hidden for o in p.opts + p.secondary_opts} | {"--help"}


def sections() -> dict[str, str]:
    """The reference's text under each command heading, by command path."""
    text = REFERENCE.read_text(encoding="utf-8")
    heads = list(HEADING.finditer(text))
    return {h.group(1): text[h.end(): heads[i + 1].start() if i + 1 < len(heads) else len(text)]
            for i, h in enumerate(heads)}


def test_tmem_help_lists_the_commands_the_reference_checks():
    shown = subprocess.run([sys.executable, "-m", "tmem_graph.cli", "--help"], capture_output=True, text=True,
                           check=True).stdout
    listed = set(re.findall(r"^  ([a-z][a-z-]*)  ", shown.split("Commands:")[1], re.M))
    assert listed == {path.split()[0] for path in commands()}


def test_every_command_of_the_cli_has_its_section_and_no_section_names_another():
    documented, actual = set(sections()), set(commands())
    assert actual - documented == set(), "commands missing from docs/cli.md"
    assert documented - actual == set(), "docs/cli.md names commands the CLI does not have"


def test_every_option_of_each_command_appears_in_its_section_and_no_other_does():
    text = REFERENCE.read_text(encoding="utf-8")
    preamble = text[: text.index("## Commands")]
    global_options = options(main) | {"--version"}
    assert global_options - {"--help"} <= set(OPTION.findall(preamble)), "global options missing from docs/cli.md"
    assert set(OPTION.findall(preamble)) <= global_options, "docs/cli.md's preamble names an option tmem lacks"
    for path, section in sections().items():
        cmd = commands()[path]
        named = set(OPTION.findall(section))
        assert options(cmd) - {"--help"} - named == set(), f"tmem {path}: options missing from docs/cli.md"
        assert named - options(cmd) - global_options == set(), f"tmem {path}: docs/cli.md names options it lacks"
