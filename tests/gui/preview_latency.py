"""Where a live-preview change's time goes in Blender's real window (a study, not a check).

    bash tools/real_blender.sh latency      # Debian's Blender 4.3.2 under Xvfb, 1600 x 1000

Run by tests/gui/run_gui.sh (mode ``latency``) on the GUI check's scene: ProcAnim's sidebar tab
shown, a human and a ~240-frame path (gui_check's step 9 scene). Each scenario is repeated
REPEATS times, 0.6 s apart; every 3D-view draw in the 0.6 s after the event is recorded —
PRE_VIEW (it begins), POST_VIEW (the scene is drawn: where the preview draws its ghost) — and
the table gives, per scenario, the first frame's POST_VIEW after the event (median, min-max, ms)
and how many frames Blender drew in those 0.6 s.

Scenarios (the path walk's Cadence is the ProcAnim setting; the engine is its 236-frame walk):

* ``redraw``: the 3D view tagged for redraw, nothing changed;
* ``blender_setting``: a setting of Blender's own on the scene (render resolution %, 100 <-> 99);
* ``procanim_setting``: Cadence, no preview running;
* ``setting_and_engine_thread``: Cadence, and the path walk engine in a Python thread;
* ``setting_and_cpu_process``: Cadence, and another process busy for as long as the engine takes
  (the same CPU load without the interpreter lock);
* ``preview``: Cadence with the Path Walk preview on — the new ghost drawn (from its test log);
* the setting scenarios again with the viewport's anti-aliasing off (Preferences ▸ Viewport ▸
  Anti-Aliasing: No Anti-Aliasing), then the preference put back;
* then Blender's whole-window redraw (``wm.redraw_timer``) while nothing runs and while a long
  preview regeneration runs (a 100,000-frame duck walk; alternating rounds).

Results: /repo/out/real_blender/latency/latency.json and a Markdown table on stdout (lines
``latency: ``). Nothing here changes the add-on.
"""

import json
import os
import statistics
import subprocess
import sys
import threading
import time
import traceback

import bpy

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gui_check as G  # noqa: E402  (its steps; importing it runs nothing)
from gui_harness import Screen  # noqa: E402

OUT = os.environ.get("PROCANIM_LATENCY_OUT", "/repo/out/real_blender/latency/latency.json")
REPEATS = int(os.environ.get("PROCANIM_LATENCY_REPEATS", "7"))
WINDOW_S = 0.6
RESULT = {"blender": bpy.app.version_string, "repeats": REPEATS, "scenarios": {}}


def say(msg):
    print("latency: " + msg, flush=True)


class Draws:
    """Every 3D-view draw as (pre_view, post_view) wall times."""

    def __init__(self):
        self.spans, self._pre, self._handles = [], None, []

    def __enter__(self):
        space = bpy.types.SpaceView3D
        self._handles = [space.draw_handler_add(self._on_pre, (), "WINDOW", "PRE_VIEW"),
                         space.draw_handler_add(self._on_post, (), "WINDOW", "POST_VIEW")]
        return self

    def __exit__(self, *exc):
        for handle in self._handles:
            bpy.types.SpaceView3D.draw_handler_remove(handle, "WINDOW")

    def _on_pre(self):
        self._pre = time.time()

    def _on_post(self):
        if self._pre is not None:
            self.spans.append((self._pre, time.time()))
        self._pre = None

    def after(self, t0):
        return [(a - t0, b - t0) for a, b in self.spans if t0 <= a <= t0 + WINDOW_S]


def engine_job(st):
    """A fresh path walk Job from the sidebar's settings (what the preview's worker runs)."""
    from importlib import import_module

    addon = next(a.module for a in bpy.context.preferences.addons if a.module.endswith(".procanim"))
    generator = import_module(addon + ".operators.generators").get("path_walk")
    return generator.prepare(generator.settings_args(st.path_walk), bpy.context)


