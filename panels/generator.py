"""The sidebar side of every generator: its settings group, its panel (its own fields, Key Target and
Key Tolerance, the Preview toggle, Generate, the figures of the last bake), its sub-panels, preset menu and emotion
buttons — all made from its :class:`~..operators.generator.Generator`.

:class:`GeneratorPanel` and :class:`GeneratorSubPanel` hold the behaviour; :func:`panel_class` and
:func:`subpanel_class` make one subclass per generator that only names it (``PROCANIM_PT_<id>``).
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, ClassVar

import bpy

from ..operators.bake import read_metrics
from ..operators.generator import Generator, SubPanel, common_settings
from ..operators.objects import active_armature, last_bake
from ..preview import notify_preview, preview_property, runtime
from ..procanim_addon import registry
from .character import ProcAnimPanel
from .emotions import emotion_operator
from .presets import draw_preset_row, preset_classes


def panel_idname(generator: Generator) -> str:
    """The ``bl_idname`` of a generator's panel."""
    return f"PROCANIM_PT_{generator.id}"


# ----------------------------------------------------------------------------- the settings group


def settings_annotations(generator: Generator) -> dict:
    """The bpy properties of a generator's sidebar settings (``scene.procanim.<settings_name>``):
    object pickers, the shared settings (with slider limits), the common ones, the sidebar-only ones,
    the live preview's toggle."""
    props = {arg.name: arg.pointer_property() for arg in generator.objects if not arg.shared}
    props.update(generator.settings(ui=True))
    props.update(common_settings(ui=True))
    props.update(generator.panel_settings())
    props = {name: notify_preview(prop) for name, prop in props.items()}  # a change wakes the preview
    props["preview"] = preview_property(generator)
    return props


@functools.cache
def settings_class(generator: Generator) -> type:
    """The PropertyGroup type of a generator's sidebar settings."""
    name = "ProcAnim" + "".join(part.capitalize() for part in generator.id.split("_")) + "Settings"
    return type(name, (bpy.types.PropertyGroup,), {"__annotations__": settings_annotations(generator)})


# ----------------------------------------------------------------------------- the panel's parts


def draw_key_target(layout, settings) -> None:
    """Where the keys go and how few may follow the motion (every generator's common ``key_target``
    and ``key_tolerance``): each label on a row of its own half, so that it is read whole in a
    narrow sidebar."""
    for name, label in (("key_target", "Key Target"), ("key_tolerance", "Key Tolerance")):
        if hasattr(settings, name):
            row = layout.row()
            row.label(text=label)
            row.prop(settings, name, text="")
    draw_bake_to(layout, settings)


def draw_bake_to(layout, settings) -> None:
    """Where the bake goes (every generator's common ``bake_to``) and, for an NLA strip, its blend."""
    if hasattr(settings, "bake_to"):
        row = layout.row()
        row.label(text="Bake To")
        row.prop(settings, "bake_to", text="")
        if settings.bake_to == "NLA_STRIP":
            row = layout.row()
            row.label(text="Blend")
            row.prop(settings, "blend_type", text="")


def draw_toggle(layout, generator: Generator, settings) -> None:
    """The Preview toggle and, while it is on, the preview's status."""
    row = layout.row()
    row.prop(settings, "preview", toggle=True, icon="HIDE_OFF" if runtime.is_on(generator.id) else "HIDE_ON")
    session = runtime.SESSIONS.get(generator.id)
    if session is not None:
        kind, text = session.status()
        icon = {"BUSY": "SORTTIME", "ERROR": "ERROR", "READY": "CHECKMARK"}.get(kind, "INFO")
        layout.label(text=text.split(": ", 1)[-1], icon=icon)


def _pick(arg, settings, armature):
    return armature if arg.shared else getattr(settings, arg.name, None)


def draw_generate(layout, generator: Generator, settings, context):
    """The Generate button, filled with the sidebar's settings and picks."""
    obj = active_armature(context)
    row = layout.row()
    missing = [arg.label for arg in generator.objects if arg.is_needed(settings) and _pick(arg, settings, obj) is None]
    row.enabled = not missing
    op = row.operator(generator.spec.operator, text="Generate", icon="PLAY")
    generator.fill_arguments(op, settings)
    if any(arg.name == "armature" for arg in generator.objects):
        op.armature = obj.name if obj is not None else ""
    if missing:
        layout.label(text=f"Pick: {', '.join(missing)}", icon="INFO")
    return op


def draw_metrics(layout, generator: Generator, obj) -> None:
    """The figures of the last bake of ``generator`` on ``obj`` (its active action, else its newest
    NLA strip): a label, value and unit per row, the row's tooltip saying what it measures
    (``GeneratorSpec.rows``); then the Export button for that bake."""
    action = last_bake(obj, generator.id, strips=True)
    if action is None:
        return
    m = read_metrics(action)
    box = layout.box()
    box.label(text=f"Last bake: {action.name}", icon="ACTION")
    generator.draw_figures(box, action, m)
    col = box.column(align=True)
    for metric in generator.spec.rows():
        if m.get(metric.key) is None:
            continue
        row = col.split(factor=0.58, align=True)  # the label gets the room, the value fits beside it
        info = row.operator("procanim.metric_info", text=metric.label, emboss=False)
        info.generator, info.key = generator.id, metric.key
        row.label(text=metric.format(m[metric.key]))
    export = box.operator("procanim.export", text="Export FBX / glTF", icon="EXPORT")
    export.armature, export.generator = obj.name, generator.id


