"""GUI check of the ProcAnim sidebar in Blender's real window (run under Xvfb).

    blender --window-geometry 0 0 W H SCENE.blend --python tests/gui/gui_check.py

Driven by tests/gui/run_gui.sh. A timer walks through the check while Blender's
event loop runs, as a user at the screen would:

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
   screenshot.

The result goes to $PROCANIM_GUI_RESULT (JSON, "ok": true/false); run_gui.sh turns
it into the exit status. Nothing here changes the add-on.
"""

import json
import os
import subprocess
import time
import traceback

import bpy

CATEGORY = "ProcAnim"
REQUIRED_LABELS = ("Character", "Duck Walk")
RESULT = os.environ.get("PROCANIM_GUI_RESULT", "/tmp/procanim-gui/result.json")
SHOT = os.environ.get("PROCANIM_GUI_SHOT", "/tmp/procanim-gui/sidebar.png")
DISPLAY = os.environ.get("DISPLAY", ":99")
BAKE_TIMEOUT = float(os.environ.get("PROCANIM_GUI_BAKE_TIMEOUT", "180"))

R = {
    "ok": False,
    "errors": [],
    "steps": [],
    "panels": {},
    "draw_errors": [],
    "categories_seen": [],
    "blender": bpy.app.version_string,
}
DRAWS = {}  # panel idname -> number of draw() calls


def step(msg):
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
        try:
            return orig(self, context)
        except Exception:
            R["draw_errors"].append("%s raised:\n%s" % (key, traceback.format_exc()))
            raise

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


# ------------------------------------------------------------------ X input
def xdo(*args):
    cmd = ["xdotool", *map(str, args)]
    p = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ, "DISPLAY": DISPLAY})
    if p.returncode != 0:
        raise RuntimeError("%s failed: %s" % (" ".join(cmd), p.stderr.strip()))
    return p.stdout.strip()


def to_screen(window, x, y):
    """Blender window coordinates (origin bottom-left) -> X screen (top-left).
    The window is opened at 0,0 by --window-geometry; no window manager runs."""
    return int(x), int(window.height - y)


