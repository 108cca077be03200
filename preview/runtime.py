"""The running previews and everything they hook into Blender — and take out again.

While at least one generator's Preview is on, the preview holds:

* a timer (``bpy.app.timers``) that ticks every session, stops them all when the active object
  changes to an object none of them uses, and tags the 3D views for redraw. It runs every
  :data:`IDLE_S` while nothing is generating; while a worker runs, at every turn of Blender's main
  loop, where it only looks whether the worker has ended unless :data:`LOOK_S` have passed since
  the settings were last read — so a result is taken within a turn of the worker ending;
* two draw handlers on ``SpaceView3D`` (the ghosts in the view, the status lines in pixels; one
  pair serves every 3D view);
* a ``depsgraph_update_post`` handler that marks curves, meshes and actions whose content changed
  (their digests are recomputed, see ``operators/inputs.py``) and, when an object a preview reads was
  updated (moved, edited), runs the timer at the next turn;
* a ``load_pre`` handler: loading a file stops every preview (the handler is not persistent, so
  Blender drops it with the old file; the timer is not persistent either).

Turning the last Preview off, loading a file or disabling the extension removes all of them
(:func:`stop_all`; :func:`hooks` counts them for the tests).

A setting change reaches the sessions through the settings' own ``update`` callbacks
(:func:`.properties.notify_preview` adds one to every generator setting and the armature pick),
which Blender calls in the same call that sets the value — a slider drag, a typed value, a preset,
a script: the regeneration starts at once.

Each session's latest Clips are offered to Generate (``operators/previewed.py``) and withdrawn
when the preview stops.

Test mode: with ``PROCANIM_PREVIEW_LOG=<path>`` in the environment (or :data:`LOG_PATH` set) each
regeneration appends a JSON line — ``started`` (prepare time, what started it), ``ready`` (change →
ghost, compute and engine times, frames) and ``drawn`` (change → first draw of the new ghost) — with
wall-clock times, so a GUI harness can relate them to the input events it sent.
"""

from __future__ import annotations

import json
import os
import time
from typing import Any

import bpy
from bpy.app.handlers import persistent

from ..operators import generators, inputs, previewed
from . import draw
from .session import Session

IDLE_S = 0.02  # timer interval while nothing runs: how soon a change no update callback reports is seen (s)
REFRESH_S = 1.0  # digests of geometry and actions are recomputed this often (changes no update reported)
LOOK_S = 0.02  # while a worker runs, the settings are read at least this often (changes no callback reports)
LOG_PATH = os.environ.get("PROCANIM_PREVIEW_LOG", "")

# Blender's timers, as the preview uses them (the timing test puts a model of Blender's main loop
# here: the bpy wheel has no main loop that would run them).
TIMERS: Any = bpy.app.timers

SESSIONS: dict[str, Session] = {}
_state: dict[str, Any] = {"draw": [], "active": None}  # draw handles, active object


# ----------------------------------------------------------------------------- starting, stopping


def is_on(generator_id: str) -> bool:
    return generator_id in SESSIONS


def start(generator_id: str, context=None) -> Session:
    """Turn the preview of ``generator_id`` on (first tick at once)."""
    if generator_id in SESSIONS:
        return SESSIONS[generator_id]
    session = Session(generators.get(generator_id))
    context = context or bpy.context
    if not SESSIONS:
        _install(context)
    SESSIONS[generator_id] = session
    return session


def stop(generator_id: str) -> None:
    """Turn one preview off; the last one off removes every hook."""
    session = SESSIONS.pop(generator_id, None)
    if session is not None:
        session.stop()
    previewed.withdraw(generator_id)
    if not SESSIONS:
        _uninstall()
    _redraw()


def stop_all(loading: bool = False) -> None:
    """Every preview off, every hook out (``loading``: from the load_pre handler itself, which
    Blender drops after the load — removing it from its own call would make Blender skip the next
    add-on's load_pre handler)."""
    for generator_id in list(SESSIONS):
        SESSIONS.pop(generator_id).stop()
        previewed.withdraw(generator_id)
    _uninstall(keep_load_pre=loading)
    _redraw()


