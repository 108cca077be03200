"""The handshake baked in Blender (Deglorie et al. 2015), measured on the EVALUATED pose (frame_set).

The grip point is measured here from its documented definition (docs/handshake.md), not from the
engine: in the hand bone's rest frame (bone-local, metres, L = hand bone length)

    grip = (0, 0.5·L, 0) + 0.15·L · n̂

where n̂ is the palm normal: the direction toward the body's midline (from the right hand toward
the left hand, horizontal) expressed in the hand bone's rest frame and made perpendicular to the
bone (Y). World grip point = matrix_world @ pose_bone.matrix @ grip.

Phases are read from the per-frame phase string the bake stores (``phase_initiator`` …); every
distance is measured here. Most bakes use DLS (the fastest solver); JT and fuzzy get one bake each.
"""

from __future__ import annotations

import json
import math

import addon_utils
import bpy
import harness
import numpy as np
import pytest

GRIP_FRACTION = 0.5  # documented: anchor at half the hand bone
HALF_PALM = 0.15  # documented: half of a palm 0.3 × hand length thick
IK_TOL_CM = 0.05  # acceptance: IK solvers
FUZZY_TOL_CM = 0.5  # acceptance: fuzzy controllers
CONTACT_DROP = 0.6  # documented: C sits 0.6 forearm lengths below the mean rest elbow height
DECAY = 0.5  # documented: the secondary shake has half the primary's amplitude

# Explicit timings (the accuracy tests rebuild the shake path from them): one primary and one
# secondary shake.
SHAKE = dict(shake_frames=24, secondary_shakes=1, secondary_frames=14)
N_SHAKE = SHAKE["shake_frames"] + SHAKE["secondary_frames"]

# Shorter timings for tests that do not measure accuracy (fewer frames to solve).
QUICK = dict(
    neutral_frames=4,
    dummy_frames=8,
    response_frames=4,
    approach_frames=12,
    shake_frames=12,
    secondary_shakes=0,
    retreat_frames=12,
    hold_frames=3,
)


def add_human(name, location=(0.0, 0.0, 0.0), yaw_deg=0.0, scale=1.0):
    """ProcAnim's human (faces −Y at yaw 0), placed and turned about Z."""
    assert bpy.ops.procanim.add_human(name=name, location=location) == {"FINISHED"}
    obj = bpy.data.objects[name]
    obj.rotation_euler = (0.0, 0.0, math.radians(yaw_deg))
    obj.scale = (scale, scale, scale)
    bpy.context.view_layer.update()
    return obj


def facing_pair(distance=0.9, origin=(0.0, 0.0), yaw_deg=0.0, scale_b=1.0, partner_turn_deg=0.0):
    """Initiator at ``origin`` turned by ``yaw_deg``; partner ``distance`` m in front, facing back."""
    a = add_human("Ann", (origin[0], origin[1], 0.0), yaw_deg)
    fwd = np.array([math.sin(math.radians(yaw_deg)), -math.cos(math.radians(yaw_deg))])  # −Y turned by yaw
    loc_b = np.array(origin) + distance * fwd
    b = add_human("Bob", (loc_b[0], loc_b[1], 0.0), yaw_deg + 180.0 + partner_turn_deg, scale_b)
    return a, b


def grip_local(obj) -> np.ndarray:
    """The documented grip point of the right hand, in the hand bone's local (rest) frame.

    Palm normal: toward the midline for arms hanging at the sides (forearm more vertical than
    horizontal), down for arms held out."""
    bones = obj.data.bones
    hand = bones["hand.R"]
    rest = np.array(hand.matrix_local, dtype=float)[:3, :3]
    medial = np.array(bones["hand.L"].head_local - hand.head_local, dtype=float)
    medial[2] = 0.0
    forearm = bones["forearm.R"]
    hanging = abs((forearm.tail_local - forearm.head_local).normalized().z) > 0.5
    normal = medial / np.linalg.norm(medial) if hanging else np.array([0.0, 0.0, -1.0])
    n = rest.T @ normal
    n[1] = 0.0
    n /= np.linalg.norm(n)
    length = hand.length
    return np.array([0.0, GRIP_FRACTION * length, 0.0]) + HALF_PALM * length * n


