"""Compensated targets: each bone's curves fitted to put the bone where the dense motion puts it,
given its parent as the reduced curves leave it.

Fitting every curve to its own dense values lets the errors add up along a chain: a thigh 0.1° off
moves the toe tip by ~1.6 mm, on top of the shin's, the foot's and the hips' own errors. Instead the
key groups are fitted top-down (a bone's parents first, its location before its rotation), and each
group's *target* — the values its curve is fitted to — restores its bone under the reduced parent:

* location: the dense origin, expressed in the parent's reduced frame;
* rotation: the dense orientation, turned by the small rotation ``θ`` that brings the bone's points
  (its tail, the heads of the children it carries, the feet's sole points) nearest their dense places
  from the origin the bone actually has (aiming: linearised Kabsch,
  ``(Σ |v_p|² I − v_p v_pᵀ + μ) θ = Σ ε × v_p``, ``ε`` the origin's error, ``v_p`` the points' dense
  offsets from it, ``μ`` a pull toward the dense twist).

A point's error is then the fitting error of the bone that carries it plus the part of the error
of its origin along the bone that no rotation takes away — not the sum of every curve above it —
so each group can use nearly the whole tolerance (docs/keys.md).

Each group also gets its *error map* ``M_s`` ``(S, 3, n)``: the displacement (m) of the bone's
farthest point per unit of channel error on each frame — the rotation vector of the channels' change
(:func:`rotation_jacobian`) times that point's distance from the bone's origin, or the parent frame
for a location — the bound :mod:`.place` keeps.
"""

from __future__ import annotations

import numpy as np

from .. import transforms as tf
from .layout import EULER_MODES, OBJECT

AIM_PULL = 1e-3  # μ relative to Σ|v_p|²: keeps the twist about a single point's line where it was
_STEP = 1e-6  # central differences of Euler and axis-angle rotations (rad)


def rotation_jacobian(prop: str, mode: str, values: np.ndarray) -> np.ndarray:
    """``(N, 3, n)``: the rotation vector (rad, in the rotated frame) of a small change of each rotation
    channel at ``values`` ``(N, n)`` (quaternion ``(w, x, y, z)``, Euler angles in ``mode``'s order, or
    axis-angle ``(angle, x, y, z)``). A unit quaternion's is ``2 [−v | w I − [v]×]``; a change along
    the quaternion itself turns nothing (the pose normalises it)."""
    values = np.asarray(values, float)
    if prop == "rotation_quaternion":
        q = values / np.linalg.norm(values, axis=-1, keepdims=True)
        w, v = q[:, 0], q[:, 1:]
        out = np.empty((len(q), 3, 4))
        out[:, :, 0] = -2.0 * v
        out[:, :, 1:] = 2.0 * (w[:, None, None] * np.eye(3) - _skew(v))
        return out
    rot = _rotation(prop, mode, values)
    out = np.empty((len(values), 3, values.shape[1]))
    for i in range(values.shape[1]):
        step = np.zeros(values.shape[1])
        step[i] = _STEP
        ahead, behind = _rotation(prop, mode, values + step), _rotation(prop, mode, values - step)
        change = np.swapaxes(rot, -1, -2) @ (ahead - behind)
        out[:, :, i] = 0.5 * np.stack([change[:, 2, 1] - change[:, 1, 2], change[:, 0, 2] - change[:, 2, 0],
                                       change[:, 1, 0] - change[:, 0, 1]], axis=-1) / (2 * _STEP)
    return out


def _rotation(prop: str, mode: str, values: np.ndarray) -> np.ndarray:
    if prop == "rotation_euler":
        return tf.euler_to_mat3(values, mode)
    return tf.quat_to_mat3(tf.quat_from_axis_angle(values[:, 1:], values[:, 0]))


def _skew(v: np.ndarray) -> np.ndarray:
    out = np.zeros(v.shape[:-1] + (3, 3))
    out[..., 0, 1], out[..., 0, 2] = -v[..., 2], v[..., 1]
    out[..., 1, 0], out[..., 1, 2] = v[..., 2], -v[..., 0]
    out[..., 2, 0], out[..., 2, 1] = -v[..., 1], v[..., 0]
    return out


