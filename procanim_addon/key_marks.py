"""What the keys of a bake say, per generator: the marks, contacts and feet a bake hands to the
key planner (:func:`procanim_addon.keys.plan_clip_keys` / :func:`~procanim_addon.keys.plan_control_keys`).

A :class:`KeyMarks` is plain data. Each generator's Blender side makes one per baked armature
(``Generator.key_marks``, ``operators/generator.py``) from what the engine here computes:

* :func:`contact_marks` — a walking character's contacts (heel strike ``"L contact"``, lift-off
  ``"L lift"``, passing positions) on a ground; by default the plane of the rig's rest soles
  (:func:`walk_ground`: a path walk's);
* :func:`handshake_key_marks` — the handshake's phase boundaries from its phase report
  (``clip.metrics["phase_starts"]``);
* :func:`change_marks` — the frames a terrain adaptation changed most (pose markers, no forced keys),
  from ``clip.metrics["changed_most"]``.

A rig without leg roles has no feet: its contacts are none (the keys are still reduced).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from . import transforms as tf
from .clip import Clip
from .deform_tree import as_posed
from .errors import InputError
from .ground import FlatGround, Ground
from .keys import Contact, Foot, Mark, feet, handshake_marks, walk_contacts
from .skeleton import Skeleton
from .walk.path import PathHeightGround, build_path


@dataclass
class KeyMarks:
    """What the keys of one bake say: ``marks`` (key types, pose markers, forced keys:
    :class:`procanim_addon.keys.Mark`), the feet's ``contacts`` (their first and last frames keyed,
    no skate added) and the ``feet`` (sole points) they are of (None: no feet measured)."""

    marks: list[Mark] = field(default_factory=list)
    contacts: list[Contact] = field(default_factory=list)
    feet: list[Foot] | None = None

    def markers(self) -> list[tuple[float, str]]:
        """The pose markers ``(frame, name)`` the marks name, in frame order."""
        return sorted({(float(m.frame), m.name) for m in self.marks if m.name})


def rest_sole_ground(foot_list: list[Foot]) -> FlatGround:
    """The plane of the rig's rest soles (the lowest sole point at rest): where generators that
    make motion on flat ground plant the feet."""
    return FlatGround(min(point[2] for foot in foot_list for _bone, point in foot.points))


def walk_ground(points, ground: Ground | None, corner_radius: float) -> Ground:
    """The ground a path walk walked on: ``ground``, or without one the path's own heights (as the
    walk makes it, :class:`~procanim_addon.walk.path.PathHeightGround`) along ``points`` ``(N, 3)``."""
    return ground if ground is not None else PathHeightGround(build_path(points, None, corner_radius))


def contact_marks(skeleton: Skeleton, rigmap, clip: Clip, ground: Ground | None = None,
                  object_basis: np.ndarray | None = None) -> KeyMarks:
    """The contacts and marks of ``clip`` (a character walking on ``skeleton``, roles ``rigmap``) on
    ``ground`` (armature space; None: the plane of the rest soles). No leg roles: no marks.
    ``object_basis`` (4, 4): the armature object's ``matrix_basis`` before the bake — with it, a clip
    that moves the object (root motion OBJECT) is measured where the object carries the feet. The
    clip's channels are the armature's own: on a rebuilt deform tree they pose each bone under the
    bone Blender poses it under (:func:`.deform_tree.as_posed`), and so are they read here."""
    skeleton = as_posed(skeleton)
    try:
        foot_list = feet(skeleton, rigmap)
    except (InputError, KeyError, ValueError, IndexError):
        return KeyMarks()
    carry = object_carry(clip, object_basis)
    clip = on_skeleton(clip, skeleton)
    contacts, marks = walk_contacts(skeleton, clip, foot_list, ground or rest_sole_ground(foot_list), carry)
    return KeyMarks(list(marks), list(contacts), foot_list)


def object_carry(clip: Clip, basis: np.ndarray | None) -> np.ndarray | None:
    """Per frame ``(F, 4, 4)``: armature space at the object's keyed transform (``clip``'s object
    channels, the object's scale kept) into armature space at ``basis`` (its transform before the
    bake); None when the clip does not move the object or no ``basis`` is given."""
    if basis is None or clip.object_locations is None or clip.object_rotations is None:
        return None
    basis = np.asarray(basis, float)
    scale = np.linalg.norm(basis[:3, :3], axis=0)
    moved = np.tile(np.eye(4), (len(clip.frames), 1, 1))
    moved[:, :3, :3] = tf.quat_to_mat3(tf.quat_normalize(np.asarray(clip.object_rotations, float))) * scale
    moved[:, :3, 3] = clip.object_locations
    return np.linalg.inv(basis) @ moved


def on_skeleton(clip: Clip, skeleton: Skeleton) -> Clip:
    """``clip`` with one channel per bone of ``skeleton``, in its order: a bone the clip does not hold
    at rest and unkeyed (the clip itself when it holds exactly the skeleton's bones)."""
    if list(clip.bone_names) == list(skeleton.names):
        return clip
    out = Clip.rest(skeleton.names, clip.frames, clip.fps, key_location=np.zeros(len(skeleton), bool),
                    key_rotation=np.zeros(len(skeleton), bool))
    for i, name in enumerate(clip.bone_names):
        if skeleton.has(name):
            b = skeleton.index(name)
            out.locations[:, b], out.rotations[:, b] = clip.locations[:, i], clip.rotations[:, i]
            out.key_location[b], out.key_rotation[b] = clip.key_location[i], clip.key_rotation[i]
    return out


def handshake_key_marks(clip: Clip) -> KeyMarks:
    """One handshake character's phase boundaries (Extreme keys on every curve, a pose marker named
    after the phase) from its phase report, ``clip.metrics["phase_starts"]`` ((frame index, phase
    letter) pairs)."""
    starts = [(int(i), str(letter)) for i, letter in clip.metrics.get("phase_starts") or []]
    return KeyMarks(handshake_marks(starts, clip.frames))


def change_marks(changed) -> list[Mark]:
    """Pose markers on the frames an adaptation changed most: ``changed`` holds ``(frame, cm)`` pairs
    (``clip.metrics["changed_most"]``, :func:`procanim_addon.terrain.changes.changed_most`), each
    marked ``"changed <cm> cm"`` — no forced key, no key type."""
    return [Mark(float(f), "KEYFRAME", f"changed {float(cm):.1f} cm", forced=False) for f, cm in changed or []]
