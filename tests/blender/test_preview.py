"""The live preview in Blender (headless: the preview's timer is ticked by the tests, nothing is
drawn on a GPU): regeneration on every kind of change, cancel, no writes to the file, Generate
bakes the previewed Clip, the ghost equals the baked pose, and every hook is removed again."""

from __future__ import annotations

import time

import bpy
import numpy as np
import pytest
from harness import addon_module, button_args, draw_log, evaluated_pose
from scenes import (
    add_curve,
    add_human,
    pick_adapt,
    pick_crowd,
    pick_duck,
    pick_fixer,
    pick_pair,
    pick_source,
    pick_walker,
)

TIMEOUT_S = 120.0


# --------------------------------------------------------------------------------------------
# Scenes


def add_floor(name="Floor", size=20.0, z=0.0):
    mesh = bpy.data.meshes.new(name)
    h = size / 2
    mesh.from_pydata([(-h, -h, z), (h, -h, z), (h, h, z), (-h, h, z)], [], [(0, 1, 2, 3)])
    obj = bpy.data.objects.new(name, mesh)
    bpy.context.collection.objects.link(obj)
    return obj


def _duck(scene):
    pick_duck(scene)
    scene.procanim.duck.frame_end = 48


def _walker(scene):
    pick_walker(scene, length=2.0)


def _adapt(scene):
    pick_adapt(scene)
    scene.procanim.terrain.terrain = bpy.data.objects["Zigzag"]


def _source(scene):
    pick_source(scene)
    scene.procanim.source_motion.steps = 2


SCENES = {"duck_walk": _duck, "handshake": pick_pair, "path_walk": _walker, "adapt_terrain": _adapt,
          "source_motion": _source, "fix_feet": pick_fixer, "crowd_walk": pick_crowd}
CHANGE = {"duck_walk": ("amplitude", 8.0), "handshake": ("shake_frames", 16), "path_walk": ("cadence", 120.0),
          "adapt_terrain": ("damping", 0.3), "source_motion": ("steps", 3), "fix_feet": ("height_m", 0.05),
          "crowd_walk": ("variation", 0.5)}


# --------------------------------------------------------------------------------------------
# Helpers


@pytest.fixture
def runtime(procanim_extension):
    module = addon_module(procanim_extension, "preview.runtime")
    yield module
    module.stop_all()


def settings_of(generator):
    generators = addon_module_cached("operators.generators")
    return getattr(bpy.context.scene.procanim, generators.get(generator).settings_name)


_MODULES: dict = {}


def addon_module_cached(name):
    return _MODULES[name]


@pytest.fixture(autouse=True)
def _modules(procanim_extension):
    for name in ("operators.generators", "operators.bake"):
        _MODULES[name] = addon_module(procanim_extension, name)


def settle(runtime, timeout=TIMEOUT_S):
    """Tick the preview (as its timer would) until no worker runs and nothing is left to start."""
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < timeout:
        runtime.tick()
        sessions = list(runtime.SESSIONS.values())
        if all(not s.busy and s.wanted == s.attempted for s in sessions):
            return
        time.sleep(0.002)
    state = [(s.busy, s.wanted == s.attempted, s.error, s.starts, s.cancels,
              s.worker and (s.worker.progress.fraction, s.worker.progress.calls, s.worker._thread.is_alive()))
             for s in runtime.SESSIONS.values()]
    raise AssertionError(f"the preview did not settle: {state}")


def preview_hooks(procanim_extension, runtime) -> dict:
    """The preview's hooks, counted from Blender's own lists where Blender has one."""
    prefix = f"{procanim_extension.module}.preview"
    handlers = {
        name: sum(1 for fn in getattr(bpy.app.handlers, name) if getattr(fn, "__module__", "").startswith(prefix))
        for name in ("depsgraph_update_post", "load_pre", "load_post", "frame_change_post", "undo_post")
    }
    own = runtime.hooks()  # Blender lists draw handlers nowhere
    return {"timers": int(bpy.app.timers.is_registered(runtime.tick)), **handlers,
            "draw_handlers": own["draw_handlers"]}


