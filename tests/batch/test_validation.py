"""Bad job files are refused before any work, with a message naming the shot and the key.

The command runs in this process (``procanim.batch.cli.main``, the extension enabled here), except
for one run of ``tools/batch.py`` that checks the exit status and that nothing was started.
"""

from __future__ import annotations

import pytest
from in_process import in_process_host
from in_process import write_jobs as write

GOOD = """
[defaults]
output_dir = "out"

[shots.walk]
blend = "{street}"
generator = "path_walk"
settings = {{ armature = "Human", path = "Straight" }}

[shots.duck]
blend = "{duck}"
generator = "duck_walk"
settings = {{ armature = "Duck" }}
"""



def validate(cli, path, capsys, *extra):
    status = cli.main(["validate", str(path), *extra], in_process_host(cli))
    out = capsys.readouterr()
    return status, out.out + out.err


def test_a_good_job_file_validates(cli, inputs, tmp_path, capsys):
    status, text = validate(cli, write(tmp_path, GOOD, inputs), capsys)
    assert status == 0, text
    assert "2 shot(s), no problem found" in text
    assert not (tmp_path / "out").exists()


def test_the_key_tolerance_is_a_setting_of_every_shot(cli, inputs, tmp_path, capsys):
    text = GOOD.replace('path = "Straight"', 'path = "Straight", key_tolerance = 0.002').replace(
        'armature = "Duck"', 'armature = "Duck", key_tolerance = 0')
    status, output = validate(cli, write(tmp_path, text, inputs), capsys)
    assert status == 0, output


