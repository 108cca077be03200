"""The deform skeleton of a control rig: the bones the engine animates, in the hierarchy they move in.

On a generated Rigify rig the ``ORG-`` bones are the metarig's skeleton (same names after the
prefix, same rest pose); constraints make them follow the controls and the ``DEF-`` bones follow
them. CloudRig's "Original Bones" (``Thigh.L``, ``Spine1`` …) play the same part; which bones they
are is the rig's control map's (:mod:`.maps`), below called ``ORG-`` bones for short. Their parents
in the armature, though, are often control or mechanism bones (``ORG-spine.001`` hangs under
``tweak_spine.001`` … ``torso``), so the engine could not pose them as a chain. This module
rebuilds the chain: each ``ORG-`` bone's *deform parent* is found by these rules, in order:

1. the nearest ancestor in the armature that is an ``ORG-`` bone (a ``DEF-x`` bone stands for
   ``ORG-x`` when that exists);
2. none, when the bone's own ``DEF-`` copy hangs from the rig's root (a chain start such as the
   human's pelvis or the bird's hips);
3. the ``ORG-`` bone whose *driver* (the bone it copies, else its parent) this bone's evaluation
   reads nearest (through parents and constraint targets): the bird's tail bones, which Rigify
   points toward the body, hang from the hips this way;
4. the ``ORG-`` bone whose tail is at this bone's head (a connected spine);
5. the ``ORG-`` bone whose head is at this bone's head;
6. none.

Bones with no deform parent hang from the rig's root bone (``root``), which is the skeleton's root
(root motion keyed on it moves everything, as the rig's own root control does). Rules 3–5 never
make a cycle. The result is a plain :class:`Skeleton` of ``root`` + every ``ORG-`` bone.
"""

from __future__ import annotations

import numpy as np

from .. import transforms as tf
from ..clip import Clip
from ..skeleton import Skeleton
from ..transforms import affine_inverse
from .parenting import mul
from .rig import ControlRig


def is_generated_rigify(rig: ControlRig) -> bool:
    """A rig Rigify generated: it has Rigify's rig id, a ``root`` bone and ``ORG-``/``DEF-`` bones."""
    return bool(rig.rig_id) and rig.has("root") and any(n.startswith("ORG-") for n in rig.names)


def _standing_for(rig: ControlRig, segments: bool) -> dict[str, str]:
    """Deform (``DEF-``) bone → the ``ORG-`` bone it rides on, by the map's pairing of names (with
    ``segments``: a limb's second segment ``DEF-thigh.L.001`` too; else same names only)."""
    skeleton, family = set(rig.skeleton_names or ()), rig.family
    out = {}
    for name in rig.names:
        org = family.skeleton_bone_of(name, skeleton)
        if org is not None and (segments or org[len(family.skeleton_prefix) :] == name[len(family.deform_prefix) :]):
            out[name] = org
    return out


def _deform_ancestor(rig: ControlRig, start: int, own: str, stands: dict[str, str]) -> int | None:
    """Nearest ancestor of bone ``start`` that is (or stands for) an ORG bone other than ``own``."""
    p = int(rig.parents[start])
    while p >= 0:
        name = rig.names[p]
        cand = name if rig.in_skeleton(p) else stands.get(name)
        if cand is not None and cand != own and rig.has(cand):
            return rig.index(cand)
        p = int(rig.parents[p])
    return None


