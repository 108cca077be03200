"""The ``procanim`` command inside a Blender binary (``blender -b -c procanim ...``), and what the
command runs in Blender wherever it runs.

:func:`register` registers the command with ``bpy.utils.register_cli_command`` (the extension's
``register()`` calls it). ``blender -b -c procanim worker`` is a pool worker (:func:`.serve.serve`);
anything else is the command itself (:func:`.cli.main`), with this binary as its :class:`.cli.Host`.
The pipeline runner (``tools/batch.py``) imports this module once its own Blender is up, for
:func:`blender_side`.
"""

from __future__ import annotations

import bpy

from . import checks, cli, serve, shot

COMMAND = "procanim"
_handle = None


def blender_side() -> cli.Blender:
    """What the command runs in this process's Blender (the extension enabled here)."""
    return cli.Blender(bpy.app.version_string, checks.check_job, shot.bake)


def blender_binary_host() -> cli.Host:
    """This process is a Blender binary that has the extension enabled (``blender -c procanim``)."""
    command = [bpy.app.binary_path, "-b", "-c", COMMAND, "worker"]
    return cli.Host(f"blender -b -c {COMMAND}", blender_side, worker_command=command, blender_binary=True)


def _execute(argv: list[str]) -> int:
    if argv[:1] == ["worker"]:
        return serve.serve()
    return cli.main(argv, blender_binary_host())


def register():
    """Register the ``procanim`` command (``blender -c procanim ...``)."""
    global _handle
    _handle = bpy.utils.register_cli_command(COMMAND, _execute)


def unregister():
    global _handle
    if _handle is not None:
        bpy.utils.unregister_cli_command(_handle)
        _handle = None
