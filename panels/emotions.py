"""Emotion buttons: set a generator's style sliders to one of the duck article's survey presets
(Neutral, Joy, Happy-wandering, Sad), as the article's Maya GUI did."""

from __future__ import annotations

import bpy

from ..procanim_addon.duck import PRESETS

ITEMS = [(key, label, desc) for key, (label, _values, desc) in PRESETS.items()]


def emotion_operator(idname: str, settings: str, presets: dict, sliders: tuple) -> type:
    """An operator ``procanim.<idname>`` setting ``scene.procanim.<settings>``'s ``sliders`` to
    ``presets[key]`` (values in the sliders' order)."""

    def execute(self, context):
        group = getattr(context.scene.procanim, settings)
        for name, value in zip(sliders, presets[self.preset]):
            setattr(group, name, value)
        return {"FINISHED"}

    return type(
        f"PROCANIM_OT_{idname}",
        (bpy.types.Operator,),
        {
            "__doc__": "Set the style sliders to one of the article's emotion presets",
            "bl_idname": f"procanim.{idname}",
            "bl_label": "Emotion Preset",
            "bl_options": {"REGISTER", "UNDO"},
            "__annotations__": {
                "preset": bpy.props.EnumProperty(
                    name="Preset", description="Emotion preset from the article's survey", items=ITEMS
                )
            },
            "execute": execute,
        },
    )


def draw_emotions(layout, idname: str) -> None:
    """The four emotion buttons, two by two."""
    grid = layout.grid_flow(columns=2, align=True)
    for key, label, _desc in ITEMS:
        grid.operator(f"procanim.{idname}", text=label).preset = key