def grips(obj, frames) -> np.ndarray:
    """World grip points ``(F, 3)`` on the evaluated pose."""
    local = np.append(grip_local(obj), 1.0)
    out = []
    for f in frames:
        pose = harness.evaluated_pose(obj, int(f), space="WORLD")
        out.append((pose["hand.R"] @ local)[:3])
    return np.array(out)


def metrics(obj) -> dict:
    return json.loads(obj.animation_data.action.procanim.metrics_json)


def shake(a, b, **kwargs):
    args = dict(initiator=a.name, partner=b.name, frame_start=1)
    args.update(kwargs)
    assert bpy.ops.procanim.handshake(**args) == {"FINISHED"}
    m = metrics(a)
    frames = np.arange(m["frame_start"], m["frame_end"] + 1)
    return m, frames


def phase_frames(m, frames, who, letter):
    phases = np.array(list(m[f"phase_{who}"]))
    assert len(phases) == len(frames)
    return frames[phases == letter]


def at_rest(obj, frame, tol=1e-4):
    """Every bone of the evaluated pose at its rest matrix (armature space)."""
    pose = harness.evaluated_pose(obj, frame)
    worst = max(float(np.abs(pose[b.name] - np.array(b.matrix_local)).max()) for b in obj.data.bones)
    return worst < tol, worst


# ------------------------------------------------------------------------------------------ meet


@pytest.mark.parametrize(
    "solvers",
    [("DLS", "DLS"), ("JACOBIAN_TRANSPOSE", "CCD"), ("FUZZY", "FUZZY")],
    ids=["dls", "jt+ccd", "fuzzy"],
)
def test_hands_meet_in_the_shake_phase_on_the_evaluated_pose(solvers):
    a, b = facing_pair()
    # the motion as generated (every key written): the 1 mm bake is measured against it in test_editable_bakes
    m, frames = shake(a, b, solver_initiator=solvers[0], solver_partner=solvers[1], key_tolerance=0.0, **SHAKE)
    assert m["sequence_initiator"] == "NDASRN" and m["sequence_partner"] == "NASRN"
    s_frames = phase_frames(m, frames, "initiator", "S")
    np.testing.assert_array_equal(s_frames, phase_frames(m, frames, "partner", "S"))  # synchronised A → S
    assert len(s_frames) == N_SHAKE
    ga, gb = grips(a, s_frames), grips(b, s_frames)
    gap_cm = 100 * np.linalg.norm(ga - gb, axis=1)
    tol = {"FUZZY": FUZZY_TOL_CM}.get(solvers[1], IK_TOL_CM)
    assert gap_cm.mean() <= tol, f"grip to grip {gap_cm.mean():.4f} cm mean (max {gap_cm.max():.4f})"
    # each grip point is on the model's target path (Deglorie et al. 2015, §4.1, rebuilt here from the rest elbows):
    # C on the elbow line (equal dominance: halfway), CONTACT_DROP forearms below the mean elbow height;
    # S: C + o(t)·ŝ, ŝ ⊥ elbow line (vertical plane), |ŝ| = 35 % of the elbow distance, o(t) = ½ sin 2πt
    # for the primary shake and ½·DECAY sin 2πt for the secondary one.
    elbows_rest = [np.array(o.matrix_world @ o.data.bones["forearm.R"].head_local) for o in (a, b)]
    forearm = np.mean([o.data.bones["forearm.R"].length * o.scale[0] for o in (a, b)])
    c = 0.5 * (elbows_rest[0] + elbows_rest[1])
    c[2] = np.mean([e[2] for e in elbows_rest]) - CONTACT_DROP * forearm
    before = int(s_frames[0]) - 1
    e_a = harness.evaluated_pose(a, before, space="WORLD")["forearm.R"][:3, 3]
    e_b = harness.evaluated_pose(b, before, space="WORLD")["forearm.R"][:3, 3]
    line = (e_b - e_a) / np.linalg.norm(e_b - e_a)
    up = np.array([0.0, 0.0, 1.0])
    s_hat = (up - line * (up @ line)) / np.linalg.norm(up - line * (up @ line))
    s_vec = 0.35 * np.linalg.norm(e_b - e_a) * s_hat
    n1, n2 = SHAKE["shake_frames"], SHAKE["secondary_frames"]
    o = np.concatenate(
        [
            0.5 * np.sin(2 * np.pi * np.arange(1, n1 + 1) / n1),
            0.5 * DECAY * np.sin(2 * np.pi * np.arange(1, n2 + 1) / n2),
        ]
    )
    target = c + o[:, None] * s_vec
    for name, g, solver in (("initiator", ga, solvers[0]), ("partner", gb, solvers[1])):
        err_cm = 100 * np.linalg.norm(g - target, axis=1)
        tol = FUZZY_TOL_CM if solver == "FUZZY" else IK_TOL_CM
        assert err_cm.mean() <= tol, f"{name} grip to target {err_cm.mean():.4f} cm mean (max {err_cm.max():.4f})"
    # the shake really moves: the grips' vertical travel is |ŝ|·(vertical part of ŝ)
    mid = 0.5 * (ga + gb)
    span = np.ptp(mid[: SHAKE["shake_frames"], 2])
    lagging = "FUZZY" in solvers  # a fuzzy controller lags the target: a little less travel
    assert span == pytest.approx(np.linalg.norm(s_vec) * s_hat[2], rel=0.1 if lagging else 0.02)
    assert np.abs((mid - mid[0]) @ line).max() < 0.05 * span  # along the shake vector, not the elbow line
    # the error report is on both actions and agrees with what we measured
    for obj in (a, b):
        mm = metrics(obj)
        assert mm["both_mean_cm"] == pytest.approx(gap_cm.mean(), abs=0.02 + 0.05 * gap_cm.mean())
        assert mm["time_ms_initiator"] > 0 and mm["time_ms_partner"] > 0
        assert obj.animation_data.action.name == f"{obj.name}.handshake"


