"""Issue 15's quality gaps, measured on the FK of the generated clip, on scenes of their own sizes:
tight curves (pelvis near the curve, feet planted), stairs without flicks (no foot point faster than
5 m/s, every foothold on one tread), for rigs of several sizes and shapes."""

import sys
from pathlib import Path

import numpy as np
import pytest

from procanim_addon.ground import FlatGround, StairsGround
from procanim_addon.rigs import human_skeleton
from procanim_addon.walk import PathWalkParams, generate_path_walk
from procanim_addon.walk.character import read_character
from procanim_addon.walk.metrics import sole_points
from procanim_addon.walk.path import deviation_from_polyline

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_walk_gait import _rigify_like  # noqa: E402

RIGS = {"human 1.6 m": lambda: human_skeleton(1.6), "human 1.9 m": lambda: human_skeleton(1.9),
        "Rigify-like": _rigify_like}


def tight_s_curve(amplitude: float, radius: float, waves: float = 2.5, per_m: int = 25) -> np.ndarray:
    """A sine whose sharpest bend has ``radius`` m: wavelength 2π√(R·A)."""
    wavelength = 2 * np.pi * np.sqrt(radius * amplitude)
    y = np.linspace(0.0, -waves * wavelength, int(waves * wavelength * per_m) + 1)
    return np.stack([amplitude * np.sin(2 * np.pi * -y / wavelength), y, np.zeros_like(y)], -1)


def foot_points(sk, rm, clip):
    """(F, 10, 3): heel, ball, tip, ankle and toe tail of both feet, armature space."""
    char = read_character(sk, rm)
    pose = sk.fk(clip.locations, clip.rotations)
    tails = sk.tails_of(pose)
    out = []
    for side in "LR":
        toe = char.toe[side] if char.toe[side] is not None else char.foot[side]
        out += [sole_points(sk, pose, char, side), pose[:, char.foot[side], None, :3, 3], tails[:, toe, None]]
    return np.concatenate(out, axis=1)


@pytest.mark.parametrize("rig", RIGS)
@pytest.mark.parametrize("amplitude, radius", [(0.7, 1.5), (1.3, 1.5), (1.0, 2.2)])
def test_on_tight_curves_the_pelvis_stays_within_3_cm_and_the_feet_stay_planted(rig, amplitude, radius):
    sk, rm = RIGS[rig]()
    pts = tight_s_curve(amplitude, radius)
    clip = generate_path_walk(sk, rm, pts, FlatGround(), PathWalkParams())
    pose = sk.fk(clip.locations, clip.rotations)
    hips = pose[:, rm.index(sk, "hips"), :3, 3]
    dev = deviation_from_polyline(hips, pts)
    assert dev.mean() < 0.03, f"pelvis {100 * dev.mean():.1f} cm off the curve on average"
    assert clip.metrics["skate_mean_cm_s"] < 1.0 and clip.metrics["skate_p95_cm_s"] < 5.0


STAIRS = {
    # treads deep enough for the 1.9 m human's 32 cm foot (the engine refuses shorter ones)
    "steep 18/34 cm, 6 up 6 down": StairsGround(start=1.3, tread=0.34, riser=0.18, steps_up=6, landing=0.9,
                                                steps_down=6),
    "shallow 13/37 cm, 5 up 3 down": StairsGround(start=1.1, tread=0.37, riser=0.13, steps_up=5, landing=1.2,
                                                  steps_down=3),
    "8 up, 15/35 cm": StairsGround(start=1.6, tread=0.35, riser=0.15, steps_up=8, landing=1.1, steps_down=0),
}


@pytest.fixture(scope="module")
def stair_walks():
    out = {}
    for rig, make in RIGS.items():
        sk, rm = make()
        for name, stairs in STAIRS.items():
            end = stairs.edges[-1] + 1.8
            clip = generate_path_walk(sk, rm, np.array([[0.0, 0.0, 0.0], [0.0, -end, 0.0]]), stairs, PathWalkParams())
            out[(rig, name)] = (sk, rm, clip, stairs)
    return out


@pytest.mark.parametrize("rig", RIGS)
@pytest.mark.parametrize("name", STAIRS)
def test_on_stairs_no_foot_point_moves_faster_than_5_m_s(stair_walks, rig, name):
    sk, rm, clip, _ = stair_walks[(rig, name)]
    pts = foot_points(sk, rm, clip)
    speed = np.linalg.norm(np.diff(pts, axis=0), axis=-1) * clip.fps
    assert speed.max() < 5.0, f"a foot point moved {speed.max():.2f} m/s (frame {np.argmax(speed.max(1))})"
    assert clip.metrics["penetration_max_cm"] < 0.5


@pytest.mark.parametrize("rig", RIGS)
@pytest.mark.parametrize("name", STAIRS)
def test_on_stairs_every_foothold_lies_on_one_tread(stair_walks, rig, name):
    sk, rm, clip, stairs = stair_walks[(rig, name)]
    char = read_character(sk, rm)
    pose = sk.fk(clip.locations, clip.rotations)
    for side in "LR":
        soles = sole_points(sk, pose, char, side)
        z, _, _ = stairs.height(soles.reshape(-1, 3)[:, :2])
        down = np.any(np.abs(soles[..., 2] - z.reshape(soles.shape[:2])) < 0.003, axis=1)  # bearing weight
        heel, tip = stairs.distance(soles[down, 0, :2]), stairs.distance(soles[down, 2, :2])
        lo, hi = np.minimum(heel, tip), np.maximum(heel, tip)
        straddle = (stairs.edges[None, :] > lo[:, None] - 0.002) & (stairs.edges[None, :] < hi[:, None] + 0.002)
        assert not np.any(straddle), f"a foot bearing weight is on an edge ({side})"
    hips_z = pose[:, rm.index(sk, "hips"), 2, 3]
    assert hips_z.max() - hips_z[0] > stairs.levels.max() - 0.15  # it climbed
