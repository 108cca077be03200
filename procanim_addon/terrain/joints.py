"""The joints the adaptation moves, and the way back from joint positions to bone channels.

Joints are the heads and tails of the *body* bones (every bone on the way from the hips to a role
bone: spine, neck, head, arms, legs, feet, toes); a child's head that sits on its parent's tail is
one joint. Each joint but the first (the hips head) has a parent joint, and the distance between
them, l_jk, is fixed by the rest pose — the constraint of Eq. 4.

:func:`channels_from_positions` turns solved joint positions into pose channels with a
swing-only correction per bone, parents first: each bone keeps its source channels relative to
its (already corrected) parent and is then turned by the shortest arc that points its head→tail
along the solved direction, so the source's twist is kept and bone lengths are exact. Only the
hips bone is moved (its location puts its head on the solved hips joint).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import transforms as tf
from .rotations import affine_inverse, turn_matrices

BODY_ROLES = ["hips", "spine", "chest", "neck", "head"] + [
    f"{r}.{s}" for s in "LR" for r in ("clavicle", "upper_arm", "forearm", "hand", "thigh", "shin", "foot", "toe")
]


@dataclass
class JointSet:
    """Joint bookkeeping for one skeleton.

    bones:        body bone indices, parents first
    head_joint:   joint index of each body bone's head, ``(len(bones),)``
    tail_joint:   joint index of each body bone's tail
    parent:       parent joint of each joint (−1 for the hips head), ``(J,)``
    rest_length:  l_jk, rest distance of each joint to its parent joint (m), ``(J,)``
    hips:         skeleton index of the hips bone
    """

    bones: list[int]
    head_joint: np.ndarray
    tail_joint: np.ndarray
    parent: np.ndarray
    rest_length: np.ndarray
    hips: int

    @property
    def count(self) -> int:
        return len(self.parent)

    def positions(self, skeleton, pose: np.ndarray) -> np.ndarray:
        """Joint positions ``(F, J, 3)`` (m) of a pose ``(F, B, 4, 4)``."""
        out = np.empty(pose.shape[:1] + (self.count, 3))
        out[:, self.head_joint] = pose[:, self.bones][..., :3, 3]
        out[:, self.tail_joint] = skeleton.tails_of(pose)[:, self.bones]
        return out

    def restore_lengths(self, p: np.ndarray) -> np.ndarray:
        """Eq. 4, parents first: ``p_j ← p_k + l_jk (p_j − p_k)/|p_j − p_k|`` (p_k the parent joint).
        The joints of one depth in the tree are independent of each other: they move together, on a
        copy laid out joints first ``(J, 3, …)`` (a depth's joints are whole rows; the same
        operations in the same order, bit-identical)."""
        q = np.ascontiguousarray(np.moveaxis(p, (-2, -1), (0, 1)))
        for j, k, length in self.levels:
            qk = q[k]
            v = q[j] - qk
            n = np.sqrt(v[:, 0] * v[:, 0] + v[:, 1] * v[:, 1] + v[:, 2] * v[:, 2])
            q[j] = qk + length * v / np.maximum(n, 1e-12)[:, None]
        return np.moveaxis(q, (0, 1), (-2, -1))

    @property
    def levels(self) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
        """Per depth below the hips joint: (joints, their parent joints, rest lengths (…, 1, 1))."""
        if getattr(self, "_levels", None) is None:
            depth = np.zeros(self.count, int)
            for j in range(self.count):  # parents come before their children
                depth[j] = 0 if self.parent[j] < 0 else depth[self.parent[j]] + 1
            self._levels = [(js, self.parent[js], self.rest_length[js][:, None, None])
                            for d in range(1, int(depth.max()) + 1) for js in [np.nonzero(depth == d)[0]]]
        return self._levels

    def length_error(self, p: np.ndarray) -> float:
        """Largest |distance to parent joint − l_jk| / l_jk over joints and frames (%)."""
        j = np.nonzero((self.parent >= 0) & (self.rest_length > 1e-9))[0]
        d = np.linalg.norm(p[..., j, :] - p[..., self.parent[j], :], axis=-1)
        return float(np.max(np.abs(d - self.rest_length[j]) / self.rest_length[j]) * 100) if j.size else 0.0


def joint_set(skeleton, rigmap) -> JointSet:
    """The body joints of a rig: bones from the hips down to every role bone present."""
    hips = rigmap.index(skeleton, "hips")
    body: set[int] = {hips}
    for role in BODY_ROLES:
        name = rigmap.get(role)
        if not name or not skeleton.has(name):
            continue
        i = skeleton.index(name)
        try:
            body.update(skeleton.chain(i, hips))
        except ValueError:
            continue  # not under the hips (e.g. a separate control): left as it is
    bones = sorted(body)  # skeleton order is parents first
    heads, tails = skeleton.heads, skeleton.tails
    points: list[np.ndarray] = []
    parent: list[int] = []
    head_j = np.empty(len(bones), int)
    tail_j = np.empty(len(bones), int)
    where = {b: k for k, b in enumerate(bones)}
    for k, b in enumerate(bones):
        p = skeleton.parents[b]
        if b == hips or p not in where:
            points.append(heads[b])
            parent.append(-1 if b == hips else int(head_j[where[hips]]))
            head_j[k] = len(points) - 1
        else:
            pk = where[p]
            if np.linalg.norm(heads[b] - tails[p]) < 1e-6:  # connected: shares the parent's tail
                head_j[k] = tail_j[pk]
            else:  # offset from the parent: held at its rest distance from the parent's head
                points.append(heads[b])
                parent.append(int(head_j[pk]))
                head_j[k] = len(points) - 1
        points.append(tails[b])
        parent.append(int(head_j[k]))
        tail_j[k] = len(points) - 1
    pts = np.array(points)
    par = np.array(parent)
    rest = np.where(par >= 0, np.linalg.norm(pts - pts[np.maximum(par, 0)], axis=-1), 0.0)
    return JointSet(bones, head_j, tail_j, par, rest, hips)


def channels_from_positions(skeleton, joints: JointSet, locations, rotations, positions, tick=None):
    """Pose channels whose FK puts the body bones along solved joint ``positions (F, J, 3)``.

    ``locations (F, B, 3)`` / ``rotations (F, B, 4)`` are the source channels; returns new arrays
    and the new pose ``(F, B, 4, 4)``. Swing-only per bone (the source's twist is kept); the hips
    bone's location moves its head onto the hips joint; other bones keep their source location.
    Bones of one depth in the tree are done together (their parents are done). ``tick(i)`` (if
    given) is called before each depth ``i`` (progress, and where a cancel is seen).
    """
    loc = np.array(locations, dtype=float)
    rot = np.array(rotations, dtype=float)
    f = loc.shape[0]
    basis = tf.compose(loc, rot)
    pose = np.empty((f, len(skeleton), 4, 4))
    k_of = {b: k for k, b in enumerate(joints.bones)}
    for d, level in enumerate(_depth_levels(skeleton)):
        if tick is not None:
            tick(d)
        par = skeleton.parents[level]
        ref = np.broadcast_to(skeleton.rest_rel[level], (f,) + skeleton.rest_rel[level].shape)
        if par[0] >= 0:  # one depth: all roots or none
            ref = pose[:, par] @ skeleton.rest_rel[level]
        m = ref @ basis[:, level]
        body = np.array([i in k_of for i in level])
        if np.any(body):
            idx = level[body]
            ks = np.array([k_of[i] for i in idx])
            mb, rb = m[:, body], ref[:, body]
            is_hips = idx == joints.hips
            head = np.where(is_hips[None, :, None], positions[:, joints.head_joint[ks]], mb[..., :3, 3])
            want = positions[:, joints.tail_joint[ks]] - head
            turn = turn_matrices(mb[..., :3, 1], want)
            mb = mb.copy()
            mb[..., :3, :3] = turn @ mb[..., :3, :3]
            mb[..., :3, 3] = head
            b = affine_inverse(rb) @ mb  # Skeleton.basis_for without a general 4×4 inverse
            new_loc, new_rot, _ = tf.decompose(b)
            rot[:, idx] = new_rot
            loc[:, idx[is_hips]] = new_loc[:, is_hips]
            basis[:, idx] = tf.compose(loc[:, idx], rot[:, idx])
            m[:, body] = rb @ basis[:, idx]
        pose[:, level] = m
    return loc, tf.quat_continuity(rot, axis=0), pose


def _depth_levels(skeleton) -> list[np.ndarray]:
    """Bone indices per depth in the tree (roots first)."""
    depth = np.zeros(len(skeleton), int)
    for i, p in enumerate(skeleton.parents):
        depth[i] = 0 if p < 0 else depth[p] + 1
    return [np.nonzero(depth == d)[0] for d in range(int(depth.max()) + 1)]
