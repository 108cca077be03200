"""Character ▸ Control Map: save the current rig's control map from a dialog, load one, clear it.

* ``procanim.save_control_map`` — a dialog where the animator picks, for each limb, the IK control,
  the knee (elbow) pole, the FK controls and the IK/FK switch (the custom property, the bone holding
  it and its value for IK); and the controls that move the body (hips, spine, chest, neck, head,
  shoulders, toes) and the root. It writes a control map file (TOML, ``docs/rigs.md``), by default
  into the user's control-map folder where every rig of the same family finds it, and stores the map
  on the armature. Fields start from the rig's current map and from what its deform bones copy.
* ``procanim.load_control_map`` — a map file stored on the armature (a family ProcAnim does not
  ship bakes onto its controls with no code change); its roles, when it names them, are applied.
* ``procanim.clear_control_map`` — the stored map forgotten.
"""

from __future__ import annotations

import re
from pathlib import Path

import bpy
from bpy.props import BoolProperty, EnumProperty, FloatProperty, PointerProperty, StringProperty

from ..procanim_addon.controls.maps import LIMB_ROLES, ControlMap, LimbControls, MapError, Switch
from ..procanim_addon.errors import InputError
from ..procanim_addon.rig_roles import ROLES
from .bridge import read_rigmap, resolve_armature, store_rigmap
from .control_maps import clear_map, load_map_file, map_for, save_map_file, store_map, stored_map, user_maps_dir
from .on_armature import OnArmature

LIMB_BONES = {"leg": ("thigh", "shin", "foot"), "arm": ("upper_arm", "forearm", "hand")}
BODY_ROLES = ("hips", "spine", "chest", "neck", "head", "clavicle.L", "clavicle.R", "toe.L", "toe.R")
SKELETON_RULES = (
    ("USE_DEFORM", "Deform bones", "The bones with Deform on (Bone ▸ Deform) are the deform skeleton"),
    ("ROLES", "Role bones", "The bones of the role map (Character ▸ roles) are the deform skeleton"),
)


def _limb_key(role: str) -> str:
    """``leg.L`` → ``leg_L`` (a property name)."""
    return role.replace(".", "_")


class PROCANIM_PG_limb_controls(bpy.types.PropertyGroup):
    """What the map dialog asks of one limb."""

    ik_control: StringProperty(name="IK", description="The control that moves the limb's end (the IK foot or hand)")
    pole: StringProperty(name="Pole", description="The knee (elbow) pole target, if the IK chain has one")
    fk_1: StringProperty(name="FK 1", description="The FK control of the thigh (upper arm)")
    fk_2: StringProperty(name="FK 2", description="The FK control of the shin (forearm)")
    fk_3: StringProperty(name="FK 3", description="The FK control of the foot (hand)")
    switch_bone: StringProperty(name="Switch bone", description="The bone holding the IK/FK switch property")
    switch_property: StringProperty(name="Switch", description="The custom property that switches IK and FK")
    ik_value: FloatProperty(name="IK value", description="The switch's value for IK", default=1.0,
                            min=-1000.0, max=1000.0)
    fk_value: FloatProperty(name="FK value", description="The switch's value for FK", default=0.0,
                            min=-1000.0, max=1000.0)