def file_state():
    """What the preview must never change: actions, keys, object and pose transforms."""
    actions = sorted((a.name, sum(len(fc.keyframe_points) for fc in _fcurves(a))) for a in bpy.data.actions)
    objects = {}
    for obj in bpy.data.objects:
        row = [tuple(obj.matrix_world.col[i]) for i in range(4)]
        if obj.pose is not None:
            row += [(pb.name, tuple(pb.location), tuple(pb.rotation_quaternion), tuple(pb.rotation_euler),
                     tuple(pb.scale)) for pb in obj.pose.bones]
        ad = obj.animation_data
        row.append(ad.action.name if ad is not None and ad.action is not None else None)
        objects[obj.name] = row
    curves = {c.name: (c.bevel_depth, c.extrude) for c in bpy.data.curves}
    return actions, objects, curves


def _fcurves(action):
    from harness import fcurves_of

    return fcurves_of(action)


# --------------------------------------------------------------------------------------------
# Hooks: on, off, file load, active object, disabling


def test_preview_toggle_hooks_and_unhooks_everything(procanim_extension, runtime):
    _duck(bpy.context.scene)
    st = settings_of("duck_walk")
    none = {"timers": 0, "depsgraph_update_post": 0, "load_pre": 0, "load_post": 0, "frame_change_post": 0,
            "undo_post": 0, "draw_handlers": 0}
    assert preview_hooks(procanim_extension, runtime) == none
    assert st.preview is False
    st.preview = True
    assert st.preview is True and runtime.is_on("duck_walk")
    on = preview_hooks(procanim_extension, runtime)
    assert on == {**none, "timers": 1, "depsgraph_update_post": 1, "load_pre": 1, "draw_handlers": 2}
    settings_of("handshake").preview = True  # a second preview shares the hooks
    assert preview_hooks(procanim_extension, runtime) == on
    st.preview = False
    assert preview_hooks(procanim_extension, runtime) == on
    settings_of("handshake").preview = False
    assert preview_hooks(procanim_extension, runtime) == none
    assert not runtime.SESSIONS


def test_loading_a_file_stops_the_preview(procanim_extension, runtime, tmp_path):
    _duck(bpy.context.scene)
    path = str(tmp_path / "other.blend")
    bpy.ops.wm.save_as_mainfile(filepath=path, copy=True)
    settings_of("duck_walk").preview = True
    settle(runtime)
    assert runtime.SESSIONS["duck_walk"].result is not None
    seen = []

    @bpy.app.handlers.persistent
    def witness(*_args):  # another add-on's handler after the preview's: it must still be called
        seen.append(runtime.is_on("duck_walk"))

    bpy.app.handlers.load_pre.append(witness)
    try:
        bpy.ops.wm.open_mainfile(filepath=path)
    finally:
        bpy.app.handlers.load_pre.remove(witness)
    assert seen == [False]
    assert not runtime.SESSIONS
    assert sum(preview_hooks(procanim_extension, runtime).values()) == 0
    assert bpy.context.scene.procanim.duck.preview is False


def test_another_active_object_stops_the_preview_its_inputs_do_not(procanim_extension, runtime):
    scene = bpy.context.scene
    _walker(scene)
    other = add_floor("Other")
    view = bpy.context.view_layer
    view.objects.active = scene.procanim.armature
    settings_of("path_walk").preview = True
    settle(runtime)
    view.objects.active = scene.procanim.path_walk.path  # select the path to move it: goes on
    runtime.tick()
    assert runtime.is_on("path_walk")
    view.objects.active = other
    runtime.tick()
    assert not runtime.SESSIONS
    assert sum(preview_hooks(procanim_extension, runtime).values()) == 0


def test_disabling_the_extension_removes_every_hook(procanim_extension, runtime):
    from harness import disable, enable

    _duck(bpy.context.scene)
    settings_of("duck_walk").preview = True
    runtime.tick()
    tick = runtime.tick
    disable(procanim_extension.module)
    try:
        assert not bpy.app.timers.is_registered(tick)
        for name in ("depsgraph_update_post", "load_pre"):
            assert not [fn for fn in getattr(bpy.app.handlers, name)
                        if getattr(fn, "__module__", "").startswith(procanim_extension.module)]
        assert runtime.hooks()["draw_handlers"] == 0 and not runtime.SESSIONS
    finally:
        enable(procanim_extension.module)


# --------------------------------------------------------------------------------------------
# Regeneration, cancel, status, no writes