def _mv(m: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Matrices ``(N, 3, 3)`` times vectors ``(N, 3)``."""
    return (m @ v[..., None])[..., 0]


class TopDown:
    """The targets and error maps of a :class:`~.forward.DeformForward`'s key groups, level by level.

    ``levels``: lists of group indices in fitting order (by the depth of the bone; at each depth the
    location and scale groups, then the rotation groups). :meth:`targets` gives a level's targets
    and maps from the values the earlier levels were fitted to; :meth:`advance` then takes the
    level's fitted values, so that the next levels see the reduced bones above them."""

    def __init__(self, model, reference: np.ndarray):
        self.m = model
        self.ref = np.asarray(reference, float)
        self.lin_d, self.org_d = model.node_poses(self.ref)
        self.reference_points = model.points(self.lin_d, self.org_d)
        self.lin = self.lin_d.copy()  # the reduced frames, filled as levels are fitted
        self.org = self.org_d.copy()
        n_nodes = len(model.node_bone)
        depth = [0] * n_nodes
        for k in range(1, n_nodes):
            depth[k] = depth[model.node_parent[k]] + 1
        self.depth = depth
        self.points = [self._own_points(k) for k in range(n_nodes)]
        # the points' moments in their node's frame: aiming needs only Σu and Σu uᵀ
        self.first = [pts.sum(axis=0) for pts in self.points]
        self.second = [pts.T @ pts for pts in self.points]
        self.reach = [float(np.linalg.norm(pts, axis=-1).max(initial=0.0)) for pts in self.points]
        self.levels: list[list[int]] = []
        self._level_nodes: list[list[int]] = []
        for d in range(max(depth) + 1):
            nodes = [k for k in range(n_nodes) if depth[k] == d]
            rot = [g for g in range(len(model.groups)) if model.group_node[g] in nodes and self._is_rotation(g)]
            other = [g for g in range(len(model.groups)) if model.group_node[g] in nodes and not self._is_rotation(g)]
            for groups in (other, rot):
                if groups:
                    self.levels.append(groups)
                    self._level_nodes.append(nodes if groups is rot or not rot else [])

    def _is_rotation(self, g: int) -> bool:
        return self.m.channels[self.m.groups[g][0]].prop.startswith("rotation")

    def _own_points(self, k: int) -> np.ndarray:
        """Points ``(P, 3)`` in node ``k``'s frame that only it and the bones above it move: its own
        (heads, tails, sole points) and the heads of child nodes whose location is not keyed."""
        m = self.m
        pts = [m.point_local[m.node_points[k]]]
        for c, parent in enumerate(m.node_parent):
            if parent == k and not m.moves_origin(c):
                pts.append(m.offset[c][None, :3, 3])
        return np.concatenate(pts)

    def _parent_frame(self, k: int) -> tuple[np.ndarray, np.ndarray]:
        """``(A (S, 3, 3), a (S, 3))``: node ``k``'s frame before its basis (the reduced parent's)."""
        off = self.m.offset[k]
        p = self.m.node_parent[k]
        s = len(self.ref)
        if p < 0:
            return np.broadcast_to(off[:3, :3], (s, 3, 3)), np.broadcast_to(off[:3, 3], (s, 3))
        return self.lin[p] @ off[:3, :3], _mv(self.lin[p], np.broadcast_to(off[:3, 3], (s, 3))) + self.org[p]

    def targets(self, level: int, values: np.ndarray,
                groups=None) -> tuple[dict[int, np.ndarray], dict[int, np.ndarray]]:
        """Per group of ``level`` (or of ``groups``, some of them): its target values ``(S, n)`` and
        error map ``(S, 3, n)``."""
        targets, maps = {}, {}
        for g in self.levels[level] if groups is None else groups:
            k = self.m.group_node[g]
            cols = self.m.groups[g]
            ch = self.m.channels[cols[0]]
            a_lin, a_org = self._parent_frame(k)
            if ch.prop == "location":
                inv = tf.inverse3(a_lin)
                targets[g] = _mv(inv, self.org_d[k] - a_org)
                maps[g] = np.zeros_like(a_lin) if not self.m.moves_origin(k) else np.array(a_lin)
            elif ch.prop == "scale":
                targets[g] = self.ref[:, cols]
                lever = np.linalg.norm(self.points[k], axis=-1).max(initial=0.0)
                maps[g] = np.broadcast_to(lever * np.eye(3), (len(self.ref), 3, 3))
            else:
                targets[g], maps[g] = self._rotation_target(g, k, a_lin, a_org, values)
        return targets, maps

    def _rotation_target(self, g, k, a_lin, a_org, values):
        m = self.m
        cols = m.groups[g]
        ch = m.channels[cols[0]]
        dense = self.ref[:, cols]
        world = self.lin_d[k]
        if len(self.points[k]):
            origin = a_org if not m.moves_origin(k) else _mv(a_lin, m.origin_values(k, values)) + a_org
            world = _aim(origin - self.org_d[k], world, self.first[k], self.second[k]) @ world
        basis = tf.inverse3(a_lin) @ world
        scale = np.linalg.norm(basis, axis=-2)
        rot = basis / np.maximum(scale, 1e-12)[:, None, :]
        if ch.prop == "rotation_quaternion":
            target = tf.mat3_to_quat(rot)
            target *= np.where(np.sum(target * dense, axis=-1) < 0.0, -1.0, 1.0)[:, None]
        elif ch.mode in EULER_MODES:
            target = tf.mat3_to_euler(rot, ch.mode, compat=dense)
        else:
            target = dense  # axis-angle: kept as it is (its axis is undefined near no rotation)
        lever = self.reach[k] * np.linalg.norm(self.lin_d[k], axis=-2).max(axis=-1)  # the points' reach, scaled
        return target, rotation_jacobian(ch.prop, ch.mode, target) * lever[:, None, None]

    def level_nodes(self, level: int) -> list[int]:
        """The nodes (bones) whose frames :meth:`advance` of ``level`` sets."""
        return self._level_nodes[level]

    def advance(self, level: int, values: np.ndarray, nodes=None) -> None:
        """Take the fitted ``values`` of ``level``'s groups: the reduced frames of its bones (of
        ``nodes`` only, some of them, when given: the others' are as they were)."""
        for k in self._level_nodes[level] if nodes is None else nodes:
            a_lin, a_org = self._parent_frame(k)
            rot, loc = self.m.basis(k, values)
            self.lin[k] = a_lin if rot is None else a_lin @ rot
            self.org[k] = a_org if loc is None else _mv(a_lin, loc) + a_org


def _aim(error: np.ndarray, frame: np.ndarray, first: np.ndarray, second: np.ndarray) -> np.ndarray:
    """The small rotations ``(S, 3, 3)`` that best take a bone's points back onto their places from an
    origin off by ``error`` ``(S, 3)`` (see the module docstring): the points are ``u_p`` in the bone's
    frame ``frame`` ``(S, 3, 3)``, given by their moments ``first`` = Σu_p and ``second`` = Σu_p u_pᵀ."""
    spread = frame @ second @ np.swapaxes(frame, -1, -2)  # Σ v_p v_pᵀ
    vv = np.trace(spread, axis1=-2, axis2=-1)
    normal = (vv * (1.0 + AIM_PULL) + 1e-12)[:, None, None] * np.eye(3) - spread
    rhs = np.cross(error, _mv(frame, np.broadcast_to(first, error.shape)))  # Σ ε × v_p
    theta = _mv(tf.inverse3(normal), rhs)
    angle = np.linalg.norm(theta, axis=-1)
    half = 0.5 * np.sinc(angle / (2 * np.pi))  # sin(angle / 2) / angle
    return tf.quat_to_mat3(np.concatenate([np.cos(angle / 2)[:, None], half[:, None] * theta], axis=-1))


__all__ = ["OBJECT", "TopDown", "rotation_jacobian"]
