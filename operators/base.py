"""What every ProcAnim generator operator shares.

A generator operator implements ``prepare(context) -> Job``: it reads the scene into engine inputs
(main thread, bpy allowed) and returns the armatures to bake and a ``compute(progress)`` closure
that only calls the engine. Then:

* ``execute`` (scripts, ``blender -b``, the redo panel) computes synchronously and bakes;
* ``invoke`` from the sidebar, with a window, computes in a worker thread while a modal timer shows
  progress (``wm.progress_begin/update/end``) and Esc cancels; the bake itself (bpy writes) runs
  on the main thread when the engine is done.

Input errors (:class:`InputError`) become ``CANCELLED`` with the message, never a traceback, and
nothing is written before every clip has been generated and checked for NaN.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from ..procanim_addon.clip import Clip
from ..procanim_addon.errors import InputError
from ..procanim_addon.progress import Cancelled, Progress
from .bake import bake_clip
from .bridge import constrained_bones


@dataclass
class Job:
    """Armatures to bake and the engine call that makes one Clip for each (same order)."""

    targets: list
    compute: Callable[[Callable[[float], None]], list[Clip]]
    extra: dict = field(default_factory=dict)


class GeneratorMixin:
    bl_options = {"REGISTER", "UNDO"}

    # ------------------------------------------------------------------ shared steps
    def _finish(self, context, job: Job, clips: list[Clip], seconds: float):
        for clip in clips:
            if not clip.is_finite():
                self.report(
                    {"ERROR"},
                    "The generator produced invalid (NaN) values; nothing was baked. Try less extreme settings.",
                )
                return {"CANCELLED"}
        for obj, clip in zip(job.targets, clips):
            clip.metrics["generate_ms"] = seconds * 1000.0
            bake_clip(obj, clip)
        self.after_bake(context, job, clips)
        for obj, clip in zip(job.targets, clips):
            driven = constrained_bones(obj, clip.keyed_bones())
            if driven:
                self.report(
                    {"WARNING"},
                    f"{obj.name}: keyed bones driven by constraints (their keys may not show): "
                    f"{', '.join(driven[:8])}{' …' if len(driven) > 8 else ''}",
                )
        names = ", ".join(obj.name for obj in job.targets)
        self.report(
            {"INFO"},
            f"Baked {clips[0].generator.replace('_', ' ')} on {names} "
            f"({clips[0].frame_count} keys, {seconds * 1000:.0f} ms)",
        )
        return {"FINISHED"}

    def after_bake(self, context, job: Job, clips: list[Clip]) -> None:
        """Hook for operators that report more (e.g. a printed error table)."""

    # ------------------------------------------------------------------ scripts / blender -b
    def execute(self, context):
        t0 = time.perf_counter()
        try:
            job = self.prepare(context)
            clips = job.compute(Progress())
        except InputError as err:
            self.report({"ERROR"}, str(err))
            return {"CANCELLED"}
        return self._finish(context, job, clips, time.perf_counter() - t0)

    # ------------------------------------------------------------------ sidebar: worker thread + modal
    def invoke(self, context, _event):
        wm = context.window_manager
        if context.window is None:
            return self.execute(context)
        try:
            self._job = self.prepare(context)
        except InputError as err:
            self.report({"ERROR"}, str(err))
            return {"CANCELLED"}
        self._progress = Progress()
        self._result: dict = {}
        self._t0 = time.perf_counter()

        def work():
            try:
                self._result["clips"] = self._job.compute(self._progress)
            except (InputError, Cancelled) as err:
                self._result["error"] = err
            except Exception as err:  # reported on the main thread, never lost in the worker
                self._result["error"] = err

        self._thread = threading.Thread(target=work, daemon=True)
        self._thread.start()
        self._timer = wm.event_timer_add(0.05, window=context.window)
        wm.progress_begin(0, 100)
        wm.modal_handler_add(self)
        return {"RUNNING_MODAL"}

    def modal(self, context, event):
        wm = context.window_manager
        if event.type == "ESC":
            self._progress.cancel()
        if event.type != "TIMER" and event.type != "ESC":
            return {"PASS_THROUGH"}
        wm.progress_update(int(self._progress.fraction * 100))
        if self._thread.is_alive():
            return {"RUNNING_MODAL"}
        wm.event_timer_remove(self._timer)
        wm.progress_end()
        err = self._result.get("error")
        if isinstance(err, Cancelled):
            self.report({"WARNING"}, "Bake cancelled; nothing was changed.")
            return {"CANCELLED"}
        if isinstance(err, InputError):
            self.report({"ERROR"}, str(err))
            return {"CANCELLED"}
        if err is not None:
            self.report({"ERROR"}, f"ProcAnim failed: {type(err).__name__}: {err}")
            return {"CANCELLED"}
        return self._finish(context, self._job, self._result["clips"], time.perf_counter() - self._t0)
