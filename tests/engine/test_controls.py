"""Baking onto controls, engine side (no bpy): the model of Blender's pose evaluation, the deform
skeleton of a control rig, the rig's structure and the conversion of a deform pose into controls.

The rig here is a small hand-made copy of how Rigify builds a body and a leg (a torso control over
an FK spine, ``ORG-`` bones copying ``tweak``/FK/IK bones, an IK/FK switch driving the copies, an
IK control under a parent-switch bone, a swing bone aiming at the IK target, a tail whose bones
point toward the body). That the model agrees with Blender on real generated rigs is tested in
``tests/blender/test_control_rigs.py``; here each rule is checked on its own.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from procanim_addon import transforms as tf
from procanim_addon.controls import constraints as cs
from procanim_addon.controls import convert, deform_skeleton
from procanim_addon.controls.deform import deform_parents, rest_offsets, rig_pose
from procanim_addon.controls.evaluate import RigPose
from procanim_addon.controls.parenting import apply_basis, basis_for, parent_transform
from procanim_addon.controls.residual import deform_checks, residual_m, summary
from procanim_addon.controls.rig import Constraint, ControlRig, is_control_name
from procanim_addon.controls.solve import bone_points, kabsch, knee_twist
from procanim_addon.controls.structure import driver_control, find_limbs, main_control_above
from procanim_addon.progress import Cancelled, Progress

# ----------------------------------------------------------------------------- building rigs


def rest_matrix(head, tail, up=(1.0, 0.0, 0.0)) -> np.ndarray:
    """A bone's rest matrix: Y from head to tail, X as close to ``up`` as possible."""
    head, tail = np.asarray(head, float), np.asarray(tail, float)
    y = (tail - head) / np.linalg.norm(tail - head)
    x = np.asarray(up, float) - y * np.dot(up, y)
    if np.linalg.norm(x) < 1e-6:
        x = np.array([0.0, 0.0, 1.0]) - y * y[2]
    x /= np.linalg.norm(x)
    m = np.eye(4)
    m[:3, 0], m[:3, 1], m[:3, 2], m[:3, 3] = x, y, np.cross(x, y), head
    return m


class RigBuilder:
    def __init__(self):
        self.bones: list[dict] = []

    def add(self, name, head, tail, parent=None, constraints=(), **flags):
        self.bones.append(dict(name=name, head=head, tail=tail, parent=parent, constraints=list(constraints), **flags))
        return name

    def build(self, properties=None) -> ControlRig:
        names = [b["name"] for b in self.bones]
        index = {n: i for i, n in enumerate(names)}
        cons = []
        for b in self.bones:
            out = []
            for c in b["constraints"]:
                c = Constraint(**{k: v for k, v in c.items() if k not in ("target", "pole", "targets")})
                cdict = next(d for d in b["constraints"] if d.get("name", None) == c.name)
                c.target = index[cdict["target"]] if cdict.get("target") else -1
                c.pole = index[cdict["pole"]] if cdict.get("pole") else -1
                c.targets = tuple((index[t], w) for t, w in cdict.get("targets", ()))
                out.append(c)
            cons.append(out)
        n = len(names)
        return ControlRig(
            names=names,
            parents=[index[b["parent"]] if b["parent"] else -1 for b in self.bones],
            matrix_local=[rest_matrix(b["head"], b["tail"]) for b in self.bones],
            lengths=[float(np.linalg.norm(np.subtract(b["tail"], b["head"]))) for b in self.bones],
            inherit_rotation=[b.get("inherit_rotation", True) for b in self.bones],
            inherit_scale=[b.get("inherit_scale", "FULL") for b in self.bones],
            local_location=[b.get("local_location", True) for b in self.bones],
            connected=[b.get("connected", False) for b in self.bones],
            rotation_modes=[b.get("mode", "QUATERNION") for b in self.bones],
            lock_location=np.zeros((n, 3), bool),
            lock_rotation=np.zeros((n, 3), bool),
            constraints=cons,
            properties=properties or {},
            rig_id="test0rig",
        )


