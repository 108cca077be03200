"""A Rigify rig exported without its controls (``procanim_addon/deform_tree.py``): its ``DEF-`` bones
hang from ``ORG-``/``MCH-`` bones and its limbs are split into segments; the engine reads them as one
tree, and what it makes there poses Blender's own hierarchy (helpers at rest) exactly."""

from __future__ import annotations

import numpy as np
import pytest

from procanim_addon import transforms as tf
from procanim_addon.clip import Clip
from procanim_addon.deform_tree import as_posed, clip_to_anchors, rebuilt
from procanim_addon.rig_roles import LEG_ROLES, detect
from procanim_addon.skeleton import Skeleton

RNG = np.random.default_rng(7)


def _bone(name, parent, head, tail=None, **flags):
    """A bone from ``head`` toward ``tail`` (its rest +Y), rolled at random (roll plays no part)."""
    head = np.asarray(head, float)
    y = np.asarray(tail if tail is not None else head + [0.0, 0.0, 0.1], float) - head
    length = float(np.linalg.norm(y))
    y /= length
    x = np.cross(y, RNG.normal(size=3))
    x /= np.linalg.norm(x)
    m = np.eye(4)
    m[:3, 0], m[:3, 1], m[:3, 2], m[:3, 3] = x, y, np.cross(x, y), head
    return {"name": name, "parent": parent, "matrix_local": m, "length": length, **flags}


def exported_rigify(**helper_flags) -> Skeleton:
    """The bones of a generated Rigify human that matter here, as a glTF round trip returns them:
    ``DEF-`` joints hang from ``ORG-`` bones or the root, limbs come in two segments each."""
    bones = [_bone("root", None, (0, 0, 0), (0, 0.3, 0)), _bone("torso", "root", (0, 0.1, 1.0), (0, -0.2, 1.0)),
             _bone("ORG-spine", "torso", (0, 0, 1.0), (0, 0, 1.15), **helper_flags),
             _bone("DEF-spine", "root", (0, 0, 1.0), (0, 0, 1.15)),
             _bone("ORG-spine.001", "ORG-spine", (0, 0, 1.15), (0, 0, 1.45)),
             _bone("DEF-spine.001", "DEF-spine", (0, 0, 1.15), (0, 0, 1.45))]
    for s, x in (("L", 0.1), ("R", -0.1)):
        bones += [
            _bone(f"ORG-thigh.{s}", "ORG-spine", (x, 0, 1.0), (x, 0, 0.55)),
            _bone(f"DEF-thigh.{s}", "ORG-spine", (x, 0, 1.0), (x, 0, 0.775)),
            _bone(f"DEF-thigh.{s}.001", f"DEF-thigh.{s}", (x, 0, 0.775), (x, 0, 0.55)),
            _bone(f"ORG-shin.{s}", f"ORG-thigh.{s}", (x, 0, 0.55), (x, 0, 0.1)),
            _bone(f"DEF-shin.{s}", f"DEF-thigh.{s}.001", (x, 0, 0.55), (x, 0, 0.325)),
            _bone(f"DEF-shin.{s}.001", f"DEF-shin.{s}", (x, 0, 0.325), (x, 0, 0.1)),
            _bone(f"ORG-foot.{s}", f"ORG-shin.{s}", (x, 0, 0.1), (x, -0.12, 0.03)),
            _bone(f"DEF-foot.{s}", f"DEF-shin.{s}.001", (x, 0, 0.1), (x, -0.12, 0.03)),
            _bone(f"ORG-toe.{s}", f"ORG-foot.{s}", (x, -0.12, 0.03), (x, -0.2, 0.03)),
            _bone(f"DEF-toe.{s}", f"DEF-foot.{s}", (x, -0.12, 0.03), (x, -0.2, 0.03)),
            _bone(f"ORG-shoulder.{s}", "ORG-spine.001", (0.02 * x * 10, 0, 1.42), (x * 1.7, 0, 1.43)),
            _bone(f"DEF-shoulder.{s}", f"ORG-shoulder.{s}", (0.02 * x * 10, 0, 1.42), (x * 1.7, 0, 1.43)),
            _bone(f"ORG-upper_arm.{s}", f"ORG-shoulder.{s}", (x * 1.8, 0, 1.43), (x * 2.6, 0, 1.2)),
            _bone(f"DEF-upper_arm.{s}", f"ORG-shoulder.{s}", (x * 1.8, 0, 1.43), (x * 2.2, 0, 1.315)),
            _bone(f"DEF-upper_arm.{s}.001", f"DEF-upper_arm.{s}", (x * 2.2, 0, 1.315), (x * 2.6, 0, 1.2)),
            _bone(f"MCH-hand_ik.{s}", "root", (x * 3.5, 0, 1.0), (x * 3.5, -0.1, 1.0)),
        ]
    return Skeleton.from_bones(bones)


