"""Two-bone IK chains of a control rig, posed from the controls as the IK solver places them.

Keys on IK controls (the foot and hand IK controls, the pole or the chain's first bone's twist, the
stretch-cancelling scale) move the deform bones through the rig's IK solve, which
:class:`~procanim_addon.controls.evaluate.RigPose` does not do (the conversion pins the chain where
it wants it). To measure reduced IK-control keys on the deform skeleton they drive, the chain is
solved here, per frame, from what the rig evaluates above it:

* the root ``R`` (the first bone's head under its parent: the hip), the target ``T`` (the IK target
  bone's head), the side the knee goes: toward the pole's head, or — without a pole — the way the
  chain's *start* pose bends (its knee off the line from its root to its end), swung with the chain
  from that end toward the target (the first bone's basis turns the start pose: the twist);
* the bones' lengths ``l₀``, ``l₁`` (their rest lengths times the start pose's scale);
* the triangle: the knee at ``x`` along ``R→T`` and ``h`` off it toward the knee's side,
  ``x = (d² + l₀² − l₁²) / 2d``, ``h = √(l₀² − x²)`` (``d = |T − R|``; straight beyond reach), the
  second bone aimed from the knee at the target.

This follows the legacy solver on a two-bone chain that starts aimed at its target (Rigify's
``MCH-thigh_ik_swing`` aims it), to first order in the controls' change (``bench/key_reduction.py
--rigify-ik`` compares it with Blender's IK on a generated Rigify human). Blender's solver also
stretches a chain with IK stretch a little (:mod:`procanim_addon.controls.stretch`): when the
conversion's poses of the chain are known (*pins*), the chain is posed **relative** to them — the
dense controls give exactly the pinned poses, and a control's change turns each bone by the rotation
that takes the triangle of the dense controls to the triangle of the changed ones (lengths from the
pinned poses, scaled by the chain's change of scale). Only that change is measured by the key
reduction, so the solver's own conventions (the pole angle, the bones' roll) drop out. With the
solver's measured stretch response (:class:`~procanim_addon.controls.stretch.StretchResponse`, by
the IK constraint's owner) the bones' lengths and the share of the distance reached follow the
changed distance as the solver's do.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..controls.constraints import Unsupported
from ..controls.evaluate import RigPose
from ..controls.parenting import apply_basis, parent_transform
from ..controls.rig import ControlRig
from ..transforms import cross, norms


@dataclass
class Chain:
    """An IK constraint on ``owner`` bending ``top`` (its parent) and ``owner`` toward bone ``target``'s
    head, the knee toward bone ``pole``'s head (-1: the way the start pose bends). Rig bone indices."""

    top: int
    owner: int
    target: int
    pole: int = -1

    @property
    def members(self) -> tuple[int, int]:
        return self.top, self.owner


def find_chains(rig: ControlRig) -> dict[int, Chain]:
    """The two-bone IK chains of ``rig`` (enabled IK constraints with a bone target, a chain of two and
    the owner's tail reaching), by member bone."""
    out: dict[int, Chain] = {}
    for i, cons in enumerate(rig.constraints):
        for c in cons:
            if c.kind != "IK" or c.influence <= 0.0:
                continue
            if c.chain_count == 2 and c.target >= 0 and c.use_tail and rig.parents[i] >= 0:
                chain = Chain(int(rig.parents[i]), i, c.target, c.pole if c.pole is not None else -1)
                out[chain.top] = out[chain.owner] = chain
    return out


