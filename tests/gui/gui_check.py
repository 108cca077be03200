"""GUI check of the ProcAnim sidebar in Blender's real window (run under Xvfb).

    blender --window-geometry 0 0 W H SCENE.blend --python tests/gui/gui_check.py

Driven by tests/gui/run_gui.sh. A timer walks through the check while Blender's
event loop runs, as a user at the screen would (input, screen and probes: gui_harness.py):

1. The ProcAnim panels (bl_category "ProcAnim", and their sub-panels) are
   registered; their draw()/draw_header() are wrapped to count calls and record
   exceptions (the wrapper re-raises, so Blender prints the traceback as usual).
2. The 3D view's sidebar is shown and the ProcAnim tab is brought forward with
   real mouse clicks (xdotool) down the sidebar's tab strip until
   ``region.active_panel_category`` (read-only in 4.3) reads "ProcAnim".
3. Every ProcAnim panel whose poll() passes must have drawn, without an error.
4. Generate: ``procanim.duck_walk('INVOKE_DEFAULT')`` in the context of the window,
   the 3D view area and its sidebar region (as the button would); the duck must
   then hold an action with F-curves and keyframes.
5. The panels are drawn again after the bake (metrics), then ``xwd -root`` takes a
   screenshot (docs/sidebar.png).
6. Undo takes the bake back, Redo brings it back. Fix Feet on the duck's walk bakes a new action;
   Undo puts the duck walk back, its keys unchanged.
7. Esc: ProcAnim's human with a long walk (LONG_STEPS steps, several hundred frames) and the
   zigzag ahead of it, made with procanim.add_human / source_motion / add_zigzag; the Terrain
   panel's Generate button is found in the sidebar and clicked (real click; if it cannot be found,
   ``procanim.adapt_terrain('INVOKE_DEFAULT')`` in the sidebar's context), then Escape is pressed
   (a real key event) once the bar shows 30 % or 4 s after the start. The operator must end
   CANCELLED after its modal
   received the ESC, the armature's action be unchanged (name, identity, F-curves, keys), no new
   action exist, at least three progress values have been shown before Esc, and the operator have
   ended within ESC_LIMIT_S (0.5 s, the README's claim) of its modal seeing the key (the key press
   to the modal is Blender's event loop, a figure: it depends on the machine's load). The figures (Esc to
   stop and its parts, progress values, the engine's report gaps, the event loop's gaps with and
   without a bake) go to the result's "figures"; PROCANIM_GUI_ESC_REPEAT=N repeats the Esc N more
   times (at 5 % ... 85 % of the bar) for the distribution.
8. A real drag on the source walk's Steps field (found by its data path) changes the setting and
   the sidebar's picture (the pattern of the live preview's step).
9. Live preview (docs/preview.md): a human and a ~240-frame path; first with no preview running,
   three Cadence values are set and Blender's first 3D-view frame after each change is timed (the
   floor: Blender draws the viewport anew for a change of any add-on setting); then the Path Walk
   panel's Preview toggle is clicked (found by its data path); the first ghost is drawn; the same
   three Cadence values, and three Amplitude values of a 240-frame duck walk (its floor timed
   likewise), are set and their change -> drawn times read from the preview's test log
   (PROCANIM_PREVIEW_LOG; figures), and no 3D-view frame may be drawn after the worker has ended
   without the new ghost (``preview_no_frame_late``); the Cadence slider is dragged with the mouse
   and the viewport's pixels around the ghost change (screenshot -> docs/preview.png); with the
   view split in two, both 3D views draw the ghost; with every Preview off the preview holds no
   draw handler, timer or app handler.

The result goes to $PROCANIM_GUI_RESULT (JSON, "ok": true/false); run_gui.sh turns
it into the exit status. Nothing here changes the add-on.
"""

import json
import os
import sys
import time
import traceback

import bpy

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gui_harness import (  # noqa: E402  (Blender runs this file as a script)
    COPY_DATA_PATH,
    OperatorProbe,
    Screen,
    changed,
    differing,
    find_widget,
    idle_timer_gap,
    max_gap,
    move,
    pixels,
    resolve,
    screenshot,
    wait_until,
    xdo,
)

CATEGORY = "ProcAnim"
REQUIRED_LABELS = ("Character", "Duck Walk")
RESULT = os.environ.get("PROCANIM_GUI_RESULT", "/tmp/procanim-gui/result.json")
SHOT = os.environ.get("PROCANIM_GUI_SHOT", "/tmp/procanim-gui/sidebar.png")
DEBUG = bool(os.environ.get("PROCANIM_GUI_DEBUG"))
BAKE_TIMEOUT = float(os.environ.get("PROCANIM_GUI_BAKE_TIMEOUT", "180"))
# the long bake: a walk of LONG_STEPS steps (13 frames each at 24 fps) over a zigzag whose cells
# are ZIGZAG_CELL m long (the terrain must reach under the whole walk)
LONG_STEPS = 120  # ~1,500 frames: the bake must still run when Esc comes on an idle machine (40 steps ended first)
ZIGZAG_CELL = 14.5  # four cells under the whole walk (3 m covered 40 steps)
ESC_AT_FRACTION = 0.3  # Esc once the bar shows this much ...
ESC_AFTER_S = 4.0  # ... or this long after the start, whichever comes first
ESC_REPEAT = int(os.environ.get("PROCANIM_GUI_ESC_REPEAT", "0"))  # more Esc runs, for the distribution
ESC_LIMIT_S = 0.5  # the README's claim: Esc stops a running bake within 0.5 s
DRAG_FIELD = ".source_motion.steps"  # the number field the drag check moves (data path ending)

R = {
    "ok": False,
    "errors": [],
    "steps": [],
    "panels": {},
    "draw_errors": [],
    "categories_seen": [],
    "blender": bpy.app.version_string,
    "figures": {},
}
DRAWS = {}  # panel idname -> number of draw() calls
DRAW_MS_MAX = {}  # panel idname.draw -> its longest call (ms)


T0 = time.perf_counter()


def step(msg):
    msg = "[%5.1f s] %s" % (time.perf_counter() - T0, msg)
    R["steps"].append(msg)
    print("gui_check: " + msg, flush=True)


def fail(msg):
    R["errors"].append(msg)
    print("gui_check: FAIL: " + msg, flush=True)


# The named checks; gui_report.py counts them (a check never reached counts as failed).
CHECKS = (
    "panels_registered",
    "tab_shown",
    "panels_drew_before_generate",
    "generate_baked",
    "panels_drew_after_generate",
    "no_draw_exceptions",
    "screenshot",
    "undo_restores",
    "redo_rebakes",
    "fix_feet_baked",
    "fix_feet_undo_restores",
    "terrain_scene_built",
    "long_bake_started",
    "esc_cancelled",
    "esc_action_kept",
    "esc_no_new_action",
    "esc_progress_seen",
    "esc_stop_time",
    "drag_setting",
    "preview_on",
    "preview_ghost_drawn",
    "preview_ghost_moves",
    "preview_two_views",
    "preview_unhooked",
    "preview_no_frame_late",
)
R["checks"] = {}


