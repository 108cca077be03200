"""The generator operator: one class shape for every entry of the registry.

A generator's operator module (``operators/<id>.py``) provides:

* ``OBJECTS`` — its object arguments (:class:`~.objects.ObjectArgument`: names, e.g. ``armature``);
* ``settings(ui: bool) -> dict`` — its other arguments as bpy properties, shared with the sidebar's
  settings (``ui=True`` adds slider limits);
* ``prepare(args, context) -> Job`` — reads the scene (main thread, bpy allowed) into engine inputs
  and returns the armatures to bake and ``compute(progress)``, an engine call
  (:class:`~procanim_addon.jobs.EngineCall`: an engine function and the inputs it read).
  ``args`` has the operator's argument names: the operator itself, the sidebar settings seen
  through :class:`~.objects.SettingsArgs` (live preview), or a batch job;
* optionally ``operator_settings() -> dict`` (arguments the sidebar does not have), ``summary(job,
  clips) -> str`` (the INFO line of a bake), ``warnings(job, clips) -> list[str]`` (its WARNING
  lines) and ``after_bake(job, clips)``.

:func:`operator_class` turns a registry entry and that module into the operator class. Then:

* ``execute`` (scripts, ``blender -b``, the redo panel) computes synchronously and bakes;
* ``invoke`` from the sidebar, with a window, computes in a worker thread while a modal timer shows
  the engine's progress (``wm.progress_begin/update/end``) and Esc cancels: the engine raises
  :class:`~procanim_addon.progress.Cancelled` at its next progress report and nothing is written.
  The bake itself (bpy writes) runs on the main thread when the engine is done.

Input errors (:class:`InputError`) become ``CANCELLED`` with the message, never a traceback, and
nothing is written before every clip has been generated and checked for NaN.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import bpy
from bpy.props import EnumProperty

from ..procanim_addon.clip import Clip
from ..procanim_addon.errors import InputError
from ..procanim_addon.progress import Cancelled, Progress
from .bake import bake_warning, keyed_bone_names, prepare_bake, read_metrics
from .bridge import constrained_bones
from .control_rig import control_mode

KEY_TARGETS = [
    ("AUTO", "Auto", "The animator's controls on a known control rig (IK for walks), else the deform bones"),
    ("IK_CONTROLS", "IK Controls", "Key the rig's IK controls (feet, hands, knee/elbow direction, torso)"),
    ("FK_CONTROLS", "FK Controls", "Key the rig's FK controls, with the IK/FK switch keyed to FK"),
    ("DEFORM", "Deform Bones", "Key the bones the motion is computed for (plain skeletons, mocap rigs)"),
]
MODAL_TICK_S = 0.05  # how often the modal timer looks at the worker thread (s)


def common_settings() -> dict:
    """Arguments every generator has (operator and sidebar alike)."""
    return {
        "key_target": EnumProperty(
            name="Key Target",
            description="Which bones receive the keys",
            items=KEY_TARGETS,
            default="AUTO",
        ),
    }


@dataclass
class Job:
    """Armatures to bake and the engine call that makes one Clip for each (same order)."""

    targets: list
    compute: Callable[[Callable[[float], None]], list[Clip]]
    extra: dict = field(default_factory=dict)


def check_key_target(objects, key_target: str) -> None:
    """Raise :class:`InputError` when one of the armatures among ``objects`` cannot take
    ``key_target`` (e.g. IK controls on a rig that has none) — before any engine runs. Generate
    and the live preview's status line say the same."""
    for obj in objects:
        if obj is not None and obj.type == "ARMATURE":
            control_mode(obj, key_target)


def argument_given(args, name: str) -> bool:
    """True when the caller set argument ``name`` (an operator: ``is_property_set``; a settings
    view: :meth:`~.objects.SettingsArgs.is_set`)."""
    props = getattr(args, "properties", None)
    if props is not None and hasattr(props, "is_property_set"):
        return bool(props.is_property_set(name))
    return bool(args.is_set(name))


