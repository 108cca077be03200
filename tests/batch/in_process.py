"""The batch command's :class:`Host` for this pytest process, whose Blender has the extension
enabled: the checks and the ``--workers 0``/``--shot`` bakes run here."""

from __future__ import annotations

import importlib


def in_process_host(cli):
    """A ``cli.Host`` whose ``prepare`` hands over this process's Blender (``command.blender_side``
    of the same package as ``cli``)."""
    command = importlib.import_module(cli.__name__.removesuffix(".cli") + ".command")
    return cli.Host("procanim-test", command.blender_side)
