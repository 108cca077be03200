"""Editable bakes onto a control rig (issue 23), engine side: the keys go on the controls, the error
is measured on the deform skeleton they drive (procanim_addon/keys/control_forward.py).

The rig is test_controls.py's hand-made copy of how Rigify builds a body and a leg (torso over an FK
spine, ORG bones copying FK/IK bones behind an IK/FK switch, a tail pointing at the body); the motion
a smooth walk-like sway of every deform bone while the body travels and turns. The check is the
rig's own evaluation (:class:`RigPose`, tested against Blender in tests/blender/test_control_rigs.py)
of the written curves as Blender plays them.
"""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

import numpy as np
import pytest

from procanim_addon import transforms as tf
from procanim_addon.clip import Clip
from procanim_addon.controls import convert
from procanim_addon.controls.deform import deform_skeleton, rig_pose
from procanim_addon.controls.evaluate import RigPose
from procanim_addon.controls.stretch import StretchResponse
from procanim_addon.controls.structure import find_limbs
from procanim_addon.keys import ControlForward, control_channels, plan_control_keys
from procanim_addon.keys import plan as plan_module
from procanim_addon.keys.ik_chains import SolvingPose, find_chains
from procanim_addon.keys.layout import key_groups

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_controls import mini_rig  # noqa: E402

FRAMES = 120
TOLERANCE_M = 0.001


def swaying(rig, frames=FRAMES, seed=2):
    """A smooth deform motion: each bone sways about its own axis, the body walks and turns."""
    sk = deform_skeleton(rig)
    rng = np.random.default_rng(seed)
    t = np.arange(frames)
    loc, rot = np.zeros((frames, len(sk), 3)), tf.quat_identity((frames, len(sk)))
    for k, name in enumerate(sk.names):
        if name not in ("root", "ORG-spine"):  # ORG-spine is carried rigidly with the hips on this rig
            angle = 0.3 * np.sin(2 * np.pi * t / 48 + rng.uniform(0, 6))
            rot[:, k] = tf.quat_from_axis_angle(np.broadcast_to(rng.normal(size=3), (frames, 3)), angle)
    r = sk.index("root")
    loc[:, r, 1] = -0.04 * t
    rot[:, r] = tf.quat_from_axis_angle(np.broadcast_to([0, 0, 1.0], (frames, 3)), 0.3 * np.sin(t / 30))
    return sk, sk.fk(loc, rot)


@pytest.fixture(scope="module")
def fk_bake():
    rig = mini_rig("FK")
    sk, intended = swaying(rig)
    keys = convert(rig, sk, intended, "FK")
    clip = Clip.rest(sk.names, np.arange(1.0, FRAMES + 1), 24.0)  # the frames and rate the keys are on
    return rig, sk, intended, keys, plan_control_keys(rig, sk, keys, clip, TOLERANCE_M)


def deform_points(rig, sk, channels, values):
    """Heads and tails ``(N, 2B, 3)`` of the deform bones when the controls take ``values``."""
    state = RigPose(rig, len(values))
    model = ControlForward(rig, sk, channels)
    for control in model.columns:
        state.set_basis(control, model._basis(control, values))
    out = []
    for name in sk.names:
        b = rig.index(name)
        pose = state.pose(b)
        out += [pose[:, :3, 3], pose[:, :3, 3] + pose[:, :3, 1] * rig.lengths[b]]
    return np.stack(out, axis=1)


def test_the_model_gives_the_pose_the_conversion_meant(fk_bake):
    rig, sk, intended, keys, _ = fk_bake
    channels, values = control_channels(rig, keys)
    assert {c.bone for c in channels} <= {rig.names[c] for c in keys.basis}
    points = ControlForward(rig, sk, channels)(values)
    goal = rig_pose(rig, sk, intended)
    assert np.abs(points[:, 0::2] - goal[..., :3, 3]).max() < 1e-5  # float32 keys


def test_a_controls_error_map_bounds_how_far_its_change_moves_the_deform_bones(fk_bake):
    """The bound the key placement keeps per group: a small change of one FK control's channels moves
    no deform point further than its error map says (the rig carries the points rigidly)."""
    rig, sk, _, keys, _ = fk_bake
    channels, values = control_channels(rig, keys)
    model = ControlForward(rig, sk, channels)
    direct = model.top_down(values)
    targets, maps = direct.targets(0, values)
    rng = np.random.default_rng(4)
    base = model(values)
    for g in range(len(model.groups)):
        cols = model.groups[g]
        change = rng.normal(0, 1e-4, (len(values), len(cols)))
        moved = values.copy()
        moved[:, cols] += change
        actual = np.linalg.norm(model(moved) - base, axis=-1).max(axis=1)
        bound = np.linalg.norm(np.einsum("sij,sj->si", maps[g], change), axis=-1)
        assert np.all(actual <= bound * 1.01 + 1e-9), model.channels[cols[0]]


