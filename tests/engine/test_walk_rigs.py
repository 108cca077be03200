"""The path walk on skeletons shaped like the files users bring (tests/rig_samples.py), measured on
the FK of the generated clip."""

import sys
from pathlib import Path

import numpy as np
import pytest

from procanim_addon.ground import FlatGround
from procanim_addon.rig_roles import detect
from procanim_addon.skeleton import Skeleton
from procanim_addon.walk import PathWalkParams, generate_path_walk
from procanim_addon.walk.character import read_character

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import rig_samples  # noqa: E402

STRAIGHT = np.array([[0.0, 0.0, 0.0], [0.0, -4.0, 0.0]])


def _sample(name, arms):
    bones, _ = getattr(rig_samples, name)(arms=arms)
    sk = Skeleton.from_bones(rig_samples.bone_dicts(bones))
    return sk, detect(sk.names, {b["name"]: b["parent"] for b in bones}, skeleton=sk)


@pytest.mark.parametrize("name", ["mixamo", "cmu"])
@pytest.mark.parametrize("arms", ["T", "A"])
def test_arms_straight_in_the_rest_pose_hang_and_swing(name, arms):
    """A rest pose with straight arms (a Mixamo T-pose: upper arm and forearm on one line) still has
    an elbow that bends forward: every channel finite, the arms down at the sides, the forearm bent
    forward of the upper arm by about the elbow angle."""
    sk, rm = _sample(name, arms)
    p = PathWalkParams()
    clip = generate_path_walk(sk, rm, STRAIGHT, FlatGround(), p)
    assert clip.is_finite()
    char = read_character(sk, rm)
    pose = sk.fk(clip.locations, clip.rotations)
    tails = sk.tails_of(pose)
    for s in "LR":
        ua, fa = sk.index(rm.get(f"upper_arm.{s}")), sk.index(rm.get(f"forearm.{s}"))
        d_up = tails[:, ua] - pose[:, ua, :3, 3]
        d_fore = tails[:, fa] - pose[:, fa, :3, 3]
        d_up /= np.linalg.norm(d_up, axis=-1, keepdims=True)
        d_fore /= np.linalg.norm(d_fore, axis=-1, keepdims=True)
        assert np.all(d_up[:, 2] < -0.8)  # hanging (within about 37° of straight down)
        bend = np.degrees(np.arccos(np.clip(np.sum(d_up * d_fore, axis=-1), -1, 1)))
        assert np.all(np.abs(bend - p.elbow_deg) < 0.5 * p.elbow_deg)
        # the elbow bends forward: the forearm leads the upper arm along the body's forward
        hips = sk.index(rm.get("hips"))
        fwd = np.einsum("fij,j->fi", pose[:, hips, :3, :3] @ sk.matrix_local[hips][:3, :3].T, char.forward)
        assert np.all(np.sum((d_fore - d_up) * fwd, axis=-1) > 0)
