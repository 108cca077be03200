"""IK stretch on control rigs (engine side): the scale of an IK chain's first control that cancels
what Blender's IK solver does to a stretchy chain (``procanim_addon.controls.stretch``).

The solver's response here is a made-up law with a known answer: every bone ends ``s(d)`` times its
length, ``s`` falling linearly from 1 at full reach by ``a`` per unit of ``1 − d/reach``. Scaled by
``k``, the chain reaches ``d`` as the unit chain reaches ``d/k`` (scaled by ``k``), so the lengths
are kept when ``k·s(d/k) = 1``: ``k = (1 − a·d/reach) / (1 − a)``. That the measured response of a
generated Rigify rig is cancelled in Blender is tested in ``tests/blender/test_control_rigs.py``.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from procanim_addon.controls import convert
from procanim_addon.controls.deform import rig_pose
from procanim_addon.controls.stretch import (
    StretchResponse,
    bend,
    compensating_scale,
    probe_distances,
    rest_bend,
    stretchy_chain,
)
from procanim_addon.controls.structure import find_limbs

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_controls import mini_rig, moving_pose  # noqa: E402

L1, L2 = 0.5, 0.45
REACH = L1 + L2
A = 0.04


def linear_response(a=A) -> StretchResponse:
    d = reaches(L1, L2)  # given in descending order: it must sort them
    s = 1.0 - a * (1.0 - d / REACH)
    return StretchResponse(d, s, s.copy(), lengths=(L1, L2))


def reaches(a, b):
    """Distances of a chain's ends bent from 0 to 150° (densely sampled, as the bridge does near straight)."""
    theta = np.radians(np.linspace(0.0, 150.0, 301))
    return np.sqrt(a * a + b * b + 2 * a * b * np.cos(theta))


def leg(bend_deg: np.ndarray):
    """Hip at the origin, thigh straight down, the knee bent forward by ``bend_deg``: (F, 3) each."""
    bend = np.radians(bend_deg)
    hip = np.zeros((len(bend), 3))
    knee = np.stack([np.zeros_like(bend), np.zeros_like(bend), -L1 * np.ones_like(bend)], -1)
    ankle = knee + L2 * np.stack([np.zeros_like(bend), -np.sin(bend), -np.cos(bend)], -1)
    return hip, knee, ankle


def triangle_knee(hip, ankle, a, b, side):
    """Knee of sides a, b over hip→ankle, bent toward ``side`` (independent of the module)."""
    axis = ankle - hip
    d = np.linalg.norm(axis, axis=-1)
    u = axis / d[:, None]
    x = (d**2 + a**2 - b**2) / (2 * d)
    h = np.sqrt(np.maximum(a**2 - x**2, 0))
    w = side - u * np.sum(side * u, -1, keepdims=True)
    w /= np.linalg.norm(w, axis=-1, keepdims=True)
    return hip + u * x[:, None] + w * h[:, None]


def test_the_scale_cancels_a_known_stretch_law():
    bend = np.array([5.0, 15.0, 30.0, 60.0, 90.0, 120.0])
    hip, knee, ankle = leg(bend)
    k, err = compensating_scale(linear_response(), (L1, L2), hip, knee, ankle)
    d = np.linalg.norm(ankle - hip, axis=-1)
    expected = (1.0 - A * d / REACH) / (1.0 - A)
    np.testing.assert_allclose(k, expected, atol=1.5e-4)
    # the solver's knee with the scaled chain: lengths k·s(d/k)·L, over the same hip and ankle
    s = 1.0 - A * (1.0 - d / k / REACH)
    got = triangle_knee(hip, ankle, k * s * L1, k * s * L2, knee - hip)
    assert np.linalg.norm(got - knee, axis=-1).max() < 5e-4
    assert err.max() < 5e-4
    # unscaled, the same law leaves the knee centimetres off: the compensation is what fixes it
    s1 = 1.0 - A * (1.0 - d / REACH)
    unscaled = triangle_knee(hip, ankle, s1 * L1, s1 * L2, knee - hip)
    assert np.linalg.norm(unscaled - knee, axis=-1).max() > 0.01


def test_a_chain_that_does_not_stretch_keeps_its_scale():
    hip, knee, ankle = leg(np.array([10.0, 45.0, 100.0]))
    ones = StretchResponse(np.linspace(0.2, REACH, 20), np.ones(20), np.ones(20), lengths=(L1, L2))
    assert not ones.stretches and linear_response().stretches
    k, err = compensating_scale(ones, (L1, L2), hip, knee, ankle)
    np.testing.assert_allclose(k, 1.0, atol=1e-9)
    assert err.max() < 1e-9