class PROCANIM_PG_map_dialog(bpy.types.PropertyGroup):
    """The map dialog's fields: a family, the root, the deform skeleton, the body's and limbs' controls."""

    label: StringProperty(name="Family", description="The rig family's name (e.g. the rig generator)")
    root: StringProperty(name="Root", description="The rig's root bone (the root motion control)")
    skeleton: EnumProperty(name="Deform skeleton", description="Which bones the motion is generated for",
                           items=SKELETON_RULES, default="USE_DEFORM")
    deform_prefix: StringProperty(name="Deform prefix",
                                  description="Prefix of the bones the mesh follows when they are not the deform "
                                  "skeleton itself (DEF- on generated rigs; empty otherwise)")
    shaped_controls: BoolProperty(name="Shaped bones are controls",
                                  description="Every bone with a custom shape (widget) is a control, besides those "
                                  "named here", default=True)
    hips: StringProperty(name="Hips", description="The control that moves the hips")
    spine: StringProperty(name="Spine", description="The control that bends the spine")
    chest: StringProperty(name="Chest", description="The control that moves the chest")
    neck: StringProperty(name="Neck", description="The neck's control")
    head: StringProperty(name="Head", description="The head's control")
    clavicle_L: StringProperty(name="Shoulder L", description="The left shoulder's control")
    clavicle_R: StringProperty(name="Shoulder R", description="The right shoulder's control")
    toe_L: StringProperty(name="Toes L", description="The left toes' control")
    toe_R: StringProperty(name="Toes R", description="The right toes' control")
    leg_L: PointerProperty(type=PROCANIM_PG_limb_controls, name="Left leg", description="The left leg's controls")
    leg_R: PointerProperty(type=PROCANIM_PG_limb_controls, name="Right leg", description="The right leg's controls")
    arm_L: PointerProperty(type=PROCANIM_PG_limb_controls, name="Left arm", description="The left arm's controls")
    arm_R: PointerProperty(type=PROCANIM_PG_limb_controls, name="Right arm", description="The right arm's controls")


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", text.lower()).strip("_") or "my_rig"


def _copied(obj, bone: str, first: bool = False) -> str:
    """The bone ``bone`` copies: its last Copy Transforms target on this armature (``first``: its
    first, the FK side of a limb whose IK side is copied after it), or ''."""
    pb = obj.pose.bones.get(bone)
    if pb is None:
        return ""
    found = [c.subtarget for c in pb.constraints
             if c.type == "COPY_TRANSFORMS" and getattr(c, "target", None) == obj and c.subtarget]
    return (found[0] if first else found[-1]) if found else ""


def fill_dialog(d, obj) -> None:
    """The dialog's fields from ``obj``'s map (when it names them) and its role map: each body role's
    control guessed as the bone its deform bone copies."""
    cmap = map_for(obj)
    roles = read_rigmap(obj).roles
    d.label = cmap.label if cmap is not None and cmap.id not in ("rigify", "cloudrig") else f"{obj.data.name} rig"
    tops = [b.name for b in obj.data.bones if b.parent is None]
    d.root = cmap.root if cmap is not None else roles.get("root") or ("root" if "root" in obj.data.bones else tops[0])
    d.skeleton = "USE_DEFORM" if any(b.use_deform for b in obj.data.bones) else "ROLES"
    d.deform_prefix = "DEF-" if any(b.name.startswith("DEF-") for b in obj.data.bones) else ""
    for role in BODY_ROLES:
        setattr(d, _limb_key(role), _copied(obj, roles.get(role, "")))
    for role in LIMB_ROLES:
        fields = getattr(d, _limb_key(role))
        kind, side = role.split(".")
        spec = cmap.limb(role) if cmap is not None else None
        for k, part in enumerate(LIMB_BONES[kind]):
            bone = roles.get(f"{part}.{side}", "")
            named = spec.fk[k] if spec is not None and k < len(spec.fk) else ""
            setattr(fields, f"fk_{k + 1}", named or _copied(obj, bone, first=True))
        if spec is not None:
            fields.ik_control, fields.pole = spec.ik_control, spec.pole
            if spec.switch is not None:
                fields.switch_bone, fields.switch_property = spec.switch.bone, spec.switch.prop
                fields.ik_value, fields.fk_value = spec.switch.ik, spec.switch.fk


