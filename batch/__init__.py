"""Batch baking: the ``procanim`` command-line command (``blender -b -c procanim bake jobs.toml``).

A TOML job file lists shots (an input .blend or an imported BVH/FBX, a generator and its operator
arguments, the outputs); the command checks the whole file, then bakes the shots in this process,
on a pool of worker processes or on a Dask cluster, skipping those whose outputs were already made
from the same inputs, and writes a report. See docs/batch.md.

The modules that the pipeline side imports without Blender (the job file, the hash, the worker
pipes, Dask) are stdlib only; tqdm and dask are used when present, never shipped.
"""

from __future__ import annotations

COMMAND = "procanim"
_handle = None


def _execute(argv: list[str]) -> int:
    from . import cli

    return cli.main(argv, cli.blender_binary_host())


def register():
    """Register the ``procanim`` command (``blender -c procanim ...``)."""
    global _handle
    import bpy

    _handle = bpy.utils.register_cli_command(COMMAND, _execute)


def unregister():
    global _handle
    import bpy

    if _handle is not None:
        bpy.utils.unregister_cli_command(_handle)
        _handle = None