def check(name, ok, detail):
    R["checks"][name] = {"ok": bool(ok), "detail": detail}
    if not ok:
        fail("%s: %s" % (name, detail))
    return ok


# ------------------------------------------------------------------ panels
def _idname(cls):
    return getattr(cls, "bl_idname", "") or cls.__name__


def procanim_panels():
    """Registered panels of the ProcAnim sidebar tab, sub-panels included."""
    seen, out = set(), []

    def walk(cls):
        for sub in cls.__subclasses__():
            if sub not in seen:
                seen.add(sub)
                out.append(sub)
                walk(sub)

    walk(bpy.types.Panel)
    registered = [c for c in out if "bl_rna" in c.__dict__ and getattr(c, "is_registered", True)]
    by_id = {_idname(c): c for c in registered}
    mine = {}
    for c in registered:
        chain, cur = [], c
        while cur is not None and len(chain) < 8:
            chain.append(cur)
            if getattr(cur, "bl_category", "") == CATEGORY and not getattr(cur, "bl_parent_id", ""):
                break
            cur = by_id.get(getattr(cur, "bl_parent_id", ""))
        if (
            cur is not None
            and getattr(cur, "bl_category", "") == CATEGORY
            and getattr(c, "bl_space_type", "") == "VIEW_3D"
            and getattr(c, "bl_region_type", "") == "UI"
        ):
            mine[_idname(c)] = c
    return mine


def _counting(orig, key):
    # Blender passes as many arguments as the function's code declares
    # (co_argcount), so the wrapper must take exactly (self, context).
    def wrapper(self, context):
        DRAWS[key] = DRAWS.get(key, 0) + 1
        t0 = time.perf_counter()
        try:
            return orig(self, context)
        except Exception:
            R["draw_errors"].append("%s raised:\n%s" % (key, traceback.format_exc()))
            raise
        finally:
            ms = (time.perf_counter() - t0) * 1000.0
            DRAW_MS_MAX[key] = round(max(DRAW_MS_MAX.get(key, 0.0), ms), 1)

    wrapper._procanim_wrapped = True
    return wrapper


def open_closed_panels(panels):
    """Re-register DEFAULT_CLOSED panels without that option, so their draw() runs too
    (as if the user had clicked their headers open). Returns the re-registered ids."""
    closed = [pid for pid, c in panels.items() if "DEFAULT_CLOSED" in getattr(c, "bl_options", set())]
    if not closed:
        return []

    def depth(pid):
        d, cur = 0, panels.get(pid)
        while cur is not None and getattr(cur, "bl_parent_id", ""):
            d, cur = d + 1, panels.get(cur.bl_parent_id)
        return d

    def under(pid, top):
        cur = panels.get(pid)
        while cur is not None:
            if _idname(cur) == top:
                return True
            cur = panels.get(getattr(cur, "bl_parent_id", ""))
        return False

    redo = sorted({pid for pid in panels for top in closed if under(pid, top)}, key=depth)
    for pid in reversed(redo):
        bpy.utils.unregister_class(panels[pid])
    for pid in closed:
        panels[pid].bl_options = set(panels[pid].bl_options) - {"DEFAULT_CLOSED"}
    for pid in redo:
        bpy.utils.register_class(panels[pid])
    return closed


def wrap_draws(panels):
    for pid, cls in panels.items():
        for name in ("draw", "draw_header"):
            orig = getattr(cls, name, None)
            if orig is None or getattr(orig, "_procanim_wrapped", False):
                continue
            setattr(cls, name, _counting(orig, "%s.%s" % (pid, name)))


# ------------------------------------------------------------------ screen
def shot(path):
    step("screenshot %s (%d bytes)" % (path, screenshot(path)))


# ------------------------------------------------------------------ scene
def find_duck():
    """The armature Generate works on: the sidebar's armature setting when the add-on
    has one, else the active armature, else one named like a duck."""
    scene = bpy.context.scene
    chosen = getattr(getattr(scene, "procanim", None), "armature", None)
    if isinstance(chosen, bpy.types.Object) and chosen.type == "ARMATURE":
        return chosen
    active = bpy.context.view_layer.objects.active
    if active is not None and active.type == "ARMATURE":
        return active
    arms = [o for o in scene.objects if o.type == "ARMATURE"]
    ducks = [o for o in arms if "duck" in o.name.lower()] or arms
    return ducks[0] if ducks else None


def action_of(obj):
    ad = obj.animation_data
    return ad.action if ad else None


def fcurves_of(action, obj):
    """F-curves of ``action`` as seen by ``obj`` (4.2/4.3 flat, 4.4+ slots)."""
    if action is None:
        return []
    fcs = getattr(action, "fcurves", None)
    if fcs is not None and len(fcs):
        return list(fcs)
    out = []
    for layer in getattr(action, "layers", ()):
        for strip in layer.strips:
            for bag in getattr(strip, "channelbags", ()):
                out.extend(bag.fcurves)
    return out


# ------------------------------------------------------------------ scenario
def scenario():
    yield 1.5
    try:
        scr = Screen()
    except RuntimeError as exc:
        fail(str(exc))
        return
    win, area = scr.win, scr.area
    step("window %dx%d, 3D view %dx%d at %d,%d" % (win.width, win.height, area.width, area.height, area.x, area.y))
    panels = yield from panels_step(scr)
    if panels is None:
        return
    duck = yield from select_duck_step(scr)
    if duck is None:
        return
    duck_name = duck.name  # undo (step 6) makes Python's reference to the object stale
    if not (yield from tab_step(scr)):
        return
    fcs = yield from generate_step(scr, panels, duck)
    yield from undo_redo_step(scr, duck, fcs)
    yield from fix_feet_undo_step(scr, duck_name)
    yield from esc_cancel_step(scr)
    yield from drag_setting_step(scr)
    yield from preview_step(scr, duck_name)


def panels_step(scr):
    """The ProcAnim panels are registered; DEFAULT_CLOSED ones opened; draw() wrapped."""
    panels = procanim_panels()
    R["panels"] = {
        pid: {"label": getattr(c, "bl_label", ""), "parent": getattr(c, "bl_parent_id", "")}
        for pid, c in panels.items()
    }
    step(
        "ProcAnim panels registered: %s"
        % ", ".join("%s (%s)" % (pid, getattr(c, "bl_label", "")) for pid, c in sorted(panels.items()))
    )
    if not panels:
        check("panels_registered", False, "no registered panel with bl_category %r in the 3D view sidebar" % CATEGORY)
        return None
    labels = {getattr(c, "bl_label", "") for c in panels.values()}
    missing_labels = [label for label in REQUIRED_LABELS if label not in labels]
    check(
        "panels_registered",
        not missing_labels,
        "panels %s; missing %s" % (sorted(labels), missing_labels)
        if missing_labels
        else "%d panels: %s" % (len(panels), ", ".join(sorted(labels))),
    )
    opened = open_closed_panels(panels)
    if opened:
        step("opened DEFAULT_CLOSED panels so their draw() runs: %s" % ", ".join(opened))
    wrap_draws(panels)
    yield 0.0
    return panels