def deform_parents(rig: ControlRig, tolerance: float = 1e-4) -> dict[str, str | None]:
    """ORG bone → its deform parent (an ORG bone name, or None for a chain start)."""
    orgs = [i for i in range(len(rig.names)) if rig.in_skeleton(i)]
    stands = _standing_for(rig, segments=False)
    own_deform: dict[str, str] = {}
    for deform_name, org in _standing_for(rig, segments=True).items():
        own_deform.setdefault(org, deform_name)
    scale = float(np.ptp(rig.heads, axis=0).max()) or 1.0
    tol = tolerance * scale
    out: dict[str, str | None] = {}
    pending = []
    for i in orgs:
        name = rig.names[i]
        anc = _deform_ancestor(rig, i, name, stands)
        if anc is not None:
            out[name] = rig.names[anc]
            continue
        own_def = rig.get(own_deform.get(name, ""))
        if own_def >= 0:
            p = int(rig.parents[own_def])
            if p < 0 or rig.names[p] == rig.root_name:
                out[name] = None
                continue
        pending.append(i)
    drivers = {}
    for j in orgs:
        drivers.setdefault(_driver(rig, j), j)
    for i in list(pending):
        j = _nearest_driven(rig, i, drivers)
        if j is not None and not _would_cycle(out, rig.names[j], rig.names[i]):
            out[rig.names[i]] = rig.names[j]
            pending.remove(i)
    heads, tails = rig.heads, rig.tails
    for rule_points in (tails, heads):
        for i in list(pending):
            name = rig.names[i]
            near = [j for j in orgs if j != i and np.linalg.norm(rule_points[j] - heads[i]) < tol]
            near = [j for j in near if not _would_cycle(out, rig.names[j], name)]
            if near:
                out[name] = rig.names[min(near, key=lambda j: np.linalg.norm(rule_points[j] - heads[i]))]
                pending.remove(i)
    for i in pending:
        out[rig.names[i]] = None
    return out


def _driver(rig: ControlRig, i: int) -> int:
    """The bone ``i`` copies (its last active Copy Transforms target), else its parent."""
    copies = [c.target for c in rig.constraints[i] if c.kind == "COPY_TRANSFORMS" and c.influence > 0 and c.target >= 0]
    return copies[-1] if copies else int(rig.parents[i])


def _nearest_driven(rig: ControlRig, i: int, drivers: dict[int, int], depth: int = 12) -> int | None:
    """Breadth-first over what bone ``i``'s evaluation reads: the first bone that drives another
    ORG bone, and that ORG bone."""
    own = _driver(rig, i)
    frontier, seen = [i], {i}
    for _ in range(depth):
        nxt = []
        for b in frontier:
            reads = [int(rig.parents[b])] + [c.target for c in rig.constraints[b] if c.influence > 0]
            for r in reads:
                if r < 0 or r in seen:
                    continue
                seen.add(r)
                j = drivers.get(r)
                if j is not None and j != i and r != own:
                    return j
                nxt.append(r)
        frontier = nxt
    return None


def _would_cycle(parents: dict[str, str | None], candidate: str, child: str) -> bool:
    seen = set()
    cur: str | None = candidate
    while cur is not None and cur not in seen:
        if cur == child:
            return True
        seen.add(cur)
        cur = parents.get(cur)
    return False


def deform_skeleton(rig: ControlRig) -> Skeleton:
    """The root bone and every ``ORG-`` bone of a generated rig, parented by :func:`deform_parents`.

    A bone that meets its deform parent by its tail (Rigify points the bird's tail bones toward
    the body) is turned end for end — head at its tail, X and Y reversed — so that it pivots where
    the rig bends it; :func:`rest_offsets` gives the fixed transform back to the rig's bone.
    Inheritance flags are Blender's defaults (the engine's FK).
    """
    parents = deform_parents(rig)
    root = rig.root_name
    order = _parents_first(parents, root)
    rest: dict[str, np.ndarray] = {}
    bones = []
    for name in order:
        i = rig.index(name)
        parent = None if name == root else (parents.get(name) or root)
        m = rig.matrix_local[i]
        if parent is not None and parent != root:
            m = _turned(m, float(rig.lengths[i]), rest[parent], float(rig.lengths[rig.index(parent)]))
        rest[name] = m
        bones.append({"name": name, "parent": parent, "matrix_local": m, "length": float(rig.lengths[i])})
    return Skeleton.from_bones(bones)


