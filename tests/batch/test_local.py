"""The batch command on one machine: a failing shot fails alone (worker pool), one shot per command
for render farms (``--shot``), and resuming by content hash."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import bpy
import harness
import pytest
from in_process import in_process_host
from launcher import batch_command

ROOT = Path(__file__).resolve().parents[2]

JOB = """
[defaults]
output_dir = "out"

[defaults.duck_walk]
armature = "Duck"
frame_end = 48

[shots.duck_a]
blend = "{duck}"
generator = "duck_walk"
settings = {{ amplitude = 6.0 }}

[shots.walk_rock]
blend = "{street}"
generator = "path_walk"
settings = {{ armature = "Human", path = "Rock" }}

[shots.duck_b]
blend = "{duck}"
generator = "duck_walk"
settings = {{ preset = "SAD" }}
"""


def write(folder, inputs, text=JOB):
    path = folder / "jobs.toml"
    path.write_text(textwrap.dedent(text).format(**{k: str(v) for k, v in inputs.items()}))
    return path


def test_one_failing_shot_fails_alone_and_the_report_says_why(run_batch, inputs, tmp_path):
    proc = run_batch("bake", write(tmp_path, inputs), "--workers", "2")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    rows = {row["shot"]: row for row in report["shots"]}
    assert report["mode"] == "pool" and report["workers"] == 2
    # the last result came after the workers were up and before the command's batch ended (workers' exit)
    assert 0.0 < report["ready_s"] < report["done_s"] <= report["batch_s"]
    assert report["summary"] == {"total": 3, "done": 2, "skipped": 0, "failed": 1}
    assert rows["duck_a"]["status"] == rows["duck_b"]["status"] == "done"
    failed = rows["walk_rock"]
    assert failed["status"] == "failed"
    assert "bake:" in failed["message"] and "'Rock' is a mesh" in failed["message"], failed["message"]
    assert not (tmp_path / "out" / "walk_rock.blend").exists() and not (tmp_path / "out" / "walk_rock.json").exists()
    assert (tmp_path / "out" / "duck_a.blend").is_file() and (tmp_path / "out" / "duck_b.json").is_file()
    assert not list((tmp_path / "out").glob(".*partial*"))  # no temporary file left behind
    # the final table names the failed shot and why
    line = next(x for x in proc.stdout.splitlines() if x.startswith("walk_rock"))
    assert "failed" in line and "'Rock' is a mesh" in line
    assert "2 done, 0 skipped, 1 failed" in proc.stdout
    # both workers baked (two different Blender processes)
    assert rows["duck_a"]["worker"]["pid"] != rows["walk_rock"]["worker"].get("pid", 0) or (
        rows["duck_b"]["worker"]["pid"] != rows["duck_a"]["worker"]["pid"]
    )


def bake_shot(cli, job, capsys, *extra) -> tuple[int, str]:
    # the order a Flamenco task uses (docs/batch.md): options, then the job file last
    status = cli.main(["bake", "--shot", "duck_a", *extra, str(job)], in_process_host(cli))
    out = capsys.readouterr()
    return status, out.out + out.err


def test_one_shot_per_command_resumes_by_content_hash(cli, inputs, tmp_path, capsys):
    """``--shot NAME`` bakes that shot in the command's own process (a render-farm task); running it
    again does nothing; changing its settings or its input file's bytes bakes it again."""
    duck = tmp_path / "duck.blend"
    shutil.copy(inputs["duck"], duck)
    job = write(tmp_path, {**inputs, "duck": duck})
    out = tmp_path / "out"

    status, text = bake_shot(cli, job, capsys)
    assert status == 0, text
    assert sorted(p.name for p in out.iterdir()) == ["duck_a.blend", "duck_a.json"]  # no report: farm task
    metrics = json.loads((out / "duck_a.json").read_text())
    first_hash, first_time = metrics["input_hash"], (out / "duck_a.blend").stat().st_mtime_ns
    assert metrics["armatures"][0]["armature"] == "Duck" and metrics["generator"] == "duck_walk"

    harness.reset_scene()
    assert bpy.ops.wm.open_mainfile(filepath=str(out / "duck_a.blend")) == {"FINISHED"}
    action = bpy.data.objects["Duck"].animation_data.action
    assert action.procanim.generator == "duck_walk"
    assert json.loads(action.procanim.metrics_json) == metrics["armatures"][0]["metrics"]
    assert len(harness.fcurves_of(action, bpy.data.objects["Duck"])) > 10

    status, text = bake_shot(cli, job, capsys)
    assert status == 0 and "duck_a" in text and "skipped" in text, text
    assert (out / "duck_a.blend").stat().st_mtime_ns == first_time

    job.write_text(job.read_text().replace("amplitude = 6.0", "amplitude = 6.5"))
    status, text = bake_shot(cli, job, capsys)
    assert status == 0 and "done" in text, text
    second_hash = json.loads((out / "duck_a.json").read_text())["input_hash"]
    assert second_hash != first_hash

    assert bpy.ops.wm.open_mainfile(filepath=str(duck)) == {"FINISHED"}
    bpy.data.objects["Duck"].location.x += 1.0
    assert bpy.ops.wm.save_mainfile() == {"FINISHED"}
    status, text = bake_shot(cli, job, capsys)
    assert status == 0 and "done" in text, text
    assert json.loads((out / "duck_a.json").read_text())["input_hash"] not in (first_hash, second_hash)

    status, text = bake_shot(cli, job, capsys, "--force")  # --force bakes even an up-to-date shot
    assert status == 0 and "done" in text, text


