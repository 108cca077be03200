"""Baking onto the controls of a control rig (generated Rigify and CloudRig rigs, any mapped rig).

The engine generates motion for the *deform skeleton* (:mod:`.deform`); this package turns that
pose into the channels of the animator's controls, so that Blender's evaluated deform bones
reproduce it: :class:`~.rig.ControlRig` (the rig as plain data), :mod:`.maps` (what is
family-specific, read from a control map file: controls, deform skeleton, IK/FK switches),
:mod:`.evaluate` (a numpy model of Blender's pose evaluation: parenting with every inheritance
setting, the constraints control rigs use), :mod:`.structure` (limbs, IK chains and the controls
driving each deform bone, found from the constraints), :mod:`.convert` (the conversion),
:mod:`.residual` (the verification's measure), :mod:`.roles` (roles of a mapped rig).
"""

from .convert import MODES, ControlKeys, convert
from .deform import deform_skeleton, is_generated_rigify
from .residual import TOLERANCE_CM
from .rig import Constraint, ControlRig, is_control_name

KEY_TARGETS = ("AUTO", "IK_CONTROLS", "FK_CONTROLS", "DEFORM")

__all__ = [
    "KEY_TARGETS",
    "MODES",
    "TOLERANCE_CM",
    "Constraint",
    "ControlKeys",
    "ControlRig",
    "convert",
    "deform_skeleton",
    "is_control_name",
    "is_generated_rigify",
]
