"""The generator operator: one class, :class:`GeneratorOperator`, for every generator.

:func:`operator_class` makes ``PROCANIM_OT_<id>`` for a :class:`~.generator.Generator`: a subclass of
:class:`GeneratorOperator` that only names it and declares its arguments
(:meth:`~.generator.Generator.operator_arguments`). Then:

* ``execute`` (scripts, ``blender -b``, the redo panel) computes synchronously and bakes;
* ``invoke`` from the sidebar, with a window, computes in a worker thread while a modal timer shows
  the engine's progress (``wm.progress_begin/update/end``) and Esc cancels: the engine raises
  :class:`~procanim_addon.progress.Cancelled` at its next progress report and nothing is written.
  The bake itself (bpy writes) runs on the main thread when the engine is done.

Both bake the live preview's Clips instead of computing when the preview made them from exactly
these inputs (:mod:`.previewed`). Input errors (:class:`InputError`) become ``CANCELLED`` with the
message, never a traceback, and nothing is written before every clip has been generated and
checked for NaN.
"""

from __future__ import annotations

import functools
import threading
import time
from typing import TYPE_CHECKING, ClassVar

import bpy

from ..procanim_addon.clip import Clip
from ..procanim_addon.errors import InputError
from ..procanim_addon.progress import Cancelled, Progress
from . import previewed
from .bake import bake_error, bake_warning, keyed_bone_names, prepare_bake, read_metrics
from .bridge import constrained_bones
from .control_rig import control_mode
from .generator import Generator, Job

MODAL_TICK_S = 0.05  # how often the modal timer looks at the worker thread (s)


def check_key_target(objects, key_target: str) -> None:
    """Raise :class:`InputError` when one of the armatures among ``objects`` cannot take
    ``key_target`` (e.g. IK controls on a rig that has none) — before any engine runs. Generate
    and the live preview's status line say the same."""
    for obj in objects:
        if obj is not None and obj.type == "ARMATURE":
            control_mode(obj, key_target)