def figures_object(generator: Generator, settings, context):
    """Whose last bake the panel shows: the first armature argument's pick (the sidebar's armature,
    else the active one, for a generator without object arguments: the crowd)."""
    first = generator.objects[0] if generator.objects else None
    return active_armature(context) if first is None or first.shared else getattr(settings, first.name, None)


def _tooltip(generator_id: str, key: str) -> str:
    spec = registry.BY_ID.get(generator_id)
    metric = spec.metric(key) if spec is not None else None
    return metric.tooltip if metric is not None else key


class PROCANIM_OT_metric_info(bpy.types.Operator):
    """What a figure of the last bake measures"""

    bl_idname = "procanim.metric_info"
    bl_label = "Figure"
    bl_options = {"INTERNAL"}

    generator: bpy.props.StringProperty(name="Generator", description="Generator whose figure this is")
    key: bpy.props.StringProperty(name="Key", description="Key of the figure in the bake's metrics")

    @classmethod
    def description(cls, _context, properties):
        return _tooltip(properties.generator, properties.key)

    def execute(self, _context):
        self.report({"INFO"}, _tooltip(self.generator, self.key))
        return {"FINISHED"}


# ----------------------------------------------------------------------------- the panels


class GeneratorPanel(ProcAnimPanel, bpy.types.Panel):
    """A generator's sidebar panel (``PROCANIM_PT_<id>``, made by :func:`panel_class`): its preset
    menu, its own fields, Key Target, the Preview toggle, Generate, the figures of the last bake."""

    if TYPE_CHECKING:  # for the checker only: Blender reads a class's annotations as its properties
        generator: ClassVar[Generator]  # set by panel_class

    def draw(self, context):
        generator = self.generator
        layout = self.layout
        settings = getattr(context.scene.procanim, generator.settings_name)
        presets = preset_menu(generator)
        if presets is not None:
            draw_preset_row(layout, *presets)
        generator.draw(layout, settings, context)
        draw_key_target(layout, settings)
        draw_toggle(layout, generator, settings)
        draw_generate(layout, generator, settings, context)
        draw_metrics(layout, generator, figures_object(generator, settings, context))


@functools.cache
def panel_class(generator: Generator) -> type[GeneratorPanel]:
    """``PROCANIM_PT_<id>``: the panel of ``generator`` (a sub-panel of its ``parent``'s, closed
    at first, when it names one)."""
    idname = panel_idname(generator)
    attrs: dict = {"bl_idname": idname, "bl_label": generator.spec.label, "generator": generator}
    if generator.parent:
        attrs["bl_parent_id"] = f"PROCANIM_PT_{generator.parent}"
        attrs["bl_options"] = {"DEFAULT_CLOSED"}
    return type(idname, (GeneratorPanel,), attrs)


class GeneratorSubPanel(ProcAnimPanel, bpy.types.Panel):
    """A sub-panel a generator declares (:class:`~..operators.generator.SubPanel`), drawn from the
    generator's sidebar settings; made by :func:`subpanel_class`."""

    bl_options = {"DEFAULT_CLOSED"}
    if TYPE_CHECKING:  # for the checker only (see GeneratorPanel)
        generator: ClassVar[Generator]
        subpanel: ClassVar[SubPanel]

    def draw(self, context):
        self.subpanel.draw(self.layout, getattr(context.scene.procanim, self.generator.settings_name), context)


def subpanel_class(generator: Generator, subpanel: SubPanel) -> type[GeneratorSubPanel]:
    attrs = {
        "bl_idname": subpanel.idname,
        "bl_label": subpanel.label,
        "bl_parent_id": subpanel.parent or panel_idname(generator),
        "generator": generator,
        "subpanel": subpanel,
        "__doc__": subpanel.description or None,
    }
    return type(subpanel.idname, (GeneratorSubPanel,), attrs)


@functools.cache
def preset_menu(generator: Generator) -> tuple[type, type] | None:
    """The preset menu of a generator that stores presets, and the operator adding them."""
    fields = generator.preset_fields()
    return preset_classes(generator.id, generator.spec.label, generator.settings_name, fields) if fields else None


@functools.cache
def extra_classes(generator: Generator) -> tuple[type, ...]:
    """The classes a generator's panel uses beside the panel itself: its preset menu and the
    operator adding presets, its emotion buttons' operator, its sub-panels."""
    out: list[type] = list(preset_menu(generator) or ())
    if generator.emotions is not None:
        out.append(emotion_operator(generator.emotions, generator.settings_name))
    out += [subpanel_class(generator, sub) for sub in generator.subpanels]
    return tuple(out)


classes = (PROCANIM_OT_metric_info,)
