"""The handshake generator end to end on two ProcAnim humans (engine FK of the produced clips)."""

import sys
from pathlib import Path

import numpy as np
import pytest

from procanim_addon.errors import InputError
from procanim_addon.handshake import HandshakeParams, generate_handshake
from procanim_addon.handshake.character import prepare_character
from procanim_addon.handshake.report import grip_path
from procanim_addon.ik.solve import SOLVERS
from procanim_addon.progress import Cancelled
from procanim_addon.rigs import human_skeleton

sys.path.insert(0, str(Path(__file__).resolve().parent))
from progress_probe import ProgressProbe  # noqa: E402

QUICK = dict(neutral_frames=3, dummy_frames=6, response_frames=3, approach_frames=10, shake_frames=12,
             secondary_shakes=1, secondary_frames=8, retreat_frames=10, hold_frames=2)


def placed(x, y, yaw_deg, scale=1.0):
    a = np.radians(yaw_deg)
    m = np.eye(4)
    m[:3, :3] = scale * np.array([[np.cos(a), -np.sin(a), 0], [np.sin(a), np.cos(a), 0], [0, 0, 1]])
    m[:3, 3] = (x, y, 0.0)
    return m


def two_humans(distance=1.0, partner_height=1.75, partner_scale=1.0):
    """Initiator at the origin facing −Y; partner ``distance`` m in front of it, facing it."""
    sk1, rm1 = human_skeleton()
    sk2, rm2 = human_skeleton(partner_height)
    return (sk1, rm1, placed(0, 0, 0)), (sk2, rm2, placed(0, -distance, 180, partner_scale))


@pytest.fixture(scope="module")
def dls_bake():
    a, b = two_humans()
    return a, b, generate_handshake(a, b, HandshakeParams(solver_initiator="DLS", solver_partner="DLS", **QUICK))


def phases(report, who):
    return np.array(list(report[f"phase_{who}"]))


def test_phase_order_and_the_synchronised_shake(dls_bake):
    _, _, (ci, cp, rep) = dls_bake
    assert rep["sequence_initiator"] == "NDASRN" and rep["sequence_partner"] == "NASRN"
    start_i = dict((p, f) for f, p in rep["phase_starts_initiator"])
    start_p = dict((p, f) for f, p in rep["phase_starts_partner"])
    assert start_i["S"] == start_p["S"]  # A → S on the same frame
    assert start_p["A"] < start_i["A"]  # the partner, accepting during the dummy, arrives first and waits
    assert ci.frame_count == cp.frame_count == len(rep["phase_initiator"])


def test_the_grip_points_meet_in_the_shake_phase(dls_bake):
    _, _, (_, _, rep) = dls_bake
    assert rep["shake_frames"] == 20
    assert rep["both_mean_cm"] < 0.05 and rep["initiator_mean_cm"] < 0.05 and rep["partner_mean_cm"] < 0.05
    assert rep["both_max_cm"] < 0.1


def test_the_error_curves_agree_with_the_table(dls_bake):
    _, _, (_, _, rep) = dls_bake
    curve = np.array(rep["curves"]["error_both_cm"])
    assert len(curve) == rep["shake_frames"]
    assert curve.mean() == pytest.approx(rep["both_mean_cm"]) and curve.max() == pytest.approx(rep["both_max_cm"])


def test_the_hands_actually_move_up_and_down_in_the_shake(dls_bake):
    _, _, (_, _, rep) = dls_bake
    g = np.array(rep["curves"]["grip_initiator"])[rep["curves"]["frames_in_shake"]]
    assert np.ptp(g[:, 2]) > 0.1  # 35 % of ~0.4–0.6 m elbow distance, mostly vertical


def test_hands_stay_apart_before_the_approach(dls_bake):
    _, _, (_, _, rep) = dls_bake
    gi, gp = np.array(rep["curves"]["grip_initiator"]), np.array(rep["curves"]["grip_partner"])
    before = (phases(rep, "partner") == "N") & (np.cumsum(phases(rep, "partner") == "A") == 0)
    assert before.sum() >= 5
    assert np.all(np.linalg.norm(gi[before] - gp[before], axis=1) > 0.3)


def test_both_return_exactly_to_the_rest_pose_after_the_retreat(dls_bake):
    (sk, _, _), _, (ci, cp, rep) = dls_bake
    for clip, who in ((ci, "initiator"), (cp, "partner")):
        last_r = np.nonzero(phases(rep, who) == "R")[0].max()
        tail = slice(last_r + 1, None)
        assert np.allclose(np.abs(clip.rotations[tail, :, 0]), 1.0)  # identity quaternions
        assert np.allclose(clip.locations[tail], 0.0)  # the step is taken back
        assert np.allclose(clip.rotations[0, :, 0], 1.0)  # and it started at rest


