"""The grip (Deglorie et al. 2015, §4.2): where the grip point sits on the hand bone, and the hand's rotation.

Grip point (what the report measures, in the hand bone's rest frame, metres)::

    anchor = (0, grip_fraction · L_hand, 0)                 on the bone: the third metacarpal's stand-in
    grip   = anchor + ½ · palm_thickness_ratio · L_hand · n̂    offset half a palm along the palm normal

The palm normal n̂ comes from the rest pose: hands hanging at the sides (forearm more vertical than
horizontal) face the thighs, so n̂ points to the body's midline; hands held out (T-pose) face down.
The thumb axis is ``t̂ = Ŷ × n̂`` (forward for a hanging right hand).

In the grip both hands' focal lines are vertical: the fingers (bone Y) point horizontally along the
elbow line toward the partner, the thumb axis points up and the palm normal is ``up × fingers``, so
the two palms face each other; both grip points are put on C and the hands, offset by half a palm
each, touch without passing through one another.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .model import UP


@dataclass
class HandFrame:
    """Hand-bone-local axes (unit, rest frame) and the grip point (m)."""

    fingers: np.ndarray  # (0, 1, 0)
    palm_normal: np.ndarray
    thumb: np.ndarray
    grip_local: np.ndarray
    anchor_local: np.ndarray


def hand_frame(hand_rest: np.ndarray, hand_length: float, forearm_dir, medial, grip_fraction=0.5,
               palm_thickness_ratio=0.3) -> HandFrame:
    """Axes and grip point of a hand from its rest matrix ``(4, 4)`` (armature space).

    ``forearm_dir``: rest direction of the forearm; ``medial``: toward the body's midline.
    """
    rot = np.asarray(hand_rest, float)[:3, :3]
    hanging = abs(np.asarray(forearm_dir, float) @ UP) > 0.5
    normal_arm = np.asarray(medial, float) if hanging else -UP
    y = np.array([0.0, 1.0, 0.0])
    n = rot.T @ normal_arm
    n = n - y * (n @ y)
    n /= np.linalg.norm(n)
    t = np.cross(y, n)
    anchor = np.array([0.0, grip_fraction * hand_length, 0.0])
    grip = anchor + 0.5 * palm_thickness_ratio * hand_length * n
    return HandFrame(y, n, t, grip, anchor)


def grip_rotation(frame: HandFrame, fingers_world) -> np.ndarray:
    """World rotation (3×3) of the hand bone in the grip: fingers along ``fingers_world``
    (horizontal), thumb up, palm normal ``up × fingers``."""
    d = np.asarray(fingers_world, float)
    d = d / np.linalg.norm(d)
    want = np.stack([d, np.cross(UP, d), UP], axis=1)  # columns: fingers, palm normal, thumb
    have = np.stack([frame.fingers, frame.palm_normal, frame.thumb], axis=1)
    return want @ have.T
