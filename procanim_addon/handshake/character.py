"""One character of the handshake: its rig, where it stands, its right arm chain and its grip.

Read once from the engine inputs (Skeleton, RigMap, 4×4 world matrix). The world matrix may carry a
uniform scale (a character scaled to 0.8 in the scene); targets are turned into armature space here
and nowhere else.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import transforms as tf
from ..errors import InputError
from ..frames import CharacterFrame, character_frame, uniform_scale
from ..ik.chain import Chain
from ..ik.limits import arm_limits
from ..ik.solve import IKSettings, fuzzy_joints_for
from .grip import HandFrame, hand_frame

ARM_ROLES = ("upper_arm.R", "forearm.R", "hand.R")


@dataclass
class Character:
    name: str
    skeleton: object
    rigmap: object
    world: np.ndarray  # (4, 4) object matrix
    scale: float  # uniform scale of the world matrix
    world_rot: np.ndarray  # (3, 3) its rotation
    frame: CharacterFrame  # armature-space forward / left / leg length
    chain: Chain  # [clavicle,] upper arm, forearm, hand (right side)
    hand: int
    forearm: int
    upper_arm: int
    body_root: int  # bone moved for a step (root, else hips)
    spine: list  # bones that share a forward lean (spine … chest), may be empty
    hand_axes: HandFrame
    settings: IKSettings
    solver: str
    rest_pose: np.ndarray  # (B, 4, 4)

    def __post_init__(self):
        self._world_inv = np.linalg.inv(self.world[:3, :3])  # once per character
        sk = self.skeleton
        # the bones the handshake reads, parents first: those that carry the arm (root … the
        # clavicle's parent), then the arm; the others stay at rest in the poses made here
        carriers = [b for b in range(len(sk)) if sk.is_ancestor(b, self.chain.bones[0])]
        self._posed = carriers + list(self.chain.bones)
        self._body_key, self._body = None, self.rest_pose

    # ------------------------------------------------------------------ spaces
    def to_world(self, p_arm) -> np.ndarray:
        return self.world[:3, :3] @ np.asarray(p_arm, float) + self.world[:3, 3]

    def to_armature(self, p_world) -> np.ndarray:
        return self._world_inv @ (np.asarray(p_world, float) - self.world[:3, 3])

    def rot_to_armature(self, r_world) -> np.ndarray:
        return self.world_rot.T @ np.asarray(r_world, float)

    def rot_to_world(self, r_arm) -> np.ndarray:
        return self.world_rot @ np.asarray(r_arm, float)

    # ------------------------------------------------------------------ body
    def root_location(self, displacement_arm) -> np.ndarray:
        """Pose-bone location of the body root that moves the body by ``displacement_arm`` (m)."""
        r = self.skeleton.matrix_local[self.body_root][:3, :3]
        return r.T @ np.asarray(displacement_arm, float)

    def lean_rotations(self, lean_rad: float) -> np.ndarray:
        """Pose-bone quaternions ``(len(spine), 4)`` that bend the spine forward by ``lean_rad`` in all.

        Each spine bone turns by an equal share about the character's left axis (in its own rest
        frame); a turn about that axis keeps it, so the shares add up along the chain.
        """
        n = max(len(self.spine), 1)
        axes = np.array([self.skeleton.matrix_local[b][:3, :3].T @ self.frame.left for b in self.spine])
        return tf.quat_from_axis_angle(axes, np.full(len(self.spine), lean_rad / n))

    def body_pose(self, displacement_arm, lean_rad: float = 0.0) -> np.ndarray:
        """Pose ``(B, 4, 4)`` with the body moved by ``displacement_arm`` (armature space) and the spine
        leaning forward by ``lean_rad``: the bones that carry the arm and the arm (at rest angles)
        are posed, the others stay at rest. The last one is cached (a phase holds it for frames)."""
        if not np.any(displacement_arm) and lean_rad == 0.0:
            return self.rest_pose
        key = (tuple(np.asarray(displacement_arm, float).tolist()), float(lean_rad))
        if key == self._body_key:
            return self._body
        sk = self.skeleton
        basis = {self.body_root: tf.compose(location=self.root_location(displacement_arm))}
        if lean_rad and self.spine:
            for b, q in zip(self.spine, self.lean_rotations(lean_rad)):
                basis[b] = tf.compose(location=np.zeros(3), rotation=q)
        pose = self.rest_pose.copy()
        for b in self._posed:
            local = sk.rest_rel[b] @ basis[b] if b in basis else sk.rest_rel[b]
            pose[b] = local if sk.parents[b] < 0 else pose[sk.parents[b]] @ local
        self._body_key, self._body = key, pose
        return pose

    def grip_world(self, pose) -> np.ndarray:
        """World position of the grip point on the hand from a full pose ``(..., B, 4, 4)``."""
        hand = np.asarray(pose)[..., self.hand, :, :]
        p = np.einsum("...ij,j->...i", hand[..., :3, :3], self.hand_axes.grip_local) + hand[..., :3, 3]
        return np.einsum("ij,...j->...i", self.world[:3, :3], p) + self.world[:3, 3]

    def hand_rot_world(self, pose) -> np.ndarray:
        return self.world_rot @ np.asarray(pose)[self.hand, :3, :3]

    def elbow_world(self, pose) -> np.ndarray:
        return self.to_world(pose[self.forearm, :3, 3])

    def shoulder_world(self, pose) -> np.ndarray:
        return self.to_world(pose[self.upper_arm, :3, 3])

    def arm_reach(self) -> float:
        """Shoulder to wrist with the elbow straight (world m)."""
        sk = self.skeleton
        return self.scale * float(sk.lengths[self.upper_arm] + sk.lengths[self.forearm])

    def forearm_length(self) -> float:
        return self.scale * float(self.skeleton.lengths[self.forearm])

    def pose_with(self, angles, displacement_arm, lean_rad: float = 0.0) -> np.ndarray:
        """Pose ``(B, 4, 4)`` with the chain at ``angles`` and the body moved and leaning (the bones
        below the arm, e.g. fingers, are not posed: nothing here reads them)."""
        body = self.body_pose(displacement_arm, lean_rad)
        pose = body.copy()
        kern = self.chain.kernel()
        g, h = kern.start(self.chain.base_from_pose(body))
        pose[self.chain.bones] = kern.matrices(g, h, np.ravel(angles).tolist())
        return pose


def prepare_character(name, skeleton, rigmap, world, solver, params) -> Character:
    """Everything the handshake needs about one character (raises InputError on missing roles)."""
    world = np.asarray(world, float).reshape(4, 4)
    if not np.all(np.isfinite(world)):
        raise InputError(f"The {name}'s world matrix is not finite.")
    scale, rot = uniform_scale(world, f"The {name}")
    rigmap.require(list(ARM_ROLES))
    frame = character_frame(skeleton, rigmap)
    hand = rigmap.index(skeleton, "hand.R")
    forearm = rigmap.index(skeleton, "forearm.R")
    upper = rigmap.index(skeleton, "upper_arm.R")
    top = rigmap.index(skeleton, "clavicle.R") if rigmap.get("clavicle.R") else upper
    try:
        bones = skeleton.chain(hand, top)
    except ValueError:
        raise InputError(
            f"On the {name}, '{skeleton.names[hand]}' does not hang below '{skeleton.names[top]}'."
        ) from None
    bad = skeleton.unsupported_bones(bones)
    if bad:
        raise InputError(f"On the {name}, bones {', '.join(bad)} do not inherit rotation and scale fully; "
                         "the handshake cannot pose them.")
    if len(bones) < 3 or bones[-3:] != [upper, forearm, hand]:
        raise InputError(f"On the {name}, the arm chain must run upper arm → forearm → hand without bones between.")
    limits = arm_limits(skeleton, bones, frame.forward, frame.left, "R")
    rest_pose = skeleton.fk()[0]
    forearm_dir = rest_pose[forearm, :3, 1]
    medial = frame.left  # toward the midline from the right side
    axes = hand_frame(skeleton.matrix_local[hand], float(skeleton.lengths[hand]), forearm_dir, medial,
                      params.grip_fraction, params.palm_thickness_ratio)
    chain = Chain(skeleton, bones, limits, effector_local=axes.grip_local)
    outward = -frame.left
    pole = -frame.up + 0.5 * outward  # elbow down and out
    settings = IKSettings(
        tolerance_m=params.ik_tolerance_m / max(scale, 1e-9),
        pole=pole / np.linalg.norm(pole),
        pole_joint=len(bones) - 3,
        fuzzy=fuzzy_joints_for(chain, clavicle_first=len(bones) >= 4),
    )
    body_root = rigmap.index(skeleton, "root") if rigmap.get("root") else rigmap.index(skeleton, "hips")
    spine = [skeleton.index(b) for b in rigmap.spine if skeleton.has(b)]
    if rigmap.get("chest") and skeleton.has(rigmap.bone("chest")) and skeleton.index(rigmap.bone("chest")) not in spine:
        spine.append(skeleton.index(rigmap.bone("chest")))
    spine = [b for b in spine if b not in bones and skeleton.is_ancestor(b, bones[0])]  # only bones that carry the arm
    return Character(name, skeleton, rigmap, world, scale, rot, frame, chain, hand, forearm, upper, body_root, spine,
                     axes, settings, solver, rest_pose)
