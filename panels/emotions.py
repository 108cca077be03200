"""Emotion buttons: set a generator's style sliders to one of the duck article's survey presets
(Neutral, Joy, Happy-wandering, Sad), as the article's Maya GUI did. The buttons are drawn by the
generator (``operators/layout.py``: ``draw_emotions``); the operator they run is made here."""

from __future__ import annotations

import bpy

from ..operators.generator import Emotions
from ..operators.layout import EMOTION_ITEMS


def emotion_operator(emotions: Emotions, settings: str) -> type:
    """The operator ``procanim.<emotions.idname>`` setting ``scene.procanim.<settings>``'s sliders
    to ``emotions.presets[key]`` (values in the sliders' order)."""

    def execute(self, context):
        group = getattr(context.scene.procanim, settings)
        for name, value in zip(emotions.sliders, emotions.presets[self.preset]):
            setattr(group, name, value)
        return {"FINISHED"}

    return type(
        f"PROCANIM_OT_{emotions.idname}",
        (bpy.types.Operator,),
        {
            "__doc__": "Set the style sliders to one of the article's emotion presets",
            "bl_idname": f"procanim.{emotions.idname}",
            "bl_label": "Emotion Preset",
            "bl_options": {"REGISTER", "UNDO"},
            "__annotations__": {
                "preset": bpy.props.EnumProperty(
                    name="Preset", description="Emotion preset from the article's survey", items=EMOTION_ITEMS
                )
            },
            "execute": execute,
        },
    )