_COUNT = [0]


def con(kind, target=None, **kw):
    _COUNT[0] += 1
    return dict(kind=kind, target=target, name=f"{kind}.{_COUNT[0]}", **kw)


def mini_rig(mode="FK", pole=False) -> ControlRig:
    """A Rigify-like body: torso over an FK spine, one IK/FK leg, a tail pointing at the body."""
    ik = 1.0 if mode == "IK" else 0.0
    r = RigBuilder()
    r.add("root", (0, 0, 0), (0, 1, 0))
    r.add("MCH-torso.parent", (0, 0, 1.0), (0, 0.1, 1.0), constraints=[con("ARMATURE", targets=[("root", 1.0)])])
    r.add("torso", (0, 0, 1.0), (0, 0.3, 1.0), "MCH-torso.parent", inherit_scale="AVERAGE")
    r.add("spine_fk", (0, 0, 1.0), (0, 0, 1.2), "torso")
    r.add("tweak_hips", (0, 0, 0.9), (0, 0, 1.0), "spine_fk")
    r.add("ORG-hips", (0, 0, 0.9), (0, 0, 1.0), "tweak_hips")
    r.add("DEF-hips", (0, 0, 0.9), (0, 0, 1.0), "root", constraints=[con("COPY_TRANSFORMS", "ORG-hips")])
    r.add("chest_fk", (0, 0, 1.2), (0, 0, 1.45), "spine_fk")
    r.add("tweak_chest", (0, 0, 1.2), (0, 0, 1.3), "chest_fk")
    r.add("ORG-chest", (0, 0, 1.2), (0, 0, 1.45), "tweak_chest")
    r.add("ORG-spine", (0, 0, 1.0), (0, 0, 1.2), "spine_fk")
    # the neck follows the torso's rotation by half, as Rigify's neck_follow does
    r.add(
        "MCH-ROT-neck",
        (0, 0, 1.45),
        (0, 0.1, 1.45),
        "chest_fk",
        constraints=[con("COPY_ROTATION", "torso", influence=0.5)],
    )
    r.add("neck", (0, 0, 1.45), (0, 0, 1.6), "MCH-ROT-neck")
    r.add("ORG-neck", (0, 0, 1.45), (0, 0, 1.6), "ORG-chest", constraints=[con("COPY_TRANSFORMS", "neck")])
    # a tail whose ORG bones point toward the body (their tails at the joint nearer the hips)
    r.add("tail", (0, 0.0, 0.9), (0, 0.2, 0.9), "tweak_hips")
    r.add("tweak_tail", (0, 0.2, 0.9), (0, 0.25, 0.9), "tail")
    r.add("ORG-tail", (0, 0.2, 0.9), (0, 0.0, 0.9), "tweak_tail", constraints=[con("STRETCH_TO", "tweak_hips")])
    r.add("DEF-tail", (0, 0.2, 0.9), (0, 0.0, 0.9), "DEF-hips", constraints=[con("COPY_TRANSFORMS", "ORG-tail")])
    # the leg
    r.add("thigh_parent.L", (0.1, 0, 0.9), (0.1, 0, 0.8), "ORG-hips")
    r.add("MCH-thigh_parent.L", (0.1, 0, 0.9), (0.1, 0, 0.8), "ORG-hips")
    r.add("thigh_fk.L", (0.1, 0, 0.9), (0.1, -0.02, 0.5), "MCH-thigh_parent.L", inherit_scale="AVERAGE")
    r.add("shin_fk.L", (0.1, -0.02, 0.5), (0.1, 0.0, 0.08), "thigh_fk.L", connected=True, inherit_scale="ALIGNED")
    r.add("foot_fk.L", (0.1, 0.0, 0.08), (0.1, -0.12, 0.0), "shin_fk.L")
    r.add(
        "MCH-foot_ik.parent.L",
        (0.1, 0.0, 0.08),
        (0.1, 0.05, 0.08),
        constraints=[con("ARMATURE", targets=[("root", 1.0)])],
    )
    r.add(
        "foot_ik.L",
        (0.1, 0.0, 0.08),
        (0.1, -0.12, 0.08),
        "MCH-foot_ik.parent.L",
        inherit_scale="AVERAGE",
        local_location=False,
    )
    r.add("MCH-ik_target.L", (0.1, 0.0, 0.08), (0.1, -0.12, 0.0), "foot_ik.L")
    r.add(
        "MCH-swing.L",
        (0.1, 0, 0.9),
        (0.1, 0.0, 0.8),
        "MCH-thigh_parent.L",
        constraints=[con("DAMPED_TRACK", "MCH-ik_target.L")],
    )
    r.add("thigh_ik.L", (0.1, 0, 0.9), (0.1, -0.02, 0.5), "MCH-swing.L", mode="ZXY")
    ik_con = con("IK", "MCH-ik_target.L", chain_count=2, pole="thigh_ik_target.L" if pole else None)
    r.add("MCH-shin_ik.L", (0.1, -0.02, 0.5), (0.1, 0.0, 0.08), "thigh_ik.L", constraints=[ik_con])
    r.add(
        "MCH-pole.parent.L",
        (0.1, -0.6, 0.5),
        (0.1, -0.5, 0.5),
        constraints=[con("ARMATURE", targets=[("ORG-hips", 1.0)])],
    )
    r.add("thigh_ik_target.L", (0.1, -0.6, 0.5), (0.1, -0.5, 0.5), "MCH-pole.parent.L", local_location=False)
    switch = ("thigh_parent.L", "IK_FK")
    for org, fk, ik_src, head, tail, parent, connected in (
        ("ORG-thigh.L", "thigh_fk.L", "thigh_ik.L", (0.1, 0, 0.9), (0.1, -0.02, 0.5), "ORG-hips", False),
        ("ORG-shin.L", "shin_fk.L", "MCH-shin_ik.L", (0.1, -0.02, 0.5), (0.1, 0.0, 0.08), "ORG-thigh.L", True),
        ("ORG-foot.L", "foot_fk.L", "MCH-ik_target.L", (0.1, 0.0, 0.08), (0.1, -0.12, 0.0), "ORG-shin.L", True),
    ):
        r.add(
            org,
            head,
            tail,
            parent,
            connected=connected,
            constraints=[
                con("COPY_TRANSFORMS", fk),
                con("COPY_TRANSFORMS", ik_src, influence=ik, driver=switch),
            ],
        )
    r.add(
        "DEF-thigh.L", (0.1, 0, 0.9), (0.1, -0.01, 0.7), "ORG-hips", constraints=[con("COPY_TRANSFORMS", "ORG-thigh.L")]
    )
    r.add(
        "DEF-thigh.L.001",
        (0.1, -0.01, 0.7),
        (0.1, -0.02, 0.5),
        "DEF-thigh.L",
        connected=True,
        constraints=[con("COPY_TRANSFORMS", "ORG-thigh.L")],
    )
    return r.build({"thigh_parent.L": {"IK_FK": 1.0 - ik}, "torso": {"neck_follow": 0.5}})


