"""Acceptance on a real Dask cluster: a ``dask scheduler`` and two ``dask worker --nthreads 1``
processes on localhost, started here.

Twelve shots (duck walks, path walks on different curves, the terrain adaptation of an imported
BVH, handshakes) go through the cluster while one worker is killed (SIGKILL) in the middle of a
shot: every shot is baked, every output .blend opens and holds the action on the right armature
with its metrics; a second run of the same file does no work; the local pool bakes the same
actions (keys equal within 1e-6).
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import bpy
import harness
import numpy as np
import pytest
from in_process import write_jobs
from launcher import batch_command, batch_env

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))
from batch_cluster import local_cluster, wait_for  # noqa: E402

# Slow shots (path walks, handshakes, the adaptation) alternate with quick duck walks.
JOB = """
[defaults]
output_dir = "baked"

[defaults.duck_walk]
armature = "Duck"
frame_end = 72

[defaults.path_walk]
armature = "Human"

[shots.walk_straight]
blend = "{street}"
generator = "path_walk"
settings = {{ path = "Straight" }}

[shots.duck_neutral]
blend = "{duck}"
generator = "duck_walk"

[shots.handshake_dls]
blend = "{meeting}"
generator = "handshake"
settings = {{ initiator = "Host", partner = "Guest" }}

[shots.duck_heavy]
blend = "{duck}"
generator = "duck_walk"
settings = {{ weight = 9.0, amplitude = 7.0 }}

[shots.walk_bend]
blend = "{street}"
generator = "path_walk"
settings = {{ path = "Bend", speed = 1.2 }}

[shots.mocap_on_floor]
blend = "{hills}"
generator = "adapt_terrain"
import = {{ file = "{bvh}", name = "Mocap", rotate_mode = "NATIVE" }}
settings = {{ armature = "Mocap", terrain = "Floor" }}

[shots.walk_s]
blend = "{street}"
generator = "path_walk"
settings = {{ path = "S", cadence = 115.0 }}

[shots.duck_weave]
blend = "{duck}"
generator = "duck_walk"
settings = {{ direction = 8.0, gait = "ARTICLE" }}
fbx = true

[shots.handshake_fuzzy]
blend = "{meeting}"
generator = "handshake"
settings = {{ initiator = "Guest", partner = "Host", solver_initiator = "FUZZY", solver_partner = "CCD" }}

[shots.walk_s_ground]
blend = "{street}"
generator = "path_walk"
settings = {{ path = "S", ground = "Ground", root_motion = "OBJECT" }}

[shots.duck_sad]
blend = "{duck}"
generator = "duck_walk"
settings = {{ preset = "SAD" }}

