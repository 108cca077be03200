"""A generator defined in this module alone — its engine spec and its Blender side — registered at
run time through the extension's public ``register_generator``, with no other file touched, is
found everywhere a shipped generator is: as an operator (that bakes), as a sidebar panel with its
fields, Preview and Generate (that bakes what the preview showed), in the menus, in the batch
command's validation (its arguments and their limits), with its figures after a bake, and among the
operators the fuzz test draws arguments for."""

from __future__ import annotations

import dataclasses
import importlib
import textwrap
import time

import bpy
import numpy as np
import pytest
from harness import addon_module, button_args, draw_log
from scenes import add_human

FRAMES_PER_S = 24.0


def define_fake_pose(ext):
    """The made-up generator "fake_pose": the root rises 1 cm a frame, for ``length`` frames."""
    spec_mod = addon_module(ext, "procanim_addon.spec")
    metric_table = addon_module(ext, "procanim_addon.metric_table")
    clip_mod = addon_module(ext, "procanim_addon.clip")
    errors = addon_module(ext, "procanim_addon.errors")
    jobs = addon_module(ext, "procanim_addon.jobs")
    generator_mod = addon_module(ext, "operators.generator")
    arguments = addon_module(ext, "operators.objects")
    bridge = addon_module(ext, "operators.bridge")

    @dataclasses.dataclass
    class FakeParams:
        length: int = 12

        def validate(self):
            if not 2 <= self.length <= 500:
                raise errors.InputError(f"Length must be between 2 and 500 frames, got {self.length}.")
            return self

    def raise_root(bone_names, params, progress=None):
        frames = np.arange(1, params.length + 1, dtype=float)
        clip = clip_mod.Clip.rest(list(bone_names), frames, FRAMES_PER_S, generator="fake_pose")
        for k in range(len(frames)):
            if progress is not None:
                progress(k / len(frames))
        clip.locations[:, 0, 2] = 0.01 * frames
        clip.metrics["lift_m"] = float(0.01 * (frames[-1] - frames[0]))
        return clip

    def call(bone_names, params, progress=None):
        return [raise_root(bone_names, params, progress)]

    spec = spec_mod.GeneratorSpec(
        "fake_pose", "Fake Pose", "Raises the root bone", params=FakeParams, engine=raise_root, call=call,
        metrics=(metric_table.row("lift_m", "Lift", "m", 3, "How far the root rose from the first to the last frame"),),
    )

    class FakePose(generator_mod.Generator):
        settings_name = "fake_pose"
        objects = (arguments.ARMATURE,)

        def settings(self, ui):
            # as operators/limits.py does: hard limits in the sidebar, the engine's message for scripts
            limits = {"min": 2, "max": 500} if ui else {"soft_min": 2, "soft_max": 500}
            return {"length": bpy.props.IntProperty(name="Length", description="Frames of the motion", default=12,
                                                    **limits)}

        def prepare(self, args, context):
            obj = arguments.ARMATURE.resolve(args, context, self.settings_name)
            params = FakeParams(args.length).validate()
            names = bridge.read_skeleton(obj).names
            return generator_mod.Job([obj], jobs.EngineCall(self.spec.call, (names, params)))

    FakePose.spec = spec
    return FakePose()


@pytest.fixture
def fake_pose(procanim_extension):
    root = importlib.import_module(procanim_extension.module)
    generator = define_fake_pose(procanim_extension)
    root.register_generator(generator)
    try:
        yield generator
    finally:
        root.unregister_generator("fake_pose")
    assert "fake_pose" not in dir(bpy.ops.procanim)
    assert "fake_pose" not in addon_module(procanim_extension, "procanim_addon.registry").BY_ID


def test_it_is_an_operator_that_bakes(fake_pose):
    human = add_human()
    assert bpy.ops.procanim.fake_pose(armature=human.name, length=30) == {"FINISHED"}
    action = human.animation_data.action
    assert action.procanim.generator == "fake_pose" and tuple(action.frame_range) == (1.0, 30.0)
    with pytest.raises(RuntimeError, match="between 2 and 500"):  # the engine's limits, with its message
        bpy.ops.procanim.fake_pose(armature=human.name, length=1000)


def test_it_has_a_panel_with_preview_and_generate_and_its_figures(procanim_extension, fake_pose):
    scene = bpy.context.scene
    human = add_human()
    scene.procanim.armature = human
    settings = scene.procanim.fake_pose
    settings.length = 20
    panel = bpy.types.PROCANIM_PT_fake_pose
    assert panel.bl_category == "ProcAnim" and panel.bl_label == "Fake Pose"
    log = draw_log(panel)
    props = [e[1] for e in log if e[0] == "prop"]
    assert props[:1] == ["length"] and "preview" in props and "key_target" in props
    assert ("operator", "procanim.fake_pose", "Generate") in log
    args = button_args(log, "procanim.fake_pose")
    assert args["length"] == 20 and args["armature"] == human.name

    runtime = addon_module(procanim_extension, "preview.runtime")
    settings.preview = True
    try:
        session = runtime.SESSIONS["fake_pose"]
        deadline = time.time() + 30.0
        while (session.result is None or session.busy) and time.time() < deadline:
            runtime.tick()
            time.sleep(0.01)
        assert session.error == "" and session.result is not None
        assert len(session.result.ghosts[0].frames) == 20  # the ghost of the Clip the preview made
        assert bpy.ops.procanim.fake_pose(**args) == {"FINISHED"}
    finally:
        settings.preview = False
    read_metrics = addon_module(procanim_extension, "operators.bake").read_metrics
    metrics = read_metrics(human.animation_data.action)
    assert "preview_compute_ms" in metrics  # Generate baked what the preview showed
    log = draw_log(panel)
    figures = [e[2] for e in log if e[0] == "operator" and e[1] == "procanim.metric_info"]
    assert figures[0] == "Lift" and "Bake time" in figures


def test_it_is_in_the_menus(fake_pose):
    listed = [e[1] for e in draw_log(bpy.types.PROCANIM_MT_generators) if e[0] == "operator"]
    assert "procanim.fake_pose" in listed


def test_the_batch_command_checks_its_arguments_and_limits(procanim_extension, fake_pose, tmp_path, capsys):
    add_human(name="Walker")
    blend = tmp_path / "scene.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(blend), copy=True)
    cli = addon_module(procanim_extension, "batch.cli")
    host = cli.Host("procanim-test", addon_module(procanim_extension, "batch.command").blender_side)
    job = tmp_path / "jobs.toml"

    def validate(settings: str) -> tuple[int, str]:
        job.write_text(textwrap.dedent(f"""
            [shots.rise]
            blend = "{blend}"
            generator = "fake_pose"
            settings = {{ armature = "Walker", {settings} }}
            """))
        status = cli.main(["validate", str(job)], host)
        out = capsys.readouterr()
        return status, out.out + out.err

    status, text = validate("length = 40")
    assert status == 0, text
    status, text = validate("length = 1")
    assert status == 2 and "settings.length: 1 is below its range, 2 to 500" in text, text
    status, text = validate("height = 3")
    assert status == 2 and "settings.height: not an argument of procanim.fake_pose" in text, text


def test_the_fuzz_test_draws_its_arguments(procanim_extension, fake_pose, tmp_path):
    fuzz_test = importlib.import_module("test_fuzz_operators")
    registry = addon_module(procanim_extension, "procanim_addon.registry")
    assert "fake_pose" in fuzz_test.fuzzed_operators(registry)
    fuzz_test.fuzz("fake_pose", fuzz_test.build_file(tmp_path), examples=4)