def test_reduced_controls_keep_the_deform_skeleton_within_the_tolerance(fk_bake):
    rig, sk, _, keys, keyed = fk_bake
    channels, dense = control_channels(rig, keys)
    frames = np.arange(1.0, FRAMES + 1)
    played = np.stack([c.evaluate(frames) for c in keyed.curves], axis=1).astype(float)
    error = np.linalg.norm(deform_points(rig, sk, channels, played) - deform_points(rig, sk, channels, dense), axis=-1)
    print(f"controls: {keyed.keys_written}/{keyed.keys_dense} keys, largest deform error {error.max() * 1000:.3f} mm")
    assert error.max() <= TOLERANCE_M + 1e-6
    assert keyed.keys_written < 0.5 * keyed.keys_dense
    assert all(c.data_path.startswith('pose.bones["') for c in keyed.curves)
    assert {c.data_path.split('"')[1] for c in keyed.curves} <= {rig.names[c] for c in keys.basis}


# ----------------------------------------------------------------------------- IK controls


def chain_pins(rig, sk, intended):
    """What the conversion pins: each IK chain bone at the intended pose of the deform bone copying it."""
    goal = rig_pose(rig, sk, intended)
    pins = {}
    for limb in find_limbs(rig):
        for bone, source in zip(limb.deform, limb.ik):
            if source in limb.chain:
                pins[rig.names[source]] = goal[:, sk.index(rig.names[bone])]
    return pins


@pytest.fixture(scope="module", params=[False, True], ids=["twist", "pole"])
def ik_bake(request):
    rig = mini_rig("IK", pole=request.param)
    sk, intended = swaying(rig)
    keys = convert(rig, sk, intended, "IK")
    pins = chain_pins(rig, sk, intended)
    clip = Clip.rest(sk.names, np.arange(1.0, FRAMES + 1), 24.0)
    return rig, sk, intended, keys, pins, plan_control_keys(rig, sk, keys, clip, TOLERANCE_M)


def test_ik_controls_are_keyed_and_the_chain_is_posed_as_the_conversion_meant(ik_bake):
    rig, sk, intended, keys, pins, _ = ik_bake
    keyed = {rig.names[c] for c in keys.basis}
    assert "foot_ik.L" in keyed and ("thigh_ik_target.L" in keyed or "thigh_ik.L" in keyed)
    # the conversion hands over where it posed the chain (plan_control_keys takes them from there)
    assert {rig.names[b] for b in keys.pins} == set(pins)
    for b, pose in keys.pins.items():
        assert np.abs(pose - pins[rig.names[b]]).max() < 1e-12
    channels, values = control_channels(rig, keys)
    points = ControlForward(rig, sk, channels, pins, reference=values)(values)
    goal = rig_pose(rig, sk, intended)
    assert np.abs(points[:, 0::2] - goal[..., :3, 3]).max() < 1e-5


def test_the_ik_solve_reaches_the_target_keeps_the_lengths_and_bends_toward_the_pole():
    """Posed from the rig alone (no conversion poses), the chain is a two-bone IK solution: its end on
    the target (within reach), its bones their rest lengths, its knee in the plane of root, target and
    pole — whatever the controls do."""
    rig = mini_rig("IK", pole=True)
    chains = find_chains(rig)
    chain = chains[rig.index("thigh_ik.L")]
    rng = np.random.default_rng(7)
    frames = 50
    state = SolvingPose(rig, frames, chains)
    foot = np.broadcast_to(np.eye(4), (frames, 4, 4)).copy()
    foot[:, :3, 3] = rng.normal(0, 0.1, (frames, 3))
    foot[:, :3, :3] = tf.quat_to_mat3(tf.quat_normalize(rng.normal(0, 1, (frames, 4))))
    pole = np.broadcast_to(np.eye(4), (frames, 4, 4)).copy()
    pole[:, :3, 3] = rng.normal(0, 0.2, (frames, 3))
    state.set_basis(rig.index("foot_ik.L"), foot)
    state.set_basis(rig.index("thigh_ik_target.L"), pole)
    upper, lower = state.pose(chain.top), state.pose(chain.owner)
    root, knee = upper[:, :3, 3], lower[:, :3, 3]
    end = knee + lower[:, :3, 1] * rig.lengths[chain.owner]
    target = state.pose(chain.target)[:, :3, 3]
    place = state.pose(chain.pole)[:, :3, 3]
    assert np.abs(np.linalg.norm(knee - root, axis=-1) - rig.lengths[chain.top]).max() < 1e-9
    assert np.abs(upper[:, :3, 1] * rig.lengths[chain.top] - (knee - root)).max() < 1e-9
    reach = np.linalg.norm(target - root, axis=-1) < rig.lengths[chain.top] + rig.lengths[chain.owner]
    assert reach.sum() > 10 and np.abs(end - target)[reach].max() < 1e-9
    normal = np.cross(target - root, place - root)
    assert np.abs(np.sum((knee - root) * normal, axis=-1)).max() < 1e-9  # in the plane
    axis = (target - root) / np.linalg.norm(target - root, axis=-1, keepdims=True)

    def off_axis(v):
        return v - np.sum(v * axis, axis=-1, keepdims=True) * axis

    assert (np.sum(off_axis(knee - root) * off_axis(place - root), axis=-1) > -1e-9).all()  # the pole's side