def test_clips_key_the_arm_chain_and_the_step(dls_bake):
    (sk, rm, _), _, (ci, _, rep) = dls_bake
    keyed = set(ci.keyed_bones())
    assert {rm.bone(r) for r in ("clavicle.R", "upper_arm.R", "forearm.R", "hand.R")} <= keyed
    assert rm.bone("hand.L") not in keyed
    assert ci.frames[0] == HandshakeParams().frame_start and ci.fps == 24.0
    if rep["step_initiator_m"] > 0:
        assert ci.key_location[sk.index(rm.bone("root"))]
    assert ci.is_finite()


def test_the_elbows_bend_the_right_way_and_stay_within_limits(dls_bake):
    a, _, (ci, _, _) = dls_bake
    ch = prepare_character("initiator", a[0], a[1], a[2], "DLS", HandshakeParams())
    q = ci.rotations[:, ch.chain.bones]
    angles = np.array([ch.chain.angles_from_quaternions(qf) for qf in q])
    raw = np.array([[ch.chain.angles_of(j, m) for j, m in enumerate(ch.chain.local_matrices(a_))] for a_ in angles])
    assert np.all(raw[:, 2, 0] >= -1e-6)  # elbow flexion never negative
    assert np.all(raw >= ch.chain.lower - 1e-6) and np.all(raw <= ch.chain.upper + 1e-6)


def test_the_contact_moves_toward_the_less_dominant_character():
    a, b = two_humans()
    quick = dict(QUICK, shake_frames=4, secondary_shakes=0)
    _, _, even = generate_handshake(a, b, HandshakeParams(solver_initiator="DLS", solver_partner="DLS", **quick))
    _, _, bold = generate_handshake(a, b, HandshakeParams(solver_initiator="DLS", solver_partner="DLS",
                                                          dominance_initiator=0.8, dominance_partner=0.2, **quick))
    partner_at = b[2][:3, 3]
    c_even, c_bold = np.array(even["contact_point"]), np.array(bold["contact_point"])
    assert np.linalg.norm((c_bold - partner_at)[:2]) < np.linalg.norm((c_even - partner_at)[:2]) - 0.05
    # and the hands really go there: C at the end of the approach, the frame before the shake
    g = np.array(bold["curves"]["grip_initiator"])[bold["curves"]["frames_in_shake"][0] - 1]
    assert np.linalg.norm(g - c_bold) < 1e-3


def test_refusal_the_initiator_retreats_from_the_dummy_and_the_partner_never_moves():
    a, b = two_humans()
    ci, cp, rep = generate_handshake(a, b, HandshakeParams(solver_initiator="CCD", solver_partner="CCD",
                                                           accept=False, **QUICK))
    assert rep["sequence_initiator"] == "NDRN" and rep["sequence_partner"] == "N"
    assert not rep["accepted"] and rep["shake_frames"] == 0
    assert np.allclose(cp.rotations[..., 0], 1.0)  # partner's clip is the rest pose throughout
    assert np.allclose(ci.rotations[-1, :, 0], 1.0)  # initiator back at rest
    assert np.any(np.abs(ci.rotations[:, :, 0]) < 0.999)  # … after inviting


@pytest.mark.slow
@pytest.mark.parametrize("solver", SOLVERS)
def test_every_solver_shakes_hands_within_the_accuracy_target(solver):
    a, b = two_humans()
    quick = dict(QUICK, approach_frames=14, shake_frames=16, secondary_shakes=0)
    ci, cp, rep = generate_handshake(a, b, HandshakeParams(solver_initiator=solver, solver_partner=solver, **quick))
    assert ci.is_finite() and cp.is_finite()
    limit = 2.0 if solver == "FUZZY" else 0.05  # cm; FUZZY lags by design (target 0.5, see the report)
    assert rep["both_mean_cm"] < limit and rep["initiator_mean_cm"] < limit and rep["partner_mean_cm"] < limit
    assert rep["time_ms_initiator"] > 0 and rep["time_ms_partner"] > 0
    # the hands keep the orientation each phase asks for (no CCD alignment defect with any solver)
    assert rep["align_max_deg_initiator"] < 2.0 and rep["align_max_deg_partner"] < 2.0


