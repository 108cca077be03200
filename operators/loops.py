"""The walks' loop settings (issue 24): ``loop`` and ``loop_cycles`` of the path walk and the duck
walk, as operator arguments and sidebar fields, and the row that draws them.

What a loop is and how the bake plays it (the closing key, the Cycles modifiers, the cyclic frame
range: :meth:`.keys.BakeKeys.finish`) is in docs/loops.md.
"""

from __future__ import annotations

from bpy.props import EnumProperty

from ..procanim_addon.loop import LOOP_MODES
from .limits import number

_LOOP_TEXT = {
    "NONE": ("Off", "No loop: the walk as it is (the path walk follows its path)"),
    "IN_PLACE": ("In Place", "Whole gait cycles on a straight line, the travel taken off: a seamless cycle "
                 "that stays where it is"),
    "ROOT_MOTION": ("Root Motion", "The same cycles with the travel on the rig's root bone (the hips when it "
                    "has none; the object with Root Motion 'Object'): a seamless cycle that advances"),
}
LOOP_ITEMS = [(mode, *_LOOP_TEXT[mode]) for mode in LOOP_MODES]


def loop_settings(params_class, ui: bool) -> dict:
    """``loop`` and ``loop_cycles`` bound to ``params_class`` (the walk's parameter dataclass)."""
    return {
        "loop": EnumProperty(name="Loop", description="Make a seamless walk cycle that a Cycles modifier repeats",
                             items=LOOP_ITEMS, default="NONE"),
        "loop_cycles": number(params_class, "loop_cycles", ui, "Cycles",
                              "Gait cycles (two steps each) in the loop; a weaving walk loops over whole sways of two"),
    }


def draw_loop(layout, settings) -> None:
    """The loop's mode and, when one is made, its cycle count."""
    box = layout.box()
    box.label(text="Loop", icon="FILE_REFRESH")
    box.row().prop(settings, "loop", expand=True)
    row = box.row()
    row.enabled = settings.loop != "NONE"
    row.prop(settings, "loop_cycles")


def is_loop(args) -> bool:
    """True when ``args`` (an operator, the sidebar's settings) ask for a loop."""
    return getattr(args, "loop", "NONE") != "NONE"


def loop_summary(name: str, metrics: dict) -> str:
    """The INFO line of a loop's bake on armature ``name``, from its Clip's metrics."""
    where = "in place" if metrics["loop_mode"] == "IN_PLACE" else f"root motion on {_carrier(metrics)}"
    return (
        f"Loop on '{name}': {metrics['loop_cycles']} gait cycle(s) {where}, "
        f"{metrics['loop_period_frames']:.0f} frames from frame {metrics['loop_frame_start']:.0f}, "
        f"{metrics['cycle_stride_m']:.3f} m per cycle; seam velocity "
        f"{100.0 * metrics.get('loop_seam_velocity_ratio', 0.0):.1f} % of the walk's"
    )


def _carrier(metrics: dict) -> str:
    role = metrics.get("loop_travel_role", "")
    return "the object" if role == "object" else f"'{metrics.get('loop_travel_bone', '')}'"
