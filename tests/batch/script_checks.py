"""What the security tests check after a batch run of the two ducks whose files carry Python
(batch_scenes.make_scripted), shared by test_security.py (bpy wheel) and test_blender_binary.py
(a real Blender binary)."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import batch_scenes
import bpy
import pytest

JOB = """
[defaults]
output_dir = "out"

[defaults.duck_walk]
armature = "Duck"
frame_end = 24

[shots.scripted]
blend = "{scripted}"
generator = "duck_walk"

[shots.python_rig]
blend = "{python_rig}"
generator = "duck_walk"
"""


def write_job(folder: Path, scripted_inputs: dict) -> Path:
    path = folder / "jobs.toml"
    path.write_text(textwrap.dedent(JOB).format(**{k: str(v) for k, v in scripted_inputs.items()}))
    return path


def markers(scripted_inputs: dict) -> list[str]:
    folder = scripted_inputs["markers"]
    return sorted(p.name for p in folder.iterdir()) if folder.is_dir() else []


def clear_markers(scripted_inputs: dict) -> None:
    for name in markers(scripted_inputs):
        (scripted_inputs["markers"] / name).unlink()


def saved_drivers(blend: Path, name: str) -> list[tuple[float, bool]]:
    """(the driven location value, the driver's valid flag) per driver of an object, as saved in
    ``blend`` by the process that evaluated it (appended here, not evaluated: no driver runs). A
    driver Blender refused is saved invalid, its value 0."""
    with bpy.data.libraries.load(str(blend)) as (_src, dst):
        dst.objects = [name]
    obj = dst.objects[0]
    try:
        return [(obj.location[fc.array_index], fc.driver.is_valid) for fc in obj.animation_data.drivers]
    finally:
        bpy.data.objects.remove(obj)


def metrics(out: Path, shot: str) -> dict:
    return json.loads((out / f"{shot}.json").read_text())


def check_scripts_not_run(out: Path, rows: dict, scripted_inputs: dict) -> None:
    """The shot bakes, the file's text block did not run, the drivers Blender evaluates without
    auto-run gave their values, and the shot whose rig needs a Python driver failed naming the flag."""
    assert markers(scripted_inputs) == []
    assert rows["scripted"]["status"] == "done", rows["scripted"]
    record = metrics(out, "scripted")
    assert record["trust_scripts"] is False and record["scripts_not_run"] == ["on_load.py"]
    assert record["armatures"][0]["armature"] == "Duck"
    expected = [(pytest.approx(value), True) for _expression, value in batch_scenes.DIAL_DRIVERS]
    assert saved_drivers(out / "scripted.blend", "Dial") == expected
    failed = rows["python_rig"]
    assert failed["status"] == "failed", failed
    assert "--trust-scripts" in failed["message"] and "duck_lean(var)" in failed["message"], failed["message"]
    assert not (out / "python_rig.blend").exists()


def check_scripts_run(out: Path, rows: dict, scripted_inputs: dict) -> None:
    """Both shots baked, each file's text block ran in the process that baked it."""
    assert rows["scripted"]["status"] == rows["python_rig"]["status"] == "done", rows
    pids = {shot: metrics(out, shot)["worker"]["pid"] for shot in ("scripted", "python_rig")}
    assert markers(scripted_inputs) == sorted(f"{shot}-{pid}" for shot, pid in pids.items())
    assert metrics(out, "python_rig")["trust_scripts"] is True


def report_rows(out: Path) -> tuple[dict, dict]:
    report = json.loads((out / "report.json").read_text())
    return report, {row["shot"]: row for row in report["shots"]}