def test_hands_stay_apart_before_the_approach_and_return_to_neutral_after_the_retreat(capsys):
    a, b = facing_pair()
    m, frames = shake(a, b, key_tolerance=0.0, **QUICK)  # the motion as generated: still is still
    printed = capsys.readouterr().out  # the Table-3 report is printed for scripts
    assert "ProcAnim handshake 'Ann' (DLS) → 'Bob' (DLS)" in printed
    assert f"both hands{'':16}{m['both_mean_cm']:9.4f}" in printed
    before = frames[: QUICK["neutral_frames"]]
    assert set(m["phase_initiator"][: len(before)]) == {"N"}
    gap = np.linalg.norm(grips(a, before) - grips(b, before), axis=1)
    assert gap.min() > 0.3, f"hands {gap.min():.3f} m apart before the invitation"
    # the partner's hand does not move before it has answered (N until its approach)
    n_partner = phase_frames(m, frames, "partner", "N")
    first_a = frames[list(m["phase_partner"]).index("A")]
    still = n_partner[n_partner < first_a]
    gb = grips(b, still)
    assert np.linalg.norm(gb - gb[0], axis=1).max() < 1e-6
    # the invitation moves the initiator's hand toward the partner, still well apart
    d_frames = phase_frames(m, frames, "initiator", "D")
    gd = grips(a, d_frames)
    assert np.linalg.norm(gd[-1] - gb[0]) < np.linalg.norm(gd[0] - gb[0]) - 0.05
    # after the retreat: both at rest, arms and body
    for obj in (a, b):
        ok, worst = at_rest(obj, int(frames[-1]))
        assert ok, f"{obj.name} is {worst:.2e} off its rest pose on the last frame"
    assert m["sequence_initiator"].endswith("RN") and m["sequence_partner"].endswith("RN")


def test_refusal_the_initiator_retreats_and_the_partner_never_moves():
    a, b = facing_pair()
    m, frames = shake(a, b, accept=False, **QUICK)
    assert m["sequence_initiator"] == "NDRN" and m["sequence_partner"] == "N"
    assert m["shake_frames"] == 0 and m["accepted"] is False
    gb = grips(b, frames[::3])
    assert np.linalg.norm(gb - gb[0], axis=1).max() < 1e-6
    ga = grips(a, frames)
    reach = np.linalg.norm(ga - ga[0], axis=1)
    assert reach.max() > 0.05  # the invitation went out …
    assert np.linalg.norm(ga - gb[0], axis=1).min() > 0.2  # … never reached the partner's hand
    assert at_rest(a, int(frames[-1]))[0]  # … and came back


