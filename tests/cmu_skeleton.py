"""The skeleton of the CMU motion capture database as its BVH files name and place it, for the terrain
tests (engine and Blender): legs splayed in the rest pose and the ankle joint only 0.44 units above
the ball — lower than a shin's collision box is thick.

``JOINTS``: ``(name, parent, offset)`` in BVH units (1/0.45 inch, :data:`UNIT_M` metres; Y up, Z
forward), parents first; ``None`` names an end site. Only the stdlib: the Blender tests import this
file too.
"""

from __future__ import annotations

UNIT_M = 0.0254 / 0.45

JOINTS = [
    ("Hips", None, (0, 0, 0)),
    ("LHipJoint", "Hips", (0, 0, 0)), ("LeftUpLeg", "LHipJoint", (1.36, -1.79, 0.84)),
    ("LeftLeg", "LeftUpLeg", (2.45, -6.73, 0)), ("LeftFoot", "LeftLeg", (2.56, -7.04, 0)),
    ("LeftToeBase", "LeftFoot", (0.16, -0.43, 2.32)), (None, "LeftToeBase", (0, 0, 1.19)),
    ("RHipJoint", "Hips", (0, 0, 0)), ("RightUpLeg", "RHipJoint", (-1.36, -1.79, 0.84)),
    ("RightLeg", "RightUpLeg", (-2.45, -6.73, 0)), ("RightFoot", "RightLeg", (-2.56, -7.04, 0)),
    ("RightToeBase", "RightFoot", (-0.16, -0.43, 2.32)), (None, "RightToeBase", (0, 0, 1.19)),
    ("LowerBack", "Hips", (0, 0, 0)), ("Spine", "LowerBack", (0.03, 2.04, -0.19)),
    ("Spine1", "Spine", (0.06, 2.05, -0.04)), ("Neck", "Spine1", (0, 0, 0)), ("Neck1", "Neck", (-0.05, 1.75, 0.17)),
    ("Head", "Neck1", (0.10, 1.76, -0.12)), (None, "Head", (0.03, 1.76, -0.04)),
    ("LeftShoulder", "Spine1", (0, 0, 0)), ("LeftArm", "LeftShoulder", (3.36, 1.20, -0.31)),
    ("LeftForeArm", "LeftArm", (4.98, 0, 0)), ("LeftHand", "LeftForeArm", (3.48, 0, 0)),
    (None, "LeftHand", (1.4, 0, 0)),
    ("RightShoulder", "Spine1", (0, 0, 0)), ("RightArm", "RightShoulder", (-3.36, 1.20, -0.31)),
    ("RightForeArm", "RightArm", (-4.98, 0, 0)), ("RightHand", "RightForeArm", (-3.48, 0, 0)),
    (None, "RightHand", (-1.4, 0, 0)),
]


def positions() -> dict:
    """Rest position of every joint ``{name: (x, y, z)}`` in BVH units, the hips at the origin; end
    sites as ``"<parent>_end"``."""
    out: dict = {}
    for name, parent, (x, y, z) in JOINTS:
        px, py, pz = out[parent] if parent else (0.0, 0.0, 0.0)
        out[name if name else f"{parent}_end"] = (px + x, py + y, pz + z)
    return out


def bvh_text() -> str:
    """The skeleton as a BVH file (ZYX Euler channels, the hips also position), standing still for two
    frames at 24 fps with its lowest point at height 0."""
    children: dict = {}
    for name, parent, offset in JOINTS:
        children.setdefault(parent, []).append((name, offset))

    def block(name, offset, depth):
        pad = "  " * depth
        off = f"{pad}  OFFSET {offset[0]:g} {offset[1]:g} {offset[2]:g}"
        if name is None:
            return [f"{pad}End Site", f"{pad}{{", off, f"{pad}}}"]
        position = "Xposition Yposition Zposition " if depth == 0 else ""
        lines = [f"{pad}{'ROOT' if depth == 0 else 'JOINT'} {name}", f"{pad}{{", off,
                 f"{pad}  CHANNELS {6 if depth == 0 else 3} {position}Zrotation Yrotation Xrotation"]
        for child, child_offset in children.get(name, []):
            lines += block(child, child_offset, depth + 1)
        return lines + [f"{pad}}}"]

    lowest = min(p[1] for p in positions().values())
    channels = 6 + 3 * (sum(1 for name, _p, _o in JOINTS if name) - 1)
    frame = " ".join(["0", f"{-lowest:g}", "0"] + ["0"] * (channels - 3))
    lines = ["HIERARCHY", *block("Hips", (0, 0, 0), 0), "MOTION", "Frames: 2", "Frame Time: 0.0416667", frame, frame]
    return "\n".join(lines) + "\n"