class GeneratorOperator(bpy.types.Operator):
    """The operator of every generator (``PROCANIM_OT_<id>``, made by :func:`operator_class`)."""

    bl_options = {"REGISTER", "UNDO"}
    if TYPE_CHECKING:  # for the checker only: Blender reads a class's annotations as its properties
        generator: ClassVar[Generator]  # set by operator_class
        key_target: str  # every generator's common arguments (generator.common_settings)
        bake_to: str
        blend_type: str

    def prepare(self, context) -> Job:
        job = self.generator.prepare(self, context)
        check_key_target(job.targets, self.key_target)  # before any character is baked
        return job

    def previewed(self, context) -> list[Clip] | None:
        """The live preview's Clips when it made them from exactly these inputs (then Generate bakes
        what the preview showed without computing again); None otherwise."""
        return previewed.take(self.generator, self, context)

    # ------------------------------------------------------------------ shared steps
    def _finish(self, context, job: Job, clips: list[Clip], seconds: float):
        if not all(clip.is_finite() for clip in clips):
            self.report(
                {"ERROR"}, "The generator produced invalid (NaN) values; nothing was baked. Try less extreme settings."
            )
            return {"CANCELLED"}
        key_target = self.key_target
        notes = job.extra.setdefault("notes", [])
        writes = []
        for obj, clip in zip(job.targets, clips):  # every character checked before any is written
            clip.metrics["generate_ms"] = seconds * 1000.0
            try:
                writes.append(prepare_bake(obj, clip, key_target, self.bake_to, self.blend_type))
            except InputError as err:  # e.g. a rig whose controls the conversion cannot drive
                self.report({"ERROR"}, str(err))
                return {"CANCELLED"}
        actions = [write(notes) for write in writes]
        self.generator.after_bake(job, clips)
        self._warn_constrained(job, actions)
        for note in notes:
            self.report({"INFO"}, note)
        for warning in self.generator.warnings(job, clips):
            self.report({"WARNING"}, warning)
        line = self.generator.summary(job, clips)
        names = ", ".join(obj.name for obj in job.targets)
        self.report(
            {"INFO"},
            line or f"Baked {clips[0].generator.replace('_', ' ')} on {names} "
            f"({clips[0].frame_count} keys, {seconds * 1000:.0f} ms)",
        )
        for obj, action in zip(job.targets, actions):  # last, where the status bar shows it
            error = bake_error(obj, action)  # a bake Blender does not show
            if error:
                self.report({"ERROR"}, error)
        return {"FINISHED"}

    def _warn_constrained(self, job: Job, actions: list) -> None:
        for obj, action in zip(job.targets, actions):
            m = read_metrics(action)
            if not m.get("bake_takes_effect", True):
                continue  # the error, reported last, says what to do
            approximate = bake_warning(obj, action)  # a bake the rig reproduces only within a few cm
            if approximate:
                self.report({"WARNING"}, approximate)
            if str(m.get("key_target", "")).endswith("_CONTROLS"):
                continue  # keys on controls: the verification named the bone that does not follow
            if m.get("control_verify_frames") and not m.get("control_bake_approximate"):
                continue  # Blender evaluated the deform bones: the keys show
            driven = constrained_bones(obj, keyed_bone_names(obj, action))
            if driven:
                self.report(
                    {"WARNING"},
                    f"{obj.name}: keyed bones driven by constraints (their keys may not show): "
                    f"{', '.join(driven[:8])}{' …' if len(driven) > 8 else ''}",
                )

    # ------------------------------------------------------------------ scripts / blender -b
    def execute(self, context):
        t0 = time.perf_counter()
        try:
            job = self.prepare(context)
            clips = self.previewed(context) or job.compute(Progress())
        except InputError as err:
            self.report({"ERROR"}, str(err))
            return {"CANCELLED"}
        return self._finish(context, job, clips, time.perf_counter() - t0)

    # ------------------------------------------------------------------ sidebar: worker thread + modal
    def invoke(self, context, _event):
        if context.window is None:
            return self.execute(context)
        t0 = time.perf_counter()
        try:
            self._job = self.prepare(context)
        except InputError as err:
            self.report({"ERROR"}, str(err))
            return {"CANCELLED"}
        previewed = self.previewed(context)
        if previewed is not None:
            return self._finish(context, self._job, previewed, time.perf_counter() - t0)
        self._progress = Progress()
        self._result: dict = {}
        self._t0 = time.perf_counter()

        def work():
            try:
                self._result["clips"] = self._job.compute(self._progress)
            except Exception as err:  # Cancelled, InputError or a bug: reported on the main thread
                self._result["error"] = err

        self._thread = threading.Thread(target=work, daemon=True)
        self._thread.start()
        wm = context.window_manager
        self._timer = wm.event_timer_add(MODAL_TICK_S, window=context.window)
        wm.progress_begin(0, 100)
        wm.modal_handler_add(self)
        return {"RUNNING_MODAL"}

    def modal(self, context, event):
        wm = context.window_manager
        if event.type == "ESC":
            self._progress.cancel()
        elif event.type != "TIMER":
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
        if err is not None:
            text = str(err) if isinstance(err, InputError) else f"ProcAnim failed: {type(err).__name__}: {err}"
            self.report({"ERROR"}, text)
            return {"CANCELLED"}
        return self._finish(context, self._job, self._result["clips"], time.perf_counter() - self._t0)


@functools.cache
def operator_class(generator: Generator) -> type[GeneratorOperator]:
    """``PROCANIM_OT_<id>``: the operator of ``generator`` (one class per generator)."""
    spec = generator.spec
    return type(
        f"PROCANIM_OT_{spec.id}",
        (GeneratorOperator,),
        {
            "bl_idname": spec.operator,
            "bl_label": generator.operator_label or f"Generate {spec.label}",
            "bl_description": spec.description,
            "generator": generator,
            "__annotations__": generator.operator_arguments(),
            "__doc__": spec.description,
        },
    )
