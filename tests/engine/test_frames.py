"""A character's frame from its rest pose, and the one uniform-scale check of object matrices."""

import numpy as np
import pytest

from procanim_addon.errors import InputError
from procanim_addon.frames import character_frame, uniform_scale
from procanim_addon.rigs import human_skeleton


def turned(yaw_deg, scale=(1.0, 1.0, 1.0)):
    a = np.radians(yaw_deg)
    m = np.eye(4)
    m[:3, :3] = np.array([[np.cos(a), -np.sin(a), 0], [np.sin(a), np.cos(a), 0], [0, 0, 1]]) @ np.diag(scale)
    m[:3, 3] = (1.0, 2.0, 0.5)
    return m


def test_a_uniformly_scaled_turned_matrix_gives_its_scale_and_rotation():
    s, r = uniform_scale(turned(30, (0.8, 0.8, 0.8)), "'Ann'")
    assert s == pytest.approx(0.8)
    np.testing.assert_allclose(r, turned(30)[:3, :3], atol=1e-12)
    assert uniform_scale(np.eye(3), "x")[0] == 1.0  # a 3×3 works too


@pytest.mark.parametrize("scale, shown", [((1.0, 2.0, 1.0), "1, 2, 1"), ((1.0, 1.0, -1.0), "1, 1, 1, mirrored"),
                                          ((0.0, 0.0, 0.0), "0, 0, 0")])
def test_uneven_mirrored_or_zero_scales_are_refused_naming_the_object(scale, shown):
    with pytest.raises(InputError) as err:
        uniform_scale(turned(10, scale), "'Ann'")
    assert str(err.value) == (f"'Ann' must have a uniform, positive scale (it has {shown}); "
                              "apply its scale first (Ctrl+A ▸ Scale).")


def test_a_non_finite_matrix_is_refused():
    m = np.eye(4)
    m[0, 0] = np.nan
    with pytest.raises(InputError, match="uniform, positive scale"):
        uniform_scale(m, "'Ann'")


def test_the_human_faces_minus_y_with_its_legs_as_scale():
    sk, rm = human_skeleton(1.75)
    cf = character_frame(sk, rm)
    np.testing.assert_allclose(cf.forward, [0.0, -1.0, 0.0], atol=1e-9)
    np.testing.assert_allclose(cf.left, np.cross(cf.up, cf.forward))
    assert 0.4 * 1.75 < cf.leg_length < 0.6 * 1.75
