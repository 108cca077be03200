"""Input files for the batch tests, made with the public operators (never committed binaries):

* ``duck.blend`` — ProcAnim's duck ``Duck``;
* ``street.blend`` — ProcAnim's human ``Human``, three walking paths (``Straight``, ``Bend``, ``S``), a
  ground plane ``Ground`` and a mesh ``Rock`` (not a curve: a path walk along it must fail);
* ``meeting.blend`` — two humans facing each other, ``Host`` and ``Guest``, for handshakes;
* ``hills.blend`` — a floor ``Floor`` raised 0.12 m, for the adaptation of an imported motion;
* ``stand.bvh`` — a small BVH (legs, spine, head; CMU-style names, metres): the hips drift forward
  while the knees bend and straighten with the feet flat on the ground.

For the security tests (:func:`make_scripted`), two ducks whose files carry Python:

* ``scripted.blend`` — a text block registered as a module that leaves a marker file when it runs,
  and an empty ``Dial`` with drivers Blender evaluates without Python's auto-run: ``location.x =
  var * 2`` (a simple expression), ``location.y = max([var, 1.5]) * 1.5`` (Python, within the
  safe subset), ``var`` being the x scale (3) of the empty ``Knob``;
* ``python_rig.blend`` — a text block registered as a module that defines the driver function
  ``duck_lean`` (and leaves a marker), and a driver on the duck's ``lean`` property that calls it.
"""

from __future__ import annotations

import math
from pathlib import Path

import bpy
import harness
import numpy as np


def _save(path: Path) -> Path:
    assert bpy.ops.wm.save_as_mainfile(filepath=str(path), copy=True) == {"FINISHED"}
    return path


def add_curve(name: str, points, bezier: bool = False):
    cu = bpy.data.curves.new(name, "CURVE")
    cu.dimensions = "3D"
    if bezier:
        sp = cu.splines.new("BEZIER")
        sp.bezier_points.add(len(points) - 1)
        for p, co in zip(sp.bezier_points, points):
            p.co = co
            p.handle_left_type = p.handle_right_type = "AUTO"
    else:
        sp = cu.splines.new("POLY")
        sp.points.add(len(points) - 1)
        for p, co in zip(sp.points, points):
            p.co = (*co, 1.0)
    obj = bpy.data.objects.new(name, cu)
    bpy.context.collection.objects.link(obj)
    return obj


def add_plane(name: str, z: float, size: float = 40.0):
    h = size / 2
    me = bpy.data.meshes.new(name)
    me.from_pydata([(-h, -h, z), (h, -h, z), (h, h, z), (-h, h, z)], [], [(0, 1, 2, 3)])
    me.update()
    obj = bpy.data.objects.new(name, me)
    bpy.context.collection.objects.link(obj)
    return obj


def street(path: Path, length: float = 5.0) -> Path:
    """The street scene; ``length`` (m) of the straight path (the bench makes long walks)."""
    harness.reset_scene()
    assert bpy.ops.procanim.add_human(name="Human") == {"FINISHED"}
    add_curve("Straight", [(0.0, -0.2 * k * length, 0.0) for k in range(6)])
    arc = np.radians(np.linspace(0.0, 90.0, 7))
    add_curve("Bend", [(3.0 * (1 - math.cos(a)), -3.0 * math.sin(a), 0.0) for a in arc], bezier=True)
    y = np.linspace(0.0, -6.0, 61)
    add_curve("S", np.stack([0.8 * np.sin(2 * np.pi * -y / 6.0), y, np.zeros_like(y)], -1).tolist())
    add_plane("Ground", 0.0)
    rock = add_plane("Rock", 0.0, size=0.5)
    rock.location = (2.0, 2.0, 0.0)
    return _save(path)


def duck(path: Path) -> Path:
    harness.reset_scene()
    assert bpy.ops.procanim.add_duck(name="Duck") == {"FINISHED"}
    return _save(path)