def test_reduced_ik_controls_keep_the_deform_skeleton_within_the_tolerance(ik_bake):
    rig, sk, _, keys, pins, keyed = ik_bake
    channels, dense = control_channels(rig, keys)
    frames = np.arange(1.0, FRAMES + 1)
    played = np.stack([c.evaluate(frames) for c in keyed.curves], axis=1).astype(float)
    model = ControlForward(rig, sk, channels, pins, reference=dense)
    error = np.linalg.norm(model(played) - model(dense), axis=-1)
    print(f"IK controls: {keyed.keys_written}/{keyed.keys_dense} keys, largest error {error.max() * 1000:.3f} mm")
    assert error.max() <= TOLERANCE_M + 1e-6
    assert keyed.keys_written < 0.5 * keyed.keys_dense


def converted(kind: str, ik_bake):
    """``(rig, skeleton, channels, pins, dense values)`` of the swaying motion converted onto the mini
    rig's FK controls, or the IK bake's."""
    if kind == "FK":
        rig = mini_rig("FK")
        sk, intended = swaying(rig)
        keys, pins = convert(rig, sk, intended, "FK"), None
    else:
        rig, sk, _, keys, pins, _ = ik_bake
    channels, dense = control_channels(rig, keys)
    return rig, sk, channels, pins, dense


@pytest.mark.parametrize("kind", ["FK", "IK"])
def test_a_model_evaluated_again_after_a_few_controls_change_gives_a_fresh_evaluations_points(kind, ik_bake):
    """The model keeps its previous evaluation and evaluates again only what the changed controls
    move (the refinement rounds): each call equals a new model's evaluation of the same values."""
    rig, sk, channels, pins, dense = converted(kind, ik_bake)
    model = ControlForward(rig, sk, channels, pins, reference=dense)
    rng = np.random.default_rng(5)
    values = dense.copy()
    model(values)
    groups = model.groups
    for _ in range(6):
        for g in rng.choice(len(groups), size=2, replace=False):
            values[:, groups[g]] += rng.normal(0.0, 0.01, (len(values), len(groups[g])))
        again = model(values)
        fresh = ControlForward(rig, sk, channels, pins, reference=dense)(values)
        assert np.allclose(again, fresh, rtol=0.0, atol=1e-12)


def test_an_ik_chain_the_model_cannot_solve_is_refused_with_its_name():
    """An IK constraint over three bones (the solver's result is not a triangle): refused by name."""
    rig = mini_rig("IK")
    sk, intended = swaying(rig, frames=8)
    keys = convert(rig, sk, intended, "IK")
    channels, _ = control_channels(rig, keys)
    owner = rig.index("MCH-shin_ik.L")
    rig.constraints[owner] = [dataclasses.replace(c, chain_count=3) if c.kind == "IK" else c
                              for c in rig.constraints[owner]]
    with pytest.raises(ValueError, match="IK chain through '"):
        ControlForward(rig, sk, channels)