# Each case: a change to the good file, and what the message must say (shot and key named).
CASES = {
    "malformed TOML": (
        GOOD.replace('generator = "duck_walk"', 'generator = "duck_walk'),
        r"malformed TOML: .* \(at line 12, column 23\)",
    ),
    "unknown generator": (
        GOOD.replace('"duck_walk"', '"moonwalk"'),
        r"shot 'duck': generator: unknown generator 'moonwalk' \(known: duck_walk, handshake, path_walk",
    ),
    "unknown argument": (
        GOOD.replace('path = "Straight"', 'path = "Straight", cadance = 100.0'),
        r"shot 'walk': settings\.cadance: not an argument of procanim\.path_walk",
    ),
    "argument above its limit": (
        GOOD.replace('generator = "path_walk"', 'generator = "adapt_terrain"').replace(
            'path = "Straight"', 'terrain = "Ground", damping = 1.5'
        ),
        r"shot 'walk': settings\.damping: 1\.5 is above its range, 0 to 0\.95",
    ),
    "argument below its limit": (
        GOOD.replace('generator = "path_walk"', 'generator = "source_motion"').replace(
            'path = "Straight"', "steps = 0"
        ),
        r"shot 'walk': settings\.steps: 0 is below its range, 1 to 1000",
    ),
    "a walk argument above its range": (
        GOOD.replace('path = "Straight"', 'path = "Straight", cadence = 500.0'),
        r"shot 'walk': settings\.cadence: 500\.0 is above its range, 20 to 240",
    ),
    "an array item out of its range": (
        GOOD.replace('path = "Straight"', 'path = "Straight", delta_y = [0.0, 3.0, 0.0]'),
        r"shot 'walk': settings\.delta_y\[1\]: 3\.0 is above its range",
    ),
    "a key tolerance above its range (every generator's setting)": (
        GOOD.replace('armature = "Duck"', 'armature = "Duck", key_tolerance = 0.2'),
        r"shot 'duck': settings\.key_tolerance: 0\.2 is above its range, 0 to 0\.05",
    ),
    "not one of the items": (
        GOOD.replace('armature = "Duck"', 'armature = "Duck", gait = "HOP"'),
        r"shot 'duck': settings\.gait: 'HOP' is not one of PLANTED, ARTICLE",
    ),
    "wrong type": (
        GOOD.replace('path = "Straight"', 'path = "Straight", cadence = "fast"'),
        r"shot 'walk': settings\.cadence: must be a number, got 'fast'",
    ),
    "wrong array length": (
        GOOD.replace('path = "Straight"', 'path = "Straight", delta_x = [0.1, 0.2]'),
        r"shot 'walk': settings\.delta_x: must be an array of 3 numbers",
    ),
    "missing .blend": (
        GOOD.replace('blend = "{duck}"', 'blend = "nowhere/duck.blend"'),
        r"shot 'duck': blend: file not found: .*nowhere/duck\.blend",
    ),
    "missing armature": (
        GOOD.replace('armature = "Human"', 'armature = "Humanoid"'),
        r"shot 'walk': settings\.armature: no object 'Humanoid' in street\.blend \(objects: .*Human",
    ),
    "missing path object": (
        GOOD.replace('path = "Straight"', 'path = "Curvy"'),
        r"shot 'walk': settings\.path: no object 'Curvy' in street\.blend",
    ),
    "a glTF export with another suffix": (
        GOOD.replace('generator = "duck_walk"', 'generator = "duck_walk"\ngltf = "duck.fbx"'),
        r"shot 'duck': gltf: 'duck\.fbx' must end in \.glb or \.gltf",
    ),
    "unknown shot key": (
        GOOD.replace('generator = "duck_walk"', 'generator = "duck_walk"\nsetings = {{ speed = 3.0 }}'),
        r"shot 'duck': setings: unknown key",
    ),
    "no generator": (GOOD.replace('generator = "duck_walk"\n', ""), r"shot 'duck': generator: missing"),
    "bad import file": (
        GOOD.replace('blend = "{duck}"', 'import = {{ file = "walk.bvh" }}'),
        r"shot 'duck': import\.file: file not found: .*walk\.bvh",
    ),
    "bad shot name": (GOOD.replace("[shots.duck]", '[shots."duck one"]'), r"shot 'duck one': the shot name must be"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_a_bad_job_file_is_refused_naming_the_shot_and_key(cli, inputs, tmp_path, capsys, case):
    text, expected = CASES[case]
    status, output = validate(cli, write(tmp_path, text, inputs), capsys)
    assert status == 2, output
    assert "the job file cannot run; nothing was baked" in output
    import re

    assert re.search(expected, output), output
    assert not (tmp_path / "out").exists()


def test_every_problem_is_listed_at_once(cli, inputs, tmp_path, capsys):
    text = GOOD.replace('"duck_walk"', '"moonwalk"').replace('armature = "Human"', 'armature = "Nobody"')
    status, output = validate(cli, write(tmp_path, text, inputs), capsys)
    assert status == 2
    assert "shot 'duck': generator: unknown generator" in output
    assert "shot 'walk': settings.armature: no object 'Nobody'" in output


def test_the_shot_names_for_farm_submit_scripts(cli, inputs, tmp_path, capsys):
    status, output = validate(cli, write(tmp_path, GOOD, inputs), capsys, "--names")
    assert status == 0 and output.strip() == "walk duck"


def test_an_unknown_shot_name_is_refused(cli, inputs, tmp_path, capsys):
    status, output = validate(cli, write(tmp_path, GOOD, inputs), capsys, "--shot", "wlak")
    assert status == 2
    assert "--shot wlak: no such shot (shots: walk, duck)" in output


def test_the_command_stops_before_any_work(run_batch, inputs, tmp_path):
    """``tools/batch.py bake`` on a bad file: exit status 2, the messages, no output, no worker."""
    path = write(tmp_path, GOOD.replace('armature = "Duck"', 'armature = "Duck", amplitude = true'), inputs)
    proc = run_batch("bake", path, "--workers", "2")
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "shot 'duck': settings.amplitude: must be a number, got True" in proc.stderr
    assert not (tmp_path / "out").exists()  # no report, no worker logs, no output


def test_settings_are_normalised_so_the_hash_does_not_depend_on_spelling(cli, inputs, tmp_path):
    """``cadence = 110`` and ``cadence = 110.0`` are the same bake (same content hash)."""
    import importlib

    checks = importlib.import_module("procanim.batch.checks")
    hashing = importlib.import_module("procanim.batch.hashing")
    jobfile = importlib.import_module("procanim.batch.jobfile")
    ids = ("duck_walk", "handshake", "path_walk", "adapt_terrain", "source_motion")
    hashes = []
    for spelling in ("110", "110.0"):
        path = write(tmp_path, GOOD.replace('path = "Straight"', f'path = "Straight", cadence = {spelling}'), inputs)
        job = jobfile.load(path, ids)
        assert job.problems == [] and checks.check_job(job.shots, "jobs.toml") == []
        hashes.append(hashing.shot_hash(job.shots[0], "test"))
    assert hashes[0] == hashes[1]
    path = write(tmp_path, GOOD.replace('path = "Straight"', 'path = "Straight", cadence = 111'), inputs)
    job = jobfile.load(path, ids)
    assert job.problems == [] and checks.check_job(job.shots, "jobs.toml") == []
    assert hashing.shot_hash(job.shots[0], "test") != hashes[0]
