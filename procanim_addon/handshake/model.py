"""The handshake model of Deglorie et al. 2015 ("Procedural Animation of Human Interaction using
Inverse Kinematics and Fuzzy Logic", GRAPP 2015, §4): point of contact, shake vector, shake path.

World space, metres, Z up. Symbols: E_i, E_p the right elbows of initiator and partner, C the point
of contact, ŝ the shake vector.
"""

from __future__ import annotations

import numpy as np

UP = np.array([0.0, 0.0, 1.0])


def dominance_weight(dom_initiator: float, dom_partner: float, shift: float = 0.3) -> float:
    """Where C sits on the elbow line, as a fraction from E_i (0) to E_p (1).

    Equal dominance: the middle. A dominant person keeps the shake out of their own personal space,
    so the more dominant the initiator, the closer C is to the partner:
    ``w = 0.5 + shift · (dom_i − dom_p)`` (RECON: the paper gives the rule, not the law).
    """
    return float(np.clip(0.5 + shift * (dom_initiator - dom_partner), 0.05, 0.95))


def contact_point(elbow_i, elbow_p, weight: float, height: float) -> np.ndarray:
    """C: on the elbow line seen from the top (``E_i + w (E_p − E_i)``), at ``height`` (m)."""
    e_i, e_p = np.asarray(elbow_i, float), np.asarray(elbow_p, float)
    c = e_i + weight * (e_p - e_i)
    c[2] = height
    return c


def horizontal(v) -> np.ndarray:
    v = np.array(v, float)
    v[2] = 0.0
    n = np.linalg.norm(v)
    return v / n if n > 1e-12 else v


def shake_vector(elbow_i, elbow_p, ratio: float = 0.35) -> np.ndarray:
    """ŝ: perpendicular to the elbow line, in the vertical plane through it, pointing up;
    length ``ratio`` × elbow distance (paper: 35 %)."""
    line = np.asarray(elbow_p, float) - np.asarray(elbow_i, float)
    dist = np.linalg.norm(line)
    if dist < 1e-9:
        return UP * 0.0
    e = line / dist
    s = UP - e * (UP @ e)
    n = np.linalg.norm(s)
    s = UP if n < 1e-9 else s / n
    return s * ratio * dist


def shake_offsets(primary_frames: int, secondary: int = 0, secondary_frames: int = 12,
                  decay: float = 0.5) -> np.ndarray:
    """Per-frame multiples of ŝ for the shake phase ``(frames,)``.

    The primary shake is one cycle ``½ sin 2πu`` (up half the shake distance, down to the other
    half, back to C: peak to peak = |ŝ|); each secondary shake is the same over
    ``secondary_frames`` with ``decay``ᵏ of the amplitude. ``u = (i + 1) / n``, so the last frame is
    back at C.
    """
    parts = [0.5 * np.sin(2 * np.pi * np.arange(1, primary_frames + 1) / primary_frames)]
    for k in range(1, secondary + 1):
        parts.append(0.5 * decay ** k * np.sin(2 * np.pi * np.arange(1, secondary_frames + 1) / secondary_frames))
    return np.concatenate(parts)


def step_toward(shoulder, target, reach: float, direction) -> float | None:
    """Smallest distance ``s >= 0`` to move the shoulder along unit horizontal ``direction`` so that
    ``|shoulder + s·direction − target| <= reach``; None when no step can do it (too high/low)."""
    d = np.asarray(target, float) - np.asarray(shoulder, float)
    if d @ d <= reach * reach:
        return 0.0
    f = np.asarray(direction, float)
    # |d − s f|² = reach²  →  s² − 2 (d·f) s + |d|² − reach² = 0
    b = d @ f
    disc = b * b - (d @ d - reach * reach)
    if disc < 0:
        return None
    s = b - np.sqrt(disc)
    return float(s) if s >= 0 else None