def kept_read(args, what: str, objects: tuple, build: Callable[[], Any]) -> Any:
    """``build()`` — a read of the scene in a generator's ``prepare``. The live preview's arguments
    carry ``reads``, which return what ``build()`` made last time while ``objects`` are unchanged
    (``preview/reads.py``); an operator, the sidebar's Generate and a batch job always read afresh."""
    reads = getattr(args, "reads", None)
    return build() if reads is None else reads.get(what, objects, build)


class GeneratorOperator:
    """The operator behaviour shared by every generator (mixed into :func:`operator_class`)."""

    bl_options = {"REGISTER", "UNDO"}
    generator_module: Any = None  # the generator's operators/<id>.py module (set by operator_class)

    def prepare(self, context) -> Job:
        job = self.generator_module.prepare(self, context)
        check_key_target(job.targets, getattr(self, "key_target", "AUTO"))  # before any character is baked
        return job

    def previewed(self, context) -> list[Clip] | None:
        """The live preview's Clips when it made them from exactly these inputs (then Generate bakes
        what the preview showed without computing again); None otherwise."""
        from ..preview import finished_clips

        return finished_clips(self.generator_module, self, context)

    # ------------------------------------------------------------------ shared steps
    def _finish(self, context, job: Job, clips: list[Clip], seconds: float):
        if not all(clip.is_finite() for clip in clips):
            self.report(
                {"ERROR"}, "The generator produced invalid (NaN) values; nothing was baked. Try less extreme settings."
            )
            return {"CANCELLED"}
        key_target = getattr(self, "key_target", "AUTO")
        notes = job.extra.setdefault("notes", [])
        writes = []
        for obj, clip in zip(job.targets, clips):  # every character checked before any is written
            clip.metrics["generate_ms"] = seconds * 1000.0
            try:
                writes.append(prepare_bake(obj, clip, key_target=key_target))
            except InputError as err:  # e.g. a rig whose controls the conversion cannot drive
                self.report({"ERROR"}, str(err))
                return {"CANCELLED"}
        for write in writes:
            write(notes)
        after = getattr(self.generator_module, "after_bake", None)
        if after is not None:
            after(job, clips)
        self._warn_constrained(job, clips)
        for note in notes:
            self.report({"INFO"}, note)
        for warning in getattr(self.generator_module, "warnings", lambda _job, _clips: [])(job, clips):
            self.report({"WARNING"}, warning)
        summary = getattr(self.generator_module, "summary", None)
        line = summary(job, clips) if summary is not None else None
        names = ", ".join(obj.name for obj in job.targets)
        self.report(
            {"INFO"},
            line or f"Baked {clips[0].generator.replace('_', ' ')} on {names} "
            f"({clips[0].frame_count} keys, {seconds * 1000:.0f} ms)",
        )
        return {"FINISHED"}

    def _warn_constrained(self, job: Job, clips: list[Clip]) -> None:
        for obj in job.targets:
            approximate = bake_warning(obj)  # a bake onto controls the rig cannot reproduce exactly
            if approximate:
                self.report({"WARNING"}, approximate)
            if str(read_metrics(obj.animation_data.action).get("key_target", "")).endswith("_CONTROLS"):
                continue  # Blender evaluated the deform bones of that bake: what shows is measured
            driven = constrained_bones(obj, keyed_bone_names(obj))
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


def operator_arguments(module) -> dict:
    """The operator's bpy properties: object names, the generator's settings, the common ones."""
    props = {arg.name: arg.string_property() for arg in module.OBJECTS}
    props.update(module.settings(ui=False))
    props.update(common_settings())
    props.update(getattr(module, "operator_settings", dict)())
    return props


def operator_class(entry, module) -> type:
    """The operator class of registry ``entry`` whose behaviour is ``module`` (see the docstring)."""
    return type(
        f"PROCANIM_OT_{entry.id}",
        (GeneratorOperator, bpy.types.Operator),
        {
            "bl_idname": entry.operator,
            "bl_label": f"Generate {entry.label}",
            "bl_description": entry.description,
            "generator_module": module,
            "__annotations__": operator_arguments(module),
            "__doc__": entry.description,
        },
    )