def moving_pose(rig: ControlRig, frames=6, seed=3, amount=0.15, rigid=()):
    """A deform motion: the whole body travels and turns, every deform bone bends a little (except
    those in ``rigid``, which stay as they are on their parent)."""
    sk = deform_skeleton(rig)
    rng = np.random.default_rng(seed)
    n = len(sk)
    loc, rot = np.zeros((frames, n, 3)), tf.quat_identity((frames, n))
    for k, name in enumerate(sk.names):
        if name != "root" and name not in rigid:
            rot[:, k] = tf.quat_normalize(np.concatenate([np.ones((frames, 1)), rng.normal(0, amount, (frames, 3))], 1))
    r = sk.index("root")
    loc[:, r] = np.stack([np.linspace(0, 0.5, frames), np.linspace(0, -2, frames), np.zeros(frames)], -1)
    rot[:, r] = tf.quat_from_axis_angle(np.broadcast_to([0, 0, 1.0], (frames, 3)), np.linspace(0, 0.6, frames))
    return sk, sk.fk(loc, rot)


# ----------------------------------------------------------------------------- parenting


def _two(flags, parent_rot_deg=90.0):
    r = RigBuilder()
    r.add("p", (0, 0, 0), (0, 1, 0))
    r.add("c", (0, 1, 0), (0, 2, 0), "p", **flags)
    rig = r.build()
    parent = tf.compose(None, tf.quat_from_axis_angle([0, 0, 1.0], math.radians(parent_rot_deg)))[None]
    return rig, parent


