"""The batch command's :class:`Host` for this pytest process, whose Blender has the extension
enabled: the checks and the ``--workers 0``/``--shot`` bakes run here; and the two steps every
job-file test takes (write a job file from a template, run the command on it)."""

from __future__ import annotations

import importlib
import textwrap


def in_process_host(cli):
    """A ``cli.Host`` whose ``prepare`` hands over this process's Blender (``command.blender_side``
    of the same package as ``cli``)."""
    command = importlib.import_module(cli.__name__.removesuffix(".cli") + ".command")
    return cli.Host("procanim-test", command.blender_side)


def write_jobs(tmp_path, text: str, inputs: dict, name: str = "jobs.toml"):
    """``text`` (a job file template: ``{name}`` fields from ``inputs``) written to ``tmp_path/name``."""
    path = tmp_path / name
    path.write_text(textwrap.dedent(text).format(**{k: str(v) for k, v in inputs.items()}))
    return path


def run_cli(cli, capsys, *args) -> tuple[int, str]:
    """(exit status, everything printed) of the batch command ``args`` run in this process."""
    status = cli.main(list(map(str, args)), in_process_host(cli))
    out = capsys.readouterr()
    return status, out.out + out.err
