"""User presets of a generator's sidebar settings, saved and listed like Blender's own presets."""

from __future__ import annotations

import bpy
from bl_operators.presets import AddPresetBase


def preset_classes(generator_id: str, label: str, settings: str, fields) -> tuple[type, type]:
    """The preset menu ``PROCANIM_MT_<id>_presets`` and its add/remove operator
    ``procanim.<id>_preset_add`` for ``scene.procanim.<settings>``'s ``fields``.

    Presets store full data paths, never ``preset_defines``: Blender 4.3 under Python 3.13 exec()s
    the defines and eval()s the values in scopes that do not share names (NameError)."""
    subdir = f"procanim/{generator_id}"
    menu = type(
        f"PROCANIM_MT_{generator_id}_presets",
        (bpy.types.Menu,),
        {
            "__doc__": f"User presets of the {label.lower()}, saved like Blender's own presets",
            "bl_label": f"{label} Presets",
            "preset_subdir": subdir,
            "preset_operator": "script.execute_preset",
            "draw": bpy.types.Menu.draw_preset,
        },
    )
    operator = type(
        f"PROCANIM_OT_{generator_id}_preset_add",
        (AddPresetBase, bpy.types.Operator),
        {
            "__doc__": f"Save the {label.lower()} settings as a preset, or remove one",
            "bl_idname": f"procanim.{generator_id}_preset_add",
            "bl_label": f"Add {label} Preset",
            "preset_menu": menu.__name__,
            "preset_values": [f"bpy.context.scene.procanim.{settings}.{f}" for f in fields],
            "preset_subdir": subdir,
        },
    )
    return menu, operator


def draw_preset_row(layout, menu: type, operator: type) -> None:
    """The preset menu with its + and − buttons, as Blender draws them."""
    label, idname = getattr(menu, "bl_label"), getattr(operator, "bl_idname")  # noqa: B009 - made by type()
    row = layout.row(align=True)
    row.menu(menu.__name__, text=label)
    row.operator(idname, text="", icon="ADD")
    row.operator(idname, text="", icon="REMOVE").remove_active = True