def test_default_parenting_is_parent_times_rest_relative_times_basis():
    rig, parent = _two({})
    basis = tf.compose(np.array([[0.1, 0.2, 0.3]]), tf.quat_from_axis_angle([[1.0, 0, 0]], [0.4]))
    rotscale, loc = parent_transform(rig, 1, parent, 1)
    np.testing.assert_allclose(apply_basis(rotscale, loc, basis), parent @ rig.rest_rel[1] @ basis, atol=1e-12)


def test_without_local_location_the_location_follows_the_parents_posed_axes():
    rig, parent = _two({"local_location": False})
    basis = tf.compose(np.array([[1.0, 0.0, 0.0]]))
    pose = apply_basis(*parent_transform(rig, 1, parent, 1), basis)
    # the parent turned 90° about Z: its X axis is world Y; the child's head sits at the parent's tail (-1, 0, 0)
    np.testing.assert_allclose(pose[0, :3, 3], [-1.0, 1.0, 0.0], atol=1e-12)


def test_a_hinge_keeps_its_rest_orientation_but_follows_the_parents_tail():
    rig, parent = _two({"inherit_rotation": False})
    pose = apply_basis(*parent_transform(rig, 1, parent, 1), None)
    np.testing.assert_allclose(pose[0, :3, :3], rig.matrix_local[1][:3, :3], atol=1e-12)
    np.testing.assert_allclose(pose[0, :3, 3], [-1.0, 0.0, 0.0], atol=1e-12)


@pytest.mark.parametrize("scale_mode", ["FULL", "AVERAGE", "ALIGNED", "NONE", "FIX_SHEAR"])
@pytest.mark.parametrize("inherit_rotation", [True, False])
@pytest.mark.parametrize("local_location", [True, False])
def test_basis_for_inverts_the_parent_transform(scale_mode, inherit_rotation, local_location):
    rig, parent = _two(dict(inherit_scale=scale_mode, inherit_rotation=inherit_rotation, local_location=local_location))
    parent = parent @ tf.compose(np.array([[0.3, -0.2, 0.5]]), scale=np.array([[1.2, 0.9, 1.1]]))
    basis = tf.compose(np.array([[0.1, -0.4, 0.2]]), tf.quat_normalize(np.array([[0.9, 0.2, -0.3, 0.1]])))
    rotscale, loc = parent_transform(rig, 1, parent, 1)
    pose = apply_basis(rotscale, loc, basis)
    np.testing.assert_allclose(basis_for(rotscale, loc, pose), basis, atol=1e-10)


def test_a_connected_bone_ignores_its_location_and_keeps_its_head_under_constraints():
    r = RigBuilder()
    r.add("p", (0, 0, 0), (0, 1, 0))
    r.add("t", (5, 5, 5), (5, 6, 5))
    r.add("c", (0, 1, 0), (0, 2, 0), "p", connected=True, constraints=[con("COPY_TRANSFORMS", "t")])
    rig = r.build()
    state = RigPose(rig, 1)
    state.set_basis(2, tf.compose(np.array([[3.0, 3.0, 3.0]])))
    got = state.pose(2)[0]
    np.testing.assert_allclose(got[:3, 3], [0, 1, 0], atol=1e-12)  # head stays at the parent's tail
    np.testing.assert_allclose(got[:3, :3], rig.matrix_local[1][:3, :3], atol=1e-12)  # rotation copied