def map_from_dialog(d, obj) -> ControlMap:
    """The control map the dialog's fields describe for ``obj`` (InputError naming a field that
    names a bone or property the rig lacks)."""
    bones = obj.data.bones

    def bone(name: str, what: str) -> str:
        if name and name not in bones:
            raise InputError(f"{what}: '{obj.name}' has no bone '{name}'.")
        return name

    if not d.root or d.root not in bones:
        raise InputError(f"Root: '{obj.name}' has no bone '{d.root}'; pick the rig's root bone.")
    roles = read_rigmap(obj).roles
    limbs, controls = [], [d.root]
    for role in LIMB_ROLES:
        f = getattr(d, _limb_key(role))
        kind, side = role.split(".")
        limb_bones = tuple(roles.get(f"{part}.{side}", "") for part in LIMB_BONES[kind])
        fk = tuple(bone(getattr(f, f"fk_{k}"), f"{role} FK {k}") for k in (1, 2, 3))
        ik, pole = bone(f.ik_control, f"{role} IK"), bone(f.pole, f"{role} pole")
        switch = None
        if f.switch_property:
            holder = obj.pose.bones.get(bone(f.switch_bone, f"{role} switch bone"))
            if holder is None or f.switch_property not in holder.keys():
                raise InputError(f"{role}: bone '{f.switch_bone}' has no custom property '{f.switch_property}'.")
            if f.ik_value == f.fk_value:
                raise InputError(f"{role}: the switch's IK and FK values are both {f.ik_value:g}.")
            switch = Switch(f.switch_property, f.switch_bone, f.ik_value, f.fk_value)
        if not (ik or any(fk)):
            continue
        if not all(limb_bones):
            raise InputError(f"{role}: assign its bones' roles first (Character ▸ roles).")
        limbs.append(LimbControls(role, limb_bones, ik, pole, fk if all(fk) else (), switch))
        controls += [n for n in (ik, pole, *fk) if n]
    for role in BODY_ROLES:
        name = bone(getattr(d, _limb_key(role)), role)
        if name:
            controls.append(name)
    skeleton = tuple(sorted({b for r, b in roles.items() if r in ROLES and b and b != d.root}))
    named_roles = tuple(sorted((r, b) for r, b in roles.items() if r in ROLES and b))
    return ControlMap(
        id=_slug(d.label),
        label=d.label or f"{obj.data.name} rig",
        required_bones=tuple(dict.fromkeys(controls)),
        root=d.root,
        skeleton_bones=skeleton if d.skeleton == "ROLES" else (),
        skeleton_use_deform=d.skeleton == "USE_DEFORM",
        deform_prefix=d.deform_prefix,
        control_names=tuple(dict.fromkeys(controls)),
        control_shapes=d.shaped_controls,
        limbs=tuple(limbs),
        roles=named_roles,
    )


def _draw_limb(layout, obj, fields, title: str) -> None:
    box = layout.box()
    box.label(text=title)
    col = box.column(align=True)
    for prop in ("ik_control", "pole", "fk_1", "fk_2", "fk_3", "switch_bone"):
        col.prop_search(fields, prop, obj.data, "bones")
    col.prop(fields, "switch_property")
    row = col.row(align=True)
    row.prop(fields, "ik_value")
    row.prop(fields, "fk_value")


class PROCANIM_OT_save_control_map(OnArmature, bpy.types.Operator):
    """Save this rig's control map: which controls move each limb and the body, and its IK/FK switches.
    Scripts fill ``window_manager.procanim_map_dialog`` (the dialog's fields) and call it."""

    bl_idname = "procanim.save_control_map"
    bl_label = "Save Control Map"
    bl_options = {"REGISTER", "UNDO"}

    filepath: StringProperty(name="File", description="Where to write the map (empty: the user's control-map folder)",
                             subtype="FILE_PATH")

    def invoke(self, context, _event):
        obj = self.armature_or_report(context)
        if obj is None:
            return {"CANCELLED"}
        self.armature = obj.name
        fill_dialog(context.window_manager.procanim_map_dialog, obj)
        return context.window_manager.invoke_props_dialog(self, width=420)

    def draw(self, context):
        layout = self.layout
        obj = bpy.data.objects.get(self.armature)
        d = context.window_manager.procanim_map_dialog
        layout.prop(d, "label")
        layout.prop(self, "filepath")
        if obj is None:
            return
        col = layout.column(align=True)
        col.prop_search(d, "root", obj.data, "bones")
        col.prop(d, "skeleton")
        col.prop(d, "deform_prefix")
        col.prop(d, "shaped_controls")
        box = layout.box()
        box.label(text="Body controls")
        body = box.column(align=True)
        for role in BODY_ROLES:
            body.prop_search(d, _limb_key(role), obj.data, "bones")
        for role, title in zip(LIMB_ROLES, ("Left leg", "Right leg", "Left arm", "Right arm")):
            _draw_limb(layout, obj, getattr(d, _limb_key(role)), title)

    def execute(self, context):
        try:
            obj = resolve_armature(self.armature, context)
            cmap = map_from_dialog(context.window_manager.procanim_map_dialog, obj)
            path = Path(bpy.path.abspath(self.filepath)) if self.filepath else None
            if path is None:
                folder = user_maps_dir(create=True)
                if folder is None:
                    raise InputError("Give a file to save the map to (no user folder for control maps here).")
                path = folder / f"{cmap.id}.toml"
            written = save_map_file(path, cmap)
        except (InputError, OSError, ValueError) as err:
            self.report({"ERROR"}, str(err))
            return {"CANCELLED"}
        store_map(obj, cmap)
        self.report({"INFO"}, f"{obj.name}: control map '{cmap.label}' saved to {written} and stored on the rig")
        return {"FINISHED"}


