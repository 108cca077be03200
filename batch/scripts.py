"""What a shot's .blend may run in a batch: nothing, unless the run trusts the shots' scripts.

A .blend can carry Python that Blender runs when the file loads: text blocks registered as
modules, and driver expressions beyond those Blender evaluates without Python (simple expressions
and a safe subset of Python's built-ins). A batch opens files that came from many hands, so every
shot is opened with auto-run off (``use_scripts=False``, whatever the preferences say) unless the
run was started with :data:`TRUST_FLAG`.

A driver Blender refused to run is left at 0 and flagged invalid once the scene is evaluated; a
shot that has one fails with a message naming :data:`TRUST_FLAG` rather than bake a rig whose
driven values are wrong.

This module is the rule and its words (stdlib only: the command reads the flag before Blender is
up); the shot applies it in Blender when it opens its file (``shot.py``: ``open_blend``,
``refused_drivers``, ``registered_texts``).
"""

from __future__ import annotations

TRUST_FLAG = "--trust-scripts"
# the data-blocks whose drivers can move a rig or what it stands on
ANIMATED_DATA = ("objects", "armatures", "shape_keys", "meshes", "curves", "lattices", "scenes", "node_groups")
LISTED = 4  # refused drivers named in the message


def refusal_message(drivers: list[str]) -> str:
    """Why a shot whose rig needs Python drivers was not baked, and what to do."""
    named = "; ".join(drivers[:LISTED]) + (f"; and {len(drivers) - LISTED} more" if len(drivers) > LISTED else "")
    return (
        f"the scene needs Python drivers, which a batch does not run unless told to ({named}): "
        f"bake with {TRUST_FLAG} if you trust the scripts in this .blend"
    )
