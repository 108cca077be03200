"""The path walk's legs at the scale of a frame, measured on the FK of the clip: how far the knee
(the thigh's tail) strays from the least-squares cubic through the 7 frames around it — what no
smooth curve between keys a few frames apart can follow — around the steps' events, which the pose
itself gives (a foot's sole within 3 mm of the ground bears weight); the knee's least flexion; the
toe tip leaving the ground; the planted feet.

Before the knee tracks (legs.knee_tracks), ProcAnim's human on the straight line measured: 8–25 mm
(median 8, largest 24.5) on the frames from heel off to lift-off, 10–33 mm around heel strike, a
knee straight to 5.1°, a toe tip sliding 6.8 cm before it was 1 cm up, skate 0.16 cm/s.
"""

import numpy as np
import pytest

from procanim_addon.ground import FlatGround, StairsGround
from procanim_addon.rigs import human_skeleton
from procanim_addon.walk import PathWalkParams, generate_path_walk
from procanim_addon.walk.character import read_character
from procanim_addon.walk.metrics import sole_points
from procanim_addon.walk.style import EMOTIONS

CONTACT_M = 0.003
STRAIGHT = np.array([[0.0, 0.0, 0.0], [0.0, -14.0, 0.0]])
S_CURVE = np.stack([1.5 * np.sin(np.linspace(0, 2 * np.pi, 200)), np.linspace(0, -10, 200), np.zeros(200)], -1)
STAIRS = StairsGround(start=1.5, tread=0.30, riser=0.16, steps_up=5, landing=1.0, steps_down=5)
_T = np.arange(-3, 4)
CUBIC_7 = (np.vander(_T, 4) @ np.linalg.pinv(np.vander(_T, 4)))[3]  # a cubic's value at the middle of 7 frames


@pytest.fixture(scope="module")
def human():
    sk, rm = human_skeleton()
    return sk, rm, read_character(sk, rm)


@pytest.fixture(scope="module")
def walks(human):
    sk, rm, _ = human
    cases = {"straight": (STRAIGHT, FlatGround(), {}), "s_curve": (S_CURVE, FlatGround(), {}),
             "stairs": (np.array([[0.0, 0.0, 0.0], [0.0, -7.0, 0.0]]), STAIRS, {}),
             "brisk": (STRAIGHT, FlatGround(), {"cadence_spm": 130.0})}
    return {name: (generate_path_walk(sk, rm, pts, ground, PathWalkParams(**kw)), ground)
            for name, (pts, ground, kw) in cases.items()}


def off_cubic(p: np.ndarray) -> np.ndarray:
    """(F,) distance (m) of each frame's point (F, 3) from the cubic through the 7 frames around it
    (NaN at the first and last 3)."""
    w = np.lib.stride_tricks.sliding_window_view(p, 7, axis=0)
    out = np.full(len(p), np.nan)
    out[3:-3] = np.linalg.norm(w[..., 3] - w @ CUBIC_7, axis=-1)
    return out


def flexion(pose, char, side) -> np.ndarray:
    """(F,) knee flexion (degrees, 0 = straight) from the posed hip, knee and ankle."""
    hip, knee, ankle = (pose[:, i, :3, 3] for i in (char.thigh[side], char.shin[side], char.foot[side]))
    u, v = knee - hip, ankle - knee
    c = np.sum(u * v, axis=-1) / (np.linalg.norm(u, axis=-1) * np.linalg.norm(v, axis=-1))
    return np.degrees(np.arccos(np.clip(c, -1.0, 1.0)))


def knee_around_events(human, clip, ground, before: int, after: int, event: str) -> np.ndarray:
    """The knee's distance from its local cubic (mm) on the frames ``before`` … ``after`` around each
    heel strike (``event`` "strike": the first frame a sole point bears weight) or lift-off ("lift":
    the first frame none does) of both legs, the first two and last two of each left out."""
    sk, rm, char = human
    pose = sk.fk(clip.locations, clip.rotations)
    tails = sk.tails_of(pose)
    out = []
    for s in "LR":
        soles = sole_points(sk, pose, char, s)
        gz, _, _ = ground.height(soles.reshape(-1, 3)[:, :2])
        down = (soles[..., 2] - np.asarray(gz).reshape(soles.shape[:2]) < CONTACT_M).any(axis=1)
        edge = down[1:] & ~down[:-1] if event == "strike" else down[:-1] & ~down[1:]
        frames = (np.flatnonzero(edge) + 1)[2:-2]
        knee = off_cubic(tails[:, char.thigh[s]]) * 1000
        out.append(np.concatenate([knee[frames + k] for k in range(before, after + 1)]))
    return np.concatenate(out)


@pytest.mark.parametrize("name, largest", [("straight", 6.0), ("s_curve", 6.0), ("brisk", 6.0), ("stairs", 15.0)])
def test_the_knee_stays_on_a_smooth_track_from_heel_off_to_toe_off(human, walks, name, largest):
    """From heel off to lift-off the trailing knee's flexion grows on a smooth track (the foot's roll
    takes up what the pelvis and the other foot's landing do): no frame snaps it straight and back."""
    clip, ground = walks[name]
    knee = knee_around_events(human, clip, ground, -7, -1, "lift")
    assert knee.size > 60
    assert knee.max() < largest, f"{knee.max():.1f} mm off the local cubic before lift-off"


