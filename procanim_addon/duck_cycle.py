"""Duck walk cycles: whole gait cycles of the "Le Quack Walker" walk, in place or with root motion.

The article's walk is periodic in its phase θ(f) = (f − f₀)·s·2π/fps, one gait cycle per 2π, and the
master advances by the same amount every cycle (PLANTED: 4a/q_b units, the stance sweep twice;
ARTICLE: s·a/q_a units every 3 frames). A loop is therefore exact once a cycle is a whole number of
frames: Speed is rounded so that fps/s is (at most half a frame per cycle), the walk is generated
over the loop, the next loop's first frame and one key more (the uncut continuation the seam is
measured against), and :func:`procanim_addon.loop.make_loop` takes the master's travel off
(``IN_PLACE``) or puts it on the root bone (``ROOT_MOTION``; the hips when the rig has none).
The loop's keys keep the article's key interval from the first frame; the frame where the next loop
starts is a key of the bake whatever the interval.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import numpy as np

from .clip import Clip
from .errors import InputError
from .loop import Contacts, LoopSpec, make_loop

MIN_CYCLE_FRAMES = 4  # a gait cycle shorter than this many frames cannot show a walk


@dataclass
class LoopFrames:
    """The frames of a duck loop.

    window:       the walk's settings for the window (loop NONE, a key on every frame, Speed rounded)
    cycle_frames: frames per gait cycle (whole)
    cycles:       gait cycles in the loop
    keys:         the loop's key frames, then where the next loop starts, then one key more
    """

    window: object
    cycle_frames: int
    cycles: int
    keys: np.ndarray

    @property
    def speed(self) -> float:
        """The Speed slider after rounding (0–10)."""
        return float(self.window.speed)


def loop_frames(p) -> LoopFrames:
    """The frames and settings of the loop of duck settings ``p`` (:class:`~.duck.DuckParams`)."""
    if p.speed <= 0:
        raise InputError("Duck walk loop: Speed must be above 0 (a duck that does not walk has no cycle).")
    cycle_frames = max(int(round(p.fps / p.s)), math.ceil(p.fps / 2.0))  # Speed 10 (s = 2) at most
    if cycle_frames < MIN_CYCLE_FRAMES:
        raise InputError(
            f"Duck walk loop: a gait cycle of {p.fps / p.s:.1f} frames is too short to loop at {p.fps:g} fps; "
            "lower the Speed or raise the frame rate.")
    period = cycle_frames * int(p.loop_cycles)
    step = int(p.key_interval)
    start = p.frame_start
    keys = np.concatenate([np.arange(start, start + period, step), [start + period, start + period + step]])
    window = dataclasses.replace(p, loop="NONE", speed=5.0 * p.fps / cycle_frames, key_interval=1,
                                 frame_end=start + period + step)
    return LoopFrames(window, cycle_frames, int(p.loop_cycles), keys.astype(float))


def cut_loop(skeleton, dense: Clip, frames: LoopFrames, spec: LoopSpec, contacts: Contacts) -> Clip:
    """The loop made of ``dense`` (the window's walk, a key on every frame): its keys at
    ``frames.keys``, closed by :func:`~procanim_addon.loop.make_loop`; the walk's own figures kept
    (skate, penetration, reach: measured over the window), the key count, stride and speed the loop's."""
    rows = np.searchsorted(dense.frames, frames.keys)
    window = Clip(list(dense.bone_names), dense.frames[rows], dense.fps, dense.locations[rows],
                  dense.rotations[rows], key_location=dense.key_location, key_rotation=dense.key_rotation,
                  generator=dense.generator)
    clip = make_loop(skeleton, window, spec, contacts)
    seconds = (clip.metrics["loop_period_frames"]) / clip.fps
    clip.metrics = {**dense.metrics, **clip.metrics, "keys": int(clip.frame_count), "loop_speed": frames.speed,
                    "stride_m": spec.cycle_stride_m, "speed_m_s": spec.travel_m / seconds}
    return clip