def test_the_response_is_sorted_exact_at_its_measures_and_held_at_its_ends():
    r = StretchResponse(
        np.array([0.9, 0.3, 0.6]), np.array([1.0, 0.9, 0.95]), np.array([1.0, 0.8, 0.9]), lengths=(L1, L2)
    )
    np.testing.assert_array_equal(r.distance, [0.3, 0.6, 0.9])
    s1, s2, reached = r.at(np.array([0.1, 0.3, 0.6, 0.9, 2.0]))
    np.testing.assert_allclose(s1, [0.9, 0.9, 0.95, 1.0, 1.0])
    np.testing.assert_allclose(s2, [0.8, 0.8, 0.9, 1.0, 1.0])
    np.testing.assert_array_equal(reached, 1.0)  # not given: the chain's end is on the target
    between, _, _ = r.at(np.linspace(0.6, 0.9, 7))
    assert np.all(np.diff(between) > 0) and 0.95 < between[3] < 1.0


def test_probes_include_the_rest_bend_where_the_solver_does_nothing():
    rig = mini_rig("IK")
    (limb,) = find_limbs(rig)
    a, b = (rig.lengths[i] for i in limb.chain)
    heads = [rig.matrix_local[i][:3, 3] for i in limb.chain]
    rest_reach = np.linalg.norm(heads[1] + rig.matrix_local[limb.chain[1]][:3, 1] * b - heads[0])
    d = probe_distances(rig, limb)
    assert np.min(np.abs(d - rest_reach)) < 1e-9
    assert bend(rest_reach, a, b) == pytest.approx(rest_bend(rig, limb)) and rest_bend(rig, limb) > 0.01


def _stretchy(rig, value=0.1):
    rig.ik_stretch[[rig.index("thigh_ik.L"), rig.index("MCH-shin_ik.L")]] = value
    return rig


def test_a_chain_stretches_only_with_ik_stretch_on_its_bones_and_its_constraint():
    rig = mini_rig("IK")
    (limb,) = find_limbs(rig)
    assert not stretchy_chain(rig, limb)
    _stretchy(rig)
    assert stretchy_chain(rig, limb)
    for c in rig.constraints[limb.ik_owner]:
        c.use_stretch = False
    assert not stretchy_chain(rig, limb)


def test_probe_distances_span_a_straight_to_a_deeply_bent_chain():
    rig = mini_rig("IK")
    (limb,) = find_limbs(rig)
    d = probe_distances(rig, limb)
    a, b = (rig.lengths[i] for i in limb.chain)
    assert np.min(np.abs(d - (a + b))) < 1e-12 and d.max() > a + b  # straight, and past reach
    assert d.min() < 0.6 * (a + b)
    assert np.all(np.diff(d) < 0)  # from stretched to bent


@pytest.mark.parametrize("pole", [False, True])
def test_conversion_keys_the_scale_of_the_chains_first_control_only_with_a_response(pole):
    rig = _stretchy(mini_rig("IK", pole=pole))
    (limb,) = find_limbs(rig)
    sk, intended = moving_pose(rig, amount=0.08)
    thigh = rig.index("thigh_ik.L")
    plain = convert(rig, sk, intended, "IK")
    assert thigh not in plain.scale
    a, b = (rig.lengths[i] for i in limb.chain)
    d = reaches(a, b)
    s = 1.0 - A * (1.0 - d / (a + b))
    keys = convert(rig, sk, intended, "IK", stretch={limb.ik_owner: StretchResponse(d, s, s, lengths=(a, b))})
    assert thigh in keys.scale and thigh in keys.basis
    scale = keys.scale[thigh]
    np.testing.assert_allclose(scale, scale[:, :1].repeat(3, axis=1))  # uniform
    goal = rig_pose(rig, sk, intended)
    hip, ankle = (goal[:, sk.index(n), :3, 3] for n in ("ORG-thigh.L", "ORG-foot.L"))
    reach = np.linalg.norm(ankle - hip, axis=-1)
    np.testing.assert_allclose(scale[:, 0], (1.0 - A * reach / (a + b)) / (1.0 - A), atol=1.5e-4)
    assert "IK stretch" in " ".join(keys.notes)
    # everything else is keyed as without the response
    assert set(keys.basis) == set(plain.basis) | {thigh}
    for c, basis in plain.basis.items():
        np.testing.assert_allclose(keys.basis[c], basis, atol=1e-9)