def meeting(path: Path) -> Path:
    harness.reset_scene()
    for k, (name, height, yaw) in enumerate((("Host", 1.80, 0.0), ("Guest", 1.65, 180.0))):
        assert bpy.ops.procanim.add_human(name=name, height=height, location=(0.0, -0.9 * k, 0.0)) == {"FINISHED"}
        bpy.data.objects[name].rotation_euler[2] = math.radians(yaw)
    return _save(path)


def plaza(path: Path) -> Path:
    """Two humans head-on 6 m apart (``West`` walks ``EastLane``'s opposite, ``WestLane``), a third
    (``Post`` walker) passing beside a post, and a collection ``Posts`` holding the post mesh."""
    harness.reset_scene()
    for name, x0, x1, y in (("West", -3.0, 3.0, 0.0), ("East", 3.0, -3.0, 0.0), ("Passer", -3.0, 3.0, 3.0)):
        assert bpy.ops.procanim.add_human(name=name, location=(x0, y, 0.0)) == {"FINISHED"}
        add_curve(f"{name}Lane", [(x0, y, 0.0), (x1, y, 0.0)])
    post = add_plane("Post", 0.0, size=0.3)
    post.location = (0.0, 3.1, 0.0)
    posts = bpy.data.collections.new("Posts")
    bpy.context.scene.collection.children.link(posts)
    posts.objects.link(post)
    return _save(path)


def hills(path: Path) -> Path:
    harness.reset_scene()
    add_plane("Floor", 0.12)
    return _save(path)


# ------------------------------------------------------------------------------ a small BVH

# name, parent, offset (m; BVH axes: Y up, Z forward), end site offset or None
JOINTS = [
    ("Hips", None, (0.0, 0.0, 0.0), None),
    ("LeftUpLeg", "Hips", (0.1, -0.05, 0.0), None),
    ("LeftLeg", "LeftUpLeg", (0.0, -0.42, 0.0), None),
    ("LeftFoot", "LeftLeg", (0.0, -0.42, 0.0), None),
    ("LeftToeBase", "LeftFoot", (0.0, -0.06, 0.13), (0.0, 0.0, 0.07)),
    ("RightUpLeg", "Hips", (-0.1, -0.05, 0.0), None),
    ("RightLeg", "RightUpLeg", (0.0, -0.42, 0.0), None),
    ("RightFoot", "RightLeg", (0.0, -0.42, 0.0), None),
    ("RightToeBase", "RightFoot", (0.0, -0.06, 0.13), (0.0, 0.0, 0.07)),
    ("Spine", "Hips", (0.0, 0.12, 0.0), None),
    ("Neck", "Spine", (0.0, 0.4, 0.0), None),
    ("Head", "Neck", (0.0, 0.1, 0.0), (0.0, 0.18, 0.0)),
]


def _hierarchy(name: str, depth: int) -> list[str]:
    _n, parent, offset, end = next(j for j in JOINTS if j[0] == name)
    pad = "  " * depth
    head = f"{pad}ROOT {name}" if parent is None else f"{pad}JOINT {name}"
    channels = "6 Xposition Yposition Zposition" if parent is None else "3"
    lines = [head, f"{pad}{{", f"{pad}  OFFSET {' '.join(f'{v:.4f}' for v in offset)}"]
    lines.append(f"{pad}  CHANNELS {channels} Zrotation Xrotation Yrotation")
    for child in (j[0] for j in JOINTS if j[1] == name):
        lines += _hierarchy(child, depth + 1)
    if end is not None:
        lines += [
            f"{pad}  End Site",
            f"{pad}  {{",
            f"{pad}    OFFSET {' '.join(f'{v:.4f}' for v in end)}",
            f"{pad}  }}",
        ]
    return lines + [f"{pad}}}"]


def _order(name: str = "Hips") -> list[str]:
    return [name] + [n for child in (j[0] for j in JOINTS if j[1] == name) for n in _order(child)]