def test_affine_inverse():
    m = tf.compose(
        np.array([[0.3, 1.0, -2.0]]), tf.quat_normalize(np.array([[0.7, 0.1, 0.5, -0.2]])), np.array([[1.5, 0.5, 2.0]])
    )
    np.testing.assert_allclose(tf.affine_inverse(m) @ m, np.eye(4)[None], atol=1e-12)


# ----------------------------------------------------------------------------- constraints


def _rot(deg, axis=(0, 0, 1.0)):
    return tf.compose(None, tf.quat_from_axis_angle([axis], [math.radians(deg)]))


def test_influence_blends_location_linearly_and_rotation_by_slerp():
    a = _rot(0.0)
    b = _rot(90.0)
    b[:, :3, 3] = (2.0, 0.0, 0.0)
    half = cs.blend(a, b, 0.5)
    np.testing.assert_allclose(half[0, :3, 3], [1.0, 0.0, 0.0])
    np.testing.assert_allclose(half[0, :3, :3], _rot(45.0)[0, :3, :3], atol=1e-12)


def test_damped_track_points_the_bone_at_its_target_by_the_smallest_turn():
    owner = np.eye(4)[None]
    out = cs.damped_track(Constraint("DAMPED_TRACK"), owner, np.array([[1.0, 1.0, 0.0]]))
    np.testing.assert_allclose(out[0, :3, 1], np.array([1.0, 1.0, 0.0]) / math.sqrt(2), atol=1e-12)
    np.testing.assert_allclose(out[0, :3, 2], [0.0, 0.0, 1.0], atol=1e-12)  # Z untouched: no twist


def test_stretch_to_scales_to_the_target_and_keeps_volume():
    owner = np.eye(4)[None]
    out = cs.stretch_to(Constraint("STRETCH_TO"), owner, np.array([[0.0, 2.0, 0.0]]), rest_length=1.0)
    np.testing.assert_allclose(np.linalg.norm(out[0, :3, :3], axis=0), [math.sqrt(0.5), 2.0, math.sqrt(0.5)])


def test_copy_rotation_copies_only_the_axes_asked():
    owner = tf.compose(None, tf.quat_from_axis_angle([[0, 1.0, 0]], [0.3]))
    target = tf.compose(None, tf.quat_from_axis_angle([[1.0, 0, 0]], [0.5]))
    out = cs.copy_rotation(Constraint("COPY_ROTATION", axes=(True, False, True)), owner, target, "XYZ")
    eul = tf.mat3_to_euler(out[0, :3, :3], "XYZ")
    np.testing.assert_allclose(eul, [0.5, 0.3, 0.0], atol=1e-12)


def test_armature_constraint_carries_the_owner_with_its_targets_deformation():
    owner = tf.compose(np.array([[1.0, 0.0, 0.0]]))
    deform = _rot(90.0)
    out = cs.armature(Constraint("ARMATURE"), owner, [(deform, 1.0), (np.eye(4)[None], 0.0)])
    np.testing.assert_allclose(out[0, :3, 3], [0.0, 1.0, 0.0], atol=1e-12)


def test_an_unknown_constraint_on_the_path_is_named():
    r = RigBuilder()
    r.add("t", (0, 0, 0), (0, 1, 0))
    r.add("c", (0, 1, 0), (0, 2, 0), constraints=[con("CHILD_OF", "t")])
    with pytest.raises(cs.Unsupported, match="CHILD_OF"):
        RigPose(r.build(), 1).pose(1)


def test_a_bone_moved_by_ik_must_be_pinned_before_it_is_read():
    rig = mini_rig("IK")
    state = RigPose(rig, 1)
    with pytest.raises(cs.Unsupported, match="IK chain"):
        state.pose(rig.index("ORG-shin.L"))
    for name in ("thigh_ik.L", "MCH-shin_ik.L"):
        state.pin(rig.index(name), rig.matrix_local[rig.index(name)][None])
    np.testing.assert_allclose(state.pose(rig.index("ORG-shin.L"))[0], rig.matrix_local[rig.index("ORG-shin.L")])


