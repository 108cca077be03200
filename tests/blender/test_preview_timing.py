"""Change → ghost times of the live preview for a 240-frame duck walk and a ~240-frame path walk
(also over a 20,000-triangle ground), beside the engine alone in the same run. Figures only,
printed — no timed assert (the machine is shared). Skipped unless ``PROCANIM_PREVIEW_TIMING=1``::

    PROCANIM_PREVIEW_TIMING=1 PROCANIM_REQUIRE_BPY=1 $V -m pytest -q -s tests/blender/test_preview_timing.py

The bpy wheel has no main loop, so :class:`MainLoop` plays Blender's, as far as the preview meets
it (Blender's ``wm_window_events_process`` and ``wm_event_do_notifiers``): each turn runs the event
handlers (here: the test sets a setting; the setting's update callback runs in that call), then the
``bpy.app.timers`` that are due (each again after the interval it returns); a turn without an event
first sleeps 5 ms. It stands in for ``runtime.TIMERS``; a runtime without it (an older one) gets its
timer ticked at the intervals it returns. Columns: change → ghost (the setting set → the result taken on
the main thread, ready to draw), the worker (engine + ghost), the engine in the worker (wall and
CPU time of its thread), the engine alone in the same process (wall, CPU).
"""

from __future__ import annotations

import math
import os
import time

import bpy
import numpy as np
import pytest
from harness import addon_module

pytestmark = pytest.mark.skipif(os.environ.get("PROCANIM_PREVIEW_TIMING") != "1",
                                reason="timing figures: set PROCANIM_PREVIEW_TIMING=1")
TURN_S = 0.005  # an idle turn of Blender's main loop sleeps this long
PATH = [(0.0, 0.0, 0.0), (0.0, -2.5, 0.0), (1.2, -5.2, 0.0), (1.2, -8.0, 0.0)]  # ~236 frames at cadence 100


class MainLoop:
    """Blender's main loop as the preview meets it (see the module docstring): a model of
    ``bpy.app.timers`` (register / unregister / is_registered) driven by :meth:`turn`."""

    def __init__(self):
        self.due: dict = {}  # timer function → perf_counter() when it is due
        self.event = False  # a setting was set since the last turn (an event was handled)

    # bpy.app.timers
    def register(self, fn, first_interval=0.0, persistent=False):
        self.due[fn] = time.perf_counter() + first_interval

    def unregister(self, fn):
        self.due.pop(fn, None)

    def is_registered(self, fn):
        return fn in self.due

    def set(self, struct, name, value):
        """An event handler sets ``struct.name`` (its update callback runs in this call)."""
        setattr(struct, name, value)
        self.event = True

    def turn(self) -> None:
        """One turn: a turn without an event (a setting set since the last turn) first sleeps 5 ms
        — whole turns until the next timer is due — then the due timers run (Python timers do not
        count as events: Blender sleeps between them too)."""
        if not self.event:
            wait = min(self.due.values(), default=0.0) - time.perf_counter()
            time.sleep(TURN_S * max(1, math.ceil(wait / TURN_S)))
        for fn, due in list(self.due.items()):
            if time.perf_counter() >= due and fn in self.due:
                del self.due[fn]
                interval = fn()
                if interval is not None and fn not in self.due:
                    self.due[fn] = time.perf_counter() + interval
        self.event = False


def _scene():
    scene = bpy.context.scene
    assert bpy.ops.procanim.add_human(name="Hiker") == {"FINISHED"}
    cu = bpy.data.curves.new("Path", "CURVE")
    sp = cu.splines.new("POLY")
    sp.points.add(len(PATH) - 1)
    for p, co in zip(sp.points, PATH):
        p.co = (*co, 1.0)
    path = bpy.data.objects.new("Path", cu)
    scene.collection.objects.link(path)
    assert bpy.ops.procanim.add_duck(name="Duck", location=(3.5, 0.0, 0.0)) == {"FINISHED"}
    scene.procanim.path_walk.path = path
    scene.procanim.duck.frame_start, scene.procanim.duck.frame_end = 1, 240
    return scene


def _ground(scene):
    """A 30 m grid of 100 x 100 quads (20,000 triangles) under the path."""
    assert bpy.ops.mesh.primitive_grid_add(x_subdivisions=100, y_subdivisions=100, size=30.0) == {"FINISHED"}
    scene.procanim.path_walk.ground = bpy.context.object