[shots.walk_slow]
blend = "{street}"
generator = "path_walk"
settings = {{ path = "Straight", cadence = 90.0, stride = 0.6 }}
"""

ARMATURES = {
    "walk_straight": ["Human"],
    "duck_neutral": ["Duck"],
    "handshake_dls": ["Guest", "Host"],
    "duck_heavy": ["Duck"],
    "walk_bend": ["Human"],
    "mocap_on_floor": ["Mocap"],
    "walk_s": ["Human"],
    "duck_weave": ["Duck"],
    "handshake_fuzzy": ["Guest", "Host"],
    "walk_s_ground": ["Human"],
    "duck_sad": ["Duck"],
    "walk_slow": ["Human"],
}
SLOW = ("walk_", "handshake_", "mocap_")


@pytest.fixture(scope="module")
def cluster(tmp_path_factory, extension_zip):
    with local_cluster(tmp_path_factory.mktemp("dask"), workers=2, env={"PROCANIM_ZIP": str(extension_zip)}) as c:
        yield c


@pytest.fixture(scope="module")
def job(inputs, tmp_path_factory):
    return write_jobs(tmp_path_factory.mktemp("job"), JOB, inputs)


def _starts(log: Path) -> list[str]:
    return re.findall(r"procanim-batch: start (\S+)", log.read_text()) if log.is_file() else []


@dataclass
class DaskRun:
    returncode: int
    output: str
    report: dict
    out: Path
    killed_shot: str
    killed_blender_pid: int


@pytest.fixture(scope="module")
def dask_run(cluster, job, extension_zip):
    """The twelve shots through the cluster; worker w0 is killed (SIGKILL) while it bakes a shot."""
    out = job.parent / "dask-out"
    proc = subprocess.Popen(
        batch_command("bake", job, "--scheduler", cluster.address, "--output-dir", out),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=batch_env(extension_zip),
    )
    log = cluster.blender_logs[0]

    def a_slow_shot_started_after_some_were_done():
        starts = _starts(log)
        some_done = out.is_dir() and any(out.glob("*.json"))
        return starts[-1] if starts and some_done and starts[-1].startswith(SLOW) else None

    try:
        killed = wait_for(a_slow_shot_started_after_some_were_done, 300, "w0 did not start a slow shot")
    except TimeoutError:
        proc.kill()
        pytest.fail(f"no kill moment: {proc.communicate()[0]}")
    os.kill(cluster.workers[0].pid, signal.SIGKILL)
    blender_pid = int(re.search(r"procanim-batch: worker (\d+) ready", log.read_text()).group(1))
    output, _ = proc.communicate(timeout=600)
    report_path = out / "report.json"
    report = json.loads(report_path.read_text()) if report_path.is_file() else {}
    return DaskRun(proc.returncode, output, report, out, killed, blender_pid)


def test_the_killed_worker_loses_no_shot(cluster, dask_run):
    assert dask_run.returncode == 0, dask_run.output
    # a plain tcp:// scheduler: one line says that anyone who reaches it can run code
    assert [line for line in dask_run.output.splitlines() if "is not TLS" in line] == [
        f"python tools/batch.py: warning: {cluster.address} is not TLS: anyone who reaches the scheduler "
        "can run code on its workers (docs/batch.md, Security)"
    ]
    assert cluster.workers[0].wait(timeout=10) == -signal.SIGKILL
    assert dask_run.report["summary"] == {"total": 12, "done": 12, "skipped": 0, "failed": 0}, dask_run.output
    # the shot w0 was baking was baked again, by the other worker's Blender
    metrics = json.loads((dask_run.out / f"{dask_run.killed_shot}.json").read_text())
    assert metrics["worker"]["pid"] != dask_run.killed_blender_pid

    # w0's Blender did not outlive it
    def gone():
        try:
            state = Path(f"/proc/{dask_run.killed_blender_pid}/status").read_text()
        except FileNotFoundError:
            return True
        return "State:\tZ" in state

    wait_for(gone, 10, "the killed worker's Blender is still running")
    assert not list(dask_run.out.glob(f".{dask_run.killed_shot}.*partial*"))


def test_every_output_opens_with_the_action_on_the_right_armature(dask_run):
    rows = {row["shot"]: row for row in dask_run.report["shots"]}
    assert sorted(rows) == sorted(ARMATURES)
    for shot, armatures in ARMATURES.items():
        metrics = json.loads((dask_run.out / f"{shot}.json").read_text())
        assert metrics["input_hash"] == rows[shot]["input_hash"]
        assert sorted(a["armature"] for a in metrics["armatures"]) == armatures, shot
        assert rows[shot]["worker"]["dask_worker"].startswith("tcp://127.0.0.1:")
        harness.reset_scene()
        assert bpy.ops.wm.open_mainfile(filepath=str(dask_run.out / f"{shot}.blend")) == {"FINISHED"}
        for entry in metrics["armatures"]:
            obj = bpy.data.objects[entry["armature"]]
            action = obj.animation_data.action
            assert action.name == entry["action"]
            assert action.procanim.generator == metrics["generator"] and action.procanim.owner == obj.name
            assert json.loads(action.procanim.metrics_json) == entry["metrics"], shot
            curves = harness.fcurves_of(action, obj)
            assert len(curves) >= 6 and all(len(fc.keyframe_points) >= 2 for fc in curves), shot
    assert (dask_run.out / "duck_weave.fbx").read_bytes()[:18] == b"Kaydara FBX Binary"
    assert not list(dask_run.out.glob(".*partial*"))


def test_a_second_run_does_no_work(cluster, dask_run, job, extension_zip):
    outputs = sorted(
        p for p in dask_run.out.iterdir() if p.suffix in (".blend", ".json", ".fbx") and p.stem != "report"
    )
    before = {p: p.stat().st_mtime_ns for p in outputs}
    starts = len(_starts(cluster.blender_logs[1]))
    proc = subprocess.run(
        batch_command("bake", job, "--scheduler", cluster.address, "--output-dir", dask_run.out),
        capture_output=True,
        text=True,
        env=batch_env(extension_zip),
        timeout=600,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    report = json.loads((dask_run.out / "report.json").read_text())
    assert report["summary"] == {"total": 12, "done": 0, "skipped": 12, "failed": 0}
    assert {p: p.stat().st_mtime_ns for p in outputs} == before
    assert len(_starts(cluster.blender_logs[1])) == starts  # nothing reached the cluster


def _keys(blend: Path, armatures: list[str]) -> dict:
    harness.reset_scene()
    assert bpy.ops.wm.open_mainfile(filepath=str(blend)) == {"FINISHED"}
    keys = {}
    for name in armatures:
        obj = bpy.data.objects[name]
        for fc in harness.fcurves_of(obj.animation_data.action, obj):
            keys[(name, fc.data_path, fc.array_index)] = harness.keyframes(fc)
    return keys


def test_the_local_pool_bakes_the_same_actions(dask_run, job, extension_zip):
    out = job.parent / "local-out"
    proc = subprocess.run(
        batch_command("bake", job, "--workers", "2", "--output-dir", out),
        capture_output=True,
        text=True,
        env=batch_env(extension_zip),
        timeout=900,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    report = json.loads((out / "report.json").read_text())
    assert report["mode"] == "pool" and report["summary"]["done"] == 12
    for shot, armatures in ARMATURES.items():
        local, dask = _keys(out / f"{shot}.blend", armatures), _keys(dask_run.out / f"{shot}.blend", armatures)
        assert sorted(local) == sorted(dask), shot
        for key in local:
            assert local[key].shape == dask[key].shape, (shot, key)
            np.testing.assert_allclose(local[key], dask[key], rtol=0, atol=1e-6, err_msg=f"{shot} {key}")