def channels(skeleton: Skeleton, frames=4) -> Clip:
    q = tf.quat_normalize(RNG.normal(size=(frames, len(skeleton), 4)))
    return Clip(list(skeleton.names), np.arange(frames), 24.0, RNG.normal(size=(frames, len(skeleton), 3)) * 0.1, q)


def blender_pose(full: Skeleton, clip: Clip) -> np.ndarray:
    """What Blender evaluates: the armature's own hierarchy, every bone the Clip leaves out at rest."""
    loc = np.zeros((clip.frame_count, len(full), 3))
    rot = tf.quat_identity((clip.frame_count, len(full)))
    for j, name in enumerate(clip.bone_names):
        loc[:, full.index(name)], rot[:, full.index(name)] = clip.locations[:, j], clip.rotations[:, j]
    return full.fk(loc, rot)


def test_the_deform_joints_become_one_tree_under_the_root():
    sk = rebuilt(exported_rigify())
    parent = {n: (sk.names[p] if p >= 0 else None) for n, p in zip(sk.names, sk.parents)}
    assert parent["DEF-thigh.L"] == "DEF-spine" and parent["DEF-shin.L"] == "DEF-thigh.L"  # segments skipped
    assert parent["DEF-upper_arm.R"] == "DEF-shoulder.R" and parent["DEF-shoulder.R"] == "DEF-spine.001"
    assert not any(n.endswith(".001") and n.startswith(("DEF-thigh", "DEF-shin", "DEF-upper")) for n in sk.names)
    assert not any(n.startswith(("ORG-", "MCH-")) or n == "torso" for n in sk.names)
    thigh = sk.index("DEF-thigh.L")
    assert sk.lengths[thigh] == pytest.approx(0.45)  # to the knee, across its segment
    assert sk.names[sk.armature_parents[thigh]] == "root"  # Blender poses it under ORG-spine, at rest under the root


def test_channels_made_on_the_tree_pose_blenders_hierarchy_alike_and_back():
    full = exported_rigify()
    sk = rebuilt(full)
    clip = channels(sk)
    engine = sk.fk(clip.locations, clip.rotations)
    written = clip_to_anchors(clip, sk)
    blender = blender_pose(full, written)
    for name in sk.names:
        np.testing.assert_allclose(blender[:, full.index(name)], engine[:, sk.index(name)], atol=1e-12, err_msg=name)
    np.testing.assert_allclose(as_posed(sk).fk(written.locations, written.rotations), engine, atol=1e-12)
    read = clip_to_anchors(written, sk, inverse=True)  # an action read back from the armature
    np.testing.assert_allclose(sk.fk(read.locations, read.rotations), engine, atol=1e-12)


def test_a_joint_the_engine_leaves_at_rest_under_a_moving_parent_is_keyed_for_blender():
    sk = rebuilt(exported_rigify())
    clip = channels(sk)
    thigh = clip.bone_names.index("DEF-thigh.L")
    clip.locations[:, thigh], clip.rotations[:, thigh] = 0.0, [1.0, 0.0, 0.0, 0.0]
    clip.key_location[thigh] = clip.key_rotation[thigh] = False
    written = clip_to_anchors(clip, sk)  # DEF-spine moves it in the tree; Blender hangs it elsewhere
    assert written.key_location[thigh] and written.key_rotation[thigh]


def test_the_roles_are_the_deform_joints():
    sk = rebuilt(exported_rigify())
    parents = {n: (sk.names[p] if p >= 0 else None) for n, p in zip(sk.names, sk.parents)}
    rm = detect(sk.names, parents, skeleton=sk)
    assert not rm.missing(LEG_ROLES + ["hips", "upper_arm.L", "upper_arm.R"])
    assert rm.bone("thigh.L") == "DEF-thigh.L" and rm.bone("hips") == "DEF-spine" and rm.bone("root") == "root"


def test_rigs_that_are_not_exported_rigify_rigs_are_left_alone():
    plain = Skeleton.from_bones([_bone("hips", None, (0, 0, 1)), _bone("thigh.L", "hips", (0.1, 0, 1), (0.1, 0, 0.5))])
    assert rebuilt(plain) is None
    # a helper that would not carry its bones at rest (inherit rotation off): not rebuilt
    assert rebuilt(exported_rigify(inherit_rotation=False)) is None
