"""The two names ``operators/control_rig.py`` imports from here; the rotation helpers of the
conversion are :mod:`procanim_addon.transforms`' (one implementation, made fast on whole clips).
This module goes once that import names ``transforms`` (operators/ belongs to another change)."""

from __future__ import annotations

import numpy as np

from .. import transforms as tf
from ..transforms import decompose

__all__ = ["decompose", "euler_sequence"]


def euler_sequence(quats: np.ndarray, order: str) -> np.ndarray:
    """Euler angles (F, 3) of quaternions (F, 4), each frame's compatible with the frame before it:
    ``transforms.euler_sequence_from_mat3(transforms.quat_to_mat3(quats), order)``."""
    return tf.euler_sequence_from_mat3(tf.quat_to_mat3(quats), order)