# ----------------------------------------------------------------------------- deform skeleton and structure


def test_controls_are_told_from_mechanism_by_name():
    assert is_control_name("foot_ik.L") and is_control_name("torso")
    assert not any(is_control_name(n) for n in ("MCH-swing", "ORG-hips", "DEF-thigh.L", "VIS_pole", "tweak_spine"))


def test_the_deform_skeleton_rebuilds_the_chain_of_org_bones():
    rig = mini_rig()
    parents = deform_parents(rig)
    assert parents["ORG-hips"] is None  # its DEF bone hangs from root: a chain start
    assert parents["ORG-thigh.L"] == "ORG-hips"  # an ORG ancestor in the armature
    assert parents["ORG-spine"] == "ORG-hips"  # tail-to-head geometry
    assert parents["ORG-chest"] == "ORG-spine"
    assert parents["ORG-tail"] == "ORG-hips"  # what its Stretch To reads
    sk = deform_skeleton(rig)
    assert sk.names[0] == "root" and set(sk.names) == {"root"} | {n for n in rig.names if n.startswith("ORG-")}
    # the tail points toward the body in the rig; the skeleton turns it end for end at the hips
    k = sk.index("ORG-tail")
    np.testing.assert_allclose(sk.heads[k], [0.0, 0.0, 0.9], atol=1e-12)
    np.testing.assert_allclose(sk.tails[k], [0.0, 0.2, 0.9], atol=1e-12)
    offsets = rest_offsets(rig, sk)
    assert list(offsets) == [k]
    np.testing.assert_allclose(sk.matrix_local[k] @ offsets[k], rig.matrix_local[rig.index("ORG-tail")], atol=1e-12)


def test_limbs_are_found_from_their_switch():
    rig = mini_rig("IK", pole=True)
    (limb,) = find_limbs(rig)
    name = rig.names.__getitem__
    assert limb.switch == ("thigh_parent.L", "IK_FK") and (limb.ik_value, limb.fk_value) == (0.0, 1.0)
    assert [name(i) for i in limb.deform] == ["ORG-thigh.L", "ORG-shin.L", "ORG-foot.L"]
    assert [name(i) for i in limb.fk] == ["thigh_fk.L", "shin_fk.L", "foot_fk.L"]
    assert [name(i) for i in limb.chain] == ["thigh_ik.L", "MCH-shin_ik.L"]
    assert name(limb.ik_target) == "MCH-ik_target.L" and name(limb.ik_control) == "foot_ik.L"
    assert name(limb.pole) == "thigh_ik_target.L"
    assert main_control_above(rig, rig.index("MCH-ik_target.L")) == rig.index("foot_ik.L")


def test_each_deform_bone_is_driven_by_the_control_above_what_it_copies():
    rig = mini_rig()
    drv = {n: driver_control(rig, rig.index(n)) for n in ("ORG-hips", "ORG-chest", "ORG-neck", "ORG-tail")}
    assert {k: rig.names[v] for k, v in drv.items()} == {
        "ORG-hips": "spine_fk",
        "ORG-chest": "chest_fk",
        "ORG-neck": "neck",
        "ORG-tail": "tail",
    }
    assert driver_control(rig, rig.index("DEF-thigh.L")) == -1  # follows a deform bone


# ----------------------------------------------------------------------------- conversion


def _evaluate_keys(rig, keys, frames, pins=()):
    state = RigPose(rig, frames)
    for c, basis in keys.basis.items():
        state.set_basis(c, basis)
    for i, m in pins:
        state.pin(i, m)
    return state


