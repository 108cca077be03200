"""Editable bakes: the fewest keys that keep every deform joint within a tolerance of the dense motion.

* :mod:`.bezier` — an F-curve's value as Blender computes it (keys, handles, interpolation);
* :mod:`.handles` — the handles ProcAnim writes and the ones Blender recomputes on ``update()``;
* :mod:`.layout` — the curves a bake writes and their dense values (rotation modes as the baker's);
* :mod:`.dense` — the dense bake as Blender plays it on every frame (the reference);
* :mod:`.forward` — channel values → deform joints (the skeleton's FK);
* :mod:`.compensate` — each bone's curves fitted to restore it under its reduced parent (targets, error maps);
* :mod:`.control_forward` — control channels → the deform joints they drive (a control rig's evaluation);
* :mod:`.ik_chains` — two-bone IK chains posed from the controls, as the IK solver places them;
* :mod:`.fit` — fitted handles (least-squares slopes per segment; aligned where one slope serves);
* :mod:`.place` — where the keys go (bottom-up merging within a per-frame bound);
* :mod:`.reduce` — the whole reduction: placement top-down, the exact check, contacts' skate included;
* :mod:`.marks` — contacts, lift-offs, passing positions, phases: key types and pose markers;
* :mod:`.output` — what the writer takes (:class:`CurveKeys`, :class:`KeyedAction`);
* :mod:`.plan` — the whole: :func:`plan_keys`, :func:`plan_clip_keys`, :func:`plan_control_keys`.

docs/keys.md explains the tolerance, the method and the figures.
"""

from .bezier import HANDLE, INTERPOLATION, KEY_TYPE
from .control_forward import ControlForward, control_channels
from .forward import DeformForward
from .layout import Channel, clip_channels, key_groups
from .marks import Contact, Foot, Mark, contact_spans, feet, handshake_marks, phase_marks, walk_contacts, walk_marks
from .output import CurveKeys, KeyedAction
from .plan import CONTACT_SPEED_M_S, MAX_TOLERANCE_M, plan_clip_keys, plan_control_keys, plan_keys, validate_tolerance

DEFAULT_TOLERANCE_M = 0.001

__all__ = [
    "CONTACT_SPEED_M_S",
    "DEFAULT_TOLERANCE_M",
    "HANDLE",
    "INTERPOLATION",
    "KEY_TYPE",
    "MAX_TOLERANCE_M",
    "Channel",
    "Contact",
    "ControlForward",
    "CurveKeys",
    "DeformForward",
    "Foot",
    "KeyedAction",
    "Mark",
    "clip_channels",
    "control_channels",
    "contact_spans",
    "feet",
    "handshake_marks",
    "key_groups",
    "phase_marks",
    "plan_clip_keys",
    "plan_control_keys",
    "plan_keys",
    "validate_tolerance",
    "walk_contacts",
    "walk_marks",
]