def test_a_smaller_partner_still_shakes_hands():
    for kw in (dict(partner_height=1.4), dict(partner_scale=0.8)):
        a, b = two_humans(0.9, **kw)
        ci, cp, rep = generate_handshake(a, b, HandshakeParams(solver_initiator="DLS", solver_partner="DLS", **QUICK))
        assert rep["sequence_partner"] == "NASRN"
        assert rep["both_mean_cm"] < 0.05, kw
        # the grip points measured through each character's own world matrix meet
        chp = prepare_character("partner", b[0], b[1], b[2], "DLS", HandshakeParams())
        gp = grip_path(chp, cp)[rep["curves"]["frames_in_shake"]]
        assert np.allclose(gp, np.array(rep["curves"]["grip_partner"])[rep["curves"]["frames_in_shake"]])


def test_too_far_apart_is_a_clear_input_error():
    a, b = two_humans(distance=10.0)
    with pytest.raises(InputError, match="too far apart"):
        generate_handshake(a, b, HandshakeParams(**QUICK))


def test_same_character_twice_and_bad_parameters_are_refused():
    a, _ = two_humans()
    with pytest.raises(InputError, match="same character"):
        generate_handshake(a, a)
    _, b = two_humans()
    with pytest.raises(InputError, match="Solver initiator"):
        generate_handshake(a, b, HandshakeParams(solver_initiator="MAGIC"))
    with pytest.raises(InputError, match="Dominance partner"):
        generate_handshake(a, b, HandshakeParams(dominance_partner=1.5))


def test_missing_arm_roles_name_the_role():
    from procanim_addon.rig_roles import RigMap

    a, b = two_humans()
    roles = dict(a[1].roles)
    roles.pop("forearm.R")
    with pytest.raises(InputError, match="forearm.R"):
        generate_handshake((a[0], RigMap(roles), a[2]), b)


@pytest.mark.slow
def test_a_much_smaller_partner_makes_the_tall_one_bend_forward_and_both_still_meet():
    a, b = two_humans(0.9, partner_height=1.3)
    ci, cp, rep = generate_handshake(a, b, HandshakeParams(solver_initiator="JACOBIAN_TRANSPOSE",
                                                           solver_partner="DLS", **QUICK))
    assert rep["lean_initiator_deg"] > 5 and rep["lean_partner_deg"] == 0.0
    spine = a[1].bone("spine")
    assert spine in ci.keyed_bones() and spine not in cp.keyed_bones()
    assert rep["both_mean_cm"] < 0.05
    i = a[0].index(spine)
    assert np.any(np.abs(ci.rotations[:, i, 0]) < 0.999) and np.allclose(ci.rotations[-1, i], [1, 0, 0, 0])


def test_a_child_is_too_small_to_reach_and_the_message_says_so():
    a, b = two_humans(0.9, partner_height=0.9)
    with pytest.raises(InputError, match="sizes differ too much"):
        generate_handshake(a, b, HandshakeParams(**QUICK))


def test_the_alignment_measure_sees_a_turned_hand(dls_bake):
    from procanim_addon import transforms as tf
    from procanim_addon.handshake.report import alignment_report

    a, _, (ci, _, _) = dls_bake
    ch = prepare_character("initiator", a[0], a[1], a[2], "DLS", HandshakeParams())
    pose = ch.skeleton.fk(ci.locations, ci.rotations)
    wanted = tf.mat3_to_quat(np.einsum("ij,fjk->fik", ch.world_rot, pose[:, ch.hand, :3, :3]))
    assert alignment_report(ch, ci, wanted, "x")["align_max_deg_x"] < 1e-3
    turned = ci.rotations.copy()
    turned[20, ch.hand] = tf.quat_mul(turned[20, ch.hand], tf.quat_from_axis_angle([0, 1, 0], np.radians(10)))
    ci2 = type(ci)(ci.bone_names, ci.frames, ci.fps, ci.locations, turned)
    assert alignment_report(ch, ci2, wanted, "x")["align_max_deg_x"] == pytest.approx(10.0, abs=1e-6)


@pytest.mark.parametrize("partner", [placed(0, -1.0, 0), placed(1.0, 0.5, 0)])
def test_characters_that_do_not_face_each_other_are_refused(partner):
    a, b = two_humans()
    with pytest.raises(InputError, match="does not face"):
        generate_handshake(a, (b[0], b[1], partner), HandshakeParams(**QUICK))