def test_a_crashed_pool_worker_is_replaced_and_its_shot_baked(extension_zip, inputs, tmp_path):
    """SIGKILL a pool worker's Blender while it bakes: a new worker takes its place and bakes the shot."""
    import os
    import re
    import signal
    import subprocess
    import time

    text = "\n".join(
        f'[shots.walk_{i}]\nblend = "{inputs["street"]}"\ngenerator = "path_walk"\n'
        f'settings = {{ armature = "Human", path = "{path}" }}\n'
        for i, path in enumerate(("S", "Bend", "S", "Bend"))
    )
    job = tmp_path / "jobs.toml"
    job.write_text('[defaults]\noutput_dir = "out"\n\n' + text)
    proc = subprocess.Popen(
        batch_command("bake", job, "--workers", "2"),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env={**os.environ, "PROCANIM_ZIP": str(extension_zip)},
    )
    log = tmp_path / "out" / "logs" / "worker-0.log"
    deadline = time.monotonic() + 300
    while not (log.is_file() and "procanim-batch: start" in log.read_text()):
        assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()[0]
        time.sleep(0.02)
    first = log.read_text()
    shot = re.search(r"procanim-batch: start (\S+)", first).group(1)
    os.kill(int(re.search(r"procanim-batch: worker (\d+) ready", first).group(1)), signal.SIGKILL)
    output, _ = proc.communicate(timeout=600)
    assert proc.returncode == 0, output
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    rows = {row["shot"]: row for row in report["shots"]}
    assert report["summary"]["done"] == 4, output
    # the shot that was baking (or, had it just finished, the next one) took a second attempt
    assert sorted(row["attempts"] for row in rows.values()) == [1, 1, 1, 2], rows
    assert rows[shot]["status"] == "done"
    assert (tmp_path / "out" / "logs" / "worker-2.log").is_file()  # the replacement worker