def scenario(name, action, measure=None, before=None):
    """Run ``action(i)`` REPEATS times; per run the first frame's POST_VIEW after it (ms) and the
    frames drawn in WINDOW_S; ``measure(t0)`` may give the run's figure instead (the preview);
    ``before(i)`` runs first, untimed."""
    first, counts = [], []
    for i in range(REPEATS):
        yield WINDOW_S
        if before is not None:
            before(i)
        with Draws() as draws:
            t0 = time.time()
            action(i)
            yield WINDOW_S
        spans = draws.after(t0)
        value = measure(t0) if measure is not None else (spans[0][1] * 1000.0 if spans else None)
        if value is not None:
            first.append(value)
        counts.append(len(spans))
    row = {
        "median_ms": round(statistics.median(first), 1) if first else None,
        "min_ms": round(min(first), 1) if first else None,
        "max_ms": round(max(first), 1) if first else None,
        "frames_in_window": statistics.median(counts) if counts else 0,
        "runs": [round(v, 1) for v in first],
    }
    RESULT["scenarios"][name] = row
    say("%s: %s" % (name, row))


def drawn_ms(t0):
    """The preview's test log: the first new ghost drawn after ``t0`` (ms), or None."""
    drawn = [e for e in G.preview_log() if e["event"] == "drawn" and e["wall"] >= t0]
    return (drawn[0]["wall"] - t0) * 1000.0 if drawn else None


def preview_scenario(name, change):
    """``change`` with the Path Walk preview on: the time until the new ghost is drawn."""
    rt, _draw = G.preview_runtime()
    rt.start("path_walk", bpy.context)
    session = rt.SESSIONS["path_walk"]
    yield from G.wait_until(lambda: session.result is not None and session.result.drawn, 60.0, 0.05)
    yield from scenario(name, change, measure=drawn_ms)
    rt.stop("path_walk")


def window_redraw_ms(scr, iterations=3):
    """ms per redraw of the whole window (``wm.redraw_timer``; every region, Python panels too)."""
    with scr.override(scr.view):
        t0 = time.perf_counter()
        bpy.ops.wm.redraw_timer(type="DRAW_WIN", iterations=iterations)
        return (time.perf_counter() - t0) * 1000.0 / iterations


def busy_redraws(scr, st, duck):
    """Blender while a long regeneration runs — a duck walk of 100,000 frames with a key on every
    frame (seconds of engine work) in the preview's worker thread — and while nothing runs: a
    whole-window redraw (ms); REPEATS rounds, alternating."""
    rt, _draw = G.preview_runtime()
    st.armature = duck
    st.duck.frame_start, st.duck.key_interval = 1, 1
    rows: dict = {"idle": [], "preview": []}
    for _i in range(REPEATS):
        rows["idle"].append(window_redraw_ms(scr))
        st.duck.frame_end = 240  # a short first regeneration
        rt.start("duck_walk", bpy.context)
        session = rt.SESSIONS["duck_walk"]
        yield from G.wait_until(lambda s=session: s.result is not None and not s.busy, 60.0, 0.05)
        st.duck.frame_end = 100000
        yield 0.2  # the engine is under way
        worker = session.worker
        if worker is None:
            raise RuntimeError("no regeneration running: %s" % (session.status(),))
        rows["preview"].append(window_redraw_ms(scr))
        if session.worker is not worker:
            raise RuntimeError("the regeneration ended before the measure did")
        rt.stop("duck_walk")
        yield 0.5
    st.duck.frame_end, st.duck.key_interval = 240, 3
    out = {where: round(statistics.median(runs), 1) for where, runs in rows.items()}
    RESULT["while_regenerating"] = {"median": out, "runs": rows}
    say("while a long regeneration runs (median): %s" % out)


