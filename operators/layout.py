"""Drawing helpers a generator's ``draw`` shares: a layout in, rows out (nothing of panels/)."""

from __future__ import annotations

from ..procanim_addon.duck import PRESETS

EMOTION_ITEMS = [(key, label, desc) for key, (label, _values, desc) in PRESETS.items()]


def draw_emotions(layout, idname: str) -> None:
    """The four emotion buttons of the operator ``procanim.<idname>``, two by two."""
    grid = layout.grid_flow(columns=2, align=True)
    for key, label, _desc in EMOTION_ITEMS:
        grid.operator(f"procanim.{idname}", text=label).preset = key
