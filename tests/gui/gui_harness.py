"""What the GUI check (tests/gui/gui_check.py) does in Blender's real window: input, screen, probes.

Imported from inside Blender (gui_check.py puts this folder on ``sys.path``). Every user action
here is a real X event sent through XTEST (``xdotool``), never a Python call standing in for it.

* :class:`Screen` — the window, its largest 3D view and that view's sidebar; coordinates
  (Blender's window/region origin is bottom-left, X's is top-left; the window is opened at 0,0
  by ``--window-geometry`` and no window manager runs).
* :func:`xdo`, :meth:`Screen.click`, :meth:`Screen.key`, :meth:`Screen.drag` — pointer and keys.
* :func:`screenshot`, :func:`pixels`, :func:`changed` — the screen as a PNG or as a numpy array
  (for "the ghost moved" comparisons of two shots).
* :func:`find_widget` — where a button of the sidebar is: it hovers the pointer down the sidebar
  (scrolling it with the wheel) and presses a copy shortcut at each row; Blender copies what is
  under the pointer (Ctrl+C: an operator button's Python call or a property's value;
  Ctrl+Shift+Alt+C: a property's full data path) to its clipboard, which is read back.
* :class:`OperatorProbe` — wraps a registered operator class's ``invoke``/``modal``/``execute``
  to record when it started, every event its modal saw, the progress it shows (its ``Progress``
  object's fraction at each modal call, i.e. what it hands to ``wm.progress_update``), every
  progress report of the engine (in the worker thread) and how and when it ended. Behaviour is
  unchanged (the wrappers call the original and return its result).

Steps of the check are generators that ``yield`` seconds to wait (Blender's event loop runs
meanwhile) and may ``return`` a value: ``found = yield from find_widget(screen, match)``.
Adding a step (e.g. the live preview's "move a slider, the ghost moves")::

    def preview_step(scr):
        at = yield from find_widget(scr, lambda t: t.endswith(".speed"), copy=COPY_DATA_PATH)
        before = pixels(scr.box(scr.view))
        t0 = time.perf_counter()
        yield from scr.drag(at, 40)               # a real drag of the slider
        seen = yield from changed(scr.box(scr.view), before, timeout=5.0, since=t0)
        check("preview_ghost_moves", seen is not None, "...%.2f s" % seen[0])

then list the step's check names in gui_check.CHECKS and call it from ``scenario()``.
"""

from __future__ import annotations

import os
import re
import subprocess
import time

import bpy
import numpy as np

DISPLAY = os.environ.get("DISPLAY", ":99")
COPY = "ctrl+c"  # operator button: its Python call; property: its value
COPY_DATA_PATH = "ctrl+shift+alt+c"  # property: its full data path (bpy.data.scenes[...]...)
TAB_STRIP = 30  # px at the sidebar's right edge taken by the category tabs


# ------------------------------------------------------------------ X input and screen
def xdo(*args):
    """Run xdotool with ``args``; its stdout. Raises RuntimeError when it fails."""
    cmd = ["xdotool", *map(str, args)]
    t0 = time.perf_counter()
    p = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ, "DISPLAY": DISPLAY})
    if time.perf_counter() - t0 > 1.0:
        print("gui_harness: slow: %s took %.1f s" % (" ".join(cmd), time.perf_counter() - t0), flush=True)
    if p.returncode != 0:
        raise RuntimeError("%s failed: %s" % (" ".join(cmd), p.stderr.strip()))
    return p.stdout.strip()


_POINTER = [None]  # where move() last put the pointer (only this check moves it)


def move_args(sx, sy):
    """xdotool arguments that put the pointer at (sx, sy) and wait until it is there; none when
    it is there already (``mousemove --sync`` to the pointer's own position waits ~15 s for a
    motion that never comes, with Blender's window under it)."""
    if _POINTER[0] == (int(sx), int(sy)):
        return []
    _POINTER[0] = (int(sx), int(sy))
    return ["mousemove", "--sync", int(sx), int(sy)]


def where_pointer():
    """The pointer's X-screen position, asked of the X server (and remembered by move())."""
    shell = dict(line.split("=", 1) for line in xdo("getmouselocation", "--shell").splitlines() if "=" in line)
    _POINTER[0] = (int(shell["X"]), int(shell["Y"]))
    return _POINTER[0]


