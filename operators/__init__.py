"""Blender operators: one module per operator, plus the bridge (scene → engine) and the baker."""

from . import add_rigs, detect_rig, duck_walk, path_walk

classes = (*add_rigs.classes, *detect_rig.classes, *duck_walk.classes, *path_walk.classes)