def test_characters_of_scale_one_and_0_8_still_shake():
    a, b = facing_pair(distance=0.85, scale_b=0.8)
    m, frames = shake(a, b, **SHAKE)
    s_frames = phase_frames(m, frames, "initiator", "S")
    assert len(s_frames) == N_SHAKE
    gap_cm = 100 * np.linalg.norm(grips(a, s_frames) - grips(b, s_frames), axis=1)
    assert gap_cm.mean() <= IK_TOL_CM, f"{gap_cm.mean():.4f} cm"
    # the smaller one's hand is really smaller: its grip offset is 0.8 of the other's in the world
    offset_b = np.array(b.matrix_world.to_3x3()) @ grip_local(b)
    assert np.linalg.norm(offset_b) == pytest.approx(0.8 * np.linalg.norm(grip_local(a)), rel=1e-6)


@pytest.mark.parametrize(
    "origin, yaw, turn", [((3.0, -2.0), 37.0, 0.0), ((-5.0, 4.0), -120.0, 25.0)], ids=["rotated", "turned-away-25"]
)
def test_characters_placed_anywhere_facing_roughly_each_other(origin, yaw, turn):
    a, b = facing_pair(distance=0.95, origin=origin, yaw_deg=yaw, partner_turn_deg=turn)
    m, frames = shake(a, b, dominance_initiator=0.8, dominance_partner=0.2, **QUICK)
    s_frames = phase_frames(m, frames, "initiator", "S")
    ga, gb = grips(a, s_frames), grips(b, s_frames)
    gap_cm = 100 * np.linalg.norm(ga - gb, axis=1)
    assert gap_cm.mean() <= IK_TOL_CM, f"{gap_cm.mean():.4f} cm"
    # the dominant initiator keeps the grip out of its own space: nearer the partner (top view)
    c = ga.mean(axis=0)[:2]
    assert np.linalg.norm(c - np.array(b.location[:2])) < np.linalg.norm(c - np.array(a.location[:2]))


def test_a_rigify_metarig_shakes_hands_with_a_procanim_human():
    addon_utils.enable("rigify", default_set=True)
    bpy.ops.object.armature_human_metarig_add()
    meta = bpy.context.view_layer.objects.active
    meta.name = "Meta"
    meta.location, meta.rotation_euler[2] = (0.0, -0.9, 0.0), math.pi
    assert bpy.ops.procanim.detect_rig(armature=meta.name) == {"FINISHED"}
    ann = add_human("Ann")
    m, frames = shake(ann, meta, **SHAKE)
    s_frames = phase_frames(m, frames, "initiator", "S")
    assert len(s_frames) == N_SHAKE
    gap_cm = 100 * np.linalg.norm(grips(ann, s_frames) - grips(meta, s_frames), axis=1)
    assert gap_cm.mean() <= IK_TOL_CM, f"{gap_cm.mean():.4f} cm"
    assert at_rest(meta, int(frames[-1]))[0]


def test_rerun_replaces_the_bake_and_keeps_the_previous_action():
    a, b = facing_pair()
    keep = bpy.data.actions.new("Idle")
    a.animation_data_create().action = keep
    shake(a, b, **QUICK)
    action_a = a.animation_data.action
    assert action_a.procanim.previous_action == "Idle" and keep.use_fake_user
    shake(a, b, accept=False, **QUICK)
    assert a.animation_data.action == action_a and b.animation_data.action.name == "Bob.handshake"
    assert metrics(a)["sequence_initiator"] == "NDRN"
    assert sorted(act.name for act in bpy.data.actions) == ["Ann.handshake", "Bob.handshake", "Idle"]
    fc = harness.fcurve_map(action_a, a)
    assert ('pose.bones["hand.R"].rotation_quaternion', 0) in fc
    assert not any('"hand.L"' in path or '"thigh.L"' in path for path, _ in fc)  # only the right arm (+ step)


# ------------------------------------------------------------------------------------------ refusals


def _nothing_changed(*objs):
    assert not bpy.data.actions
    for obj in objs:
        assert obj.animation_data is None or obj.animation_data.action is None


def test_same_object_twice_is_refused():
    a = add_human("Ann")
    with pytest.raises(RuntimeError, match="both 'Ann'"):
        bpy.ops.procanim.handshake(initiator="Ann", partner="Ann")
    _nothing_changed(a)