class PROCANIM_OT_load_control_map(OnArmature, bpy.types.Operator):
    """Load a control map file onto this rig: bakes go onto the controls it names"""

    bl_idname = "procanim.load_control_map"
    bl_label = "Load Control Map"
    bl_options = {"REGISTER", "UNDO"}

    filepath: StringProperty(name="File", description="The control map file (.toml) to load", subtype="FILE_PATH")
    filter_glob: StringProperty(name="Filter", description="Files shown", default="*.toml", options={"HIDDEN"})

    def invoke(self, context, _event):
        folder = user_maps_dir()
        if folder is not None and not self.filepath:
            self.filepath = str(folder) + "/"
        context.window_manager.fileselect_add(self)
        return {"RUNNING_MODAL"}

    def execute(self, context):
        try:
            obj = resolve_armature(self.armature, context)
            cmap = load_map_file(bpy.path.abspath(self.filepath))
        except (InputError, MapError) as err:
            self.report({"ERROR"}, str(err))
            return {"CANCELLED"}
        store_map(obj, cmap)
        if cmap.roles:  # the roles it names, on the bones the rig has
            rigmap = read_rigmap(obj)
            rigmap.roles.update({r: b for r, b in cmap.roles if b in obj.data.bones})
            store_rigmap(obj, rigmap)
        self.report({"INFO"}, f"{obj.name}: control map '{cmap.label}' loaded")
        return {"FINISHED"}


class PROCANIM_OT_clear_control_map(OnArmature, bpy.types.Operator):
    """Forget the control map stored on this rig (its family's shipped or saved map applies again)"""

    bl_idname = "procanim.clear_control_map"
    bl_label = "Clear Control Map"
    bl_options = {"REGISTER", "UNDO"}

    def execute(self, context):
        obj = self.armature_or_report(context)
        if obj is None:
            return {"CANCELLED"}
        clear_map(obj)
        return {"FINISHED"}


def map_status(obj) -> tuple[str, str, str]:
    """For the Character panel: which map the rig follows, an icon, and where the map comes from."""
    try:
        own = stored_map(obj)
        cmap = own or map_for(obj)
    except MapError as err:
        return "Unreadable control map", "ERROR", str(err)
    if cmap is None:
        return "No control map", "INFO", "Bakes key the rig's own bones"
    return cmap.label, "CHECKMARK", "Stored on the rig" if own is not None else "Found by its bones"


property_classes = (PROCANIM_PG_limb_controls, PROCANIM_PG_map_dialog)
classes = (PROCANIM_OT_save_control_map, PROCANIM_OT_load_control_map, PROCANIM_OT_clear_control_map)


def register_properties() -> None:
    bpy.types.WindowManager.procanim_map_dialog = PointerProperty(
        type=PROCANIM_PG_map_dialog, name="Control map dialog", description="The Save Control Map dialog's fields"
    )


def unregister_properties() -> None:
    del bpy.types.WindowManager.procanim_map_dialog
