"""From channel values to deform joints: what the reduction measures its error on.

The reduction asks three things of the motion it reduces, through a *forward model*:

* ``model(values)``: the positions ``(N, P, 3)`` (m) of the measured points — every deform bone's
  head and tail, and any extra point (a heel) — for channel values ``(N, C)`` on N frames: the exact
  check of every bake;
* ``model.affects``: ``(G, P)`` booleans, which points each key group can move;
* ``model.top_down(reference)``: the order in which key groups are fitted and, level by level, the
  values each is fitted to and its error map (:class:`.compensate.TopDown`).

:class:`DeformForward` is the model of a plain skeleton (keys on the deform bones): Blender's pose
evaluation (:mod:`procanim_addon.skeleton`), reduced to the bones that carry keys — every other bone
is rigid in its nearest keyed ancestor, so its points are fixed in that bone's frame (a *node*).
A control rig plugs in its own model (:mod:`.control_forward`).
"""

from __future__ import annotations

import numpy as np

from .. import transforms as tf
from ..skeleton import Skeleton
from .compensate import TopDown
from .layout import OBJECT, Channel, channel_basis, key_groups


class DeformForward:
    """Heads and tails (then ``extra_points``) of every bone of ``skeleton`` for the values of
    ``channels`` (the object's channels, if any, move everything: world space).

    ``extra_points``: ``(bone index, point (3,) at rest, armature space)``: points carried by a bone,
    appended after the ``2B`` heads and tails (bone ``b``'s head is point ``2b``, its tail ``2b + 1``).
    """

    def __init__(self, skeleton: Skeleton, channels: list[Channel], extra_points=()):
        self.sk = skeleton
        self.channels = channels
        self.groups = key_groups(channels)
        names = {n: i for i, n in enumerate(skeleton.names)}
        unknown = sorted({c.bone for c in channels if c.bone != OBJECT and c.bone not in names})
        if unknown:
            raise ValueError(f"channels of bones the skeleton does not have: {', '.join(unknown)}")
        self.object_columns = [c for c, ch in enumerate(channels) if ch.bone == OBJECT]
        columns: dict[int, list[int]] = {}
        for c, ch in enumerate(channels):
            if ch.bone != OBJECT:
                columns.setdefault(names[ch.bone], []).append(c)
        self.bone_columns = columns
        self.keyed = sorted(columns)
        self._build_nodes(extra_points)
        self.group_node = []
        for cols in self.groups:
            bone = channels[cols[0]].bone
            self.group_node.append(0 if bone == OBJECT else self.node_of_bone[names[bone]])
        self.affects = self._affects()

    # ------------------------------------------------------------------ structure
    def _build_nodes(self, extra_points) -> None:
        """Node 0: the base (the object's frame, or the armature's); then one node per keyed bone.
        Every point is fixed in one node's frame (``self.local``, homogeneous)."""
        sk = self.sk
        nodes = [-1] + self.keyed  # node → bone
        node_of = {b: k + 1 for k, b in enumerate(self.keyed)}
        owner = np.zeros(len(sk), dtype=int)  # bone → node whose frame carries it
        below = np.empty((len(sk), 4, 4))  # bone's pose = node pose @ below (bone unkeyed), else identity
        self.node_parent = [-1] * len(nodes)
        self.offset = np.empty((len(nodes), 4, 4))  # node pose = parent node pose @ offset @ basis
        self.offset[0] = np.eye(4)
        for b, p in enumerate(sk.parents):
            above = np.eye(4) if p < 0 else below[p]
            up = 0 if p < 0 else owner[p]
            if b in node_of:
                k = node_of[b]
                self.node_parent[k] = up
                self.offset[k] = above @ sk.rest_rel[b]
                owner[b], below[b] = k, np.eye(4)
            else:
                owner[b], below[b] = up, above @ sk.rest_rel[b]
        points = []
        for b in range(len(sk)):
            points.append((owner[b], below[b][:3, 3]))
            points.append((owner[b], below[b][:3, :3] @ [0.0, sk.lengths[b], 0.0] + below[b][:3, 3]))
        for b, local in extra_points:
            local = np.asarray(local, float)
            carry = below[b] @ tf.affine_inverse(sk.matrix_local[b])  # rest armature space → the node's frame
            points.append((owner[b], carry[:3, :3] @ local + carry[:3, 3]))
        self.node_bone = nodes
        self.node_of_bone = node_of
        self.point_node = np.array([n for n, _ in points], dtype=int)
        self.point_local = np.array([p for _, p in points], dtype=float)
        self.node_points = [np.nonzero(self.point_node == k)[0] for k in range(len(nodes))]
        self.n_points = len(points)
        self._back = np.argsort(np.concatenate(self.node_points))  # node blocks → point order
        self._slices = np.cumsum([0] + [len(i) for i in self.node_points])

    def _affects(self) -> np.ndarray:
        chain_of = []
        for k in range(len(self.node_bone)):
            chain, j = set(), k
            while j >= 0:
                chain.add(j)
                j = self.node_parent[j]
            chain.add(0)
            chain_of.append(chain)
        out = np.zeros((len(self.groups), self.n_points), dtype=bool)
        for g, node in enumerate(self.group_node):
            out[g] = [node in chain_of[n] for n in self.point_node]
        return out

    # ------------------------------------------------------------------ evaluation
    def moves_origin(self, node: int) -> bool:
        """Do the node's own channels move its origin (a location Blender does not ignore)?"""
        if node == 0:
            cols = self.object_columns
        else:
            bone = self.node_bone[node]
            cols = [] if self.sk.connected[bone] else self.bone_columns[bone]
        return any(self.channels[c].prop == "location" for c in cols)

    def origin_values(self, node: int, values: np.ndarray) -> np.ndarray:
        """The node's location channel values ``(N, 3)`` (:meth:`moves_origin` must hold)."""
        return self.basis(node, values)[1]

    def top_down(self, reference: np.ndarray) -> TopDown:
        """The fitting order, targets and error maps of the key groups (:mod:`.compensate`)."""
        return TopDown(self, reference)

    def basis(self, node: int, values: np.ndarray) -> tuple[np.ndarray | None, np.ndarray | None]:
        """``(linear (N, 3, 3) | None, location (N, 3) | None)`` of a node's basis."""
        if node == 0:
            cols = self.object_columns
            connected = False
        else:
            bone = self.node_bone[node]
            cols = self.bone_columns[bone]
            connected = bool(self.sk.connected[bone])
        if not cols:
            return None, None
        loc, rot, scale = channel_basis(self.channels, values, cols)
        if scale is not None:
            rot = (np.broadcast_to(np.eye(3), scale.shape[:1] + (3, 3)) if rot is None else rot) * scale[:, None, :]
        if connected:
            loc = None  # Blender ignores a connected bone's location
        return rot, loc

    def node_poses(self, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Rotation-scale ``(K, N, 3, 3)`` and origin ``(K, N, 3)`` of every node's frame."""
        n = values.shape[0]
        lin = np.empty((len(self.node_bone), n, 3, 3))
        org = np.empty((len(self.node_bone), n, 3))
        for k in range(len(self.node_bone)):
            off = self.offset[k]
            rot, loc = self.basis(k, values)
            m = np.broadcast_to(off[:3, :3], (n, 3, 3)) if rot is None else off[:3, :3] @ rot
            o = np.broadcast_to(off[:3, 3], (n, 3)) if loc is None else loc @ off[:3, :3].T + off[:3, 3]
            p = self.node_parent[k]
            if p >= 0:
                m, o = lin[p] @ m, (lin[p] @ o[..., None])[..., 0] + org[p]
            lin[k], org[k] = m, o
        return lin, org

    def __call__(self, values: np.ndarray) -> np.ndarray:
        return self.points(*self.node_poses(np.asarray(values, float)))

    def points(self, lin: np.ndarray, org: np.ndarray) -> np.ndarray:
        """The measured points ``(N, P, 3)`` of node frames ``lin`` ``(K, N, 3, 3)``, ``org`` ``(K, N, 3)``."""
        n = lin.shape[1]
        grouped = np.empty((self.n_points, n, 3))  # each node's points one block, then reordered
        for k, (a, b) in enumerate(zip(self._slices[:-1], self._slices[1:])):
            if b > a:
                moved = (lin[k].reshape(-1, 3) @ self.point_local[self.node_points[k]].T).reshape(n, 3, b - a)
                grouped[a:b] = np.transpose(moved, (2, 0, 1)) + org[k]
        return np.swapaxes(np.take(grouped, self._back, axis=0), 0, 1)
