"""Blender operators: one module per operator, plus the bridge (scene → engine) and the baker."""

from . import adapt_terrain, add_rigs, detect_rig, duck_walk, handshake, path_walk, source_motion

classes = (
    *add_rigs.classes,
    *detect_rig.classes,
    *duck_walk.classes,
    *handshake.classes,
    *path_walk.classes,
    *source_motion.classes,
    *adapt_terrain.classes,
)
