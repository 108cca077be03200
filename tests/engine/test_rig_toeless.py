"""A skeleton without toe bones (mocap whose legs end at the ankle): the path walk rolls its foot
over the end of the foot bone — the toe tip stays put from heel off to toe off — and the reported
skate measures that point."""

from __future__ import annotations

import numpy as np
import pytest

from procanim_addon import rigs
from procanim_addon.rig_roles import detect
from procanim_addon.skeleton import Skeleton
from procanim_addon.walk import PathWalkParams, generate_path_walk

FPS = 24.0
CONTACT_M = 0.003


def toeless_human() -> Skeleton:
    """ProcAnim's human without its toes; each foot bone runs from the ankle to the toe tip, 2 cm
    above the floor (a BVH foot's end site)."""
    bones = []
    for b in rigs.human_template().bones:
        if b.name.startswith("toe"):
            continue
        tail = (b.tail[0], -0.17, 0.02) if b.name.startswith("foot") else b.tail
        bones.append(rigs.BoneSpec(b.name, b.parent, b.head, tail, b.z_hint))
    return Skeleton.from_bones([{"name": b.name, "parent": b.parent, "matrix_local": b.matrix(), "length": b.length}
                                for b in bones])


def test_the_toe_tip_stays_put_from_heel_off_to_toe_off_and_the_figure_measures_it():
    sk = toeless_human()
    rm = detect(sk.names, {n: (sk.names[p] if p >= 0 else None) for n, p in zip(sk.names, sk.parents)}, skeleton=sk)
    assert rm.get("toe.L") is None and rm.bone("foot.L") == "foot.L"
    clip = generate_path_walk(sk, rm, np.array([[0.0, 0.0, 0.0], [0.0, -3.0, 0.0]]), params=PathWalkParams(fps=FPS))
    pose = sk.fk(clip.locations, clip.rotations)
    feet = [sk.index("foot.L"), sk.index("foot.R")]
    tips = sk.tails_of(pose)[:, feet]  # (F, 2, 3)
    rest = sk.tails[feet[0]][2]
    on = np.abs(tips[..., 2] - rest) < CONTACT_M
    both = on[1:] & on[:-1]
    v = np.linalg.norm(np.diff(tips[..., :2], axis=0), axis=-1) * FPS
    assert both.sum() > 100
    assert v[both].mean() * 100 < 1.0, f"the toe tip skates {v[both].mean() * 100:.2f} cm/s"
    # the heel: on the floor behind the ankle by 0.3 of the ankle → toe tip distance (docs/rigs.md)
    heels = []
    for i in feet:
        ahead = (sk.tails[i] - sk.heads[i]) * [1, 1, 0]
        point = np.append((sk.heads[i] - 0.3 * ahead) * [1, 1, 0], 1.0)
        heels.append(np.einsum("fij,j->fi", pose[:, i] @ np.linalg.inv(sk.matrix_local[i]), point)[:, :3])
    heels = np.stack(heels, axis=1)
    points = np.concatenate([heels, tips], axis=1)
    on = np.concatenate([np.abs(heels[..., 2]) < CONTACT_M, np.abs(tips[..., 2] - rest) < CONTACT_M], axis=1)
    both = on[1:] & on[:-1]
    speed = np.linalg.norm(np.diff(points[..., :2], axis=0), axis=-1) * FPS
    assert clip.metrics["skate_mean_cm_s"] == pytest.approx(speed[both].mean() * 100, abs=1e-9)