def move(sx, sy):
    """Pointer to X-screen (sx, sy)."""
    args = move_args(sx, sy)
    if args:
        xdo(*args)


def _grab(fmt):
    env = {**os.environ, "DISPLAY": DISPLAY}
    xwd = subprocess.run(["xwd", "-root", "-silent"], capture_output=True, env=env, check=True)
    return subprocess.run(["convert", "xwd:-", fmt], input=xwd.stdout, capture_output=True, env=env, check=True).stdout


def screenshot(path):
    """The whole X screen as a PNG at ``path``; returns its size in bytes."""
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    with open(path, "wb") as f:
        f.write(_grab("png:-"))
    return os.path.getsize(path)


def pixels(box=None):
    """The X screen (or ``box`` = (x0, y0, x1, y1) in X coordinates) as an (H, W, 3) uint8 array."""
    size = xdo("getdisplaygeometry").split()
    w, h = int(size[0]), int(size[1])
    img = np.frombuffer(_grab("rgb:-"), dtype=np.uint8)[: w * h * 3].reshape(h, w, 3)
    if box is not None:
        x0, y0, x1, y1 = box
        img = img[max(y0, 0) : min(y1, h), max(x0, 0) : min(x1, w)]
    return img


def differing(a, b, tol=24):
    """Number of pixels whose largest channel difference exceeds ``tol``."""
    return int((np.abs(a.astype(np.int16) - b.astype(np.int16)).max(axis=-1) > tol).sum())


def changed(box, before, timeout=5.0, min_pixels=50, interval=0.05, since=None):
    """Step: wait until ``box`` differs from ``before`` in at least ``min_pixels`` pixels; returns
    (seconds since ``since`` — a perf_counter, default the call —, new pixels), or None after
    ``timeout`` s."""
    t0 = time.perf_counter()
    since = t0 if since is None else since
    while time.perf_counter() - t0 < timeout:
        yield interval
        now = pixels(box)
        if differing(now, before) >= min_pixels:
            return time.perf_counter() - since, now
    return None


def wait_until(cond, timeout, interval=0.05, ticks=None):
    """Step: yield until ``cond()`` is true (returns True) or ``timeout`` s pass (returns False).
    ``ticks``: a list that gets the perf_counter of every check (how often Blender's event loop ran
    this timer)."""
    t0 = time.perf_counter()
    while True:
        if ticks is not None:
            ticks.append(time.perf_counter())
        if cond():
            return True
        if time.perf_counter() - t0 > timeout:
            return False
        yield interval


def max_gap(times):
    """The longest interval (s) between successive times; None for fewer than two."""
    return round(float(np.diff(times).max()), 3) if len(times) > 1 else None


def idle_timer_gap(seconds=2.0, interval=0.02):
    """Step: the longest interval between this timer's calls while nothing runs, for ``seconds``:
    how promptly Blender's event loop answers on this machine right now (the load)."""
    ticks = []
    yield from wait_until(lambda: False, seconds, interval, ticks)
    return max_gap(ticks)


