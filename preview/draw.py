"""Drawing the previews in every 3D view: a thin layer over Blender's ``gpu`` and ``blf``.

:func:`view_shapes` and :func:`status_lines` decide what is drawn (plain data, testable without a
GPU); :func:`draw_view` (``POST_VIEW``) and :func:`draw_pixel` (``POST_PIXEL``) hand it to the GPU.
The running previews' draw handlers (``runtime.py``) call them with the sessions to draw.
What is drawn, at the scene's current frame, for every running preview:

* the ghost: each drawn bone as a line from head to tail (on top of the scene);
* the pelvis path over the whole clip, and a cross where the pelvis is now;
* the foot plants as footprints (heel → tip, a cross at the ball), bright while in use;
* a generator's overlays: a cross at each grip point and a diamond where two grips meet (the
  handshake);
* a status line per preview: generating… / ready in N ms / the error message.
"""

from __future__ import annotations

from typing import Any

import blf
import bpy
import gpu
import numpy as np
from gpu_extras.batch import batch_for_shader

GHOST = (1.0, 0.55, 0.1, 0.95)  # bones
GHOST_STALE = (0.6, 0.6, 0.6, 0.6)  # bones while the settings are invalid
PATH = (0.3, 0.8, 1.0, 0.7)  # pelvis path
PLANT = (0.2, 1.0, 0.4, 0.95)  # a plant in use at this frame
PLANT_IDLE = (0.2, 0.8, 0.4, 0.6)
GRIP = (1.0, 0.2, 0.8, 1.0)
STATUS = {"BUSY": (1.0, 0.85, 0.3, 1.0), "ERROR": (1.0, 0.35, 0.3, 1.0), "READY": (0.7, 1.0, 0.7, 1.0),
          "IDLE": (0.8, 0.8, 0.8, 1.0)}
BONE_WIDTH = 3.0  # px
LINE_WIDTH = 1.5
FONT_SIZE = 13
MARGIN = (60, 40)  # px from the region's bottom-left corner (past the toolbar)


def _cross(p: np.ndarray, size: float) -> np.ndarray:
    """Three axis lines through ``p`` as LINES vertices ``(6, 3)``."""
    d = np.eye(3) * size
    return np.stack([p - d[0], p + d[0], p - d[1], p + d[1], p - d[2], p + d[2]])


def _size(ghost) -> float:
    """A mark size from the character's size: a tenth of its drawn extent."""
    extent = np.ptp(np.concatenate((ghost.heads[0], ghost.tails[0])), axis=0).max()
    return max(float(extent) * 0.05, 1e-3)


def ghost_shapes(ghost, frame: float, stale: bool) -> list[tuple]:
    """``(primitive, color, width, vertices (K, 3))`` of one ghost at ``frame``."""
    heads, tails = ghost.bones_at(frame)
    bones = np.empty((2 * len(heads), 3))
    bones[0::2], bones[1::2] = heads, tails
    size = _size(ghost)
    shapes = [("LINES", GHOST_STALE if stale else GHOST, BONE_WIDTH, bones)]
    if len(ghost.pelvis) > 1:
        shapes.append(("LINE_STRIP", PATH, LINE_WIDTH, ghost.pelvis))
        shapes.append(("LINES", PATH, LINE_WIDTH, _cross(ghost.pelvis[ghost.index(frame)], size)))
    for active in (False, True):
        plants = [p for p in ghost.plants if (p.first <= frame <= p.last) == active]
        if plants:
            marks = np.concatenate([np.vstack(([p.heel, p.tip], _cross(p.ball, 0.5 * size))) for p in plants])
            shapes.append(("LINES", PLANT if active else PLANT_IDLE, LINE_WIDTH * (2 if active else 1), marks))
    if ghost.grip is not None:
        shapes.append(("LINES", GRIP, LINE_WIDTH * 2, _cross(ghost.grip[ghost.index(frame)], 0.6 * size)))
    if ghost.meeting is not None:
        d = np.eye(3) * 0.4 * size
        m = ghost.meeting
        diamond = np.stack([m + d[0], m + d[1], m + d[1], m - d[0], m - d[0], m - d[1], m - d[1], m + d[0]])
        shapes.append(("LINES", GRIP, LINE_WIDTH, diamond))
    return shapes


def view_shapes(sessions, frame: float) -> list[tuple]:
    """Everything :func:`draw_view` draws for ``sessions`` at ``frame``."""
    out = []
    for session in sessions:
        if session.result is None:
            continue
        for ghost in session.result.ghosts:
            out += ghost_shapes(ghost, frame, stale=bool(session.error))
    return out


def status_lines(sessions) -> list[tuple[str, tuple]]:
    """``(text, color)`` of each preview's status line, bottom to top."""
    out = []
    for session in sessions:
        kind, text = session.status()
        out.append((text, STATUS[kind]))
    return out


# ----------------------------------------------------------------------------- the GPU side


def _frame() -> float:
    scene = bpy.context.scene
    return scene.frame_current + scene.frame_subframe


def draw_view(sessions) -> bool:
    """The ghosts, paths, plants and grips of ``sessions`` (inside a POST_VIEW handler); True when
    something was drawn."""
    shapes = view_shapes(sessions, _frame())
    if not shapes:
        return False
    region = bpy.context.region
    shader: Any = gpu.shader.from_builtin("POLYLINE_UNIFORM_COLOR")
    gpu.state.blend_set("ALPHA")
    gpu.state.depth_test_set("NONE")
    shader.bind()
    shader.uniform_float("viewportSize", (region.width, region.height))
    for primitive, color, width, verts in shapes:
        shader.uniform_float("lineWidth", width)
        shader.uniform_float("color", color)
        batch_for_shader(shader, primitive, {"pos": verts.astype(np.float32)}).draw(shader)
    gpu.state.blend_set("NONE")
    return True


def draw_pixel(sessions) -> None:
    """One status line per session (inside a POST_PIXEL handler)."""
    scale = bpy.context.preferences.system.ui_scale
    font = 0
    blf.size(font, FONT_SIZE * scale)
    x, y = MARGIN[0] * scale, MARGIN[1] * scale
    for i, (text, color) in enumerate(status_lines(sessions)):
        blf.color(font, *color)
        blf.position(font, x, y + i * (FONT_SIZE + 6) * scale, 0)
        blf.draw(font, text)
