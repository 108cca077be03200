"""Change → ghost times of the live preview for a 240-frame duck walk and a ~240-frame path walk
(headless: the preview's timer ticked every 10 ms as Blender would), beside the engine alone in the
same run. Figures only, printed — no timed assert (the machine is shared). Skipped unless
``PROCANIM_PREVIEW_TIMING=1``::

    PROCANIM_PREVIEW_TIMING=1 PROCANIM_REQUIRE_BPY=1 $V -m pytest -q -s tests/blender/test_preview_timing.py
"""

from __future__ import annotations

import os
import time

import bpy
import numpy as np
import pytest
from harness import addon_module

pytestmark = pytest.mark.skipif(os.environ.get("PROCANIM_PREVIEW_TIMING") != "1",
                                reason="timing figures: set PROCANIM_PREVIEW_TIMING=1")
TICK_S = 0.01
PATH = [(0.0, 0.0, 0.0), (0.0, -2.5, 0.0), (1.2, -5.2, 0.0), (1.2, -8.0, 0.0)]  # ~236 frames at cadence 100


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


def _engine_ms(procanim_extension, generator, armature, reps=3):
    """The engine alone: prepare once, then Job.compute ``reps`` times (median ms)."""
    ops = addon_module(procanim_extension, "operators")
    registry = addon_module(procanim_extension, "procanim_addon.registry")
    generator_settings = addon_module(procanim_extension, "panels.generator")
    panels = addon_module(procanim_extension, "panels")
    entry = registry.get(generator)
    module = ops.generator_module(entry)
    settings = getattr(bpy.context.scene.procanim, entry.settings)
    args = generator_settings.settings_args(entry, module, panels.panel_module(entry), settings)
    job = module.prepare(args, bpy.context)
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        job.compute(lambda _f: None)
        times.append((time.perf_counter() - t0) * 1000.0)
    return float(np.median(times))


def _changes(runtime, generator, settings, name, values):
    settings.preview = True
    session = runtime.SESSIONS[generator]
    while session.result is None or session.busy:
        runtime.tick()
        time.sleep(TICK_S)
    rows = []
    for value in values:
        setattr(settings, name, value)
        t0 = time.perf_counter()
        while session.result is None or session.busy or dict(session.result.key[1])[name] != pytest.approx(value):
            runtime.tick()
            time.sleep(TICK_S)
        r = session.result
        rows.append(((time.perf_counter() - t0) * 1000.0, r.compute_ms, r.engine_ms, len(r.ghosts[0].frames)))
    settings.preview = False
    return rows


def test_change_to_ghost_times(procanim_extension):
    runtime = addon_module(procanim_extension, "preview.runtime")
    scene = _scene()
    out = []
    for generator, armature, settings, name, values in (
        ("duck_walk", "Duck", scene.procanim.duck, "amplitude", (6.0, 7.0, 4.0, 5.0)),
        ("path_walk", "Hiker", scene.procanim.path_walk, "cadence", (104.0, 108.0, 96.0, 100.0)),
    ):
        scene.procanim.armature = bpy.data.objects[armature]
        rows = _changes(runtime, generator, settings, name, values)
        engine = _engine_ms(procanim_extension, generator, armature)
        frames = rows[-1][3]
        assert frames >= 200
        total, worker, eng = (float(np.median([r[i] for r in rows])) for i in range(3))
        out.append(f"| {generator} | {frames} | {total:.0f} | {worker:.0f} | {eng:.0f} | {engine:.0f} | "
                   f"{total / engine:.2f} |")
    print("\n| generator | frames | change → ghost (ms) | worker: engine + ghost | engine in the worker | "
          "engine alone, same run | ratio |\n|---|---|---|---|---|---|---|\n" + "\n".join(out))