def test_a_shot_imports_an_fbx_onto_a_new_armature(cli, inputs, tmp_path, capsys):
    """``import = { file = "x.fbx" }``: Blender's FBX importer brings the rig in, the shot names it and
    bakes onto it (a ProcAnim human exported to FBX here, then walked by procanim.source_motion)."""
    harness.reset_scene()
    assert bpy.ops.wm.open_mainfile(filepath=str(inputs["street"])) == {"FINISHED"}
    for obj in bpy.context.view_layer.objects:
        obj.select_set(obj.name in ("Human", "Human.body"))
    fbx = tmp_path / "human.fbx"
    assert bpy.ops.export_scene.fbx(filepath=str(fbx), use_selection=True, add_leaf_bones=False) == {"FINISHED"}
    job = tmp_path / "jobs.toml"
    job.write_text(
        textwrap.dedent(f"""
        [shots.fbx_walk]
        generator = "source_motion"
        import = {{ file = "{fbx}", name = "Imported" }}
        settings = {{ armature = "Imported", kind = "WALK", steps = 2 }}
        """)
    )
    status = cli.main(["bake", str(job), "--workers", "0"], in_process_host(cli))
    text = capsys.readouterr().out
    assert status == 0, text
    metrics = json.loads((tmp_path / "baked" / "fbx_walk.json").read_text())
    assert [a["armature"] for a in metrics["armatures"]] == ["Imported"]
    harness.reset_scene()
    assert bpy.ops.wm.open_mainfile(filepath=str(tmp_path / "baked" / "fbx_walk.blend")) == {"FINISHED"}
    rig = bpy.data.objects["Imported"]
    assert rig.type == "ARMATURE" and rig.animation_data.action.procanim.generator == "source_motion"
    assert len(harness.fcurves_of(rig.animation_data.action, rig)) > 10


BLAS_PROBE = """
import ctypes, json, sys
import numpy
sys.path.insert(0, sys.argv[1])
from procanim_addon.threads import limit_blas_threads
libs = sorted({l.split()[-1] for l in open('/proc/self/maps') if 'openblas' in l.lower() and '/' in l})
lib = ctypes.CDLL(libs[0])
get = next(getattr(lib, n) for n in ('openblas_get_num_threads64_', 'openblas_get_num_threads',
                                      'scipy_openblas_get_num_threads64_') if hasattr(lib, n))
before = get()
took = limit_blas_threads()
print(json.dumps({'before': before, 'took': took, 'after': get()}))
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/maps")
def test_shots_baked_in_the_commands_own_process_use_one_blas_thread():
    env = {k: v for k, v in os.environ.items() if k not in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS")}
    out = subprocess.run([sys.executable, "-c", BLAS_PROBE, str(ROOT)], env=env, capture_output=True, text=True,
                         check=True).stdout
    figures = json.loads(out.strip().splitlines()[-1])
    assert figures["took"] >= 1 and figures["after"] == 1, figures
    # the caller's own setting wins
    out = subprocess.run([sys.executable, "-c", BLAS_PROBE, str(ROOT)], env={**env, "OPENBLAS_NUM_THREADS": "2"},
                         capture_output=True, text=True, check=True).stdout
    assert json.loads(out.strip().splitlines()[-1])["took"] == 0


def test_a_shot_exports_fbx_and_gltf_when_asked(cli, inputs, tmp_path, capsys):
    """``fbx = true`` and ``gltf = true`` (issue 24): the shot writes ``<shot>.fbx`` and ``<shot>.glb``
    with procanim.export's settings (a duck loop in place baked into an NLA strip: its action only,
    the cyclic one), and the metrics name them and the strip's action."""
    text = JOB.replace("[shots.duck_a]", "[shots.duck_a]\nfbx = true\ngltf = true").replace(
        "settings = {{ amplitude = 6.0 }}",
        'settings = {{ amplitude = 6.0, loop = "IN_PLACE", bake_to = "NLA_STRIP" }}')
    job = write(tmp_path, inputs, text)
    status, out = bake_shot(cli, job, capsys)
    assert status == 0, out
    folder = tmp_path / "out"
    assert (folder / "duck_a.fbx").read_bytes()[:18] == b"Kaydara FBX Binary"
    assert (folder / "duck_a.glb").read_bytes()[:4] == b"glTF"
    outputs = json.loads((folder / "duck_a.json").read_text())["outputs"]
    assert outputs["gltf"] == str(folder / "duck_a.glb") and outputs["fbx"] == str(folder / "duck_a.fbx")
    baked = json.loads((folder / "duck_a.json").read_text())["armatures"]
    assert [a["armature"] for a in baked] == ["Duck"] and baked[0]["metrics"]["loop_mode"] == "IN_PLACE"
    assert not list(folder.glob(".*partial*"))
    harness.reset_scene()
    assert bpy.ops.import_scene.gltf(filepath=str(folder / "duck_a.glb")) == {"FINISHED"}
    assert len(bpy.data.actions) == 1  # the baked action only
