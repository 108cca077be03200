"""What every ProcAnim generator operator shares: input errors become reports, never tracebacks."""

from __future__ import annotations

import time

from ..procanim_addon.errors import InputError
from .bake import bake_clip


class GeneratorMixin:
    """Subclasses implement ``generate(context) -> list[(armature object, Clip)]``.

    ``execute`` runs the engine (synchronously: scripts and ``blender -b`` get the same call),
    bakes each clip and reports; any :class:`InputError` cancels with its message and changes
    nothing, because nothing is written before every clip has been generated and checked.
    """

    bl_options = {"REGISTER", "UNDO"}

    def execute(self, context):
        t0 = time.perf_counter()
        try:
            results = self.generate(context)
            for _obj, clip in results:
                if not clip.is_finite():
                    raise InputError(
                        "The generator produced invalid (NaN) values; nothing was baked. Try less extreme settings."
                    )
        except InputError as err:
            self.report({"ERROR"}, str(err))
            return {"CANCELLED"}
        t1 = time.perf_counter()
        for obj, clip in results:
            clip.metrics["generate_ms"] = (t1 - t0) * 1000.0 / max(len(results), 1)
            bake_clip(obj, clip)
        names = ", ".join(obj.name for obj, _ in results)
        self.report(
            {"INFO"},
            f"Baked {results[0][1].generator.replace('_', ' ')} on {names} "
            f"({results[0][1].frame_count} keys, {(time.perf_counter() - t0) * 1000:.0f} ms)",
        )
        return {"FINISHED"}