def _install(context) -> None:
    view = getattr(context, "view_layer", None)
    active = view.objects.active if view is not None else None
    _state["active"] = active.name if active is not None else None
    space = bpy.types.SpaceView3D
    _state["draw"] = [
        space.draw_handler_add(draw_view, (), "WINDOW", "POST_VIEW"),
        space.draw_handler_add(draw_pixel, (), "WINDOW", "POST_PIXEL"),
    ]
    if on_depsgraph not in bpy.app.handlers.depsgraph_update_post:
        bpy.app.handlers.depsgraph_update_post.append(on_depsgraph)
    if on_load_pre not in bpy.app.handlers.load_pre:
        bpy.app.handlers.load_pre.append(on_load_pre)
    if not TIMERS.is_registered(tick):
        TIMERS.register(tick, first_interval=0.0)


def _uninstall(keep_load_pre: bool = False) -> None:
    space = bpy.types.SpaceView3D
    for handle in _state["draw"]:
        space.draw_handler_remove(handle, "WINDOW")
    _state["draw"] = []
    app = bpy.app.handlers
    hooked = [(app.depsgraph_update_post, on_depsgraph)] + ([] if keep_load_pre else [(app.load_pre, on_load_pre)])
    for handlers, fn in hooked:
        while fn in handlers:
            handlers.remove(fn)
    if TIMERS.is_registered(tick):
        TIMERS.unregister(tick)
    inputs.forget()


def hooks() -> dict:
    """How many of each hook the preview holds now (draw handlers, timers, app handlers; Blender
    lists draw handlers nowhere: the preview's own count)."""
    return {
        "draw_handlers": len(_state["draw"]),
        "timers": int(TIMERS.is_registered(tick)),
        "depsgraph_update_post": bpy.app.handlers.depsgraph_update_post.count(on_depsgraph),
        "load_pre": bpy.app.handlers.load_pre.count(on_load_pre),
    }


# ----------------------------------------------------------------------------- Blender's callbacks


def on_load_pre(*_args) -> None:
    """Not persistent: Blender calls it before loading a file, then drops it."""
    stop_all(loading=True)


@persistent
def on_depsgraph(_scene, depsgraph) -> None:
    used = set().union(*(s.objects for s in SESSIONS.values()))
    wake = False
    for update in depsgraph.updates:
        data = update.id
        if isinstance(data, bpy.types.Object):
            name = data.original.name
            if update.is_updated_geometry:
                inputs.note_update("OB", name)
            wake |= name in used and (update.is_updated_geometry or update.is_updated_transform)
        elif isinstance(data, bpy.types.Action):
            inputs.note_update("AC", data.original.name)
    if wake:
        _state["wake"] = True
        _schedule(0.0)


def on_change(*_args) -> None:
    """A setting changed (a settings property's ``update``, see :func:`..preview.notify_preview`):
    the sessions step now — a new regeneration starts in the call that set the value — and the
    timer is rescheduled for its result. Never stops a preview here (the timer does: this runs
    inside Blender's property update)."""
    if not SESSIONS or _playing():
        return
    _step(bpy.context, source="setting")
    _schedule(_interval())


def _schedule(interval: float) -> None:
    """Run the timer in ``interval`` seconds (instead of when it was due)."""
    if TIMERS.is_registered(tick):
        TIMERS.unregister(tick)
    TIMERS.register(tick, first_interval=interval)


def _playing() -> bool:
    wm = bpy.context.window_manager
    return any(w.screen is not None and w.screen.is_animation_playing for w in getattr(wm, "windows", ()))


def _active_changed(context) -> bool:
    """True when the active object became one no running preview uses (then all stop)."""
    view = getattr(context, "view_layer", None)
    active = view.objects.active if view is not None else None
    name = active.name if active is not None else None
    if name == _state["active"]:
        return False
    _state["active"] = name
    used = set().union(*(s.objects for s in SESSIONS.values()))
    return name is None or name not in used


def tick() -> float | None:
    """The timer: one step of every session; None (unregistered) once no preview is on."""
    if not SESSIONS:
        _uninstall()
        return None
    context = bpy.context
    if _active_changed(context):
        stop_all()
        return None
    if _playing():
        return IDLE_S
    now = time.perf_counter()
    if not _looking(now):
        return _interval()
    if now - _state.get("refreshed", 0.0) >= REFRESH_S:
        inputs.forget()
        _state["refreshed"] = now
    _step(context, source="timer")
    return _interval()


