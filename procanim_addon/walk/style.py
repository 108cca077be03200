"""Style on the human walk: the duck article's Laban-style sliders and emotion presets, mapped to
the path walk's stride, cadence, bounce, posture, arm swing and weave.

The sliders are the article's ("Le Quack Walker"): Amplitude, Weight and Direction, 0–10, with its
normalised values a = Amplitude/5 (0–2), w = Weight/10 (light 0 – heavy 1), d = Direction/10 (direct
0 – indirect 1); Speed is the path walk's own cadence. The presets are the article's survey results
(34 participants): Neutral A5 W5 D0; Joy A5 W1 D0 (read as happy by over 90 %); Happy-wandering A7
W1 D5; Sad A3 W9 D0 (weight the most telling setting: light reads as joy, heavy as sadness).

What each slider does to a human walk (directions from gait-and-emotion studies: Montepare, Goldstein
and Clausen 1987; Roether, Omlor, Christensen and Giese 2009; Michalak et al. 2009; Gross, Crane and
Fredrickson 2012 — sad walkers walk slower with shorter steps, less arm swing, less vertical
movement, head down and trunk flexed; joyful walkers walk faster with longer steps, larger arm swing
and more bounce, upright; the sizes are ProcAnim's, chosen so that Neutral is the plain walk):

====================  =========================================================
stride                × (0.85 + 0.15 a)(1.05 − 0.1 w)
cadence               × (1.06 − 0.12 w)
arm swing             × a (1.4 − 0.8 w)
bounce                vertical travel × 2 (1 − w) about its mean; heavy sits lower
head pitch (down +)   45° max(0, w − ½) − 10° max(0, ½ − w)
chest pitch (fwd +)   25° max(0, w − ½) − 5° max(0, ½ − w)
weave                 the walking line sways 0.12 d a leg lengths to each side every 4 steps
====================  =========================================================
"""

from __future__ import annotations

from dataclasses import dataclass

# The article's emotion presets: (amplitude, weight, direction), sliders 0–10.
EMOTIONS = {
    "NEUTRAL": (5.0, 5.0, 0.0),
    "JOY": (5.0, 1.0, 0.0),
    "HAPPY_WANDERING": (7.0, 1.0, 5.0),
    "SAD": (3.0, 9.0, 0.0),
}
WEAVE_LEGS = 0.12  # × d a × leg length: the weave's amplitude (m)
WEAVE_STEPS = 4.0  # steps per side-to-side weave
SIT_LEGS = 0.04  # × max(0, w − ½) × 2 × leg length: how much lower a heavy walker carries its pelvis


@dataclass(frozen=True)
class StyleEffects:
    """Multipliers and offsets a style puts on the walk (1 / 0 for the Neutral preset)."""

    stride: float
    cadence: float
    arm_swing: float
    bounce: float
    sit_legs: float
    head_pitch_deg: float
    chest_pitch_deg: float
    weave_legs: float


def effects(amplitude: float, weight: float, direction: float) -> StyleEffects:
    """The table of the module docstring for sliders ``amplitude``, ``weight``, ``direction`` (0–10)."""
    a, w, d = amplitude / 5.0, weight / 10.0, direction / 10.0
    heavy, light = max(0.0, w - 0.5), max(0.0, 0.5 - w)
    return StyleEffects(
        stride=(0.85 + 0.15 * a) * (1.05 - 0.1 * w),
        cadence=1.06 - 0.12 * w,
        arm_swing=a * (1.4 - 0.8 * w),
        bounce=2.0 * (1.0 - w),
        sit_legs=SIT_LEGS * 2.0 * heavy,
        head_pitch_deg=45.0 * heavy - 10.0 * light,
        chest_pitch_deg=25.0 * heavy - 5.0 * light,
        weave_legs=WEAVE_LEGS * d * a,
    )


def of(params) -> StyleEffects:
    """The effects of a :class:`~.params.PathWalkParams`' style sliders."""
    return effects(params.style_amplitude, params.style_weight, params.style_direction)