def test_the_solvers_stretch_response_sets_the_chains_lengths_at_the_new_distance():
    """A conversion made with the IK solver's measured stretch response hands it over; the relative
    solve then gives the dense pose exactly and, with the target moved, bones whose lengths follow the
    response's ratio between the new distance and the dense one."""
    rig = mini_rig("IK")
    sk, intended = swaying(rig, frames=12)
    owner = rig.index("MCH-shin_ik.L")
    d = np.linspace(0.2, 0.9, 8)
    response = StretchResponse(d, 1.0 + 0.05 * d, 1.0 - 0.04 * d, np.ones_like(d), (0.4, 0.4))
    keys = convert(rig, sk, intended, "IK", stretch={owner: response})
    assert keys.stretch == {owner: response}
    channels, values = control_channels(rig, keys)
    model = ControlForward(rig, sk, channels, keys.pins, reference=values, stretch=keys.stretch)
    goal = rig_pose(rig, sk, intended)
    assert np.abs(model(values)[:, 0::2] - goal[..., :3, 3]).max() < 1e-5
    moved = values.copy()
    foot = [c for c, ch in enumerate(channels) if ch.bone == "foot_ik.L" and ch.prop == "location"]
    moved[:, foot] += 0.05
    state, dense = model._state(moved), model._state(values)
    chain = model.chains[owner]
    # the chain's distance to its target in units of its scale (the conversion scales it to cancel the stretch)
    reach = [np.linalg.norm(t - r, axis=-1) / k for r, t, _, k in (s.inputs(chain) for s in (state, dense))]
    upper, lower = state.pose(chain.top), state.pose(chain.owner)
    up_d, low_d = dense.pose(chain.top), dense.pose(chain.owner)
    thigh = np.linalg.norm(lower[:, :3, 3] - upper[:, :3, 3], axis=-1)
    thigh_d = np.linalg.norm(low_d[:, :3, 3] - up_d[:, :3, 3], axis=-1)
    s_now, s_then = response.at(reach[0])[0], response.at(reach[1])[0]
    assert np.allclose(thigh / thigh_d, s_now / s_then, rtol=1e-9)


@pytest.mark.parametrize("kind", ["FK", "IK"])
def test_followers_carried_by_their_anchor_are_where_the_rig_puts_them(kind, ik_bake):
    """A measured bone that moves rigidly with a measured bone above it is carried by that anchor's
    matrices (the rig between them not evaluated): its points equal the rig's own evaluation of it,
    whatever the controls do; a bone that does not move rigidly with one is evaluated through the rig."""
    rig, sk, channels, pins, dense = converted(kind, ik_bake)
    model = ControlForward(rig, sk, channels, pins, reference=dense)
    followers = {rig.names[b]: rig.names[a] for b, (a, _) in model.follow.items()}
    assert followers.get("ORG-spine") == "ORG-hips"  # carried rigidly with the hips on this rig
    assert "ORG-neck" not in followers  # half the torso's turn: not rigid with the chest
    through = ControlForward(rig, sk, channels, pins, reference=dense, followers=False)
    assert not through.follow
    rng = np.random.default_rng(8)
    for _ in range(3):
        values = dense + rng.normal(0.0, 0.05, dense.shape)
        assert np.allclose(model(values), through(values), rtol=0.0, atol=1e-9)


def test_a_bone_that_stops_following_when_a_control_moves_is_no_follower():
    """The rigidity check nudges every keyed control: a bone rigid with its anchor in the reference
    motion only because its own keyed control holds still there is not taken for a follower."""
    rig = mini_rig("FK")
    sk, intended = swaying(rig)
    keys = convert(rig, sk, intended, "FK")
    channels, dense = control_channels(rig, keys)
    foot = [c for c, ch in enumerate(channels) if ch.bone == "foot_fk.L"]
    assert foot, "the foot's FK control is keyed"
    still = dense.copy()
    still[:, foot] = dense[:1, foot]  # the foot's control held: ORG-foot.L moves with ORG-shin.L…
    model = ControlForward(rig, sk, channels, reference=still)
    assert rig.index("ORG-foot.L") not in model.follow  # …but not when the foot's control turns


def test_a_scaled_quaternion_moves_no_deform_point(ik_bake):
    """The rig normalises a quaternion channel's values, as Blender does: a quaternion group scaled by
    1.5 on every frame poses the deform skeleton exactly as before."""
    rig, sk, channels, pins, dense = converted("IK", ik_bake)
    model = ControlForward(rig, sk, channels, pins, reference=dense)
    groups = [cols for cols in model.groups if channels[cols[0]].prop == "rotation_quaternion"]
    assert groups, "the IK rig keys quaternions"
    base = model(dense)
    for cols in groups:
        scaled = dense.copy()
        scaled[:, cols] *= 1.5
        assert np.abs(model(scaled) - base).max() < 1e-9