class Screen:
    """Blender's first window, its largest 3D view and that view's sidebar (UI region)."""

    def __init__(self):
        wm = bpy.context.window_manager
        self.win = wm.windows[0]
        areas = [a for a in self.win.screen.areas if a.type == "VIEW_3D"]
        if not areas:
            raise RuntimeError("no 3D view in the window")
        self.area = max(areas, key=lambda a: a.width * a.height)
        self.space = self.area.spaces.active
        self.space.show_region_ui = True
        self.ui = [r for r in self.area.regions if r.type == "UI"][0]
        self.view = [r for r in self.area.regions if r.type == "WINDOW"][0]

    def override(self, region=None):
        """Context of the window, the 3D view and ``region`` (default: the sidebar), as a button has."""
        return bpy.context.temp_override(window=self.win, area=self.area, region=region or self.ui)

    def to_screen(self, x, y):
        """Window coordinates (origin bottom-left) -> X screen coordinates (top-left)."""
        return int(x), int(self.win.height - y)

    def region_to_screen(self, region, rx, ry):
        return self.to_screen(region.x + rx, region.y + ry)

    def box(self, obj):
        """X-screen box (x0, y0, x1, y1) of an area or region."""
        x0, y1 = self.to_screen(obj.x, obj.y)
        x1, y0 = self.to_screen(obj.x + obj.width, obj.y + obj.height)
        return x0, y0, x1, y1

    def park_pointer(self):
        """Pointer over the viewport (no tooltip over the sidebar; keys go to this window)."""
        move(*self.region_to_screen(self.view, self.view.width // 3, self.view.height // 2))

    def click(self, sx, sy):
        move(sx, sy)
        yield 0.1
        xdo("click", "1")

    def key(self, keys):
        """A real key press + release (XTEST), to the window under the pointer."""
        xdo("key", keys)

    def drag(self, at, dx, steps=8):
        """Step: press at ``at`` = (sx, sy), move ``dx`` px to the right in ``steps`` moves, release."""
        sx, sy = at
        move(sx, sy)
        yield 0.1
        xdo("mousedown", "1")
        for i in range(1, steps + 1):
            # no --sync: while a number field is dragged Blender grabs and warps the pointer, and
            # xdotool would wait (seconds) for a position it never reports
            xdo("mousemove", sx + dx * i // steps, sy)
            yield 0.03
        xdo("mouseup", "1")
        yield 0.2
        where_pointer()  # Blender may have warped it back (a number field's drag does)

    def wheel(self, down, clicks):
        """Wheel clicks over the sidebar's content (scrolls it)."""
        x, y = self.region_to_screen(self.ui, (self.ui.width - TAB_STRIP) // 2, self.ui.height // 2)
        xdo(*move_args(x, y), "click", "--repeat", clicks, "--delay", 15, 5 if down else 4)


# ------------------------------------------------------------------ finding a sidebar widget
def _probe(scr, rx, ry, copy, settle):
    wm = bpy.context.window_manager
    wm.clipboard = ""
    sx, sy = scr.region_to_screen(scr.ui, rx, ry)
    xdo(*move_args(sx, sy), "key", copy)
    yield settle
    return wm.clipboard


def find_widget(scr, match, copy=COPY, from_bottom=False, step=10, max_pages=20, settle=0.1):
    """Step: the X-screen point (sx, sy) of the first sidebar widget whose copied text satisfies
    ``match(text)``, searching from the top (or ``from_bottom``), the sidebar left scrolled so that
    it is visible; None if there is none. Each row of the sidebar's content is probed once (rows
    are tracked in view coordinates while the wheel scrolls); a hit is confirmed by a second,
    slower probe at the same point."""
    ui = scr.ui
    scr.wheel(from_bottom, 60)  # to the start of the search
    yield 0.4
    rx = (ui.width - TAB_STRIP) // 2
    rows = range(ui.height - step // 2, step // 2, -step)
    seen = set()
    for _page in range(max_pages):
        for ry in reversed(rows) if from_bottom else rows:
            row = round(ui.view2d.region_to_view(rx, ry)[1] / step)
            if row in seen:
                continue
            seen.add(row)
            text = yield from _probe(scr, rx, ry, copy, settle)
            if text and match(text):
                again = yield from _probe(scr, rx, ry, copy, 4 * settle)
                if again and match(again):
                    scr.found_text = again
                    return scr.region_to_screen(ui, rx, ry)
        top = ui.view2d.region_to_view(0, 0)[1]
        scr.wheel(not from_bottom, 5)
        yield 0.3
        if ui.view2d.region_to_view(0, 0)[1] == top:
            break  # the end of the sidebar
    return None


def resolve(full_path):
    """(owner, property name) of a full data path as Blender copies it
    (``bpy.data.scenes["Scene"].procanim.source_motion.steps``); read it with getattr."""
    m = re.match(r"""^bpy\.data\.(\w+)\[(?:"([^"]*)"|'([^']*)')\]\.(.+)$""", full_path.strip())
    if m is None:
        raise ValueError("not a full data path: %r" % full_path)
    coll, name, rest = m.group(1), m.group(2) if m.group(2) is not None else m.group(3), m.group(4)
    owner_path, _, prop = rest.rpartition(".")
    owner = getattr(bpy.data, coll)[name]
    return (owner.path_resolve(owner_path) if owner_path else owner), prop


# ------------------------------------------------------------------ operator probe
def operator_class(idname):
    """The registered Python class of operator ``idname`` ("procanim.adapt_terrain")."""
    mod, name = idname.split(".")
    return getattr(bpy.types, getattr(getattr(bpy.ops, mod), name).idname())


def _progress_of(op):
    """The operator's progress object (one with a ``fraction``), or None."""
    p = getattr(op, "_progress", None)
    if p is not None and hasattr(p, "fraction"):
        return p
    try:
        values = list(vars(op).values())
    except TypeError:
        return None
    return next((v for v in values if hasattr(v, "fraction") and hasattr(v, "cancel")), None)


class OperatorProbe:
    """Records an operator's run in the window: ``started`` (perf_counter at invoke/execute),
    ``samples`` [(t, fraction)] at each modal call, ``events`` [(t, type, value)], ``ended`` and
    ``result`` (the set it returned last: FINISHED or CANCELLED)."""

    def __init__(self, idname):
        self.idname = idname
        self.cls = operator_class(idname)
        self._saved = {}
        self._spied = None
        self.reset()

    def reset(self):
        self.started = self.ended = self.result = self.invoke_s = None
        self.how = None
        self.progress_found = False
        self.samples, self.events, self.reports = [], [], []

    def _end(self, ret):
        if ret and ({"FINISHED", "CANCELLED"} & set(ret)):
            self.ended, self.result = time.perf_counter(), set(ret)

    def install(self):
        probe, cls = self, self.cls
        orig = {n: getattr(cls, n, None) for n in ("invoke", "modal", "execute")}
        self._saved = {n: cls.__dict__.get(n) for n in orig}

        # Blender calls these with as many arguments as their code declares: keep the signatures.
        def invoke(self, context, event):
            probe.started, probe.how = time.perf_counter(), "invoke"
            ret = orig["invoke"](self, context, event)
            probe.invoke_s = round(time.perf_counter() - probe.started, 3)
            probe._end(ret)
            return ret

        def modal(self, context, event):
            t = time.perf_counter()
            probe.events.append((t, event.type, event.value))
            p = _progress_of(self)
            probe.progress_found = p is not None
            if p is not None:
                probe.samples.append((t, float(p.fraction)))
                probe._spy(p)
            ret = orig["modal"](self, context, event)
            probe._end(ret)
            return ret

        def execute(self, context):
            if probe.started is None:
                probe.started, probe.how = time.perf_counter(), "execute"
            ret = orig["execute"](self, context)
            probe._end(ret)
            return ret

        for name, fn in (("invoke", invoke), ("modal", modal), ("execute", execute)):
            if orig[name] is not None:
                setattr(cls, name, fn)
        return self

    def _spy(self, progress):
        """Record every call of the engine's progress callback (in the worker thread): when the
        engine reported, so gaps between reports and the report that saw the cancel are known."""
        if self._spied is not None or not callable(progress):
            return
        probe, cls = self, type(progress)
        orig, own = cls.__call__, cls.__dict__.get("__call__")

        def __call__(self, fraction):
            probe.reports.append((time.perf_counter(), fraction))
            return orig(self, fraction)

        try:
            cls.__call__ = __call__
        except TypeError:  # a built-in type: no spying, the other figures remain
            return
        self._spied = (cls, own)

    def reports_between(self, t0, t1):
        return [t for t, _f in self.reports if t0 <= t < t1]

    def uninstall(self):
        if self._spied is not None:
            cls, fn = self._spied
            if fn is not None:
                cls.__call__ = fn
            else:
                del cls.__call__
            self._spied = None
        for name, fn in self._saved.items():
            if fn is not None:
                setattr(self.cls, name, fn)
            elif name in self.cls.__dict__:
                delattr(self.cls, name)

    def percents_before(self, t):
        """The progress values (whole percent, as the operator hands them to wm.progress_update)
        seen at modal calls before ``t``, in order, repeats removed."""
        out = []
        for ts, f in self.samples:
            if ts < t and (not out or out[-1] != int(f * 100)):
                out.append(int(f * 100))
        return out

    def esc_seen(self):
        """perf_counter of the first ESC press the modal received, or None."""
        return next((t for t, typ, val in self.events if typ == "ESC" and val == "PRESS"), None)
