"""The handshake as a generator: its spec, the call a bake runs and the grip the ghost marks."""

from __future__ import annotations

import numpy as np

from ..clip import Clip
from ..errors import InputError
from ..ghost import Body, Overlays
from ..metric_table import row
from ..progress import ProgressFn, no_progress
from ..spec import GeneratorSpec
from ..upright import clip_to_armature, world_of_frame
from .character import prepare_character
from .generate import generate_handshake
from .params import HandshakeParams


def bake_call(a, b, params: HandshakeParams, names: tuple[str, str],
              progress: ProgressFn = no_progress) -> list[Clip]:
    """The two characters' Clips; ``names`` (initiator, partner) go into their metrics and into
    the message of an input the engine refuses; ``a``, ``b``: (Skeleton, RigMap, the armature's
    ``matrix_world``)."""
    a, b = ((sk, rm, world_of_frame(world, sk)) for sk, rm, world in (a, b))
    try:
        clip_a, clip_b, _report = generate_handshake(a, b, params, progress=progress)
    except InputError as err:
        raise InputError(f"Handshake '{names[0]}' → '{names[1]}': {err}") from None
    for clip, other in ((clip_a, names[1]), (clip_b, names[0])):
        clip.metrics["initiator"], clip.metrics["partner"] = names
        clip.metrics["other"] = other
    return [clip_to_armature(clip_a, a[0]), clip_to_armature(clip_b, b[0])]


def grip_point(body: Body, pose: np.ndarray) -> np.ndarray | None:
    """The grip point on the right hand, armature space ``(N, 3)`` (None without arm roles)."""
    try:
        ch = prepare_character(body.name, body.skeleton, body.rigmap, body.world, "CCD", HandshakeParams())
    except (InputError, ValueError):
        return None
    hand = pose[:, ch.hand]
    return np.einsum("nij,j->ni", hand[:, :3, :3], ch.hand_axes.grip_local) + hand[:, :3, 3]


SPEC = GeneratorSpec(
    "handshake", "Handshake", "Two humanoids shake hands: invitation, approach, shake, retreat",
    params=HandshakeParams, engine=generate_handshake, call=bake_call,
    metrics=(
        row("both_mean_cm", "Grip error, mean", "cm", 3,
            "Mean distance between the two grip points during the shake (the paper's Table 3, both hands)"),
        row("both_std_cm", "Grip error, std", "cm", 3, "Standard deviation of the grip distance in the shake"),
        row("both_max_cm", "Grip error, max", "cm", 3, "Largest grip distance in the shake"),
        row("time_ms_initiator", "Initiator solver", "ms/frame", 3,
            "Time the initiator's arm controller takes per frame"),
        row("time_ms_partner", "Partner solver", "ms/frame", 3,
            "Time the partner's arm controller takes per frame"),
    ),
    overlays=Overlays(grip=grip_point),
)