def _parents_first(parents: dict[str, str | None], root: str) -> list[str]:
    """``root`` then every ORG bone, each after its deform parent."""
    children: dict[str, list[str]] = {}
    for name, parent in parents.items():
        children.setdefault(parent or root, []).append(name)
    order, stack = [], [root]
    while stack:
        name = stack.pop()
        order.append(name)
        stack.extend(reversed(children.get(name, [])))
    return order


def _ends(m: np.ndarray, length: float) -> tuple[np.ndarray, np.ndarray]:
    return m[:3, 3], m[:3, 3] + m[:3, 1] * length


def _turned(m: np.ndarray, length: float, parent: np.ndarray, parent_length: float) -> np.ndarray:
    """``m`` turned end for end when its tail, not its head, is where it meets its parent."""
    head, tail = _ends(m, length)
    meets = _ends(parent, parent_length)
    tol = 1e-4 * max(length, parent_length, 1e-3)
    if min(np.linalg.norm(head - p) for p in meets) < tol:
        return m
    if min(np.linalg.norm(tail - p) for p in meets) < tol:
        flip = np.diag([-1.0, -1.0, 1.0, 1.0])
        flip[1, 3] = length
        return m @ flip
    return m


def rest_offsets(rig: ControlRig, skeleton: Skeleton) -> dict[int, np.ndarray]:
    """Skeleton bone index → ``skeleton_rest⁻¹ · rig_rest`` for the bones turned end for end (the
    rig bone's pose is the skeleton bone's pose times this)."""
    own = rig.matrix_local[[rig.index(n) for n in skeleton.names]]
    offsets = affine_inverse(skeleton.matrix_local) @ own
    moved = np.abs(offsets - np.eye(4)).max(axis=(1, 2)) > 1e-9
    return {int(k): offsets[k] for k in np.nonzero(moved)[0]}


def rig_pose(rig: ControlRig, skeleton: Skeleton, intended: np.ndarray) -> np.ndarray:
    """The rig bones' intended matrices ``(F, B, 4, 4)`` (skeleton order) from the skeleton's."""
    out = np.array(intended, copy=True)
    for k, offset in rest_offsets(rig, skeleton).items():
        out[:, k] = mul(intended[:, k], offset)
    return out


def deform_clip(rig: ControlRig, skeleton: Skeleton, matrices: np.ndarray, frames, fps: float) -> Clip:
    """The Clip of ``skeleton`` (``rig``'s deform skeleton) whose pose is ``matrices`` ``(F, B, 4, 4)``:
    the armature-space matrices of the rig's bones in skeleton order, one row per entry of
    ``frames``, as Blender evaluated them. Bones whose channels move get ``key_location`` /
    ``key_rotation``.

    The rig stretches some bones (Stretch To, IK stretch): each bone's head and orientation are kept
    and its scale dropped, so that the skeleton's FK puts every joint back where Blender had it.
    """
    matrices = np.array(matrices, dtype=float)
    matrices[..., :3, :3] /= np.linalg.norm(matrices[..., :3, :3], axis=-2, keepdims=True)
    for k, offset in rest_offsets(rig, skeleton).items():
        matrices[:, k] = matrices[:, k] @ np.linalg.inv(offset)
    n, b = matrices.shape[:2]
    locations, rotations = np.zeros((n, b, 3)), tf.quat_identity((n, b))
    for i, p in enumerate(skeleton.parents):
        parent = None if p < 0 else matrices[:, p]
        basis = skeleton.basis_for(parent, i, matrices[:, i])
        locations[:, i], rotations[:, i], _ = tf.decompose(basis)
    rotations = tf.quat_continuity(tf.quat_normalize(rotations), axis=0)
    moved_loc = np.max(np.abs(locations), axis=0).max(axis=-1) > 1e-6
    moved_rot = np.max(tf.quat_angle(rotations, tf.quat_identity((n, b))), axis=0) > 1e-6
    return Clip(
        list(skeleton.names),
        np.asarray(frames, dtype=float),
        fps,
        locations,
        rotations,
        key_location=moved_loc,
        key_rotation=moved_rot,
        generator="source",
    )