@pytest.mark.parametrize("generator", list(SCENES))
def test_changing_a_setting_regenerates_and_writes_nothing(procanim_extension, runtime, generator):
    scene = bpy.context.scene
    SCENES[generator](scene)
    bpy.context.view_layer.update()
    before = file_state()
    st = settings_of(generator)
    st.preview = True
    settle(runtime)
    session = runtime.SESSIONS[generator]
    assert session.error == "", session.error
    first = session.result
    assert first is not None and first.ghosts and first.ghosts[0].heads.shape[1] > 5
    assert session.status()[0] == "READY" and "ready in" in session.status()[1]
    name, value = CHANGE[generator]
    setattr(st, name, value)
    settle(runtime)
    assert session.result is not first and session.result.key != first.key
    assert session.error == ""
    st.preview = False
    assert file_state() == before


def test_a_newer_change_cancels_the_running_regeneration(procanim_extension, runtime, monkeypatch):
    """A slow generator (a stand-in that reports progress every 5 ms for 2 s) is cancelled by the
    next change at its next report; the newest settings are generated, and nothing else."""
    scene = bpy.context.scene
    _duck(scene)
    generator = addon_module(procanim_extension, "operators.duck_walk").GENERATOR
    real_prepare = generator.prepare
    computed = []

    def slow_prepare(args, context):
        job = real_prepare(args, context)
        amplitude, real_compute = args.amplitude, job.compute

        def compute(progress):
            for i in range(400):
                progress(i / 400)
                time.sleep(0.005)
            computed.append(amplitude)
            return real_compute(progress)

        job.compute = compute
        return job

    monkeypatch.setattr(generator, "prepare", slow_prepare)
    st = settings_of("duck_walk")
    st.preview = True
    runtime.tick()
    session = runtime.SESSIONS["duck_walk"]
    assert session.busy and "generating" in session.status()[1]
    first_worker = session.worker
    t0 = time.perf_counter()
    st.amplitude = 2.0  # the setting's update callback steps the sessions in this call
    assert first_worker.progress.cancelled and session.cancels == 1
    first_worker.join(1.0)
    assert first_worker.done and time.perf_counter() - t0 < 0.5 and first_worker.cancelled
    assert first_worker.clips is None and computed == []
    runtime.tick()  # the timer: the first worker has ended, the newest settings start
    second_worker = session.worker
    assert second_worker is not None and second_worker is not first_worker and session.starts == 2
    # a change no update callback reports (a write of the stored value, as a driver or a script
    # writing the ID property does): while a worker runs the timer reads the settings every LOOK_S
    st["amplitude"] = 3.0
    assert not second_worker.progress.cancelled
    time.sleep(runtime.LOOK_S)
    runtime.tick()
    assert second_worker.progress.cancelled and session.cancels == 2
    settle(runtime)
    assert computed == [3.0] and session.starts == 3
    assert dict(session.result.key[1])["amplitude"] == pytest.approx(3.0)
    assert "generating" not in session.status()[1]


def test_a_change_starts_in_its_own_call_and_the_result_is_taken_at_the_next_turn(procanim_extension, runtime,
                                                                                 monkeypatch):
    """Under a model of Blender's main loop (test_preview_timing.MainLoop): a setting's update
    callback starts the regeneration in the call that sets the value (the idle timer is made too slow
    to do it); while the worker runs the timer asks to run at every turn, and the result is taken at
    the first turn after the worker ended."""
    from test_preview_timing import MainLoop

    loop = MainLoop()
    monkeypatch.setattr(runtime, "TIMERS", loop)
    monkeypatch.setattr(runtime, "IDLE_S", 60.0)
    _duck(bpy.context.scene)
    st = settings_of("duck_walk")
    loop.set(st, "preview", True)
    loop.turn()
    session = runtime.SESSIONS["duck_walk"]
    assert session.starts == 1 and session.busy
    assert runtime.tick() == 0.0  # a worker runs: the next turn
    while session.busy:
        loop.turn()
    assert runtime.tick() == 60.0  # nothing runs: IDLE_S
    loop.set(st, "amplitude", 7.0)
    assert session.starts == 2 and session.busy  # in the call that set it, not at the idle timer
    worker = session.worker
    worker.join(TIMEOUT_S)
    loop.turn()
    assert not session.busy and session.result.key == worker.key


def test_invalid_settings_show_the_message_and_keep_the_last_ghost(procanim_extension, runtime):
    scene = bpy.context.scene
    _walker(scene)
    st = settings_of("path_walk")
    st.preview = True
    settle(runtime)
    good = runtime.SESSIONS["path_walk"].result
    st.path = None
    settle(runtime)
    session = runtime.SESSIONS["path_walk"]
    kind, text = session.status()
    assert kind == "ERROR" and "Pick" in text and "path" in text
    assert session.result is good  # still drawn, greyed
    draw = addon_module(procanim_extension, "preview.draw")
    shapes = draw.view_shapes([session], scene.frame_current)
    assert shapes[0][1] == draw.GHOST_STALE