def study():
    yield 1.5
    scr = Screen()
    if not (yield from G.tab_step(scr)):
        raise RuntimeError("the ProcAnim tab could not be shown")
    st = yield from G.preview_scene_step(scr)
    with scr.override(scr.view):
        bpy.ops.procanim.add_duck(name="Latency Duck", location=(6.0, 0.0, 0.0))
    duck = bpy.data.objects["Latency Duck"]
    bpy.context.view_layer.objects.active = bpy.data.objects["GUI Hiker"]
    yield 1.0
    scene = bpy.context.scene
    job = engine_job(st)
    job.compute(lambda _f: None)  # warm
    t = time.perf_counter()
    job.compute(lambda _f: None)
    engine_s = time.perf_counter() - t
    RESULT["engine_ms"] = round(engine_s * 1000.0, 1)
    RESULT["window"] = (scr.win.width, scr.win.height)
    RESULT["view"] = (scr.view.width, scr.view.height)
    prefs = bpy.context.preferences.system
    RESULT["viewport_aa"] = prefs.viewport_aa
    busy = subprocess.Popen(
        [sys.executable, "-c",
         "import sys, time\nfor line in sys.stdin:\n    t = time.perf_counter()\n"
         "    while time.perf_counter() - t < float(line): pass"],
        stdin=subprocess.PIPE, text=True, bufsize=1,
    )

    def redraw(_i):
        scr.view.tag_redraw()

    def blender_setting(i):
        scene.render.resolution_percentage = 99 if i % 2 == 0 else 100

    def procanim_setting(i):
        st.path_walk.cadence = 101.0 if i % 2 == 0 else 100.0

    jobs = []

    def prepare(_i):  # the preview reads the scene on the main thread too, ~1 ms with its kept reads
        jobs[:] = [engine_job(st)]

    def with_thread(i):
        procanim_setting(i)
        threading.Thread(target=jobs[0].compute, args=(lambda _f: None,), daemon=True).start()

    def with_process(i):
        procanim_setting(i)
        busy.stdin.write("%f\n" % engine_s)
        busy.stdin.flush()

    try:
        for aa, prefix in ((RESULT["viewport_aa"], ""), ("OFF", "aa_off_")):
            prefs.viewport_aa = aa
            yield 0.5
            yield from scenario(prefix + "redraw", redraw)
            yield from scenario(prefix + "blender_setting", blender_setting)
            yield from scenario(prefix + "procanim_setting", procanim_setting)
            yield from scenario(prefix + "setting_and_engine_thread", with_thread, before=prepare)
            yield from scenario(prefix + "setting_and_cpu_process", with_process)
            yield from preview_scenario(prefix + "preview", procanim_setting)
        prefs.viewport_aa = RESULT["viewport_aa"]
        yield 0.5
        yield from busy_redraws(scr, st, duck)
    finally:
        prefs.viewport_aa = RESULT["viewport_aa"]
        busy.stdin.close()
        busy.wait(10)


def table():
    rows = ["| scenario | first frame drawn after the event, ms: median (min–max) | frames in %.1f s |" % WINDOW_S,
            "|---|---|---|"]
    for name, r in RESULT["scenarios"].items():
        rows.append("| %s | %s (%s–%s) | %s |" % (name, r["median_ms"], r["min_ms"], r["max_ms"],
                                                r["frames_in_window"]))
    return rows


_gen = study()


def tick():
    try:
        return next(_gen)
    except StopIteration:
        pass
    except Exception:
        RESULT["error"] = traceback.format_exc()
        traceback.print_exc()
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    with open(OUT, "w") as f:
        json.dump(RESULT, f, indent=1)
    r = RESULT
    say("Blender %s, window %s, 3D view %s, viewport anti-aliasing %s, engine alone %s ms, %d runs each"
        % (r["blender"], r.get("window"), r.get("view"), r.get("viewport_aa"), r.get("engine_ms"), REPEATS))
    for row in table():
        say(row)
    busy = RESULT.get("while_regenerating", {}).get("median")
    if busy:
        say("")
        say("Blender's whole-window redraw (median ms): %s with nothing running, %s while a long preview "
            "regeneration runs" % (busy["idle"], busy["preview"]))
    with bpy.context.temp_override(window=bpy.context.window_manager.windows[0]):
        bpy.ops.wm.quit_blender()
    return None


bpy.app.timers.register(tick, first_interval=1.0, persistent=True)
