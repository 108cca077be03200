"""The engine calls a bake runs, one per generator.

A generator's ``prepare`` (``operators/<id>.py``, main thread) reads the scene into engine inputs
and returns a ``Job`` whose ``compute`` is an :class:`EngineCall`: one of the functions below and
those inputs — plain data (numpy arrays, dataclasses), no Blender object, so the call runs in any
thread (the sidebar's and the live preview's workers), and everything a bake computes after the
scene is read is here, in the engine (the operators only read the scene and write keys).

Each returns the Clips, one per armature the Job bakes (same order), in the armature's own terms:
the bridge reads a rig into the engine's upright frame (:mod:`.upright`), and the calls here hand
the channels back (:func:`~.upright.clip_to_armature`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np

from . import transforms as tf
from .clip import Clip
from .duck import generate_duck_walk
from .errors import InputError
from .handshake import generate_handshake
from .motions import generate as generate_source_motion
from .progress import ProgressFn, no_progress, part
from .terrain.adapt import adapt_to_terrain
from .upright import clip_to_armature, clip_to_frame, unit_in_frame, world_of_frame
from .walk import generate_path_walk


@dataclass(frozen=True)
class EngineCall:
    """``function(*args, progress=progress)`` → list of Clips (``function``: one of this module's)."""

    function: Callable[..., list[Clip]]
    args: tuple = ()

    def __call__(self, progress: ProgressFn = no_progress) -> list[Clip]:
        return self.function(*self.args, progress=progress)


def duck_walk(skeleton, rigmap, params, progress: ProgressFn = no_progress) -> list[Clip]:
    return [clip_to_armature(generate_duck_walk(skeleton, rigmap, params, progress=progress), skeleton)]


def source_motion(skeleton, rigmap, params, progress: ProgressFn = no_progress) -> list[Clip]:
    clip = generate_source_motion(skeleton, rigmap, params, progress=progress)
    clip.generator = "source_motion"  # a re-run replaces its own bake, whichever motion it was
    clip.metrics["motion"] = params.kind.lower()
    return [clip_to_armature(clip, skeleton)]


def handshake(a, b, params, names: tuple[str, str], progress: ProgressFn = no_progress) -> list[Clip]:
    """The two characters' Clips; ``a``, ``b``: (Skeleton, RigMap, the armature's ``matrix_world``);
    ``names`` (initiator, partner) go into their metrics and into the message of an input the
    engine refuses."""
    a, b = ((sk, rm, world_of_frame(world, sk)) for sk, rm, world in (a, b))
    try:
        clip_a, clip_b, _report = generate_handshake(a, b, params, progress=progress)
    except InputError as err:
        raise InputError(f"Handshake '{names[0]}' → '{names[1]}': {err}") from None
    for clip, other in ((clip_a, names[1]), (clip_b, names[0])):
        clip.metrics["initiator"], clip.metrics["partner"] = names
        clip.metrics["other"] = other
    return [clip_to_armature(clip_a, a[0]), clip_to_armature(clip_b, b[0])]


def object_motion(clip: Clip, basis: np.ndarray, unit_scale: float) -> None:
    """Root motion OBJECT: the engine's object delta D is in armature space; the object's new
    local transform is ``basis @ D`` (``basis``: the armature object's matrix_basis, 4×4;
    ``unit_scale``: its mean scale)."""
    R = tf.quat_to_mat3(clip.object_rotations)
    clip.object_locations = clip.object_locations @ basis[:3, :3].T + basis[:3, 3]
    rot0 = basis[:3, :3] / unit_scale
    clip.object_rotations = tf.mat3_to_quat(np.einsum("ij,fjk->fik", rot0, R))


def path_walk(skeleton, rigmap, points, ground, params, basis: np.ndarray, unit_scale: float,
              progress: ProgressFn = no_progress) -> list[Clip]:
    clip = clip_to_armature(generate_path_walk(skeleton, rigmap, points, ground, params, progress=progress), skeleton)
    if clip.object_locations is not None and clip.object_rotations is not None:
        object_motion(clip, basis, unit_scale)
    return [clip]


def crowd(calls: list[EngineCall], progress: ProgressFn = no_progress) -> list[Clip]:
    """Every character's call in turn, each reporting its share of the progress."""
    n = len(calls)
    clips: list[Clip] = []
    for i, call in enumerate(calls):
        clips += call(part(progress, i / n, (i + 1) / n))
    return clips


def adapt_terrain(skeleton, rigmap, source, reference, terrain, params, names: dict,
                  progress: ProgressFn = no_progress) -> list[Clip]:
    """``names``: the source action, terrain and reference objects, for the metrics; ``source``: the
    armature's own channels; ``params.unit_m``: metres per armature unit."""
    source = clip_to_frame(source, skeleton)
    params = replace(params, unit_m=unit_in_frame(params.unit_m, skeleton))
    clip = adapt_to_terrain(skeleton, rigmap, source, reference, terrain, params, progress=progress)
    clip.generator = "adapt_terrain"
    clip.metrics.update({**names, "damping": params.damping, "tolerance_m": params.tolerance_m})
    return [clip_to_armature(clip, skeleton)]
