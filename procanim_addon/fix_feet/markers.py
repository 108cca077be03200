"""The user's contacts: pose markers "L contact", "L lift", "R contact", "R lift" on the action.

These are the names ProcAnim's bakes write at each contact and lift-off, so a bake's markers can be
moved by hand and Fix Feet follows them. For each foot, the markers decide every frame between
that foot's first and last marker: from a "contact" marker up to the next "lift" marker the foot is
in contact, from a "lift" up to the next "contact" it is in the air (a last "contact" marker holds
to the end of the clip). Outside that span, and for a foot without markers, detection decides.
Marker names are compared without case and surrounding spaces; other markers are ignored.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np

from .feet import SIDES

CONTACT, LIFT = "contact", "lift"


@dataclass
class ContactOverrides:
    """Per foot side (``"L"``, ``"R"``): the markers ``[(frame, "contact" | "lift")]`` sorted by frame."""

    markers: dict[str, list[tuple[float, str]]] = field(default_factory=dict)

    def __bool__(self) -> bool:
        return any(self.markers.values())

    def decide(self, side: str, frames: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(decided (F,), contact (F,))`` for clip ``frames`` (frame numbers): which frames the
        markers of ``side`` decide, and the foot's contact state there."""
        frames = np.asarray(frames, float)
        decided = np.zeros(len(frames), dtype=bool)
        state = np.zeros(len(frames), dtype=bool)
        marks = self.markers.get(side) or []
        if not marks or not len(frames):
            return decided, state
        last_kind = marks[-1][1]
        end = np.inf if last_kind == CONTACT else marks[-1][0]
        decided[(frames >= marks[0][0] - 1e-6) & (frames <= end + 1e-6)] = True
        for (frame, kind), nxt in zip(marks, [*marks[1:], (np.inf, "")]):
            # a frame belongs to the marker at or before it (rounded to the nearest clip frame)
            span = (frames >= frame - 1e-6) & (frames < nxt[0] - 1e-6)
            state[span] = kind == CONTACT
        return decided, state


def overrides_from_markers(markers: Iterable[tuple[str, float]]) -> ContactOverrides:
    """The overrides of the pose markers ``[(name, frame)]`` (other names are ignored)."""
    out: dict[str, list[tuple[float, str]]] = {s: [] for s in SIDES}
    for name, frame in markers:
        words = str(name).strip().lower().split()
        if len(words) == 2 and words[0] in ("l", "r") and words[1] in (CONTACT, LIFT):
            out[words[0].upper()].append((float(frame), words[1]))
    for side in SIDES:
        # two markers on one frame: the later in the list wins (a stable sort keeps their order)
        marks = sorted(out[side], key=lambda m: m[0])
        kept: list[tuple[float, str]] = []
        for m in marks:
            if kept and abs(kept[-1][0] - m[0]) < 1e-6:
                kept[-1] = m
            else:
                kept.append(m)
        out[side] = kept
    return ContactOverrides(out)