def bvh(path: Path, frames: int = 24) -> Path:
    """Knees bend up to 10° and straighten (the ankles undo the knees: feet flat) while the hips
    drift forward 1 cm a frame and sway; the spine and head nod a little."""
    rows = []
    for f in range(frames):
        bend = 10.0 * math.sin(math.pi * f / (frames - 1))
        drop = 0.84 * (1.0 - math.cos(math.radians(bend / 2)))
        rotations = {"LeftUpLeg": -bend / 2, "LeftLeg": bend, "LeftFoot": -bend / 2}
        rotations.update({k.replace("Left", "Right"): v for k, v in rotations.items()})
        values = [0.01 * math.sin(f / 2), 1.0 - drop, 0.01 * f]
        for name in _order():
            nod = 2.0 * math.sin(f / 4) if name in ("Spine", "Neck", "Head") else 0.0
            values += [0.0, rotations.get(name, nod), 3.0 * math.sin(f / 3) if name == "Hips" else 0.0]
        rows.append(" ".join(f"{v:.6f}" for v in values))
    text = "\n".join(["HIERARCHY", *_hierarchy("Hips", 0), "MOTION", f"Frames: {frames}", "Frame Time: 0.0416667"])
    path.write_text(text + "\n" + "\n".join(rows) + "\n")
    return path


def make_all(folder: Path) -> dict[str, Path]:
    return {
        "duck": duck(folder / "duck.blend"),
        "street": street(folder / "street.blend"),
        "meeting": meeting(folder / "meeting.blend"),
        "hills": hills(folder / "hills.blend"),
        "plaza": plaza(folder / "plaza.blend"),
        "bvh": bvh(folder / "stand.bvh"),
    }


# ------------------------------------------------------------------------------ files that carry Python

MARKER_SCRIPT = """
import os
os.makedirs({markers!r}, exist_ok=True)
open(os.path.join({markers!r}, "{stem}-%d" % os.getpid()), "w").close()
"""
RIG_FUNCTIONS = """
import bpy
bpy.app.driver_namespace["duck_lean"] = lambda value: 0.5 * value
"""
DIAL_DRIVERS = (("var * 2", 6.0), ("max([var, 1.5]) * 1.5", 4.5))  # (expression, value with var = 3)


def _register_text(name: str, body: str) -> None:
    text = bpy.data.texts.new(name)
    text.write(body)
    text.use_module = True


def _driver(owner, data_path: str, index: int, expression: str, source, source_path: str) -> None:
    driver = owner.driver_add(data_path, index).driver if index >= 0 else owner.driver_add(data_path).driver
    driver.type = "SCRIPTED"
    var = driver.variables.new()
    var.name, var.type = "var", "SINGLE_PROP"
    var.targets[0].id = source
    var.targets[0].data_path = source_path
    driver.expression = expression


def scripted(path: Path, markers: Path) -> Path:
    harness.reset_scene()
    assert bpy.ops.procanim.add_duck(name="Duck") == {"FINISHED"}
    _register_text("on_load.py", MARKER_SCRIPT.format(markers=str(markers), stem=path.stem))
    knob = bpy.data.objects.new("Knob", None)
    dial = bpy.data.objects.new("Dial", None)
    for obj in (knob, dial):
        bpy.context.collection.objects.link(obj)
    knob.scale.x = 3.0
    for axis, (expression, _value) in enumerate(DIAL_DRIVERS):
        _driver(dial, "location", axis, expression, knob, "scale[0]")
    return _save(path)


def python_rig(path: Path, markers: Path) -> Path:
    harness.reset_scene()
    assert bpy.ops.procanim.add_duck(name="Duck") == {"FINISHED"}
    body = MARKER_SCRIPT.format(markers=str(markers), stem=path.stem) + RIG_FUNCTIONS
    _register_text("rig_functions.py", body)
    duck = bpy.data.objects["Duck"]
    duck["lean"] = 0.0
    _driver(duck, '["lean"]', -1, "duck_lean(var)", duck, "scale[0]")
    return _save(path)


def make_scripted(folder: Path) -> dict[str, Path]:
    """The two files that carry Python, and the folder their scripts leave markers in."""
    markers = folder / "markers"
    return {
        "scripted": scripted(folder / "scripted.blend", markers),
        "python_rig": python_rig(folder / "python_rig.blend", markers),
        "markers": markers,
    }
