"""Contact detection: which frames each foot's heel and ball bear weight.

Ikemoto, Arikan & Forsyth, "Knowing when to put your foot down" (I3D 2006) label every frame
with four contacts (left/right heel and toe) and show that one threshold on height and speed is
not a reliable classifier; they train one from a few labelled frames. Fix Feet keeps their unit —
per foot, heel and ball contacts labelled apart — and their inputs (the point's height above the
floor and its speed), with the simple classifier they improve upon made steadier:

* speed ``s(f) = min(|p(f) − p(f−k)|, |p(f+k) − p(f)|) / (k Δt)`` — the slower of the two one-sided
  speeds, so a heel-strike frame (still from then on) and a toe-off frame (still until then) are
  recognised, and a frame in flight (moving on both sides) is not; ``k`` frames span at least
  :data:`SPEED_WINDOW_S` (two frames at 24 and 30 fps, eight at 120), so frame-to-frame jitter
  is not taken for speed;
* hysteresis: a point enters contact below both thresholds and leaves only when its height or
  speed exceeds ``hysteresis ×`` them;
* thresholds fitted to the motion (RECON, ``noise_factor``): the thresholds given are upper bounds;
  a first classification measures how much the points still move while in contact (the spread of
  their heights, their typical speed) and the thresholds come down to ``noise_factor ×`` that, but
  not below :data:`LOWEST_RATIO` of the given ones — a clean motion's landing frame, a few mm above
  the floor and slowing down, is not taken for a contact, while a jittery capture keeps the given
  thresholds;
* minimum durations: lifts shorter than ``min_lift_s`` between two contacts are closed, then
  contacts shorter than ``min_contact_s`` are dropped;
* the user's pose markers (:mod:`.markers`) decide the frames they cover.

A *plant* is one stretch of frames over which a foot has at least one point in contact.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .feet import BALL, HEEL

# RECON: fitted thresholds never go below this fraction of the given ones.
LOWEST_RATIO = 0.05
SPEED_WINDOW_S = 1.0 / 15.0  # one-sided speeds span at least this long (s)
MAD_TO_SIGMA = 1.4826  # a normal distribution's standard deviation over its median absolute deviation


def point_speeds(points: np.ndarray, times: np.ndarray, window_s: float = 0.0) -> np.ndarray:
    """Speeds ``(F, ...)`` (units/s) of point tracks ``(F, ..., 3)`` at times ``(F,)`` (s): the
    slower of the backward and forward speeds over ``k`` frames (one-sided at the ends), ``k`` the
    fewest frames spanning ``window_s`` (at least one)."""
    p = np.asarray(points, float)
    t = np.asarray(times, float)
    n = len(p)
    if n < 2:
        return np.zeros(p.shape[:-1])
    k = 1
    if window_s > 0:
        k = int(min(max(1, np.ceil(window_s / max(float(np.median(np.diff(t))), 1e-12) - 1e-9)), n - 1))
    shape = (-1,) + (1,) * (p.ndim - 2)
    step = np.sqrt(np.sum((p[k:] - p[:-k]) ** 2, axis=-1)) / (t[k:] - t[:-k]).reshape(shape)  # (F-k, ...)
    back = np.concatenate((np.repeat(step[:1], k, axis=0), step), axis=0)
    fwd = np.concatenate((step, np.repeat(step[-1:], k, axis=0)), axis=0)
    return np.minimum(back, fwd)


def classify(gap: np.ndarray, speed: np.ndarray, height: float, speed_limit: float, hysteresis: float) -> np.ndarray:
    """Contact frames ``(F,)`` of one point from its gap above the floor and its speed: enter when
    ``gap < height`` and ``speed < speed_limit``, leave when either exceeds ``hysteresis ×`` its
    limit (a gap below the floor counts as low)."""
    enter = (gap < height) & (speed < speed_limit)
    stay = (gap <= hysteresis * height) & (speed <= hysteresis * speed_limit)
    out = np.zeros(len(gap), dtype=bool)
    state = False
    for f in range(len(gap)):
        state = bool(stay[f]) if state else bool(enter[f])
        out[f] = state
    return out


def adapted_thresholds(gaps: np.ndarray, speeds: np.ndarray, contact: np.ndarray, thresholds: tuple[float, float],
                       factor: float) -> tuple[float, float]:
    """The height and speed thresholds fitted to the motion's own noise in contact (see the
    module's docstring): ``gaps``, ``speeds``, ``contact`` shaped ``(F, ...)`` alike (point tracks
    along the last axes), ``thresholds`` the given (height, speed) upper bounds."""
    height, speed = thresholds
    flat_gaps = gaps.reshape(len(gaps), -1)
    flat_speeds = speeds.reshape(len(speeds), -1)
    flat_contact = contact.reshape(len(contact), -1)
    residuals, inner_speeds = [], []
    for k in range(flat_gaps.shape[1]):
        for a, b in runs(flat_contact[:, k]):
            if b - a >= 3:  # the frames inside the contact, not its first and last
                g = flat_gaps[a + 1:b - 1, k]
                residuals.append(g - np.median(g))
                inner_speeds.append(flat_speeds[a + 1:b - 1, k])
    if not residuals:
        return height, speed
    sigma = MAD_TO_SIGMA * float(np.median(np.abs(np.concatenate(residuals))))
    typical = float(np.median(np.concatenate(inner_speeds)))
    return (float(np.clip(factor * sigma, LOWEST_RATIO * height, height)),
            float(np.clip(factor * typical, LOWEST_RATIO * speed, speed)))


def runs(mask: np.ndarray) -> np.ndarray:
    """Stretches of true frames as rows ``(first, last + 1)``, ``(K, 2)``."""
    m = np.concatenate(([False], np.asarray(mask, bool), [False])).astype(np.int8)
    d = np.diff(m)
    return np.stack((np.flatnonzero(d == 1), np.flatnonzero(d == -1)), axis=1)


def enforce_durations(mask: np.ndarray, min_contact: int, min_lift: int) -> np.ndarray:
    """``mask`` with lifts shorter than ``min_lift`` frames between two contacts closed, then
    contacts shorter than ``min_contact`` frames removed."""
    out = np.asarray(mask, bool).copy()
    r = runs(out)
    for (_a, b), (c, _d) in zip(r[:-1], r[1:]):
        if c - b < min_lift:
            out[b:c] = True
    for a, b in runs(out):
        if b - a < min_contact:
            out[a:b] = False
    return out


def apply_overrides(contact: np.ndarray, gaps: np.ndarray, decided: np.ndarray, state: np.ndarray) -> np.ndarray:
    """Per-point contacts ``(F, 2 points)`` of one foot with the user's decisions applied: frames
    ``decided`` (F,) take the foot's ``state`` (F,); a decided contact frame where detection found
    neither point keeps the point nearer the floor (``gaps (F, 2)``)."""
    out = np.asarray(contact, bool).copy()
    decided = np.asarray(decided, bool)
    state = np.asarray(state, bool)
    out[decided & ~state] = False
    need = decided & state & ~out.any(axis=1)
    lower = np.where(gaps[:, BALL] < gaps[:, HEEL], BALL, HEEL)
    out[need, lower[need]] = True
    return out


@dataclass
class Plant:
    """One stretch of frames ``first``…``last`` (indices into the clip, inclusive) over which the
    foot of ``side`` (0 = L, 1 = R) has a point in contact; ``points (n, 2)`` bool: heel and ball
    contact on each of its frames; ``original``: the stretch as detected, when it was shortened."""

    side: int
    first: int
    last: int
    points: np.ndarray
    original: tuple[int, int] | None = None

    @property
    def detected(self) -> tuple[int, int]:
        """``(first, last)`` as detected, before any shortening."""
        return self.original or (self.first, self.last)

    @property
    def frames(self) -> np.ndarray:
        return np.arange(self.first, self.last + 1)

    @property
    def length(self) -> int:
        return self.last - self.first + 1


def plants_of(contact: np.ndarray, side: int) -> list[Plant]:
    """The plants of one foot from its per-point contacts ``(F, 2)``."""
    return [Plant(side, int(a), int(b) - 1, contact[a:b].copy()) for a, b in runs(contact.any(axis=1))]


def foot_contact(contact: np.ndarray) -> np.ndarray:
    """Per-foot contact ``(F, 2 sides)`` from per-point contacts ``(F, 2 sides, 2 points)``."""
    return np.asarray(contact, bool).any(axis=-1)