def test_a_key_target_generate_would_refuse_is_the_status(procanim_extension, runtime):
    """IK controls on ProcAnim's human (no control rig): Generate cancels with a message, and the
    preview's status says the same instead of showing a ghost Generate will not bake."""
    _walker(bpy.context.scene)
    st = settings_of("path_walk")
    st.preview = True
    settle(runtime)
    session = runtime.SESSIONS["path_walk"]
    assert session.status()[0] == "READY"
    st.key_target = "IK_CONTROLS"
    settle(runtime)
    kind, text = session.status()
    assert kind == "ERROR" and "not a control rig" in text, text
    with pytest.raises(RuntimeError, match="not a control rig"):  # CANCELLED with that ERROR report
        bpy.ops.procanim.path_walk(key_target="IK_CONTROLS")  # the sidebar's picks
    st.key_target = "AUTO"
    settle(runtime)
    assert session.status()[0] == "READY", session.status()


def _walker_on_floor(runtime):
    """The path walk previewed over a floor mesh: (settings, floor, session), settled."""
    _walker(bpy.context.scene)
    floor = add_floor()
    st = settings_of("path_walk")
    st.ground = floor
    st.preview = True
    settle(runtime)
    return st, floor, runtime.SESSIONS["path_walk"]


def _assert_previewed_fresh(procanim_extension, generator_id: str, st, got) -> None:
    """``got`` (the preview's Clip) is the Clip a fresh ``prepare`` of the sidebar's settings makes."""
    generator = addon_module_cached("operators.generators").get(generator_id)
    fresh = generator.prepare(generator.settings_args(st), bpy.context)
    want = fresh.compute(lambda _f: None)[0]
    for name in ("frames", "locations", "rotations"):
        assert np.array_equal(getattr(got, name), getattr(want, name)), name


def test_moving_or_editing_the_path_and_ground_regenerates(procanim_extension, runtime):
    st, floor, session = _walker_on_floor(runtime)
    results = [session.result]
    path = st.path
    path.location.x += 0.5  # move the curve
    bpy.context.view_layer.update()
    settle(runtime)
    results.append(session.result)
    path.data.splines[0].points[1].co = (0.5, -2.5, 0.0, 1.0)  # edit the curve
    path.data.update_tag()
    bpy.context.view_layer.update()
    settle(runtime)
    results.append(session.result)
    floor.data.vertices[0].co.z = 0.2  # edit the ground
    floor.data.update()
    bpy.context.view_layer.update()
    settle(runtime)
    results.append(session.result)
    assert len({id(r) for r in results}) == 4 and session.error == ""
    pelvis = [r.ghosts[0].pelvis[-1] for r in results[:2]]
    assert pelvis[1][0] - pelvis[0][0] == pytest.approx(0.5, abs=0.05)  # the walk followed the curve


def test_a_slider_change_reuses_the_scene_reads_and_makes_the_fresh_clip(procanim_extension, runtime):
    """A setting change reads no path, ground or armature again (kept while their state is
    unchanged); the Clip is the one a fresh read makes; moving the ground reads it again."""
    st, floor, session = _walker_on_floor(runtime)
    reads = session.reads
    assert reads.hits == 0
    st.cadence = 112.0
    settle(runtime)
    assert reads.hits == 3  # path, ground, rig
    got = session.result.clips[0]
    _assert_previewed_fresh(procanim_extension, "path_walk", st, got)
    floor.location.z = 0.1
    bpy.context.view_layer.update()
    settle(runtime)
    assert reads.hits == 5  # path and rig kept, the ground read again
    raised = session.result.clips[0]
    assert not np.array_equal(raised.locations, got.locations)


def test_a_bevelled_path_is_read_without_a_loop(procanim_extension, runtime):
    scene = bpy.context.scene
    scene.procanim.armature = add_human()
    path = add_curve("Tube", [(0.0, 0.0, 0.0), (0.0, -2.0, 0.0)], bevel=0.05)
    scene.procanim.path_walk.path = path
    st = settings_of("path_walk")
    st.preview = True
    settle(runtime)
    session = runtime.SESSIONS["path_walk"]
    assert session.error == "" and session.result is not None
    starts, result = session.starts, session.result
    for _ in range(10):  # the bevel switched off and on while reading must not count as a change
        bpy.context.view_layer.update()
        runtime.tick()
    assert session.result is result and not session.busy and session.starts == starts == 1
    assert path.data.bevel_depth == pytest.approx(0.05)