def _dot(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Dot products of vectors ``(F, 3)``, ``(F, 1)``."""
    return np.einsum("...i,...i->...", a, b)[..., None]


def _unit(v: np.ndarray) -> np.ndarray:
    return v / np.maximum(norms(v)[..., None], 1e-12)


@dataclass
class Triangle:
    """A solved chain over F frames: root, knee and end ``(F, 3)`` and the two bones' frames
    ``(F, 3, 3)`` (Y along the bone, Z the normal of the chain's plane)."""

    root: np.ndarray
    knee: np.ndarray
    end: np.ndarray
    upper: np.ndarray
    lower: np.ndarray


def triangle(root, target, bend, l0, l1) -> Triangle:
    """The chain of bone lengths ``l0``, ``l1`` ``(F,)`` from ``root`` reaching for ``target``, its knee
    toward ``bend`` (directions ``(F, 3)``; see the module docstring)."""
    axis = target - root
    d = np.maximum(norms(axis), 1e-12)
    axis = axis / d[:, None]
    side = _unit(bend - _dot(bend, axis) * axis)
    x = (d * d + l0 * l0 - l1 * l1) / (2 * d)
    x = np.minimum(x, l0)
    h = np.sqrt(np.maximum(l0 * l0 - x * x, 0.0))
    knee = root + x[:, None] * axis + h[:, None] * side
    end = knee + l1[:, None] * _unit(target - knee)
    normal = _unit(cross(axis, side))
    return Triangle(root, knee, end, _frame(_unit(knee - root), normal), _frame(_unit(end - knee), normal))


def _swing(a: np.ndarray, b: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Vectors ``v`` turned by the smallest rotations taking unit ``a`` to unit ``b`` (Rodrigues)."""
    axis = cross(a, b)
    c = _dot(a, b)
    along = _dot(axis, v) / (1.0 + np.maximum(c, -1 + 1e-9))
    return v * c + cross(axis, v) + axis * along


def _frame(y: np.ndarray, normal: np.ndarray) -> np.ndarray:
    """Orthonormal frames ``(F, 3, 3)``: Y along ``y``, Z along ``normal`` made perpendicular to it."""
    z = _unit(normal - _dot(normal, y) * y)
    return np.stack([cross(y, z), y, z], axis=-1)


def _scale(m: np.ndarray) -> np.ndarray:
    """The length of the Y column of matrices ``(F, 4, 4)`` (a bone's scale along itself)."""
    return norms(m[:, :3, 1])


class SolvingPose(RigPose):
    """A :class:`RigPose` that poses the members of two-bone IK chains by solving them (see the module
    docstring) when something reads them. ``dense``: per chain (by its top bone), what the relative
    solve needs of the dense controls — ``(pinned upper (F, 4, 4), pinned lower, dense Triangle, dense
    scale (F,), dense root–target distance (F,))`` — else the chain is posed from the rig's lengths
    alone; ``stretch``: the solver's measured response per chain, by its IK constraint's owner."""

    def __init__(self, rig: ControlRig, frames: int, chains: dict[int, Chain], dense: dict | None = None,
                 stretch: dict | None = None, like: RigPose | None = None, lean: bool = False):
        super().__init__(rig, frames, like, lean)
        self.chains = chains
        self.dense = dense or {}
        self.stretch = stretch or {}
        self._solved: set[int] = set()

    def set_basis(self, i: int, basis: np.ndarray) -> None:
        self._drop_solved(i)
        super().set_basis(i, basis)

    def pin(self, i: int, pose: np.ndarray) -> None:
        self._drop_solved(i)
        super().pin(i, pose)

    def _drop_solved(self, i: int) -> None:
        """Forget the solved chains that bone ``i`` moves (a member, its root's parents, its target or
        pole read it): solved again when next read, from the rig as it then is."""
        closure = self._closure(i)
        for chain in self.chains.values():
            members = chain.members
            if members[0] in self._solved and not closure.isdisjoint(members):
                for m in members:
                    del self.pinned[m]
                    self._solved.discard(m)
                for m in members:
                    self._forget(m)

    def pose(self, i: int) -> np.ndarray:
        chain = self.chains.get(i)
        if chain is not None and i not in self.pinned:
            upper, lower = self.solve(chain)
            RigPose.pin(self, chain.top, upper)
            RigPose.pin(self, chain.owner, lower)
            self._solved.update(chain.members)
        return super().pose(i)

    def start(self, chain: Chain) -> tuple[np.ndarray, np.ndarray]:
        """The chain's start pose (before the IK solve): its two bones' matrices ``(F, 4, 4)``."""
        for b in chain.members:
            if any(c.kind not in ("IK",) and c.influence > 0.0 for c in self.rig.constraints[b]):
                raise Unsupported(f"constraint on the IK chain bone '{self.rig.names[b]}'")
        rotscale, loc = self.parent_tf(chain.top)
        upper = apply_basis(rotscale, loc, self.basis.get(chain.top))
        rotscale, loc = parent_transform(self.rig, chain.owner, upper, self.frames)
        return upper, apply_basis(rotscale, loc, self.basis.get(chain.owner))

    def inputs(self, chain: Chain) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """``(root, target, bend direction, upper scale)`` ``(F, 3)``/``(F,)`` of ``chain`` from the rig:
        the knee goes toward the pole, or — without one — the way the start pose bends, swung with
        the chain from its start end toward the target."""
        upper, lower = self.start(chain)
        root = upper[:, :3, 3]
        target = self.pose(chain.target)[:, :3, 3]
        if chain.pole >= 0:
            return root, target, self.pose(chain.pole)[:, :3, 3] - root, _scale(upper)
        knee = lower[:, :3, 3] - root
        reach = _unit(knee + lower[:, :3, 1] * self.rig.lengths[chain.owner])  # start end, from the root
        bend = knee - _dot(knee, reach) * reach
        return root, target, _swing(reach, _unit(target - root), bend), _scale(upper)

    def solve(self, chain: Chain) -> tuple[np.ndarray, np.ndarray]:
        """The matrices ``(F, 4, 4)`` of the chain's two bones after the IK solve."""
        root, target, bend, scale = self.inputs(chain)
        rig = self.rig
        dense = self.dense.get(chain.top)
        if dense is None:  # from the rig's lengths
            upper_start, lower_start = self.start(chain)
            l0 = rig.lengths[chain.top] * scale
            l1 = rig.lengths[chain.owner] * _scale(lower_start)
            tri = triangle(root, target, bend, l0, l1)
            return _matrices(tri.upper, l0 / rig.lengths[chain.top], tri.root), _matrices(
                tri.lower, l1 / rig.lengths[chain.owner], tri.knee)
        pin_upper, pin_lower, tri_d, scale_d, distance_d = dense
        ratio = scale / scale_d
        l0_d = norms(tri_d.knee - tri_d.root)
        l1_d = norms(tri_d.end - tri_d.knee)
        l0, l1 = l0_d * ratio, l1_d * ratio
        response = self.stretch.get(chain.owner)
        if response is not None:  # the solver's stretch at this distance against the dense one's
            now = response.at(norms(target - root) / scale)
            then = response.at(distance_d / scale_d)
            l0 = l0 * now[0] / then[0]
            l1 = l1 * now[1] / then[1]
            target = root + (target - root) * (now[2] / then[2])[:, None]
        tri = triangle(root, target, bend, l0, l1)
        turn_upper = tri.upper @ np.swapaxes(tri_d.upper, -1, -2)
        turn_lower = tri.lower @ np.swapaxes(tri_d.lower, -1, -2)
        grow_upper, grow_lower = (l0 / l0_d)[:, None], (l1 / l1_d)[:, None]  # the bones' change of length
        head = root + pin_upper[:, :3, 3] - tri_d.root
        knee = head + (turn_upper @ (pin_lower[:, :3, 3] - pin_upper[:, :3, 3])[..., None])[..., 0] * grow_upper
        upper = pin_upper.copy()
        upper[:, :3, :3] = turn_upper @ pin_upper[:, :3, :3] * grow_upper[..., None]
        upper[:, :3, 3] = head
        lower = pin_lower.copy()
        lower[:, :3, :3] = turn_lower @ pin_lower[:, :3, :3] * grow_lower[..., None]
        lower[:, :3, 3] = knee
        return upper, lower


def _matrices(frame: np.ndarray, scale: np.ndarray, head: np.ndarray) -> np.ndarray:
    out = np.broadcast_to(np.eye(4), (len(head), 4, 4)).copy()
    out[:, :3, :3] = frame * scale[:, None, None]
    out[:, :3, 3] = head
    return out


def dense_chains(rig: ControlRig, state: SolvingPose, pins: dict[int, np.ndarray]) -> dict:
    """What :class:`SolvingPose` needs to pose each chain relative to its ``pins`` (rig bone → the
    conversion's matrices ``(F, 4, 4)``), from ``state`` holding the dense controls: per chain whose
    two bones are pinned, its pinned matrices, the triangle of the dense controls with the pinned
    lengths, and the dense start scale."""
    out = {}
    for chain in {c.top: c for c in state.chains.values()}.values():
        if chain.top not in pins or chain.owner not in pins:
            continue
        upper, lower = pins[chain.top], pins[chain.owner]
        root, target, bend, scale = state.inputs(chain)
        l0 = norms(lower[:, :3, 3] - upper[:, :3, 3])
        l1 = rig.lengths[chain.owner] * _scale(lower)
        distance = norms(target - root)
        out[chain.top] = (upper, lower, triangle(root, target, bend, l0, l1), scale, distance)
    return out
