"""Templates of ProcAnim's demo rigs (a human and a duck): bones and a simple body mesh.

Pure data and geometry (no motion): the ``procanim.add_human`` / ``procanim.add_duck`` operators
build armatures from :func:`human_template` / :func:`duck_template`, and engine tests use
:func:`human_skeleton` / :func:`duck_skeleton`, which give the same rest matrices Blender gets
(each bone's full matrix is set in edit mode, so its roll is fixed by the template).

Both stand on z = 0, face −Y, +X is the character's left; metres.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .rig_roles import RigMap, detect
from .skeleton import Skeleton


@dataclass(frozen=True)
class BoneSpec:
    """One bone: head/tail (m, armature space), the direction its local +Z should lean toward,
    parent name, and the radius of the body part drawn around it (0 = none)."""

    name: str
    parent: str | None
    head: tuple
    tail: tuple
    z_hint: tuple = (0.0, -1.0, 0.0)
    radius: float = 0.0
    material: str = "body"

    def matrix(self) -> np.ndarray:
        """Rest matrix (armature space): +Y along the bone, +Z toward ``z_hint``."""
        h, t = np.asarray(self.head, float), np.asarray(self.tail, float)
        y = t - h
        y /= np.linalg.norm(y)
        x = np.cross(y, np.asarray(self.z_hint, float))
        if np.linalg.norm(x) < 1e-6:
            x = np.cross(y, np.array([0.0, 0.0, 1.0]) if abs(y[2]) < 0.9 else np.array([0.0, -1.0, 0.0]))
        x /= np.linalg.norm(x)
        z = np.cross(x, y)
        m = np.eye(4)
        m[:3, 0], m[:3, 1], m[:3, 2], m[:3, 3] = x, y, z, h
        return m

    @property
    def length(self) -> float:
        return float(np.linalg.norm(np.subtract(self.tail, self.head)))


@dataclass(frozen=True)
class RigTemplate:
    name: str
    bones: tuple
    materials: dict  # material name -> RGBA viewport colour

    def skeleton(self) -> Skeleton:
        return Skeleton.from_bones(
            [{"name": b.name, "parent": b.parent, "matrix_local": b.matrix(), "length": b.length} for b in self.bones]
        )

    def rigmap(self) -> RigMap:
        return detect([b.name for b in self.bones], {b.name: b.parent for b in self.bones}, rig_name=self.name)


def _mirror(specs: list[BoneSpec]) -> list[BoneSpec]:
    out = []
    for b in specs:
        out.append(b)
        if b.name.endswith(".L"):
            m = (-1.0, 1.0, 1.0)
            out.append(
                BoneSpec(
                    b.name[:-2] + ".R",
                    b.parent[:-2] + ".R" if b.parent and b.parent.endswith(".L") else b.parent,
                    tuple(np.multiply(b.head, m)),
                    tuple(np.multiply(b.tail, m)),
                    tuple(np.multiply(b.z_hint, m)),
                    b.radius,
                    b.material,
                )
            )
    return out


def human_template(height: float = 1.75) -> RigTemplate:
    """ProcAnim's human: 1.75 m by default, A-pose arms, slightly bent knees and elbows (they give
    IK its bend direction), roles complete for walking and handshakes."""
    s = height / 1.75

    def p(x, y, z):
        return (x * s, y * s, z * s)

    fwd, up = (0.0, -1.0, 0.0), (0.0, 0.0, 1.0)
    bones = [
        BoneSpec("root", None, p(0, 0, 0), p(0, 0.25, 0), up),
        BoneSpec("hips", "root", p(0, 0, 0.95), p(0, 0, 1.07), fwd, 0.13 * s),
        BoneSpec("spine", "hips", p(0, 0, 1.07), p(0, 0.01, 1.25), fwd, 0.12 * s),
        BoneSpec("chest", "spine", p(0, 0.01, 1.25), p(0, 0.0, 1.45), fwd, 0.14 * s),
        BoneSpec("neck", "chest", p(0, 0.0, 1.45), p(0, -0.01, 1.55), fwd, 0.05 * s),
        BoneSpec("head", "neck", p(0, -0.01, 1.55), p(0, -0.01, 1.75), fwd, 0.10 * s, "skin"),
        BoneSpec("clavicle.L", "chest", p(0.02, -0.01, 1.42), p(0.17, 0.01, 1.43), up, 0.04 * s),
        BoneSpec("upper_arm.L", "clavicle.L", p(0.18, 0.01, 1.43), p(0.39, 0.03, 1.22), fwd, 0.045 * s),
        BoneSpec("forearm.L", "upper_arm.L", p(0.39, 0.03, 1.22), p(0.56, -0.02, 1.02), fwd, 0.04 * s, "skin"),
        BoneSpec("hand.L", "forearm.L", p(0.56, -0.02, 1.02), p(0.62, -0.04, 0.94), fwd, 0.035 * s, "skin"),
        BoneSpec("thigh.L", "hips", p(0.10, 0.0, 0.93), p(0.10, -0.015, 0.51), fwd, 0.07 * s, "legs"),
        BoneSpec("shin.L", "thigh.L", p(0.10, -0.015, 0.51), p(0.10, 0.0, 0.09), fwd, 0.055 * s, "legs"),
        BoneSpec("foot.L", "shin.L", p(0.10, 0.0, 0.09), p(0.10, -0.13, 0.03), up, 0.04 * s, "shoes"),
        BoneSpec("toe.L", "foot.L", p(0.10, -0.13, 0.03), p(0.10, -0.20, 0.03), up, 0.03 * s, "shoes"),
    ]
    return RigTemplate(
        "Human",
        tuple(_mirror(bones)),
        {
            "body": (0.25, 0.45, 0.75, 1.0),
            "skin": (0.93, 0.76, 0.62, 1.0),
            "legs": (0.2, 0.22, 0.3, 1.0),
            "shoes": (0.12, 0.1, 0.1, 1.0),
        },
    )


def duck_template(height: float = 0.5) -> RigTemplate:
    """ProcAnim's duck: 0.5 m tall by default; body, neck, head, tail, and bent bird legs
    (thigh → shin → foot → toe, the knee forward) with flat webbed feet."""
    s = height / 0.5

    def p(x, y, z):
        return (x * s, y * s, z * s)

    fwd, up = (0.0, -1.0, 0.0), (0.0, 0.0, 1.0)
    bones = [
        BoneSpec("root", None, p(0, 0, 0), p(0, 0.1, 0), up),
        BoneSpec("hips", "root", p(0, 0.09, 0.24), p(0, -0.09, 0.26), up, 0.11 * s),
        BoneSpec("tail", "hips", p(0, 0.09, 0.24), p(0, 0.17, 0.29), up, 0.04 * s),
        BoneSpec("neck", "hips", p(0, -0.09, 0.28), p(0, -0.11, 0.39), fwd, 0.045 * s),
        BoneSpec("head", "neck", p(0, -0.11, 0.39), p(0, -0.13, 0.47), fwd, 0.055 * s, "skin"),
        BoneSpec("thigh.L", "hips", p(0.055, 0.0, 0.17), p(0.055, -0.05, 0.105), fwd, 0.035 * s),
        BoneSpec("shin.L", "thigh.L", p(0.055, -0.05, 0.105), p(0.055, 0.0, 0.035), fwd, 0.015 * s, "feet"),
        BoneSpec("foot.L", "shin.L", p(0.055, 0.0, 0.035), p(0.055, -0.05, 0.008), up, 0.012 * s, "feet"),
        BoneSpec("toe.L", "foot.L", p(0.055, -0.05, 0.008), p(0.055, -0.10, 0.008), up, 0.02 * s, "feet"),
    ]
    return RigTemplate(
        "Duck",
        tuple(_mirror(bones)),
        {
            "body": (0.95, 0.85, 0.25, 1.0),
            "skin": (0.2, 0.5, 0.25, 1.0),
            "feet": (0.95, 0.5, 0.1, 1.0),
        },
    )


def human_skeleton(height: float = 1.75) -> tuple[Skeleton, RigMap]:
    t = human_template(height)
    return t.skeleton(), t.rigmap()


def duck_skeleton(height: float = 0.5) -> tuple[Skeleton, RigMap]:
    t = duck_template(height)
    return t.skeleton(), t.rigmap()


def body_mesh(template: RigTemplate, rings: int = 6, segments: int = 10):
    """A low-poly ellipsoid around every bone with a radius, for renders.

    Returns ``(vertices (V,3), faces list of vertex-index tuples, groups (V,) bone name per vertex,
    face_materials list of material names)``; each vertex belongs to its bone's group only.
    """
    verts, faces, groups, mats = [], [], [], []
    for b in template.bones:
        if b.radius <= 0:
            continue
        m = b.matrix()
        half = 0.5 * b.length
        centre = np.asarray(b.head) + m[:3, 1] * half
        ry = half + 0.3 * b.radius
        base = len(verts)
        # poles plus rings of an ellipsoid whose long axis is the bone
        verts.append(centre - m[:3, 1] * ry)
        for i in range(1, rings):
            phi = np.pi * i / rings
            for j in range(segments):
                th = 2 * np.pi * j / segments
                local = np.array(
                    [b.radius * np.sin(phi) * np.cos(th), -ry * np.cos(phi), b.radius * np.sin(phi) * np.sin(th)]
                )
                verts.append(centre + m[:3, :3] @ local)
        verts.append(centre + m[:3, 1] * ry)
        top = len(verts) - 1
        for j in range(segments):
            j2 = (j + 1) % segments
            faces.append((base, base + 1 + j2, base + 1 + j))
            for i in range(rings - 2):
                a, c = base + 1 + i * segments, base + 1 + (i + 1) * segments
                faces.append((a + j, a + j2, c + j2, c + j))
            last = base + 1 + (rings - 2) * segments
            faces.append((last + j, last + j2, top))
        n_new = len(verts) - base
        groups += [b.name] * n_new
        mats += [b.material] * (len(faces) - len(mats))
    return np.array(verts), faces, groups, mats