# --------------------------------------------------------------------------------------------
# Generate bakes the preview's Clip; the ghost is the baked pose


def _generate(generator):
    panel = getattr(bpy.types, f"PROCANIM_PT_{generator}")
    args = button_args(draw_log(panel), f"procanim.{generator}")
    assert getattr(bpy.ops.procanim, generator)(**args) == {"FINISHED"}


def _targets(generator):
    scene = bpy.context.scene
    if generator == "handshake":
        return [scene.procanim.handshake.initiator, scene.procanim.handshake.partner]
    if generator == "crowd_walk":  # the selected armatures, by name
        return sorted((o for o in bpy.context.selected_objects if o.type == "ARMATURE"), key=lambda o: o.name)
    return [scene.procanim.armature]


def _ghost_against_the_bake(generator, result) -> tuple[float, float]:
    """The largest distance (m) of the ghost's heads and tails from the baked pose Blender evaluates,
    on key frames and on frames between keys (the duck keys every third frame)."""
    worst_key, worst_between = 0.0, 0.0
    for obj, ghost in zip(_targets(generator), result.ghosts):
        keys = set(ghost.key_frames.astype(int).tolist())
        for frame in ghost.frames.astype(int)[:: max(1, len(ghost.frames) // 25)].tolist() + sorted(keys)[-2:]:
            pose = evaluated_pose(obj, frame, space="WORLD")
            heads, tails = ghost.bones_at(frame)
            for name, head, tail in zip(ghost.bone_names, heads, tails):
                pb = obj.pose.bones[name]
                want_head = pose[name][:3, 3]
                want_tail = want_head + pose[name][:3, 1] * pb.length * np.linalg.norm(pose[name][:3, 0])
                err = max(np.linalg.norm(head - want_head), np.linalg.norm(tail - want_tail))
                if frame in keys:
                    worst_key = max(worst_key, err)
                else:
                    worst_between = max(worst_between, err)
    return worst_key, worst_between


@pytest.mark.parametrize("generator", [*SCENES, "duck_walk_euler"])
def test_generate_bakes_the_previewed_clip_and_the_ghost_is_the_baked_pose(procanim_extension, runtime,
                                                                           generator):
    """On every frame checked, keys and frames between keys (the duck keys every third frame), for
    bones in quaternion, Euler and axis-angle rotation modes: the ghost is the generated motion, what
    a bake with every key written (Key Tolerance 0) plays exactly; at the default Key Tolerance the
    bake plays it within the tolerance, from the same Clip (the tolerance is no input of the preview,
    but for the duck's, which it decides the frames of)."""
    scene = bpy.context.scene
    euler = generator.endswith("_euler")
    generator = generator.removesuffix("_euler")
    SCENES[generator](scene)
    if euler:
        modes = ["ZXY", "XYZ", "AXIS_ANGLE", "YZX"]
        for i, pb in enumerate(scene.procanim.armature.pose.bones):
            pb.rotation_mode = modes[i % len(modes)]
    settings = settings_of(generator)
    tolerance = settings.key_tolerance
    settings.key_tolerance = 0.0
    settings.preview = True
    settle(runtime)
    session = runtime.SESSIONS[generator]
    result, starts = session.result, session.starts
    assert result is not None
    read_metrics = addon_module_cached("operators.bake").read_metrics
    for key_tolerance, bound in ((0.0, 1e-5), (tolerance, tolerance + 1e-4)):
        settings.key_tolerance = key_tolerance
        settle(runtime)
        if generator == "duck_walk" and key_tolerance > 0.0:  # above 0 the duck is taken on every frame:
            assert session.starts == starts + 1  # its preview computes the walk again, once
            result, starts = session.result, session.starts
        _generate(generator)
        bpy.context.view_layer.update()
        settle(runtime)
        assert session.starts == starts and session.result is result  # neither the bake nor the tolerance
        for obj in _targets(generator):  # is an input of the preview: its Clip was baked, not computed again
            m = read_metrics(obj.animation_data.action)
            assert m.get("preview_compute_ms") == pytest.approx(result.compute_ms)
            assert m["key_tolerance_mm"] == pytest.approx(key_tolerance * 1000)
        worst_key, worst_between = _ghost_against_the_bake(generator, result)
        print(f"\n{generator}, key tolerance {key_tolerance * 1000:g} mm: ghost vs baked pose: key frames "
              f"{worst_key * 1000:.4f} mm, between keys {worst_between * 1000:.4f} mm")
        assert worst_key < bound and worst_between < bound


def test_generate_computes_again_after_a_change(procanim_extension, runtime):
    scene = bpy.context.scene
    _duck(scene)
    st = settings_of("duck_walk")
    st.preview = True
    settle(runtime)
    st.weight = 9.0  # not regenerated yet: the preview's Clip is for the old weight
    _generate("duck_walk")
    m = addon_module_cached("operators.bake").read_metrics(scene.procanim.armature.animation_data.action)
    assert "preview_compute_ms" not in m


def test_test_mode_logs_change_to_ghost_times(procanim_extension, runtime, tmp_path):
    import json

    log = tmp_path / "preview.jsonl"
    runtime.LOG_PATH = str(log)
    try:
        _duck(bpy.context.scene)
        st = settings_of("duck_walk")
        st.preview = True
        settle(runtime)
        st.amplitude = 3.0
        settle(runtime)
    finally:
        runtime.LOG_PATH = ""
    events = [json.loads(line) for line in log.read_text().splitlines()]
    ready = [e for e in events if e["event"] == "ready"]
    assert len(ready) == 2 and all(e["generator"] == "duck_walk" for e in ready)
    assert all(0 < e["compute_ms"] <= e["change_to_ghost_ms"] for e in ready)
    assert all(0 < e["engine_cpu_ms"] and e["engine_ms"] <= e["compute_ms"] for e in ready)
    assert ready[-1]["frames"] == 49
    started = [e for e in events if e["event"] == "started"]
    # the first by the timer (Preview turned on), the change by the setting's update callback
    assert [e["by"] for e in started] == ["timer", "setting"] and all(e["prepare_ms"] > 0 for e in started)


def test_what_the_views_draw(procanim_extension, runtime):
    """The drawing layer's input (the GPU calls themselves need a window): the ghost's bones at the
    scene's frame, the pelvis path, plants, the handshake's grips and point of contact; a status line."""
    scene = bpy.context.scene
    pick_pair(scene)
    settings_of("handshake").preview = True
    settle(runtime)
    draw = addon_module(procanim_extension, "preview.draw")
    session = runtime.SESSIONS["handshake"]
    ghosts = session.result.ghosts
    frame = float(ghosts[0].frames[len(ghosts[0].frames) // 2])
    shapes = draw.view_shapes([session], frame)
    bones = [s for s in shapes if s[1] == draw.GHOST]
    assert len(bones) == 2  # one skeleton per character
    heads, tails = ghosts[0].bones_at(frame)
    assert np.allclose(bones[0][3][0::2], heads) and np.allclose(bones[0][3][1::2], tails)
    assert sum(s[0] == "LINE_STRIP" and s[1] == draw.PATH for s in shapes) == 2
    assert any(s[1] in (draw.PLANT, draw.PLANT_IDLE) for s in shapes)  # they stand: feet planted
    grips = [s for s in shapes if s[1] == draw.GRIP]
    assert len(grips) == 4 and ghosts[0].meeting is not None
    (text, color), = draw.status_lines([session])
    assert text.startswith("Handshake preview: ready in") and color == draw.STATUS["READY"]


def test_baked_keys_are_interpolated_as_blender_does(procanim_extension):
    """procanim_addon/fcurves.py against Blender's own F-curves: keys written as the baker writes
    them (``keyframe_points.add`` + ``foreach_set``, then ``update``), evaluated between and beyond
    the keys, on random curves — evenly and unevenly spaced, with flat stretches and extremes."""
    from harness import fcurves_of

    fcurves = addon_module(procanim_extension, "procanim_addon.fcurves")
    obj = bpy.data.objects.new("Probe", None)
    bpy.context.collection.objects.link(obj)
    action = bpy.data.actions.new("Probe")
    obj.animation_data_create()
    compat = addon_module(procanim_extension, "operators.compat")
    fcs, _groups = compat.assign_action(obj, action)
    rng = np.random.default_rng(3)
    worst = 0.0
    for trial in range(60):
        n = int(rng.integers(2, 30))
        t = np.cumsum(rng.integers(1, 6, n)).astype(float) if trial % 2 else np.arange(n) * 3.0
        y = np.cumsum(rng.normal(size=n)) if trial % 3 else np.sin(0.4 * t)
        if n > 6 and trial % 5 == 0:
            y[2:5] = y[2]  # a flat stretch
        fc = fcs.new("location", index=trial % 3) if trial < 3 else fcurves_of(action, obj)[trial % 3]
        fc.keyframe_points.clear()
        fc.keyframe_points.add(n)
        co = np.empty(2 * n, dtype=np.float32)
        co[0::2], co[1::2] = t, y
        fc.keyframe_points.foreach_set("co", co)
        fc.update()
        q = np.linspace(t[0] - 2.0, t[-1] + 2.0, 300)
        want = np.array([fc.evaluate(x) for x in q])
        got = fcurves.evaluate(t, co[1::2].astype(float)[:, None], q)[:, 0]
        worst = max(worst, float(np.abs(want - got).max() / max(np.ptp(y), 1e-9)))
    print(f"\nfcurves vs Blender: largest difference {worst:.2e} of the curve's range")
    assert worst < 1e-5


def test_a_terrain_slider_change_reuses_the_rig_meshes_and_source_motion(procanim_extension, runtime):
    """The terrain adaptation's preview reads its rig, meshes and source motion once; a slider change
    reuses them and makes the Clip a fresh read makes; a new source motion is read again."""
    scene = bpy.context.scene
    _adapt(scene)
    st = settings_of("adapt_terrain")
    st.preview = True
    settle(runtime)
    session = runtime.SESSIONS["adapt_terrain"]
    reads = session.reads
    assert reads.hits == 0 and session.error == ""
    st.damping = 0.3
    settle(runtime)
    assert reads.hits == 3  # rig, terrain + reference meshes, source motion
    got = session.result.clips[0]
    _assert_previewed_fresh(procanim_extension, "adapt_terrain", st, got)
    human = scene.procanim.armature
    assert bpy.ops.procanim.source_motion(armature=human.name, kind="WALK", steps=3) == {"FINISHED"}
    settle(runtime)
    # all three depend on the armature (the meshes are read in its space), whose action changed
    assert reads.hits == 3 and session.error == ""
    assert session.result.clips[0].frame_count != got.frame_count


def test_every_setting_change_reaches_the_preview(procanim_extension, runtime, monkeypatch):
    """Every setting of every generator's panel, and the armature pick, tells the running previews
    when it is set (its update callback), whatever sets it — the sidebar, a preset, a script."""
    calls = []
    monkeypatch.setattr(runtime, "on_change", lambda *a: calls.append(1))
    generators = addon_module_cached("operators.generators")
    scene = bpy.context.scene
    checked = 0
    for entry in generators.every():
        if not entry.has_panel:
            continue
        settings = getattr(scene.procanim, entry.settings_name)
        for prop in settings.bl_rna.properties:
            if prop.identifier in ("rna_type", "name", "preview") or prop.is_readonly or prop.type == "COLLECTION":
                continue
            before = len(calls)
            value = getattr(settings, prop.identifier)
            setattr(settings, prop.identifier, value)  # the same value: Blender still runs update
            assert len(calls) == before + 1, f"{entry.id}.{prop.identifier} does not reach the preview"
            checked += 1
    before = len(calls)
    scene.procanim.armature = scene.procanim.armature
    assert len(calls) == before + 1 and checked > 40


def test_the_draw_takes_a_result_that_ended_during_the_redraw(procanim_extension, runtime):
    """A worker that ends while Blender redraws is taken by the 3D view's draw handler (which calls
    runtime.take_finished before drawing), not at the timer's next run: that redraw draws it."""
    _duck(bpy.context.scene)
    st = settings_of("duck_walk")
    st.preview = True
    settle(runtime)
    session = runtime.SESSIONS["duck_walk"]
    old = session.result
    st.amplitude = 7.0  # starts the worker in this call
    worker = session.worker
    assert worker is not None and session.result is old
    worker.join(TIMEOUT_S)
    runtime.take_finished()  # what draw.draw_view does first
    assert session.worker is None and session.result is not old
    assert dict(session.result.key[1])["amplitude"] == pytest.approx(7.0)
    assert runtime._state["sidebar"]  # the timer's next run redraws the sidebar's status