def test_non_armatures_are_refused():
    a = add_human("Ann")
    bpy.ops.mesh.primitive_cube_add(location=(0.0, -1.0, 0.0))
    cube = bpy.context.object
    with pytest.raises(RuntimeError, match=f"'{cube.name}' is a mesh, not an armature"):
        bpy.ops.procanim.handshake(initiator=a.name, partner=cube.name)
    with pytest.raises(RuntimeError, match="no object named 'Nobody'"):
        bpy.ops.procanim.handshake(initiator="Nobody", partner=a.name)
    _nothing_changed(a)


def test_missing_arm_roles_are_refused_naming_the_role_and_rig():
    a, b = facing_pair()
    for item in b.data.procanim_roles:
        if item.role == "forearm.R":
            item.bone = ""
    with pytest.raises(RuntimeError, match=r"Missing bone roles on 'Bob'.*forearm\.R"):
        bpy.ops.procanim.handshake(initiator=a.name, partner=b.name)
    _nothing_changed(a, b)


def test_characters_ten_metres_apart_are_refused():
    a, b = facing_pair(distance=10.0)
    with pytest.raises(RuntimeError, match="too far apart"):
        bpy.ops.procanim.handshake(initiator=a.name, partner=b.name)
    _nothing_changed(a, b)


def test_characters_facing_away_are_refused():
    a, b = facing_pair(partner_turn_deg=180.0)
    # the engine's check (the operator's own copy, while it exists, says it first)
    engine = r"'Ann' → 'Bob': The partner does not face the initiator \(turned 180° away; at most 90°\)"
    with pytest.raises(RuntimeError, match="'Bob' faces 180° away from 'Ann'|" + engine):
        bpy.ops.procanim.handshake(initiator=a.name, partner=b.name)
    _nothing_changed(a, b)


def test_a_non_uniform_scale_is_refused_naming_both_characters():
    a, b = facing_pair()
    b.scale = (1.0, 1.0, 0.6)
    with pytest.raises(RuntimeError, match=r"'Ann' → 'Bob': The partner must have a uniform, positive scale"):
        bpy.ops.procanim.handshake(initiator=a.name, partner=b.name)
    _nothing_changed(a, b)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(dominance_initiator=1.5), r"Dominance initiator must be between 0 and 1 \(got 1.5\)"),
        (dict(dominance_partner=-0.1), r"Dominance partner must be between 0 and 1"),
        (dict(shake_frames=1), r"Shake frames must be between 2 and 2400 frames \(got 1\)"),
        (dict(neutral_frames=-3), r"Neutral frames must be between 0 and 2400"),
        (dict(approach_frames=100000), r"Approach frames must be between 2 and 2400 frames \(got 100,000\)"),
    ],
)
def test_extreme_values_are_refused(kwargs, message):
    a, b = facing_pair()
    with pytest.raises(RuntimeError, match=message):
        bpy.ops.procanim.handshake(initiator=a.name, partner=b.name, **kwargs)
    _nothing_changed(a, b)


# ------------------------------------------------------------------------------------------ sidebar


def test_sidebar_settings_persist_on_each_character_and_are_used_when_no_argument_is_given():
    a, b = facing_pair()
    hs = bpy.context.scene.procanim.handshake
    hs.initiator, hs.partner = a, b
    a.procanim_character.dominance = 0.9
    b.procanim_character.solver, b.procanim_character.dominance = "FABRIK", 0.1
    assert bpy.types.Object.bl_rna.properties.get("procanim_character") is not None
    # empty names and no solver/dominance arguments: the panel's pair and each character's own settings
    assert bpy.ops.procanim.handshake(**QUICK) == {"FINISHED"}
    m = metrics(b)
    assert (m["initiator"], m["partner"]) == ("Ann", "Bob")
    assert (m["solver_initiator"], m["solver_partner"]) == ("DLS", "FABRIK")
    assert m["contact_weight"] > 0.5  # the dominant initiator's grip moved toward the partner
    # an explicit argument wins over the stored value
    assert bpy.ops.procanim.handshake(solver_partner="DLS", **QUICK) == {"FINISHED"}
    assert metrics(b)["solver_partner"] == "DLS"
    panel = bpy.types.PROCANIM_PT_handshake
    assert panel.bl_category == "ProcAnim" and panel.bl_space_type == "VIEW_3D"
