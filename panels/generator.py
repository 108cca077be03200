"""The sidebar side of the generator contract: settings groups, panels, the Generate button and
the figures of the last bake, made from the registry.

A generator's panel module (``panels/<id>.py``) provides ``draw(layout, settings, context)`` (its
own fields) and optionally:

* ``panel_settings() -> dict`` — sidebar-only settings (toggles that are not operator arguments);
* ``button_skip(settings) -> set`` — operator arguments the Generate button must leave unset
  (e.g. the terrain's frame range while "Whole Action" is on);
* ``draw_figures(layout, action, metrics)`` — a custom view of the last bake's figures (the
  handshake's Table 3) drawn above the common rows;
* ``classes`` — its own classes (preset menus …), registered after the panels.
"""

from __future__ import annotations

import bpy

from ..operators import bake
from ..operators.base import common_settings
from ..operators.objects import SettingsArgs
from ..preview import draw_toggle, notify_preview, preview_property
from ..procanim_addon import metric_table
from .character import ProcAnimPanel, active_armature


def settings_annotations(entry, op_module, panel_module) -> dict:
    """The bpy properties of a generator's sidebar settings (``scene.procanim.<entry.settings>``):
    object pickers, the shared settings (with slider limits), the common ones, the sidebar-only ones,
    the live preview's toggle."""
    props = {arg.name: arg.pointer_property() for arg in op_module.OBJECTS if not arg.shared}
    props.update(op_module.settings(ui=True))
    props.update(common_settings())
    props.update(getattr(panel_module, "panel_settings", dict)())
    props = {name: notify_preview(prop) for name, prop in props.items()}  # a change wakes the preview
    props["preview"] = preview_property(entry)
    return props


def settings_class(entry, op_module, panel_module) -> type:
    """The PropertyGroup type of a generator's sidebar settings."""
    name = "ProcAnim" + "".join(part.capitalize() for part in entry.id.split("_")) + "Settings"
    annotations = settings_annotations(entry, op_module, panel_module)
    return type(name, (bpy.types.PropertyGroup,), {"__annotations__": annotations})


def button_arguments(op_module, panel_module, settings) -> list[str]:
    """The operator arguments the Generate button passes from ``settings``."""
    skip: set[str] = getattr(panel_module, "button_skip", lambda _s: set())(settings)
    names = [arg.name for arg in op_module.OBJECTS if not arg.shared]
    names += [*op_module.settings(ui=False), *common_settings()]
    return [n for n in names if n not in skip]


def settings_args(entry, op_module, panel_module, settings) -> SettingsArgs:
    """The sidebar's settings as the operator's arguments (what Generate would pass)."""
    return SettingsArgs(settings, op_module.OBJECTS, explicit=button_arguments(op_module, panel_module, settings))


def draw_key_target(layout, settings) -> None:
    """Where the keys go (every generator's common ``key_target``): its label on a row of its own
    half, so that "Key Target" is read whole in a narrow sidebar."""
    if hasattr(settings, "key_target"):
        row = layout.row()
        row.label(text="Key Target")
        row.prop(settings, "key_target", text="")


def fill_arguments(op, op_module, panel_module, settings, leave=()) -> None:
    """Set a drawn button's operator arguments from the sidebar's ``settings`` (picked objects as
    their names), except the names in ``leave``."""
    objects = {arg.name for arg in op_module.OBJECTS}
    for name in button_arguments(op_module, panel_module, settings):
        if name in leave:
            continue
        value = getattr(settings, name)
        if name in objects:
            value = value.name if value is not None else ""
        setattr(op, name, value)


def draw_generate(layout, entry, op_module, panel_module, settings, context):
    """The Generate button, filled with the sidebar's settings and picks."""
    obj = active_armature(context)
    row = layout.row()
    missing = [arg.label for arg in op_module.OBJECTS if not arg.optional and _pick(arg, settings, obj) is None]
    row.enabled = not missing
    op = row.operator(entry.operator, text="Generate", icon="PLAY")
    fill_arguments(op, op_module, panel_module, settings)
    if any(arg.name == "armature" for arg in op_module.OBJECTS):
        op.armature = obj.name if obj is not None else ""
    if missing:
        layout.label(text=f"Pick: {', '.join(missing)}", icon="INFO")
    return op


def _pick(arg, settings, armature):
    return armature if arg.shared else getattr(settings, arg.name, None)


def last_bake(obj, generator: str):
    """The object's active action when it is a bake of ``generator`` (else None)."""
    action = obj.animation_data.action if obj is not None and obj.animation_data else None
    return action if action is not None and action.procanim.generator == generator else None


def draw_metrics(layout, entry, panel_module, obj) -> None:
    """The figures of the last bake of ``entry`` on ``obj``: a label, value and unit per row; the
    row's tooltip says what it measures (table: :mod:`procanim_addon.metric_table`)."""
    action = last_bake(obj, entry.id)
    if action is None:
        return
    m = bake.read_metrics(action)
    box = layout.box()
    box.label(text=f"Last bake: {action.name}", icon="ACTION")
    custom = getattr(panel_module, "draw_figures", None)
    if custom is not None:
        custom(box, action, m)
    col = box.column(align=True)
    for metric in metric_table.metrics_for(entry.id):
        if m.get(metric.key) is None:
            continue
        row = col.split(factor=0.58, align=True)  # the label gets the room, the value fits beside it
        info = row.operator("procanim.metric_info", text=metric.label, emboss=False)
        info.generator, info.key = entry.id, metric.key
        row.label(text=metric.format(m[metric.key]))


class PROCANIM_OT_metric_info(bpy.types.Operator):
    """What a figure of the last bake measures"""

    bl_idname = "procanim.metric_info"
    bl_label = "Figure"
    bl_options = {"INTERNAL"}

    generator: bpy.props.StringProperty(name="Generator", description="Generator whose figure this is")
    key: bpy.props.StringProperty(name="Key", description="Key of the figure in the bake's metrics")

    @classmethod
    def description(cls, _context, properties):
        metric = metric_table.find(properties.generator, properties.key)
        return metric.tooltip if metric is not None else properties.key

    def execute(self, _context):
        metric = metric_table.find(self.generator, self.key)
        self.report({"INFO"}, metric.tooltip if metric is not None else self.key)
        return {"FINISHED"}


def panel_class(entry, op_module, panel_module) -> type:
    """The sidebar panel of a registry entry: its own fields, the Preview toggle, Generate, the
    figures of the last bake."""

    def draw(self, context):
        settings = getattr(context.scene.procanim, entry.settings)
        panel_module.draw(self.layout, settings, context)
        draw_key_target(self.layout, settings)
        draw_toggle(self.layout, entry, settings)
        draw_generate(self.layout, entry, op_module, panel_module, settings, context)
        draw_metrics(self.layout, entry, panel_module, _figures_object(op_module, settings, context))

    attrs = {"bl_idname": entry.panel, "bl_label": entry.label, "draw": draw, "generator": entry}
    if entry.parent:
        attrs["bl_parent_id"] = f"PROCANIM_PT_{entry.parent}"
        attrs["bl_options"] = {"DEFAULT_CLOSED"}
    return type(entry.panel, (ProcAnimPanel, bpy.types.Panel), attrs)


def _figures_object(op_module, settings, context):
    """Whose last bake the panel shows: the first armature argument's pick."""
    first = op_module.OBJECTS[0]
    return active_armature(context) if first.shared else getattr(settings, first.name, None)


classes = (PROCANIM_OT_metric_info,)