@pytest.mark.parametrize("name", ["straight", "s_curve", "brisk"])
def test_the_knee_rounds_the_heel_strike(human, walks, name):
    """Around heel strike (two frames before to the one after) the landing knee bends through a
    rounded minimum instead of straightening to its limit in the frame before contact."""
    clip, ground = walks[name]
    knee = knee_around_events(human, clip, ground, -2, 1, "strike")
    assert knee.size >= 32
    assert np.percentile(knee, 90) < 16.0 and knee.max() < 20.0, (np.percentile(knee, 90), knee.max())


def least_flexion(human, clip) -> float:
    sk, _, char = human
    pose = sk.fk(clip.locations, clip.rotations)
    return min(float(flexion(pose, char, s).min()) for s in "LR")


@pytest.mark.parametrize("name", ["straight", "s_curve", "stairs", "brisk"])
def test_no_leg_reaches_full_extension(human, walks, name):
    """On every frame, planted or swinging, each knee stays bent (the soft limit on the legs'
    extension): at least 6°."""
    assert least_flexion(human, walks[name][0]) >= 6.0


@pytest.mark.parametrize("style", sorted(set(EMOTIONS) - {"NEUTRAL"}))
def test_no_leg_reaches_full_extension_in_any_style(human, style):
    sk, rm, _ = human
    a, w, d = EMOTIONS[style]
    clip = generate_path_walk(sk, rm, STRAIGHT, FlatGround(),
                              PathWalkParams(style_amplitude=a, style_weight=w, style_direction=d))
    assert least_flexion(human, clip) >= 6.0


def test_the_toe_tip_leaves_the_ground_without_scraping(human):
    """At 120 fps (what happens between the frames of a 24 fps clip): after the toe tip leaves the
    ground it is 1 cm up within 3 cm of travel — it rises, it does not slide on just above the ground
    (it slid 6.8 cm)."""
    sk, rm, char = human
    clip = generate_path_walk(sk, rm, np.array([[0.0, 0.0, 0.0], [0.0, -10.0, 0.0]]), FlatGround(),
                              PathWalkParams(fps=120.0))
    pose = sk.fk(clip.locations, clip.rotations)
    travel = []
    for s in "LR":
        tip = sole_points(sk, pose, char, s)[:, 2]
        down = tip[:, 2] < 0.001
        for f in np.flatnonzero(down[:-1] & ~down[1:]):
            up = np.flatnonzero(tip[f + 1:, 2] >= 0.01)
            if len(up):
                travel.append(np.linalg.norm(tip[f + 1 + up[0], :2] - tip[f, :2]))
    travel = np.array(travel[2:-2])
    assert len(travel) > 10 and travel.max() < 0.03, f"{100 * travel.max():.1f} cm before it is 1 cm up"


@pytest.mark.parametrize("name", ["straight", "s_curve", "stairs", "brisk"])
def test_planted_feet_stay_planted(walks, name):
    """The knee tracks move only what the leg is free to move: the planted pivot stays (skate in
    contact under 0.1 cm/s, no IK miss, nothing in the ground)."""
    m = walks[name][0].metrics
    assert m["skate_mean_cm_s"] < 0.1 and m["ik_reach_miss_cm"] < 0.01 and m["penetration_max_cm"] < 0.1


def rotation_steps(pose: np.ndarray) -> np.ndarray:
    """(F − 1, B) each bone's rotation (degrees) from one frame to the next, in armature space."""
    r = pose[..., :3, :3]
    rel = np.einsum("fbji,fbjk->fbik", r[:-1], r[1:])
    return np.degrees(np.arccos(np.clip((np.trace(rel, axis1=2, axis2=3) - 1) / 2, -1.0, 1.0)))


@pytest.mark.parametrize("stand_s", [0.3, 0.4, float(np.float32(0.4)), 0.5])
@pytest.mark.parametrize("name", ["straight", "s_curve", "stairs"])
def test_the_feet_turn_without_pops(human, name, stand_s):
    """A pop (tests/blender/test_path_walk.py's measure): a frame's rotation step of a foot or toe that
    stands out from both neighbouring steps. The heel rocker after heel strike lowers the toes
    gradually from the moment of contact, however the landing falls between frames (the standing
    time shifts it; Blender's float32 0.4 s put it a hair after a frame and the toes came down 12° in
    one frame)."""
    sk, rm, char = human
    pts, ground = {"straight": (STRAIGHT, FlatGround()), "s_curve": (S_CURVE, FlatGround()),
                   "stairs": (np.array([[0.0, 0.0, 0.0], [0.0, -6.1, 0.0]]),
                              StairsGround(start=1.5, steps_up=4, landing=1.0, steps_down=4))}[name]
    clip = generate_path_walk(sk, rm, pts, ground, PathWalkParams(stand_s=stand_s))
    bones = [b for s in "LR" for b in (char.foot[s], char.toe[s])]
    step = rotation_steps(sk.fk(clip.locations, clip.rotations))[:, bones]
    spike = step[1:-1] - np.maximum(step[:-2], step[2:])
    worst = int(clip.frames[1 + int(spike.max(axis=1).argmax())])
    assert spike.max() < 5.0, f"a {spike.max():.1f}° pop at frame {worst}"