def test_a_pair_placed_anywhere_facing_each_other_shakes_hands():
    a, b = two_humans()
    ci, cp, rep = generate_handshake((a[0], a[1], placed(3.0, 2.0, 90)), (b[0], b[1], placed(4.1, 2.2, -90)),
                                     HandshakeParams(solver_initiator="DLS", solver_partner="DLS", **QUICK))
    assert rep["both_mean_cm"] < 0.05 and rep["align_max_deg_initiator"] < 2 and rep["align_max_deg_partner"] < 2


@pytest.mark.slow
def test_fuzzy_can_approach_a_static_target_without_a_path():
    a, b = two_humans()
    quick = dict(QUICK, shake_frames=24, secondary_shakes=0)
    _, _, on_path = generate_handshake(a, b, HandshakeParams(solver_initiator="FUZZY", solver_partner="DLS", **quick))
    _, _, static = generate_handshake(a, b, HandshakeParams(solver_initiator="FUZZY", solver_partner="DLS",
                                                            fuzzy_static_targets=True, **quick))
    ph = np.array(list(static["phase_initiator"]))
    approach = np.nonzero(ph == "A")[0]
    g_static = np.array(static["curves"]["grip_initiator"])[approach]
    g_path = np.array(on_path["curves"]["grip_initiator"])[approach]
    assert np.max(np.linalg.norm(g_static - g_path, axis=1)) > 0.02  # it takes its own way …
    c = np.array(static["contact_point"])
    assert np.linalg.norm(g_static[-1] - c) < 0.005  # … and still arrives at C
    assert static["sequence_initiator"] == "NDASRN" and static["both_mean_cm"] < 2.0


@pytest.mark.slow
def test_fuzzy_pair_meets_within_half_a_centimetre_with_the_default_timings():
    a, b = two_humans()
    _, _, rep = generate_handshake(a, b, HandshakeParams(solver_initiator="FUZZY", solver_partner="FUZZY"))
    assert rep["shake_frames"] == HandshakeParams().shake_frames + HandshakeParams().secondary_frames
    assert rep["both_mean_cm"] <= 0.5 and rep["initiator_mean_cm"] <= 0.5 and rep["partner_mean_cm"] <= 0.5
    assert rep["both_mean_cm"] > 0.01  # a fuzzy controller does lag: this is measured, not assumed


def test_a_rig_without_clavicles_shakes_hands_with_a_three_bone_arm():
    from procanim_addon.rig_roles import RigMap

    a, b = two_humans()
    roles = dict(a[1].roles)
    roles.pop("clavicle.R")
    ci, _, rep = generate_handshake((a[0], RigMap(roles), a[2]), b,
                                    HandshakeParams(solver_initiator="DLS", solver_partner="DLS", **QUICK))
    assert a[1].bone("clavicle.R") not in ci.keyed_bones() and a[1].bone("upper_arm.R") in ci.keyed_bones()
    assert rep["both_mean_cm"] < 0.05


# ---- the generator contract: progress and Esc


@pytest.mark.parametrize("accept", [True, False])
def test_a_bake_reports_progress_before_every_solve_up_to_one(accept):
    a, b = two_humans()
    probe = ProgressProbe()
    ci, _, _ = generate_handshake(a, b, HandshakeParams(accept=accept, **QUICK), progress=probe)
    assert len(probe.seen) >= 2 * ci.frame_count  # each character's solve of each frame, then the report
    probe.assert_reported_a_whole_bake()


@pytest.mark.parametrize("k", [1, 12, 40])
def test_esc_during_report_k_cancels_at_report_k_plus_one(k):
    a, b = two_humans()
    probe = ProgressProbe(cancel_at=k)
    with pytest.raises(Cancelled):
        generate_handshake(a, b, HandshakeParams(**QUICK), progress=probe)
    assert probe.calls == k + 1


# ---- checks made once, in the engine, with one message


def test_a_character_facing_away_is_named_with_its_angle():
    a, b = two_humans()
    with pytest.raises(InputError, match=r"The partner does not face the initiator \(turned 120° away; at most 90°\)"):
        generate_handshake(a, (b[0], b[1], placed(0, -1.0, 60)), HandshakeParams(**QUICK))


@pytest.mark.parametrize("scales", [(1.0, 1.3, 1.0), (1.0, 1.0, -1.0), (0.0, 0.0, 0.0)])
def test_a_non_uniform_or_mirrored_scale_is_refused_with_the_shared_message(scales):
    a, b = two_humans()
    world = b[2].copy()
    world[:3, :3] = world[:3, :3] @ np.diag(scales)
    with pytest.raises(InputError, match=r"The partner must have a uniform, positive scale \(it has .*\); apply"):
        generate_handshake(a, (b[0], b[1], world), HandshakeParams(**QUICK))
