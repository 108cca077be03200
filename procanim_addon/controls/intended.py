"""The pose a Clip describes for the deform skeleton of a control rig.

:func:`intended_channels` gives the skeleton's local channels that a Clip keys (as a bake onto the
bones would play them), :func:`intended_pose` their armature-space pose. Most deform bones of a
generated human are in its face and hands, which a walk leaves at rest; a conversion needs the whole
clip for the bones it keys and only a sample of frames for the others (to see that they already
follow). :class:`IntendedPose` (made by :func:`intended_for`) does the forward kinematics of
:meth:`Skeleton.fk` lazily — a bone's matrices from its parent's — for all frames or for the sample,
and keeps what it computed. Its matrices are those of the *rig's* bones (a bone the skeleton turned
end for end is turned back, :func:`.deform.rest_offsets`).
"""

from __future__ import annotations

import numpy as np

from .. import transforms as tf
from ..clip import Clip
from ..skeleton import Skeleton
from ..transforms import compose
from .deform import rest_offsets
from .parenting import mul
from .rig import ControlRig


def intended_channels(skeleton: Skeleton, clip: Clip) -> tuple[np.ndarray, np.ndarray]:
    """The local channels ``(F, B, 3)`` (m), ``(F, B, 4)`` (quaternions) that ``clip`` gives the
    deform skeleton: the channels it keys; channels it does not key, and bones not in the clip,
    stay at rest."""
    f, b = clip.frame_count, len(skeleton)
    loc, rot = np.zeros((f, b, 3)), tf.quat_identity((f, b))
    key_loc, key_rot = np.asarray(clip.key_location), np.asarray(clip.key_rotation)
    for k, name in enumerate(clip.bone_names):
        if skeleton.has(name):
            i = skeleton.index(name)
            if key_loc[k]:
                loc[:, i] = clip.locations[:, k]
            if key_rot[k]:
                rot[:, i] = clip.rotations[:, k]
    return loc, rot


def intended_pose(skeleton: Skeleton, clip: Clip) -> np.ndarray:
    """The deform skeleton's armature-space pose ``(F, B, 4, 4)`` that ``clip`` describes."""
    return skeleton.fk(*intended_channels(skeleton, clip))


def intended_for(rig: ControlRig, skeleton: Skeleton, clip: Clip) -> IntendedPose:
    """The pose ``clip`` describes for ``rig``'s deform ``skeleton``, as the rig's bones' matrices
    computed when asked."""
    return IntendedPose(skeleton, *intended_channels(skeleton, clip), offsets=rest_offsets(rig, skeleton))


class IntendedPose:
    """Armature-space matrices of the deform skeleton's bones for local channels ``locations``
    ``(F, B, 3)`` and ``rotations`` ``(F, B, 4)`` (skeleton order), or for already computed skeleton
    ``matrices`` ``(F, B, 4, 4)``; ``offsets``: skeleton index → the fixed transform to the rig's
    bone; ``samples``: the frame indices :meth:`sampled` gives."""

    def __init__(self, skeleton: Skeleton, locations=None, rotations=None, offsets=None, samples=None, matrices=None):
        self.sk = skeleton
        self._given = None if matrices is None else np.asarray(matrices, float)
        if self._given is None:
            self.locations = np.asarray(locations, float)
            self.rotations = np.asarray(rotations, float)
            self.frames = self.locations.shape[0]
            # bones the clip leaves at rest (most of the face and hands): their local matrix is
            # the rest one on every frame, nothing to compose
            rot = self.rotations
            rest_rot = np.all(rot[..., 0] == 1.0, axis=0) & np.all(rot[..., 1:] == 0.0, axis=(0, 2))
            rest_loc = np.all(self.locations == 0.0, axis=(0, 2)) | np.asarray(skeleton.connected, bool)
            self._at_rest = rest_rot & rest_loc
        else:
            self.frames = self._given.shape[0]
        self.offsets = offsets or {}
        self.samples = np.arange(self.frames) if samples is None else np.asarray(samples)
        self._skeleton_pose: dict[str, dict[int, np.ndarray]] = {"full": {}, "sampled": {}}
        self._rig_pose: dict[str, dict[int, np.ndarray]] = {"full": {}, "sampled": {}}

    def set_samples(self, samples) -> None:
        """The frame indices :meth:`sampled` gives from now on."""
        self.samples = np.asarray(samples)
        self._skeleton_pose["sampled"].clear()
        self._rig_pose["sampled"].clear()

    def _skeleton(self, k: int, which: str) -> np.ndarray:
        cache = self._skeleton_pose[which]
        got = cache.get(k)
        if got is None:
            frames = slice(None) if which == "full" else self.samples
            if self._given is not None:
                got = self._given[frames, k]
            elif which == "sampled" and k in self._skeleton_pose["full"]:
                got = self._skeleton_pose["full"][k][self.samples]
            else:
                p = int(self.sk.parents[k])
                if self._at_rest[k]:
                    n = self.frames if which == "full" else len(self.samples)
                    rest = self.sk.rest_rel[k]
                    got = np.broadcast_to(rest, (n, 4, 4)).copy() if p < 0 else mul(self._skeleton(p, which), rest)
                else:
                    loc = self.locations[frames, k]
                    if self.sk.connected[k]:
                        loc = np.zeros_like(loc)  # Blender ignores a connected bone's location
                    local = mul(self.sk.rest_rel[k], compose(loc, self.rotations[frames, k]))
                    got = local if p < 0 else self._skeleton(p, which) @ local
            cache[k] = got
        return got

    def _rig(self, k: int, which: str) -> np.ndarray:
        cache = self._rig_pose[which]
        got = cache.get(k)
        if got is None:
            got = self._skeleton(k, which)
            if k in self.offsets:
                got = mul(got, self.offsets[k])
            cache[k] = got
        return got

    def full(self, k: int) -> np.ndarray:
        """Rig bone matrices ``(F, 4, 4)`` of skeleton bone ``k`` over the whole clip."""
        return self._rig(k, "full")

    def sampled(self, k: int) -> np.ndarray:
        """Rig bone matrices ``(S, 4, 4)`` of skeleton bone ``k`` on the sample frames."""
        return self._rig(k, "sampled")
