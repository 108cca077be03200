"""procanim.source_motion — a walk, jump or forward roll made on flat ground at the rig's rest sole
height, baked onto a humanoid armature: the inputs of the terrain experiment (Jo & Choi 2019)."""

from __future__ import annotations

from bpy.props import EnumProperty, FloatProperty, IntProperty

from ..procanim_addon import registry
from ..procanim_addon.motions import SourceMotionParams, generate
from .base import Job
from .bridge import read_rig
from .objects import ARMATURE

ENTRY = registry.get("source_motion")
OBJECTS = (ARMATURE,)

KINDS = [
    ("WALK", "Walk", "A forward walk with planted feet and swinging arms"),
    ("JUMP", "Jump", "A standing long jump forward: crouch, flight with tucked legs, landing"),
    ("TUMBLE", "Tumble", "A forward roll: squat, roll over the back, stand up"),
]


def settings(ui: bool) -> dict:
    """The source motion's settings (operator and sidebar)."""
    return {
        "kind": EnumProperty(name="Motion", description="Which source motion to bake", items=KINDS, default="WALK"),
        "frame_start": IntProperty(name="Start Frame", description="First frame of the motion", default=1),
        "fps": FloatProperty(name="FPS", description="Frames per second the motion is timed for", default=24.0,
                             min=1.0, soft_max=120.0),
        "steps": IntProperty(name="Steps", description="Footsteps of the walk", default=6, min=1, soft_max=40),
    }


def prepare(args, context) -> Job:
    obj = ARMATURE.resolve(args, context, ENTRY.settings)
    skeleton, rigmap = read_rig(obj)
    params = SourceMotionParams(kind=args.kind, frame_start=args.frame_start, fps=args.fps, steps=args.steps)
    params.validate()

    def compute(progress):
        clip = generate(skeleton, rigmap, params, progress=progress)
        clip.generator = ENTRY.id  # a re-run replaces its own bake, whichever motion it was
        clip.metrics["motion"] = params.kind.lower()
        return [clip]

    return Job([obj], compute)
