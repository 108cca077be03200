"""Source Motion sub-panel of Terrain: a walk, jump or forward roll made on flat ground, to adapt."""

from __future__ import annotations


def draw(layout, settings, _context) -> None:
    layout.prop(settings, "kind", expand=True)
    col = layout.column(align=True)
    col.prop(settings, "frame_start")
    col.prop(settings, "fps")
    if settings.kind == "WALK":
        col.prop(settings, "steps")


classes = ()
