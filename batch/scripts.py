"""What a shot's .blend may run in a batch: nothing, unless the run trusts the shots' scripts.

A .blend can carry Python that Blender runs when the file loads: text blocks registered as
modules, and driver expressions beyond those Blender evaluates without Python (simple expressions
and a safe subset of Python's built-ins). A batch opens files that came from many hands, so every
shot is opened with auto-run off (``use_scripts=False``, whatever the preferences say) unless the
run was started with :data:`TRUST_FLAG`.

A driver Blender refused to run is left at 0 and flagged invalid once the scene is evaluated; a
shot that has one fails with a message naming :data:`TRUST_FLAG` rather than bake a rig whose
driven values are wrong.
"""

from __future__ import annotations

TRUST_FLAG = "--trust-scripts"
# the data-blocks whose drivers can move a rig or what it stands on
ANIMATED_DATA = ("objects", "armatures", "shape_keys", "meshes", "curves", "lattices", "scenes", "node_groups")
LISTED = 4  # refused drivers named in the message


def open_blend(path: str, trusted: bool) -> None:
    """Open ``path`` as the current file; its scripts run only when ``trusted``."""
    import bpy

    bpy.ops.wm.open_mainfile(filepath=path, load_ui=False, use_scripts=trusted)


def refused_drivers() -> list[str]:
    """The drivers of the open file that Blender refused to run (``owner: path[index] = expression``).

    Evaluates the scene once: Blender decides per driver, when it first evaluates it."""
    import bpy

    bpy.context.view_layer.update()
    if not bpy.app.autoexec_fail:  # set when Blender skipped a script of this file
        return []
    found = []
    for collection in ANIMATED_DATA:
        for owner in getattr(bpy.data, collection):
            animation = getattr(owner, "animation_data", None)
            for fcurve in animation.drivers if animation is not None else ():
                driver = fcurve.driver
                if driver.type == "SCRIPTED" and not driver.is_valid and not driver.is_simple_expression:
                    found.append(f"{owner.name}: {fcurve.data_path}[{fcurve.array_index}] = {driver.expression}")
    return found


def refusal_message(drivers: list[str]) -> str:
    """Why a shot whose rig needs Python drivers was not baked, and what to do."""
    named = "; ".join(drivers[:LISTED]) + (f"; and {len(drivers) - LISTED} more" if len(drivers) > LISTED else "")
    return (
        f"the scene needs Python drivers, which a batch does not run unless told to ({named}): "
        f"bake with {TRUST_FLAG} if you trust the scripts in this .blend"
    )


def registered_texts() -> list[str]:
    """The text blocks of the open file registered as modules (run at load only when trusted)."""
    import bpy

    return sorted(text.name for text in bpy.data.texts if text.use_module)