def test_fk_conversion_reproduces_every_deform_bone_it_can_and_keys_only_controls():
    rig = mini_rig("FK")
    sk, intended = moving_pose(rig, rigid=("ORG-spine",))  # ORG-spine cannot bend on ORG-hips (next test)
    keys = convert(rig, sk, intended, "FK")
    assert keys.basis and all(rig.is_control(c) for c in keys.basis)
    names = {rig.names[c] for c in keys.basis}
    assert {"root", "torso", "thigh_fk.L", "shin_fk.L", "foot_fk.L", "neck", "tail"} <= names
    assert keys.switches == {("thigh_parent.L", "IK_FK"): 1.0}
    state = _evaluate_keys(rig, keys, intended.shape[0])
    goal = rig_pose(rig, sk, intended)
    for name in (
        "ORG-hips",
        "ORG-spine",
        "ORG-thigh.L",
        "ORG-shin.L",
        "ORG-foot.L",
        "ORG-neck",
        "ORG-tail",
        "ORG-chest",
    ):
        got = bone_points(state.pose(rig.index(name)), rig.lengths[rig.index(name)])
        want = bone_points(goal[:, sk.index(name)], rig.lengths[rig.index(name)])
        assert np.abs(got - want).max() < 1e-6, name


def test_fk_conversion_of_a_rigid_pair_is_the_best_fit_and_is_reported_by_the_residual():
    """ORG-hips and ORG-spine both hang from spine_fk (as Rigify's pelvis and lower spine do): a
    bend between them cannot be keyed; the control takes the best rigid fit."""
    rig = mini_rig("FK")
    sk, intended = moving_pose(rig, amount=0.1)
    keys = convert(rig, sk, intended, "FK")
    state = _evaluate_keys(rig, keys, intended.shape[0])
    goal = rig_pose(rig, sk, intended)
    errs = []
    for name in ("ORG-hips", "ORG-spine"):
        got = bone_points(state.pose(rig.index(name)), rig.lengths[rig.index(name)])
        want = bone_points(goal[:, sk.index(name)], rig.lengths[rig.index(name)])
        errs.append(np.linalg.norm(got - want, axis=-1).max())
    assert 1e-4 < max(errs) < 0.05, errs


def test_ik_conversion_places_the_target_the_foot_control_and_the_knee():
    rig = mini_rig("IK")
    sk, intended = moving_pose(rig, amount=0.08)
    keys = convert(rig, sk, intended, "IK")
    names = {rig.names[c] for c in keys.basis}
    assert {"foot_ik.L", "thigh_ik.L"} <= names and not {"thigh_fk.L", "shin_fk.L"} & names
    assert keys.switches == {("thigh_parent.L", "IK_FK"): 0.0}
    goal = rig_pose(rig, sk, intended)
    pins = [
        (rig.index(m), goal[:, sk.index(o)])
        for m, o in (("thigh_ik.L", "ORG-thigh.L"), ("MCH-shin_ik.L", "ORG-shin.L"))
    ]
    state = _evaluate_keys(rig, keys, intended.shape[0], pins)
    target = state.pose(rig.index("MCH-ik_target.L"))
    np.testing.assert_allclose(target, goal[:, sk.index("ORG-foot.L")], atol=1e-6)
    # the knee control only turns about its own axis (the Y rotation Rigify leaves free)
    basis = keys.basis[rig.index("thigh_ik.L")]
    np.testing.assert_allclose(basis[:, :3, 1], np.broadcast_to([0.0, 1.0, 0.0], basis[:, :3, 1].shape), atol=1e-9)


def test_ik_conversion_with_a_pole_places_the_pole_in_front_of_the_knee():
    rig = mini_rig("IK", pole=True)
    sk, intended = moving_pose(rig, amount=0.08)
    keys = convert(rig, sk, intended, "IK")
    pole = rig.index("thigh_ik_target.L")
    assert pole in keys.basis and keys.key_location[pole] and rig.index("thigh_ik.L") not in keys.basis
    goal = rig_pose(rig, sk, intended)
    state = _evaluate_keys(rig, keys, intended.shape[0])
    hip, knee, ankle = (goal[:, sk.index(n), :3, 3] for n in ("ORG-thigh.L", "ORG-shin.L", "ORG-foot.L"))
    p = state.pose(pole)[:, :3, 3]
    normal = np.cross(knee - hip, ankle - hip)
    assert np.abs(np.sum((p - hip) * normal, axis=-1) / np.linalg.norm(normal, axis=-1)).max() < 1e-6  # in plane
    axis = (ankle - hip) / np.linalg.norm(ankle - hip, axis=-1, keepdims=True)
    assert (np.sum((p - knee) * (knee - hip - axis * np.sum((knee - hip) * axis, -1, keepdims=True)), -1) > 0).all()