def _looking(now: float) -> bool:
    """Whether the timer steps the sessions now: always while no worker runs; while one runs,
    when one has ended, when a depsgraph update woke the timer, or LOOK_S after the last step."""
    busy = [s.worker for s in SESSIONS.values() if s.worker is not None]
    if _state.pop("wake", False) or not busy or any(w.done for w in busy):
        return True
    return now - _state.get("stepped", 0.0) >= LOOK_S


def _step(context, source: str) -> None:
    """One step of every session (main thread), the views redrawn when what is drawn changed."""
    now = _state["stepped"] = time.perf_counter()
    changed = False
    for session in list(SESSIONS.values()):
        try:
            changed |= session.tick(context, now, source=source)
        except Exception as err:  # a timer that raises is dropped by Blender: never let one out
            session.error = f"ProcAnim preview failed: {type(err).__name__}: {err}"
            changed = True
        _log_events(session)
    if _state.get("sidebar"):  # the sidebar's status after the views have drawn the new ghost
        _state["sidebar"] = False
        _redraw(("UI",))
    if changed:
        _redraw(("WINDOW",))
        _state["sidebar"] = True



def take_finished() -> None:
    """The draw handler's part (main thread, inside a redraw of a 3D view): results of workers that
    ended since the timer last ran are taken now, so this redraw already draws them (a result that
    waited for the timer would need one more redraw, and a redraw is slow with software OpenGL).
    The timer redraws the sidebar's status."""
    for session in list(SESSIONS.values()):
        if session.take_finished():
            _log_events(session)
            _state["sidebar"] = True


def _interval() -> float:
    """When the timer should run next: IDLE_S while nothing runs, the next turn of the main loop
    while a worker runs."""
    return 0.0 if any(s.busy for s in SESSIONS.values()) else IDLE_S


def _redraw(regions=("WINDOW", "UI")) -> None:
    """Tag the 3D views' ``regions`` for redraw (the view: ghosts, status; the sidebar: the panel's
    status). Only those regions: a whole area's redraw would run every sidebar panel's draw too."""
    wm = getattr(bpy.context, "window_manager", None)
    for window in getattr(wm, "windows", ()):
        for area in window.screen.areas:
            if area.type == "VIEW_3D":
                for region in area.regions:
                    if region.type in regions:
                        region.tag_redraw()


# ----------------------------------------------------------------------------- drawing, the test log


def draw_view() -> None:
    """POST_VIEW handler: finished results taken first, then every preview's ghost."""
    take_finished()
    sessions = list(SESSIONS.values())
    if draw.draw_view(sessions):
        for session in sessions:
            note_drawn(session)


def draw_pixel() -> None:
    """POST_PIXEL handler: one status line per running preview."""
    draw.draw_pixel(list(SESSIONS.values()))


def log(event: str, **fields) -> None:
    """Append one JSON line to the test log (test mode only)."""
    path = LOG_PATH or os.environ.get("PROCANIM_PREVIEW_LOG", "")
    if not path:
        return
    fields.update(event=event, wall=time.time())
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(json.dumps(fields) + "\n")


def _log_events(session: Session) -> None:
    events, session.events = session.events, []
    for name, detail in events:
        if name == "ready" and session.result is not None:
            r = session.result
            detail = {
                "change_to_ghost_ms": r.change_to_ghost_ms,
                "compute_ms": r.compute_ms,
                "engine_ms": r.engine_ms,
                "engine_cpu_ms": r.engine_cpu_ms,
                "frames": len(r.ghosts[0].frames) if r.ghosts else 0,
                "changed_wall": r.changed_wall,
                "ready_wall": r.ready_wall,
                "worker_done_wall": r.worker_done_wall,
                "cancels": session.cancels,
            }
        log(name, generator=session.generator.id, **detail)


def note_drawn(session: Session) -> None:
    """The draw handler drew the current result for the first time (test log)."""
    r = session.result
    if r is None or r.drawn:
        return
    r.drawn = True
    now = time.time()
    log("drawn", generator=session.generator.id, change_to_draw_ms=(now - r.changed_wall) * 1000.0,
        changed_wall=r.changed_wall)
