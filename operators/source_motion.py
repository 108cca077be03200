"""procanim.source_motion — a walk, jump or forward roll made on flat ground at the rig's rest sole
height, baked onto a humanoid armature: the inputs of the terrain experiment (Jo & Choi 2019). Its
panel sits in the Terrain panel."""

from __future__ import annotations

from bpy.props import EnumProperty

from ..procanim_addon import motions
from ..procanim_addon.jobs import EngineCall
from ..procanim_addon.motions import SourceMotionParams
from .bridge import read_rig
from .generator import Generator, Job
from .limits import number
from .objects import ARMATURE

KINDS = [
    ("WALK", "Walk", "A forward walk with planted feet and swinging arms"),
    ("JUMP", "Jump", "A standing long jump forward: crouch, flight with tucked legs, landing"),
    ("TUMBLE", "Tumble", "A forward roll: squat, roll over the back, stand up"),
]


class SourceMotion(Generator):
    spec = motions.SPEC
    settings_name = "source_motion"
    objects = (ARMATURE,)
    parent = "adapt_terrain"

    def settings(self, ui: bool) -> dict:
        """The source motion's settings (operator and sidebar; limits: ``procanim_addon/limits.py``)."""
        P = SourceMotionParams  # noqa: N806 - the parameter class, as in the engine
        return {
            "kind": EnumProperty(name="Motion", description="Which source motion to bake", items=KINDS,
                                 default="WALK"),
            "frame_start": number(P, "frame_start", ui, "Start Frame", "First frame of the motion"),
            "fps": number(P, "fps", ui, "FPS", "Frames per second the motion is timed for"),
            "steps": number(P, "steps", ui, "Steps", "Footsteps of the walk"),
        }

    def prepare(self, args, context) -> Job:
        obj = ARMATURE.resolve(args, context, self.settings_name)
        skeleton, rigmap = read_rig(obj)
        params = SourceMotionParams(kind=args.kind, frame_start=args.frame_start, fps=args.fps, steps=args.steps)
        params.validate()
        return Job([obj], EngineCall(self.spec.call, (skeleton, rigmap, params)))

    def draw(self, layout, settings, _context) -> None:
        layout.prop(settings, "kind", expand=True)
        col = layout.column(align=True)
        col.prop(settings, "frame_start")
        col.prop(settings, "fps")
        if settings.kind == "WALK":
            col.prop(settings, "steps")


GENERATOR = SourceMotion()