def _engine_ms(procanim_extension, generator, reps=3):
    """The engine alone: prepare once, then Job.compute ``reps`` times (median wall and CPU ms)."""
    gen = addon_module(procanim_extension, "operators.generators").get(generator)
    settings = getattr(bpy.context.scene.procanim, gen.settings_name)
    job = gen.prepare(gen.settings_args(settings), bpy.context)
    wall, cpu = [], []
    for _ in range(reps):
        t0, c0 = time.perf_counter(), time.thread_time()
        job.compute(lambda _f: None)
        wall.append((time.perf_counter() - t0) * 1000.0)
        cpu.append((time.thread_time() - c0) * 1000.0)
    return float(np.median(wall)), float(np.median(cpu))


def _changes(loop, runtime, generator, settings, name, values):
    """Set ``name`` to each of ``values`` in turn; per change: (change → ghost, worker, engine in
    the worker, its CPU time, frames) ms."""
    loop.set(settings, "preview", True)
    session = runtime.SESSIONS[generator]
    while session.result is None or session.busy:
        loop.turn()
    rows = []
    for value in values:
        pause = time.perf_counter() + 0.1  # idle turns between changes, as between an animator's edits
        while time.perf_counter() < pause:
            loop.turn()
        t0 = time.perf_counter()
        loop.set(settings, name, value)
        while session.result is None or session.busy or dict(session.result.key[1])[name] != pytest.approx(value):
            loop.turn()
        r = session.result
        rows.append(((time.perf_counter() - t0) * 1000.0, r.compute_ms, r.engine_ms,
                     getattr(r, "engine_cpu_ms", float("nan")), len(r.ghosts[0].frames)))
    loop.set(settings, "preview", False)
    return rows


def test_change_to_ghost_times(procanim_extension, monkeypatch):
    runtime = addon_module(procanim_extension, "preview.runtime")
    loop = MainLoop()
    if hasattr(runtime, "TIMERS"):
        monkeypatch.setattr(runtime, "TIMERS", loop)
    else:  # an older runtime: its timer, ticked at the intervals it returns
        loop.register(runtime.tick)
    scene = _scene()
    out = []
    cases = (
        ("duck_walk", "Duck", None, scene.procanim.duck, "amplitude", (6.0, 7.0, 4.0, 5.0, 6.0, 7.0)),
        ("path_walk", "Hiker", None, scene.procanim.path_walk, "cadence", (104.0, 108.0, 96.0, 104.0, 96.0, 100.0)),
        ("path_walk", "Hiker", _ground, scene.procanim.path_walk, "cadence", (104.0, 108.0, 96.0, 100.0)),
    )
    for generator, armature, setup, settings, name, values in cases:
        if setup is not None:
            setup(scene)
        scene.procanim.armature = bpy.data.objects[armature]
        bpy.context.view_layer.objects.active = bpy.data.objects[armature]
        if not hasattr(runtime, "TIMERS"):
            loop.register(runtime.tick)
        rows = _changes(loop, runtime, generator, settings, name, values)
        engine, engine_cpu = _engine_ms(procanim_extension, generator)
        frames = rows[-1][4]
        assert frames >= 200
        total = [r[0] for r in rows]
        around = float(np.median([r[0] - r[2] for r in rows]))  # change → ghost less its own engine run
        worker, eng, eng_cpu = (float(np.median([r[i] for r in rows])) for i in (1, 2, 3))
        label = generator + (" + ground" if setup is not None else "")
        out.append(f"| {label} | {frames} | {min(total):.0f} / {np.median(total):.0f} | {worker:.0f} | "
                   f"{eng:.0f} ({eng_cpu:.0f}) | {engine:.0f} ({engine_cpu:.0f}) | "
                   f"{np.median(total) / engine:.2f} | {around:.0f} |")
    print("\n| generator | frames | change → ghost, best / median (ms) | worker: engine + ghost | "
          "engine in the worker (CPU) | engine alone, same run (CPU) | ratio median / alone | "
          "around the engine: change → ghost − its engine run |"
          "\n|---|---|---|---|---|---|---|---|\n" + "\n".join(out) + f"\nload average {os.getloadavg()[0]:.1f}")