def select_duck_step(scr):
    """The duck is the selected, active object; the viewport looks at it."""
    duck = find_duck()
    if duck is None:
        fail("no armature in the scene")
        return None
    step("duck armature: %s" % duck.name)
    for o in bpy.context.view_layer.objects:
        o.select_set(False)
    duck.select_set(True)
    bpy.context.view_layer.objects.active = duck
    scene = bpy.context.scene
    if scene.camera is not None:
        scr.space.region_3d.view_perspective = "CAMERA"
        step("viewport looks through the scene camera %s" % scene.camera.name)
    else:
        with scr.override(scr.view):
            try:
                bpy.ops.view3d.view_selected()
            except Exception as exc:
                step("view_selected skipped: %s" % exc)
    for a in scr.win.screen.areas:
        a.tag_redraw()
    yield 1.0
    return duck


def tab_step(scr):
    """Bring the ProcAnim tab forward with real input events: click down the tab strip at the
    sidebar's right edge until the ProcAnim tab is active."""
    ui, area = scr.ui, scr.area
    if ui.width < 50:
        fail("sidebar region not visible (width %d)" % ui.width)
        return False
    step("sidebar region %dx%d at %d,%d, active tab %r" % (ui.width, ui.height, ui.x, ui.y, ui.active_panel_category))
    if DEBUG:
        shot(os.path.join(os.path.dirname(SHOT), "debug-before-tab.png"))
    R["categories_seen"].append(ui.active_panel_category)
    R["tab_clicks"] = 0
    for attempt in range(4):
        if ui.active_panel_category == CATEGORY:
            break
        if attempt:
            where = xdo("getmouselocation")
            step("pass %d over the tab strip changed nothing; pointer at %s; again" % (attempt, where))
            if DEBUG:
                shot(os.path.join(os.path.dirname(SHOT), "debug-pass-%d.png" % attempt))
            yield 1.0
        # move the pointer into the window first, as a hand would, so Blender sees it enter
        move(*scr.to_screen(area.x + area.width // 2, area.y + area.height // 2))
        yield 0.3
        for y in range(ui.y + ui.height - 12, ui.y + 12, -12):
            if ui.active_panel_category == CATEGORY:
                break
            sx, sy = scr.to_screen(ui.x + ui.width - 10, y)
            move(sx, sy)
            yield 0.1
            xdo("click", "1")
            R["tab_clicks"] += 1
            yield 0.3
            if ui.active_panel_category not in R["categories_seen"]:
                R["categories_seen"].append(ui.active_panel_category)
                step("clicked %d,%d: tab %r" % (sx, sy, ui.active_panel_category))
    step("tabs seen: %s" % R["categories_seen"])
    if not check(
        "tab_shown",
        ui.active_panel_category == CATEGORY,
        "%d clicks on the sidebar's tab strip; tabs seen: %s" % (R["tab_clicks"], R["categories_seen"]),
    ):
        return False
    step("ProcAnim tab is active")
    scr.park_pointer()  # no tooltip over the sidebar
    DRAWS.clear()
    ui.tag_redraw()
    yield 1.5
    return True


def check_drawn(scr, panels, when):
    """Every panel whose poll() passes (and whose parent drew) has drawn since DRAWS was cleared."""
    missing = []
    with scr.override():
        for pid, cls in panels.items():
            poll = getattr(cls, "poll", None)
            try:
                ok = poll(bpy.context) if poll else True
            except Exception:
                fail("%s.poll raised %s" % (pid, traceback.format_exc()))
                continue
            parent = getattr(cls, "bl_parent_id", "")
            parent_drew = not parent or DRAWS.get("%s.draw" % parent)
            key = "%s.%s" % (pid, "draw")
            if ok and parent_drew and not DRAWS.get(key):
                missing.append(pid)
            R["panels"][pid]["poll_%s" % when] = bool(ok)
            R["panels"][pid]["draws_%s" % when] = DRAWS.get(key, 0)
    step("%s: draw() calls %s" % (when, {k: v for k, v in sorted(DRAWS.items())}))
    drawn = sorted(k[:-5] for k, v in DRAWS.items() if v and k.endswith(".draw"))
    check(
        "panels_drew_" + when,
        not missing and drawn,
        "poll() passes but draw() never ran: %s" % missing if missing else "draw() ran for %s" % ", ".join(drawn),
    )


def generate_step(scr, panels, duck):
    """Duck Walk's Generate in the window's context as the button runs it; the panels draw the
    metrics; the screenshot for docs/. Returns the bake's F-curves."""
    wm = bpy.context.window_manager
    check_drawn(scr, panels, "before_generate")
    if duck.animation_data:
        duck.animation_data_clear()
    with scr.override():
        bpy.ops.ed.undo_push(message="GUI check: before Generate")
    scr.ui.tag_redraw()
    yield 0.5
    with scr.override():
        ret = bpy.ops.procanim.duck_walk("INVOKE_DEFAULT")
    step("procanim.duck_walk('INVOKE_DEFAULT') -> %s" % sorted(ret))
    t0 = time.time()
    while True:
        fcs = fcurves_of(action_of(duck), duck)
        modal_done = "RUNNING_MODAL" not in ret or (
            len(wm.operators) and wm.operators[-1].bl_idname == "PROCANIM_OT_duck_walk"
        )
        if (fcs and modal_done) or time.time() - t0 > BAKE_TIMEOUT:
            break
        if not fcs and "RUNNING_MODAL" not in ret and time.time() - t0 > 2.0:
            break  # finished or cancelled without a bake: nothing will come
        yield 0.5
    action = action_of(duck)
    fcs = fcurves_of(action, duck)
    keys = sum(len(fc.keyframe_points) for fc in fcs)
    step(
        "after Generate: action %r, %d F-curves, %d keyframes (%.1f s)"
        % (action.name if action else None, len(fcs), keys, time.time() - t0)
    )
    check(
        "generate_baked",
        fcs and keys > 0,
        "%s: action %r, %d F-curves, %d keyframes" % (duck.name, action.name if action else None, len(fcs), keys)
        if fcs and keys
        else "Generate did not bake: %s has no action with keyed F-curves" % duck.name,
    )
    R["bake"] = {"action": action.name if action else None, "fcurves": len(fcs), "keyframes": keys}

    # -- show a pose mid-cycle, redraw, check the panels again, take the picture
    if fcs:
        lo = min(fc.range()[0] for fc in fcs)
        hi = max(fc.range()[1] for fc in fcs)
        bpy.context.scene.frame_set(int(lo + 0.3 * (hi - lo)))
    DRAWS.clear()
    for a in scr.win.screen.areas:
        a.tag_redraw()
    yield 2.0
    check_drawn(scr, panels, "after_generate")
    check(
        "no_draw_exceptions",
        not R["draw_errors"],
        "%d draw()/draw_header() exception(s)" % len(R["draw_errors"])
        if R["draw_errors"]
        else "no draw()/draw_header() raised",
    )
    shot(SHOT)
    check("screenshot", os.path.getsize(SHOT) > 10000, "%s, %d bytes" % (SHOT, os.path.getsize(SHOT)))
    return fcs


def _keys(obj):
    action = action_of(obj)
    return action.name if action else None, [
        tuple(kp.co) for fc in fcurves_of(action, obj) for kp in fc.keyframe_points] if action else []


def fix_feet_undo_step(scr, name):
    """Fix Feet on the duck's walk makes a new action; Undo puts the walk back as it was."""
    before = _keys(bpy.data.objects[name])
    with scr.override():
        bpy.ops.ed.undo_push(message="GUI check: before Fix Feet")
        ret = bpy.ops.procanim.fix_feet("EXEC_DEFAULT", True, armature=name)  # True: an undo step, as a button
    yield 0.5
    duck = bpy.data.objects[name]
    fixed = action_of(duck)
    check("fix_feet_baked", "FINISHED" in ret and fixed is not None and fixed.procanim.generator == "fix_feet",
          "procanim.fix_feet -> %s, action %r" % (sorted(ret), fixed.name if fixed else None))
    with scr.override():
        bpy.ops.ed.undo()
    yield 0.5
    after = _keys(bpy.data.objects[name])  # undo reloads data: look the object up again
    check("fix_feet_undo_restores", after == before,
          "after Undo the duck's action is %r with %d keys (before Fix Feet: %r, %d keys)"
          % (after[0], len(after[1]), before[0], len(before[1])))


def undo_redo_step(scr, duck, fcs):
    """Undo takes the bake back (the duck has no keyed action again), Redo brings it back."""
    name = duck.name
    with scr.override():
        bpy.ops.ed.undo()
    yield 0.5
    duck = bpy.data.objects[name]  # undo reloads data: look the object up again
    undone = fcurves_of(action_of(duck), duck)
    check("undo_restores", not undone, "after Undo %s has %d keyed F-curves (expected none)" % (name, len(undone)))
    with scr.override():
        bpy.ops.ed.redo()
    yield 0.5
    duck = bpy.data.objects[name]
    redone = fcurves_of(action_of(duck), duck)
    check(
        "redo_rebakes",
        len(redone) == len(fcs),
        "after Redo %s has %d keyed F-curves (the bake had %d)" % (name, len(redone), len(fcs)),
    )


# ------------------------------------------------------------------ Esc cancels a long bake
def action_state(obj):
    """What must survive a cancelled bake: the action (name, identity, F-curves, keys)."""
    action = action_of(obj)
    fcs = fcurves_of(action, obj)
    return {
        "action": action.name if action else None,
        "pointer": action.as_pointer() if action else 0,
        "fcurves": len(fcs),
        "keyframes": sum(len(fc.keyframe_points) for fc in fcs),
    }


def terrain_scene_step(scr):
    """ProcAnim's human with a long flat-ground walk and the zigzag terrain ahead of it, made with
    the add-on's own operators. Returns the human, or None."""
    with scr.override(scr.view):
        r_add = bpy.ops.procanim.add_human(name="GUI Walker", location=(0.0, 8.0, 0.0))
        human = bpy.context.view_layer.objects.active
        r_walk = bpy.ops.procanim.source_motion(armature=human.name, kind="WALK", steps=LONG_STEPS)
        r_zig = bpy.ops.procanim.add_zigzag(armature=human.name, level="KNEE", cell_length=ZIGZAG_CELL)
    yield 0.5
    st = bpy.context.scene.procanim
    terrain = st.terrain.terrain
    action = action_of(human)
    frames = int(action.frame_range[1] - action.frame_range[0] + 1) if action else 0
    R["figures"]["long_bake_frames"] = frames
    step("terrain scene: %s with %r (%d frames), terrain %r" % (human.name, action and action.name, frames, terrain))
    ok = check(
        "terrain_scene_built",
        {"FINISHED"} == set(r_add) == set(r_walk) == set(r_zig)
        and st.armature == human
        and terrain is not None
        and frames >= 300,
        "add_human %s, source_motion(WALK, steps=%d) %s -> %r %d frames, add_zigzag %s -> %r; sidebar armature %r"
        % (
            sorted(r_add),
            LONG_STEPS,
            sorted(r_walk),
            action.name if action else None,
            frames,
            sorted(r_zig),
            terrain.name if terrain else None,
            st.armature.name if st.armature else None,
        ),
    )
    return human if ok else None


def start_from_sidebar(scr):
    """Click the Terrain panel's Generate button (found by hovering the sidebar from its bottom,
    where the Terrain panel is, and copying what is under the pointer). When it cannot be found,
    invoke the operator as the button would. Returns a step that starts the bake again."""
    at = yield from find_widget(scr, lambda t: "procanim.adapt_terrain(" in t, from_bottom=True)
    if at is not None:
        step("Terrain Generate button at %d,%d: %s" % (at[0], at[1], scr.found_text))
        R["figures"]["long_bake_started_by"] = "click on the sidebar's Generate button"
        return lambda: scr.click(*at)
    step("Terrain Generate button not found in the sidebar: invoking the operator as the button would")
    R["figures"]["long_bake_started_by"] = "procanim.adapt_terrain('INVOKE_DEFAULT') in the sidebar's context"
    scr.park_pointer()

    def invoke():
        st = bpy.context.scene.procanim
        with scr.override():
            ret = bpy.ops.procanim.adapt_terrain(
                "INVOKE_DEFAULT", armature=st.armature.name, terrain=st.terrain.terrain.name
            )
        step("procanim.adapt_terrain('INVOKE_DEFAULT') -> %s" % sorted(ret))
        yield 0.0

    return invoke


def bake_then_esc(scr, probe, start, esc_at_fraction, esc_after_s):
    """Step: start the bake, press Escape (a real key event) once it shows ``esc_at_fraction`` or
    ``esc_after_s`` s after its start, wait for its end. Returns what was measured."""
    probe.reset()
    yield from start()
    m = {"started": (yield from wait_until(lambda: probe.started is not None, 30.0))}
    m["running"] = m["started"] and probe.ended is None
    if not m["running"]:
        return m

    def mid_way():
        shown = probe.samples[-1][1] if probe.samples else 0.0
        elapsed = time.perf_counter() - probe.started
        return probe.ended is not None or shown >= esc_at_fraction or elapsed >= esc_after_s

    ticks = []
    yield from wait_until(mid_way, BAKE_TIMEOUT, interval=0.02, ticks=ticks)
    m["ended_before_esc"] = probe.ended is not None
    if m["ended_before_esc"]:
        m["result"] = sorted(probe.result or ())
        return m
    fraction_at_esc = round(probe.samples[-1][1], 3) if probe.samples else None
    t_press = time.perf_counter()
    scr.key("Escape")
    t_sent = time.perf_counter()
    yield from wait_until(lambda: probe.ended is not None, BAKE_TIMEOUT, interval=0.01)
    esc_modal = probe.esc_seen()
    before = probe.reports_between(probe.started, t_press)
    after = probe.reports_between(esc_modal or t_press, float("inf"))
    m.update(
        {
            "engine_reports_before_esc": len(before),
            "engine_report_gap_max_s": max_gap(before),
            "modal_gap_max_s": max_gap([t for t, _typ, _v in probe.events if t < t_press]),
            "timer_gap_max_s": max_gap(ticks),
            "esc_modal_to_engine_report_s": round(after[0] - esc_modal, 3) if after and esc_modal else None,
            "esc_after_start_s": round(t_press - probe.started, 3),
            "fraction_at_esc": fraction_at_esc,
            "esc_to_stop_s": round(probe.ended - t_press, 3) if probe.ended is not None else None,
            "esc_key_to_modal_s": round(esc_modal - t_press, 3) if esc_modal else None,
            "xdotool_key_s": round(t_sent - t_press, 3),
            "progress_shown_before_esc_pct": probe.percents_before(t_press),
            "progress_samples_before_esc": sum(1 for t, _f in probe.samples if t < t_press),
            "progress_object_found": probe.progress_found,
            "result": sorted(probe.result or ()),
        }
    )
    return m


def esc_cancel_step(scr):
    """A long terrain adaptation started from the sidebar; Esc pressed (a real key event) mid-way.
    Checks: the operator ended CANCELLED, the armature's action is unchanged, no new action, at
    least three progress values shown before Esc, and Esc stopped the bake within ESC_LIMIT_S.
    With PROCANIM_GUI_ESC_REPEAT=N the bake is then started and cancelled N more times, Esc at
    5 %, 15 %, ... 85 % of the bar, for the distribution of the Esc-to-stop time (figures only;
    bakes that finished before the Esc landed are listed but not counted)."""
    human = yield from terrain_scene_step(scr)
    if human is None:
        return
    before = action_state(human)
    actions_before = set(bpy.data.actions.keys())
    R["figures"]["idle_timer_gap_max_s"] = yield from idle_timer_gap()
    probe = OperatorProbe("procanim.adapt_terrain").install()
    try:
        start = yield from start_from_sidebar(scr)
        m = yield from bake_then_esc(scr, probe, start, ESC_AT_FRACTION, ESC_AFTER_S)
        step("Esc: %s" % m)
        yield 0.5
        human = bpy.data.objects.get(human.name)
        after = action_state(human) if human else None
        new = sorted(set(bpy.data.actions.keys()) - actions_before)
        repeats = []
        if m.get("esc_to_stop_s") is not None:
            for i in range(ESC_REPEAT):
                yield 0.5
                r = yield from bake_then_esc(scr, probe, start, 0.05 + (0.1 * i) % 0.9, 30.0)
                r["idle_timer_gap_max_s"] = yield from idle_timer_gap(1.0)
                step("Esc repeat %d: %s" % (i + 1, r))
                repeats.append(r)
    finally:
        probe.uninstall()
    R["figures"].update({k: v for k, v in m.items() if k not in ("started", "running")})
    ok = check(
        "long_bake_started",
        m["running"] and not m["ended_before_esc"],
        "procanim.adapt_terrain running modal (%s), Esc pressed %.2f s after its start at %s of the bar"
        % (probe.how, m["esc_after_start_s"], m["fraction_at_esc"])
        if m["running"] and not m["ended_before_esc"]
        else "started: %s, ended %s before Esc (the bake must be longer)" % (m["started"], m.get("result")),
    )
    if not ok:
        return
    if repeats:
        stops = sorted(r["esc_to_stop_s"] for r in repeats if r.get("result") == ["CANCELLED"])
        keys = (
            "esc_after_start_s",
            "fraction_at_esc",
            "esc_to_stop_s",
            "esc_key_to_modal_s",
            "esc_modal_to_engine_report_s",
            "engine_report_gap_max_s",
            "timer_gap_max_s",
            "idle_timer_gap_max_s",
            "result",
        )
        R["figures"]["esc_repeats"] = [{k: r.get(k) for k in keys} for r in repeats]
        R["figures"]["esc_to_stop_s_repeats_sorted"] = stops
        if stops:
            R["figures"]["esc_to_stop_s_repeats_median_max"] = (stops[len(stops) // 2], stops[-1])
    check(
        "esc_cancelled",
        m["result"] == ["CANCELLED"] and m["esc_key_to_modal_s"] is not None,
        "the operator's modal received ESC %s s after the key press and returned %s"
        % (m["esc_key_to_modal_s"], m["result"])
        if m["esc_key_to_modal_s"] is not None
        else "the operator's modal never received an ESC press; it ended %s" % m["result"],
    )
    check("esc_action_kept", after == before, "the armature's action before %s, after %s" % (before, after))
    check("esc_no_new_action", not new, "new actions: %s" % new if new else "no new action (%d)" % len(actions_before))
    shown = m["progress_shown_before_esc_pct"]
    check(
        "esc_progress_seen",
        len(set(shown)) >= 3,
        "%d distinct progress values (%%) shown before Esc: %s%s"
        % (len(set(shown)), shown, "" if m["progress_object_found"] else " (no progress object on the operator)"),
    )
    stop_s, to_modal = m["esc_to_stop_s"], m["esc_key_to_modal_s"]
    # What ProcAnim controls is the time from its modal handler seeing Esc to the bake's end; how
    # long Blender's own event loop takes to deliver the key depends on the machine's load (measured
    # 0.25-0.58 s on a 2-core machine at load 10-19) and is kept as a figure, not asserted.
    handled_s = stop_s - to_modal if stop_s is not None and to_modal is not None else None
    R["figures"]["esc_modal_to_stop_s"] = handled_s
    check(
        "esc_stop_time",
        handled_s is not None and handled_s <= ESC_LIMIT_S,
        "Esc seen by the operator to its end: %s s (limit %.2f s); key press to end %s s"
        % (handled_s if handled_s is not None else "never", ESC_LIMIT_S, stop_s),
    )


# ------------------------------------------------------------------ a sidebar setting dragged
def redraw_ms(scr, iterations=3):
    """How long one redraw of the 3D view's viewport and of its sidebar takes here (ms, mean of
    ``iterations``; wm.redraw_timer): the floor under any "change -> new picture" time."""
    out = {}
    for name, region in (("viewport", scr.view), ("sidebar", scr.ui)):
        with scr.override(region):
            t0 = time.perf_counter()
            bpy.ops.wm.redraw_timer(type="DRAW", iterations=iterations)
            out[name] = round((time.perf_counter() - t0) * 1000.0 / iterations, 1)
    return out


def drag_setting_step(scr):
    """A real drag on a sidebar number field changes the setting and the sidebar shows it: the
    source walk's Steps field (under Terrain) is found by its data path (hover + Ctrl+Shift+Alt+C),
    dragged 60 px to the right, and the region's pixels must change. The shape of the live
    preview's "move a setting, see the ghost move" step (the time to the new picture is a figure)."""
    at = yield from find_widget(scr, lambda t: t.endswith(DRAG_FIELD), copy=COPY_DATA_PATH, from_bottom=True)
    if at is None:
        check("drag_setting", False, "no field whose data path ends with %r in the sidebar" % DRAG_FIELD)
        return
    owner, prop = resolve(scr.found_text)
    yield 0.5  # the hover highlight and any tooltip settle before the picture
    scr.park_pointer()
    yield 0.5
    box = scr.box(scr.ui)
    before_px, before = pixels(box), getattr(owner, prop)
    t0 = time.perf_counter()
    yield from scr.drag(at, 60)
    scr.park_pointer()  # no hover highlight: what changes is the value shown
    seen = yield from changed(box, before_px, timeout=10.0, min_pixels=10, since=t0)
    R["figures"]["drag_to_new_picture_s"] = round(seen[0], 3) if seen else None
    R["figures"]["redraw_ms"] = redraw_ms(scr)
    value = getattr(owner, prop)
    check(
        "drag_setting",
        value > before and seen is not None,
        "%s %s -> %s after a 60 px drag at %d,%d; the sidebar's picture changed %s"
        % (
            scr.found_text,
            before,
            value,
            at[0],
            at[1],
            "(%d pixels) %.2f s after the drag began" % (differing(seen[1], before_px), seen[0]) if seen else "never",
        ),
    )


# ------------------------------------------------------------------ live preview (docs/preview.md)
PREVIEW_SHOT = os.environ.get("PROCANIM_GUI_PREVIEW_SHOT", "/tmp/procanim-gui/preview.png")
PREVIEW_LOG = os.environ.get("PROCANIM_PREVIEW_LOG", "")
PREVIEW_PATH = [(0.0, 0.0, 0.0), (0.0, -2.5, 0.0), (1.2, -5.2, 0.0), (1.2, -8.0, 0.0)]  # ~236 frames
PREVIEW_AT = (-6.0, 0.0, 0.0)  # where the hiker stands (away from the duck and the terrain walk)


def preview_runtime():
    """The installed add-on's preview.runtime module."""
    import importlib

    addon = next(a.module for a in bpy.context.preferences.addons if a.module.endswith(".procanim"))
    return importlib.import_module(addon + ".preview.runtime"), importlib.import_module(addon + ".preview.draw")


def preview_log():
    if not PREVIEW_LOG or not os.path.exists(PREVIEW_LOG):
        return []
    with open(PREVIEW_LOG) as f:
        return [json.loads(line) for line in f if line.strip()]


def preview_scene_step(scr):
    """A human at PREVIEW_AT, a curve ahead of it; the sidebar picks them; frame 100 in view."""
    with scr.override(scr.view):
        bpy.ops.procanim.add_human(name="GUI Hiker", location=PREVIEW_AT)
    hiker = bpy.data.objects["GUI Hiker"]
    cu = bpy.data.curves.new("GUI Path", "CURVE")
    sp = cu.splines.new("POLY")
    sp.points.add(len(PREVIEW_PATH) - 1)
    for p, co in zip(sp.points, PREVIEW_PATH):
        p.co = (co[0] + PREVIEW_AT[0], co[1] + PREVIEW_AT[1], co[2], 1.0)
    path = bpy.data.objects.new("GUI Path", cu)
    bpy.context.scene.collection.objects.link(path)
    st = bpy.context.scene.procanim
    st.armature, st.path_walk.path, st.path_walk.cadence = hiker, path, 100.0
    for o in bpy.context.view_layer.objects:
        o.select_set(False)
    hiker.select_set(True)
    bpy.context.view_layer.objects.active = hiker
    bpy.context.scene.frame_current = 100
    from mathutils import Euler, Vector

    rv3d = scr.space.region_3d
    rv3d.view_perspective = "PERSP"
    rv3d.view_location = Vector(PREVIEW_AT) + Vector((0.7, -4.2, 0.7))
    rv3d.view_distance = 7.5
    rv3d.view_rotation = Euler((1.05, 0.0, 0.55)).to_quaternion()
    yield 0.5
    return st


class MainThreadLog:
    """What Blender's main thread did while a change waited for its ghost: each dependency-graph
    update (depsgraph_update_pre → post) and each 3D-view draw — PRE_VIEW (before the scene is
    drawn), POST_VIEW (after it: where the preview draws the ghost) and POST_PIXEL (its end) — as
    wall times."""

    def __init__(self):
        self.depsgraph, self.draws = [], []  # (start, end); (pre_view, post_view, post_pixel)
        self._pre = self._view = self._post = None
        self._handles = []

    def __enter__(self):
        bpy.app.handlers.depsgraph_update_pre.append(self.on_pre)
        bpy.app.handlers.depsgraph_update_post.append(self.on_post)
        space = bpy.types.SpaceView3D
        self._handles = [space.draw_handler_add(self.on_view, (), "WINDOW", "PRE_VIEW"),
                         space.draw_handler_add(self.on_post_view, (), "WINDOW", "POST_VIEW"),
                         space.draw_handler_add(self.on_pixel, (), "WINDOW", "POST_PIXEL")]
        return self

    def __exit__(self, *exc):
        bpy.app.handlers.depsgraph_update_pre.remove(self.on_pre)
        bpy.app.handlers.depsgraph_update_post.remove(self.on_post)
        for handle in self._handles:
            bpy.types.SpaceView3D.draw_handler_remove(handle, "WINDOW")

    def on_pre(self, *_):
        self._pre = time.time()

    def on_post(self, *_):
        if self._pre is not None:
            self.depsgraph.append((self._pre, time.time()))
        self._pre = None

    def on_view(self):
        self._view, self._post = time.time(), None

    def on_post_view(self):
        self._post = time.time()

    def on_pixel(self):
        if self._view is not None:
            self.draws.append((self._view, self._post or time.time(), time.time()))
        self._view = None

    def first_frame(self, t_set):
        """The first 3D-view draw that began after ``t_set``: (pre_view, post_view, end), or None."""
        return next((d for d in self.draws if d[0] >= t_set), None)

    def late(self, worker_done, drawn):
        """Draws that drew the scene after the worker had ended and were over before the draw
        that showed the new ghost: frames that could have shown it and did not."""
        return sum(1 for pre, post, end in self.draws if post > worker_done and end < drawn)

    def summary(self, t0, t1):
        """Count and total ms of the depsgraph updates and view draws that began in [t0, t1]."""
        out = {}
        for name, spans in (("depsgraph", self.depsgraph), ("view_draws", [(d[0], d[2]) for d in self.draws])):
            inside = [(a, b) for a, b in spans if t0 <= a <= t1]
            out[name] = "%d, %d ms" % (len(inside), round(sum(b - a for a, b in inside) * 1000.0))
        return out


def ms(a, b):
    """(a - b) in whole milliseconds; None when either is missing."""
    return round((a - b) * 1000.0) if a and b else None


def first_frame_times(settings, name, values, times):
    """Blender alone (no preview running): set ``name`` to each value and time Blender's first
    3D-view frame after the change — when it began and when it had drawn the scene (its
    POST_VIEW, where a preview's ghost would be drawn). The floor under any change → ghost time:
    Blender answers a change of an add-on setting by drawing the viewport anew."""
    for value in values:
        t_set = time.time()
        with MainThreadLog() as main_log:
            setattr(settings, name, value)
            scr_ui_redraw()
            seen = main_log.first_frame
            yield from wait_until(lambda t_set=t_set, seen=seen: seen(t_set) is not None, 30.0, 0.02)
            yield 0.3
        first = main_log.first_frame(t_set)
        if first is None:
            step("first frame after %s=%s: none drawn" % (name, value))
            continue
        times.append({"set_to_first_frame_ms": ms(first[1], t_set), "set_to_frame_start_ms": ms(first[0], t_set),
                      **main_log.summary(t_set, t_set + 0.3)})
        step("Blender alone, %s=%s: %s" % (name, value, times[-1]))
        yield 0.3


def timed_preview_changes(rt, generator, settings, name, values, times):
    """Set ``name`` to each value (one change, as a slider edit), wait until its ghost is drawn;
    appends the change -> drawn time (ms, from the preview's test log), the worker's time, when
    Blender's first frame after the change drew the scene, and the frames that were drawn after
    the worker had ended without the new ghost (``frames_late``)."""
    session = rt.SESSIONS[generator]
    for value in values:
        n0 = len(preview_log())
        t_set = time.time()
        ticks: list = []
        with MainThreadLog() as main_log:
            setattr(settings, name, value)
            scr_ui_redraw()
            drawn = yield from wait_until(lambda n0=n0: any(e["event"] == "drawn" for e in preview_log()[n0:]), 120.0,
                                          0.02, ticks=ticks)
        new = preview_log()[n0:]
        ready = [e for e in new if e["event"] == "ready"]
        if not drawn or not ready:
            step("preview %s %s=%s: no new ghost drawn (%s)" % (generator, name, value, session.status()[1]))
            continue
        done = [e for e in new if e["event"] == "drawn"][-1]
        r = ready[-1]
        started = [e for e in new if e["event"] == "started"]
        first = main_log.first_frame(t_set)
        times.append(
            {
                "set_to_drawn_ms": ms(done["wall"], t_set),
                "set_to_first_frame_ms": ms(first[1], t_set) if first else None,
                "frames_late": main_log.late(r.get("worker_done_wall") or 0.0, done["wall"]),
                "worker_ms": round(r["compute_ms"]),
                "engine_ms": round(r["engine_ms"]),
                "frames": r["frames"],
                # where the time went: set -> seen as a change -> worker started -> worker done ->
                # result taken on the main thread -> first draw of the new ghost
                "set_to_seen_ms": ms(r.get("changed_wall"), t_set),
                "seen_to_started_ms": ms(started[-1]["wall"], r.get("changed_wall")) if started else None,
                "set_to_worker_done_ms": ms(r.get("worker_done_wall"), t_set),
                "worker_done_to_taken_ms": ms(r.get("ready_wall"), r.get("worker_done_wall")),
                "taken_to_drawn_ms": ms(done["wall"], r.get("ready_wall")),
                "starts": len(started),
                "main_stall_ms": round(max_gap(ticks) * 1000.0) if len(ticks) > 1 else None,
                **main_log.summary(t_set, done["wall"]),
                "by": [e.get("by") for e in started],
            }
        )
        step("preview %s %s=%s: %s" % (generator, name, value, times[-1]))
        yield 0.3


def scr_ui_redraw():
    """The sidebar redraws, as after a slider edit."""
    for a in bpy.context.window_manager.windows[0].screen.areas:
        for r in a.regions:
            if a.type == "VIEW_3D" and r.type == "UI":
                r.tag_redraw()


def ghost_box(scr, session, frame, pad=12):
    """X-screen box around the ghost's bones at ``frame`` in the 3D view."""
    from bpy_extras.view3d_utils import location_3d_to_region_2d

    pts = []
    for ghost in session.result.ghosts:
        heads, tails = ghost.bones_at(frame)
        for p in list(heads) + list(tails):
            v = location_3d_to_region_2d(scr.view, scr.space.region_3d, p)
            if v is not None:
                pts.append(scr.region_to_screen(scr.view, v.x, v.y))
    xs, ys = [p[0] for p in pts], [p[1] for p in pts]
    return min(xs) - pad, min(ys) - pad, max(xs) + pad, max(ys) + pad


def preview_step(scr, duck_name):
    """Step 9 (see the module docstring)."""
    try:
        rt, draw = preview_runtime()
    except (StopIteration, ImportError) as exc:
        check("preview_on", False, "the add-on's preview package: %s" % exc)
        return
    st = yield from preview_scene_step(scr)
    walk_alone, duck_alone = [], []
    yield from first_frame_times(st.path_walk, "cadence", (108.0, 96.0, 100.0), walk_alone)
    at = yield from find_widget(scr, lambda t: t.endswith(".path_walk.preview"), copy=COPY_DATA_PATH)
    if at is not None:
        yield from scr.click(*at)
        yield 0.3
    scr.park_pointer()
    if not check(
        "preview_on",
        st.path_walk.preview and rt.is_on("path_walk"),
        "Path Walk Preview toggle %s; preview on: %s; hooks %s"
        % ("clicked at %d,%d" % at if at else "not found", rt.is_on("path_walk"), rt.hooks()),
    ):
        return
    session = rt.SESSIONS["path_walk"]
    yield from wait_until(lambda: session.result is not None and session.result.drawn, 120.0, 0.05)
    check(
        "preview_ghost_drawn",
        session.result is not None and session.result.drawn,
        "%s; %s"
        % (session.status()[1], "drawn in the 3D view" if session.result and session.result.drawn else "never drawn"),
    )
    if session.result is None:
        return
    walk_times, duck_times = [], []
    yield from timed_preview_changes(rt, "path_walk", st.path_walk, "cadence", (108.0, 96.0, 100.0), walk_times)
    # the slider, dragged with the mouse: the ghost moves
    found = yield from find_widget(scr, lambda t: t.endswith(".path_walk.cadence"), copy=COPY_DATA_PATH)
    moved = False
    if found is not None:
        yield 0.5
        scr.park_pointer()
        yield 1.0
        frame = bpy.context.scene.frame_current
        box_a = ghost_box(scr, session, frame)
        before_px, before = pixels(), st.path_walk.cadence
        yield from scr.drag(found, 60)
        scr.park_pointer()
        after = st.path_walk.cadence
        yield from wait_until(
            lambda: (
                session.result is not None
                and session.result.drawn
                and not session.busy
                and dict(session.result.key[1])["cadence"] == after
            ),
            120.0,
            0.05,
        )
        yield 1.0
        box_b = ghost_box(scr, session, frame)
        box = (min(box_a[0], box_b[0]), min(box_a[1], box_b[1]), max(box_a[2], box_b[2]), max(box_a[3], box_b[3]))
        after_px = pixels()
        inside = differing(after_px[box[1] : box[3], box[0] : box[2]], before_px[box[1] : box[3], box[0] : box[2]])
        moved = after != before and inside >= 50
        screenshot(PREVIEW_SHOT)
        _crop(PREVIEW_SHOT, scr.box(scr.area))
        check(
            "preview_ghost_moves",
            moved,
            "Cadence %s -> %s by a 60 px drag; %d pixels changed around the ghost "
            "(box %s); %s" % (before, after, inside, box, session.status()[1]),
        )
    else:
        check("preview_ghost_moves", False, "no Cadence slider found in the sidebar")
    # two 3D views: both draw the ghost
    regions, real_shapes = set(), draw.view_shapes

    def recording(sessions, frame):
        shapes = real_shapes(sessions, frame)
        if shapes:
            regions.add(bpy.context.region.as_pointer())
        return shapes

    draw.view_shapes = recording
    try:
        with scr.override(scr.view):
            bpy.ops.screen.area_split(direction="VERTICAL", factor=0.45)
        yield 0.5
        for a in scr.win.screen.areas:
            a.tag_redraw()
        yield 1.5
    finally:
        draw.view_shapes = real_shapes
    views = sum(a.type == "VIEW_3D" for a in scr.win.screen.areas)
    check(
        "preview_two_views",
        views >= 2 and len(regions) >= 2,
        "%d 3D views; the ghost drawn in %d of their regions" % (views, len(regions)),
    )
    # the duck, 240 frames
    st.path_walk.preview = False
    duck = bpy.data.objects.get(duck_name)
    if duck is not None:
        st.armature = duck
        st.duck.frame_start, st.duck.frame_end = 1, 240
        yield 0.5
        yield from first_frame_times(st.duck, "amplitude", (6.0, 4.0, 5.0), duck_alone)
        st.duck.preview = True
        yield from wait_until(
            lambda: rt.SESSIONS["duck_walk"].result is not None and not rt.SESSIONS["duck_walk"].busy, 120.0, 0.05
        )
        yield 0.5
        yield from timed_preview_changes(rt, "duck_walk", st.duck, "amplitude", (6.0, 4.0, 5.0), duck_times)
        st.duck.preview = False
    R["figures"]["preview_path_walk_set_to_drawn"] = walk_times
    R["figures"]["preview_duck_walk_set_to_drawn"] = duck_times
    R["figures"]["preview_off_path_walk_set_to_first_frame"] = walk_alone
    R["figures"]["preview_off_duck_walk_set_to_first_frame"] = duck_alone
    R["figures"]["preview_redraw_ms"] = redraw_ms(scr)
    R["figures"]["preview_latency_summary"] = latency_summary(walk_alone, walk_times, duck_alone, duck_times)
    timed = walk_times + duck_times
    check(
        "preview_no_frame_late",
        len(timed) == 6 and all(t["frames_late"] == 0 for t in timed),
        "%d timed changes; frames drawn after the worker had ended without the new ghost: %s"
        % (len(timed), [t["frames_late"] for t in timed]),
    )
    hooks = rt.hooks()
    check("preview_unhooked", sum(hooks.values()) == 0 and not rt.SESSIONS, "with every Preview off: %s" % hooks)


def latency_summary(walk_alone, walk_times, duck_alone, duck_times):
    """One line per generator: Blender's first frame after a change with no preview running, the
    change -> ghost drawn with the preview on, and the worker (ms, min-max)."""

    def span(rows, key):
        vals = [r[key] for r in rows if r.get(key) is not None]
        return "%d-%d" % (min(vals), max(vals)) if vals else "-"

    return {
        name: "Blender alone: first frame %s ms; preview: drawn %s ms (its first frame %s), worker done %s ms"
        % (span(alone, "set_to_first_frame_ms"), span(times, "set_to_drawn_ms"), span(times, "set_to_first_frame_ms"),
           span(times, "set_to_worker_done_ms"))
        for name, alone, times in (("path_walk", walk_alone, walk_times), ("duck_walk", duck_alone, duck_times))
    }


def _crop(path, box):
    """Crop the PNG at ``path`` to the X-screen ``box`` (ImageMagick)."""
    import subprocess

    x0, y0, x1, y1 = box
    subprocess.run(["convert", path, "-crop", "%dx%d+%d+%d" % (x1 - x0, y1 - y0, x0, y0), "+repage", path], check=True)


_gen = scenario()


def finish():
    R["ok"] = not R["errors"] and not R["draw_errors"] and all(R["checks"].get(name, {}).get("ok") for name in CHECKS)
    R["expected_checks"] = list(CHECKS)
    R["draws"] = DRAWS
    R["figures"]["panel_draw_ms_max"] = max(DRAW_MS_MAX.values(), default=None)
    R["draw_ms_max"] = DRAW_MS_MAX
    os.makedirs(os.path.dirname(RESULT), exist_ok=True)
    with open(RESULT, "w") as f:
        json.dump(R, f, indent=1, default=str)
    print("gui_check: %s" % ("in-window checks passed" if R["ok"] else "FAILED: %s" % R["errors"]), flush=True)
    if not os.environ.get("PROCANIM_GUI_KEEP"):
        try:
            win = bpy.context.window_manager.windows[0]
            with bpy.context.temp_override(window=win):
                bpy.ops.wm.quit_blender()
        except Exception:
            traceback.print_exc()
            os._exit(0 if R["ok"] else 1)


def tick():
    try:
        delay = next(_gen)
    except StopIteration:
        delay = None
    except Exception:
        fail("check crashed:\n" + traceback.format_exc())
        delay = None
    if delay is None:
        try:
            if not R["ok"] and not os.path.exists(SHOT):
                shot(SHOT)  # for diagnosis; run_gui.sh keeps it out of docs/
        except Exception:
            traceback.print_exc()
        finish()
    return delay


if __name__ == "__main__":  # Blender runs this file; tests/gui/preview_latency.py imports its steps
    bpy.app.timers.register(tick, first_interval=1.0, persistent=True)
