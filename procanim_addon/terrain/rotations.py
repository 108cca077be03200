"""Batched 3-vector and rotation helpers of the terrain fix, written component by component.

The fix calls these hundreds of times per adaptation on a few to a few hundred rows at a time, where
numpy's per-call cost, not the arithmetic, is what counts: ``np.cross`` wraps six multiplications
in many numpy calls (axis moves and checks). Each helper here gives what its general
counterpart gives (``np.cross``; :func:`~procanim_addon.transforms.rotation_between` then
:func:`~procanim_addon.transforms.quat_to_mat3`) with the same operations in the same order, so
the results agree to the last bit or to rounding (tests/engine/test_terrain_fast_paths.py).
"""

from __future__ import annotations

import numpy as np

from .. import transforms as tf
from ..transforms import affine_inverse, cross

__all__ = ["affine_inverse", "cross", "turn_matrices"]  # the first two: transforms', imported from here


def turn_matrices(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Shortest-arc rotation matrices ``(..., 3, 3)`` taking direction ``a`` onto ``b`` (``(..., 3)``):
    the quaternion ``(1 + â·b̂, â × b̂)`` normalised (a half turn about an axis ⊥ ``a`` for opposite
    directions) and its matrix — ``quat_to_mat3(rotation_between(a, b))`` in fewer numpy calls."""
    a = a / np.maximum(np.sqrt(np.sum(a * a, axis=-1, keepdims=True)), 1e-300)
    b = b / np.maximum(np.sqrt(np.sum(b * b, axis=-1, keepdims=True)), 1e-300)
    d = np.sum(a * b, axis=-1)
    axis = cross(a, b)
    w = 1.0 + d
    opposite = d < -1.0 + 1e-12
    if np.any(opposite):
        perp = cross(a, np.broadcast_to(np.array([1.0, 0.0, 0.0]), a.shape))
        perp2 = cross(a, np.broadcast_to(np.array([0.0, 1.0, 0.0]), a.shape))
        perp = np.where((np.sqrt(np.sum(perp * perp, axis=-1)) < 1e-6)[..., None], perp2, perp)
        axis = np.where(opposite[..., None], perp, axis)
        w = np.where(opposite, 0.0, w)
    x, y, z = axis[..., 0], axis[..., 1], axis[..., 2]
    for _ in range(2):  # rotation_between normalises, then quat_to_mat3 normalises again
        n = np.sqrt(w * w + x * x + y * y + z * z)
        n = np.where(n < 1e-300, 1.0, n)
        w, x, y, z = w / n, x / n, y / n, z / n
    return tf.unit_quat_to_mat3(w, x, y, z)