def test_the_chains_are_measured_for_the_groups_that_shift_or_scale_them(ik_bake):
    """The IK maps are measured for the location and scale groups whose controls move a solved chain
    (an IK target's shift moves the knee by many times as much near full reach); a rotation group's
    map is its lever's."""
    rig, sk, channels, pins, dense = converted("IK", ik_bake)
    model = ControlForward(rig, sk, channels, pins, reference=dense)
    direct = model.top_down(dense)
    props = {g: channels[cols[0]].prop for g, cols in enumerate(model.groups)}
    assert direct.measured and all(not props[g].startswith("rotation") for g in direct.measured)
    targets = {g for g, cols in enumerate(model.groups) if props[g] == "location"
               and channels[cols[0]].bone.startswith(("foot_ik", "hand_ik"))}
    assert targets and targets <= set(direct.measured)
    for g in targets:  # per unit of the target's shift, the chain's worst point moves at least as much
        assert np.linalg.norm(direct.measured[g], axis=(1, 2)).max() > 1.0


def test_a_rotation_that_swings_a_chain_beyond_its_lever_still_keeps_the_tolerance(ik_bake):
    """A rotation group's map is its lever's, unmeasured. The mini rig's IK leg does not stretch, and
    its torso's rotation moves the chain's points up to 1.56× as far as the lever says (forward
    differences on every frame, through the model); the reduced keys still keep every deform point
    within the tolerance (here the groups' shares of it leave room; where they do not, the exact
    check tightens the frames beyond it)."""
    rig, sk, _, keys, pins, keyed = ik_bake
    channels, dense = control_channels(rig, keys)
    model = ControlForward(rig, sk, channels, pins, reference=dense)
    direct = model.top_down(dense)
    base = np.array(model(dense))
    beyond = 0.0
    for g, cols in enumerate(model.groups):
        if not channels[cols[0]].prop.startswith("rotation"):
            continue
        jac = []
        for c in cols:
            changed = dense.copy()
            changed[:, c] += 1e-6
            jac.append((np.array(model(changed)) - base) / 1e-6)
        jac = np.stack(jac, axis=-1)  # (F, P, 3, n): every point per unit of each channel
        size = np.sqrt(np.einsum("fpij,fpij->fp", jac, jac)).max(axis=1)
        beyond = max(beyond, float((size / np.maximum(np.sqrt(direct._lever_sizes[g]), 1e-12)).max()))
    assert beyond > 1.2, "a rotation here moves the chain beyond its lever"
    frames = np.arange(1.0, FRAMES + 1)
    played = np.stack([c.evaluate(frames) for c in keyed.curves], axis=1).astype(float)
    assert np.linalg.norm(model(played) - model(dense), axis=-1).max() <= TOLERANCE_M + 1e-6


def test_the_player_evaluates_again_only_what_changed_and_plays_what_a_fresh_one_plays(fk_bake):
    """The curves a control-rig reduction checks (plan._player): a group played before is evaluated
    again only on the frames of its changed segments; what it returns is what a player that has seen
    nothing gives, and what each written curve plays on its own (CurveKeys.evaluate: its handles
    recalculated and its keys searched curve by curve), bit for bit, round after round of keys removed
    and added (the other keys and their slopes kept, as a refinement round keeps them)."""
    rig, sk, _, keys, _ = fk_bake
    channels, dense = control_channels(rig, keys)
    groups = key_groups(channels)
    samples = np.arange(1.0, FRAMES + 1)
    rng = np.random.default_rng(5)
    slopes = {g: rng.normal(0.0, 0.01, (FRAMES, 2, len(cols))) for g, cols in enumerate(groups)}  # per frame
    for g in slopes:  # one slope on every other frame: its keys' handles ALIGNED (Blender aligns them again)
        slopes[g][::2, 1] = slopes[g][::2, 0]

    def fitted(g, at):
        return (g, at, dense[at][:, groups[g]], slopes[g][at, 0], slopes[g][at, 1])

    current = {g: fitted(g, np.unique(np.r_[0, rng.choice(FRAMES, 12), FRAMES - 1])) for g in range(len(groups))}
    player = plan_module._player(channels, groups, samples)
    player(list(current.values()))
    for _ in range(4):
        changed = []
        for g in rng.choice(len(groups), 2, replace=False):
            at = current[g][1]
            kept = np.setdiff1d(at[1:-1], rng.choice(at[1:-1], 2, replace=False))  # two keys removed…
            current[g] = fitted(g, np.unique(np.r_[0, kept, rng.choice(FRAMES, 2), FRAMES - 1]))  # …two added
            changed.append(current[g])
        again = player(changed)
        fresh = plan_module._player(channels, groups, samples)(changed)
        assert all(np.array_equal(a, b) for a, b in zip(again, fresh))
        for (g, at, values, left, right), got in zip(changed, again):  # each curve as written, on its own
            for j, c in enumerate(groups[g]):
                curve = plan_module._curve(channels[c], samples[at], values[:, j], left[:, j], right[:, j],
                                           np.zeros(len(at), dtype=np.int32))
                assert np.array_equal(got[:, j], curve.evaluate(samples))