def screenshot(path):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    env = {**os.environ, "DISPLAY": DISPLAY}
    xwd = subprocess.run(["xwd", "-root", "-silent"], capture_output=True, env=env, check=True)
    subprocess.run(["convert", "xwd:-", "png:" + path], input=xwd.stdout, env=env, check=True)
    step("screenshot %s (%d bytes)" % (path, os.path.getsize(path)))


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
    wm = bpy.context.window_manager
    win = wm.windows[0]
    screen = win.screen
    areas = [a for a in screen.areas if a.type == "VIEW_3D"]
    if not areas:
        fail("no 3D view in the window")
        return
    area = max(areas, key=lambda a: a.width * a.height)
    space = area.spaces.active
    space.show_region_ui = True
    step("window %dx%d, 3D view %dx%d at %d,%d" % (win.width, win.height, area.width, area.height, area.x, area.y))

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
        return
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

    duck = find_duck()
    if duck is None:
        fail("no armature in the scene")
        return
    step("duck armature: %s" % duck.name)
    for o in bpy.context.view_layer.objects:
        o.select_set(False)
    duck.select_set(True)
    bpy.context.view_layer.objects.active = duck
    scene = bpy.context.scene
    if scene.camera is not None:
        space.region_3d.view_perspective = "CAMERA"
        step("viewport looks through the scene camera %s" % scene.camera.name)
    else:
        with bpy.context.temp_override(
            window=win, area=area, region=[r for r in area.regions if r.type == "WINDOW"][0]
        ):
            try:
                bpy.ops.view3d.view_selected()
            except Exception as exc:
                step("view_selected skipped: %s" % exc)
    for a in screen.areas:
        a.tag_redraw()
    yield 1.0

    ui = [r for r in area.regions if r.type == "UI"][0]
    if ui.width < 50:
        fail("sidebar region not visible (width %d)" % ui.width)
        return
    step("sidebar region %dx%d at %d,%d, active tab %r" % (ui.width, ui.height, ui.x, ui.y, ui.active_panel_category))

    if os.environ.get("PROCANIM_GUI_DEBUG"):
        screenshot(os.path.join(os.path.dirname(SHOT), "debug-before-tab.png"))
    # -- bring the ProcAnim tab forward with real input events: click down the
    # tab strip at the sidebar's right edge until the ProcAnim tab is active.
    R["categories_seen"].append(ui.active_panel_category)
    R["tab_clicks"] = 0
    for attempt in range(4):
        if ui.active_panel_category == CATEGORY:
            break
        if attempt:
            where = xdo("getmouselocation")
            step("pass %d over the tab strip changed nothing; pointer at %s; again" % (attempt, where))
            if os.environ.get("PROCANIM_GUI_DEBUG"):
                screenshot(os.path.join(os.path.dirname(SHOT), "debug-pass-%d.png" % attempt))
            yield 1.0
        # move the pointer into the window first, as a hand would, so Blender sees it enter
        xdo("mousemove", "--sync", *to_screen(win, area.x + area.width // 2, area.y + area.height // 2))
        yield 0.3
        for y in range(ui.y + ui.height - 12, ui.y + 12, -12):
            if ui.active_panel_category == CATEGORY:
                break
            sx, sy = to_screen(win, ui.x + ui.width - 10, y)
            xdo("mousemove", "--sync", sx, sy)
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
        return
    step("ProcAnim tab is active")
    # park the pointer over the viewport so no tooltip covers the sidebar
    xdo("mousemove", *to_screen(win, area.x + area.width // 3, area.y + area.height // 2))
    DRAWS.clear()
    ui.tag_redraw()
    yield 1.5

    def check_drawn(when):
        ctx = dict(window=win, area=area, region=ui)
        missing = []
        with bpy.context.temp_override(**ctx):
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

    check_drawn("before_generate")

    # -- Generate, in the window's context as the button would run it
    if duck.animation_data:
        duck.animation_data_clear()
    with bpy.context.temp_override(window=win, area=area, region=ui):
        bpy.ops.ed.undo_push(message="GUI check: before Generate")
    ui.tag_redraw()
    yield 0.5
    with bpy.context.temp_override(window=win, area=area, region=ui):
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
    for a in screen.areas:
        a.tag_redraw()
    yield 2.0
    check_drawn("after_generate")
    check(
        "no_draw_exceptions",
        not R["draw_errors"],
        "%d draw()/draw_header() exception(s)" % len(R["draw_errors"])
        if R["draw_errors"]
        else "no draw()/draw_header() raised",
    )
    screenshot(SHOT)
    check("screenshot", os.path.getsize(SHOT) > 10000, "%s, %d bytes" % (SHOT, os.path.getsize(SHOT)))

    # -- Undo takes the bake back (the duck has no keyed action again), Redo brings it back
    name = duck.name
    with bpy.context.temp_override(window=win, area=area, region=ui):
        bpy.ops.ed.undo()
    yield 0.5
    duck = bpy.data.objects[name]  # undo reloads data: look the object up again
    undone = fcurves_of(action_of(duck), duck)
    check("undo_restores", not undone, "after Undo %s has %d keyed F-curves (expected none)" % (name, len(undone)))
    with bpy.context.temp_override(window=win, area=area, region=ui):
        bpy.ops.ed.redo()
    yield 0.5
    duck = bpy.data.objects[name]
    redone = fcurves_of(action_of(duck), duck)
    check(
        "redo_rebakes",
        len(redone) == len(fcs),
        "after Redo %s has %d keyed F-curves (the bake had %d)" % (name, len(redone), len(fcs)),
    )


_gen = scenario()


def finish():
    R["ok"] = not R["errors"] and not R["draw_errors"] and all(R["checks"].get(name, {}).get("ok") for name in CHECKS)
    R["expected_checks"] = list(CHECKS)
    R["draws"] = DRAWS
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
                screenshot(SHOT)  # for diagnosis; run_gui.sh keeps it out of docs/
        except Exception:
            traceback.print_exc()
        finish()
    return delay


bpy.app.timers.register(tick, first_interval=1.0, persistent=True)