def test_a_limb_that_does_not_move_gets_no_keys_and_no_switch():
    rig = mini_rig("IK")
    sk = deform_skeleton(rig)
    still = np.broadcast_to(sk.matrix_local, (3,) + sk.matrix_local.shape).copy()
    keys = convert(rig, sk, still, "IK")
    assert keys.basis == {} and keys.switches == {}


def test_the_knee_twist_is_the_signed_angle_about_the_axis():
    axis = np.array([[0.0, 0.0, -1.0]])
    assert knee_twist(axis, np.array([[0.0, -1.0, 0.0]]), np.array([[1.0, 0.0, 0.0]]))[0] == pytest.approx(-math.pi / 2)


def test_kabsch_recovers_a_rigid_motion():
    rng = np.random.default_rng(0)
    pts = rng.normal(size=(2, 6, 3))
    m = tf.compose(np.array([[0.3, -1.0, 2.0]] * 2), tf.quat_normalize(rng.normal(size=(2, 4))))
    moved = np.einsum("fij,fnj->fni", m[:, :3, :3], pts) + m[:, None, :3, 3]
    np.testing.assert_allclose(kabsch(pts, moved), m, atol=1e-10)


def test_conversion_reports_progress_and_can_be_cancelled():
    rig = mini_rig("FK")
    sk, intended = moving_pose(rig)
    seen = []
    convert(rig, sk, intended, "FK", progress=seen.append)
    assert len(seen) >= 3 and seen == sorted(seen) and seen[-1] == 1.0
    p = Progress()
    p.cancel()
    with pytest.raises(Cancelled):
        convert(rig, sk, intended, "FK", progress=p)


def test_a_bad_mode_is_refused():
    rig = mini_rig()
    sk, intended = moving_pose(rig)
    with pytest.raises(ValueError, match="mode"):
        convert(rig, sk, intended, "SPLINE")


# ----------------------------------------------------------------------------- residual


def test_residual_compares_org_heads_and_tails_and_def_heads():
    rig = mini_rig()
    checks = deform_checks(rig, [rig.index("ORG-thigh.L")])
    assert {rig.names[d] for d, _ in checks} == {"ORG-thigh.L", "DEF-thigh.L", "DEF-thigh.L.001"}
    rest = np.stack([rig.matrix_local[d] for d, _ in checks])[None]
    moved = rest.copy()
    moved[..., :3, 1] *= 1.1  # every bone 10 % longer: tails move, heads do not
    r = residual_m(rig, checks, moved, rest)
    own = np.array([d == o for d, o in checks])
    assert np.all(r[0, ~own] == 0.0) and np.all(r[0, own] > 0.0)
    assert summary(rig, checks, r)["control_residual_bone"] == "ORG-thigh.L"


def test_the_intended_pose_bone_by_bone_equals_the_skeletons_fk():
    from procanim_addon.controls.intended import IntendedPose

    rig = mini_rig()
    sk = deform_skeleton(rig)
    rng = np.random.default_rng(5)
    loc = rng.normal(0, 0.05, (7, len(sk), 3))
    rot = tf.quat_normalize(rng.normal(size=(7, len(sk), 4)))
    offsets = rest_offsets(rig, sk)
    lazy = IntendedPose(sk, loc, rot, offsets=offsets, samples=[0, 3, 6])
    want = rig_pose(rig, sk, sk.fk(loc, rot))
    for k in range(len(sk)):
        np.testing.assert_allclose(lazy.sampled(k), want[[0, 3, 6], k], atol=1e-12)
        np.testing.assert_allclose(lazy.full(k), want[:, k], atol=1e-12)
    lazy.set_samples([1])
    np.testing.assert_allclose(lazy.sampled(0), want[[1], 0], atol=1e-12)
