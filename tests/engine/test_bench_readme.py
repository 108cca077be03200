"""tools/bench_readme.py: the README's Benchmarks tables rendered from the benches' BENCH records.

The figures themselves are not tested (no timed asserts): only that a known set of records becomes
the expected table, that the goals are judged the right way round, that text outside the markers is
left alone, and that every marker in the README and docs/performance.md has a renderer and every
table a bench emits is read by one.
"""

from __future__ import annotations

import importlib.util
import json
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("bench_readme", ROOT / "tools" / "bench_readme.py")
br = importlib.util.module_from_spec(_spec)
sys.modules["bench_readme"] = br  # dataclasses look their module up while the class is made
_spec.loader.exec_module(br)

START = (
    'BENCH {"table": "run", "row": "start", "bench": "%s", "command": "bench/%s.py", "date": "2030-01-02T03:04:05Z", '
    '"commit": "abc1234", "dirty": false, "cores": 2, "cpu": "Test CPU", "blender": "5.0.1", "load": "0.1 0.2 0.3"}'
)
END = 'BENCH {"table": "run", "row": "end", "bench": "%s", "status": 0, "seconds": 90}'
LOADS = "1900000000 0.50 0.40 0.30 1/200\n1900000005 1.30 0.50 0.30 2/201\n"


def log(name: str, *lines: str, loads: str = LOADS) -> br.BenchLog:
    text = "\n".join([START % (name, name), "some table the bench prints for people", *lines, END % name])
    return br.make_log(name, text, loads)


BAKE = log(
    "bake_speed",
    'BENCH {"table": "bake_speed", "row": "1000 frames", "frames": 1000, "generate_s": 0.14, "bake_s": 0.25, '
    '"keyframe_insert_s": 5.0, "ratio": 20.0}',
    'BENCH {"table": "bake_speed", "row": "10000 frames", "frames": 10000, "generate_s": 1.5, "bake_s": 2.0, '
    '"keyframe_insert_s": null, "ratio": null}',
)


def path_walk(ratio_wall: float, reduced: str = "") -> br.BenchLog:
    return log(
        "path_walk",
        'BENCH {"table": "path_walk_speed", "row": "metarig", "frames": 1000, "bones": 159, "procanim_wall_s": 1.0, '
        f'"procanim_cpu_s": 0.5, "peer_wall_s": {ratio_wall}, "peer_cpu_s": 12.0, "ratio_wall": {ratio_wall}, '
        f'"ratio_cpu": 24.0, {reduced}"parts_wall_s": {{}}}}',
    )


def test_records_are_read_from_bench_lines_only():
    assert [r["row"] for r in BAKE.records] == ["1000 frames", "10000 frames"]
    assert BAKE.start["commit"] == "abc1234" and BAKE.end["status"] == 0
    assert BAKE.loads == [0.5, 1.3]
    assert all(r["_bench"] == "bake_speed" for r in BAKE.records)


def test_bake_speed_table():
    run = br.Run({"bake_speed": BAKE})
    assert br.render_bake_speed(run) == (
        "**Bake speed** (`bench/bake_speed.py`; duck walk, a key on every frame; run 2030-01-02, load 0.5–1.3):\n"
        "\n"
        "| frames | generate (engine) | bake (`foreach_set`) | same keys with `keyframe_insert` | ratio |\n"
        "|---|---|---|---|---|\n"
        "| 1,000 | 0.140 s | 0.250 s | 5.0 s | 20× |\n"
        "| 10,000 | 1.500 s | 2.000 s | (minutes; `--insert-10k`) |  |\n"
    )


def test_speed_row_of_the_path_walk_and_its_goal():
    met = br.render_speed(br.Run({"path_walk": path_walk(25.0)}))
    assert (
        "| path walk on Rigify's human metarig (159 bones), 1,000 frames, operator end to end, every frame keyed "
        "(`key_tolerance=0`, as Bake Action keys) | 1.00 ms/frame | "
        "Bake Action (`nla.bake`, visual keying) of the same rig with IK legs and arms: 25.00 ms/frame | "
        "**25.0×** faster (CPU: 24.0×) | ≥ 20× | met |"
    ) in met.splitlines()
    missed = br.render_speed(br.Run({"path_walk": path_walk(15.0)}))
    assert missed.splitlines()[-1].endswith("| ≥ 20× | **not met** |")
    # the default key tolerance timed beside: shown, and the goal still judged on the dense bake
    reduced = '"reduced_wall_s": 2.5, "ratio_reduced_wall": 10.0, '
    beside = br.render_speed(br.Run({"path_walk": path_walk(25.0, reduced)}))
    row = [line for line in beside.splitlines() if "metarig" in line][0]
    assert "at the default key tolerance (1 mm, the fewest keys): 2.50 ms/frame, 10.0× faster than Bake Action" in row
    assert row.endswith("| **25.0×** faster (CPU: 24.0×) | ≥ 20× | met |")


def test_speed_rows_judge_each_goal_the_right_way_round():
    crowd = log(
        "crowd",
        'BENCH {"table": "crowd", "row": "humans", "characters": 100, "bones": 22, "character_frames": 100000, '
        '"operators_wall_s": 25.0, "operators_cpu_s": 24.0, "engine_wall_s": 12.0, "engine_cpu_s": 11.0, '
        '"per_1000_wall_s": 0.25, "per_1000_cpu_s": 0.24, "engine_per_1000_wall_s": 0.12, '
        '"engine_per_1000_cpu_s": 0.11}',
    )
    hs = log(
        "handshake",
        'BENCH {"table": "handshake", "row": "CCD + CCD", "ms_initiator": 0.9, "ms_partner": 1.1, '
        '"blender_ik_ms": 0.25, "fps": 300.0, "default": false}',
        'BENCH {"table": "handshake", "row": "DLS + DLS", "ms_initiator": 0.15, "ms_partner": 0.3, '
        '"blender_ik_ms": 0.25, "fps": 200.0, "default": true}',
    )
    rows = br.render_speed(br.Run({"crowd": crowd, "handshake": hs})).splitlines()[4:]
    both = log(
        "crowd",
        'BENCH ' + json.dumps({**crowd.records[0], "per_1000_wall_s": 0.35}),
        'BENCH ' + json.dumps({**crowd.records[0], "row": "crowd operator", "per_1000_wall_s": 0.28}),
    )
    # with both rows the goal is judged on the one-call crowd operator, the per-character calls beside it
    crowd_row = br.render_speed(br.Run({"crowd": both})).splitlines()[4]
    assert "one `procanim.crowd_walk` call" in crowd_row and "0.280 s per 1,000" in crowd_row
    assert "per character: 0.350 s" in crowd_row and crowd_row.rstrip().endswith("| met |")
    verdicts = [row.rsplit("|", 2)[1].strip() for row in rows]
    # crowd 0.25 <= 0.3 s: met; handshake 200 < 240 frames/s: not; DLS's slower arm 0.3 > 0.2 ms: not;
    # CCD 1.1 ms > 0.2: not
    assert verdicts == ["met", "**not met**", "**not met**", "**not met**"]
    assert "0.30 ms" not in rows[2] and "| 0.300 ms |" in rows[2] and "1.2× Blender's time" in rows[2]
    assert "| 0.90–1.10 ms |" in rows[3] and "3.6–4.4×" in rows[3]


def test_the_fix_feet_row_is_judged_on_the_31_bone_clip():
    def fix_feet(wall: float) -> br.BenchLog:
        return log(
            "fix_feet_engine",
            'BENCH {"table": "fix_feet_engine", "row": "CMU BVH, 31 bones", "frames": 1046, "bones": 31, '
            f'"fps_wall": {wall}, "fps_cpu": 2000.0, "contacts": 160}}',
            'BENCH {"table": "fix_feet_engine", "row": "ProcAnim human, 22 bones", "frames": 1046, "bones": 22, '
            '"fps_wall": 300.0, "fps_cpu": 2500.0, "contacts": 160}',
        )

    met = br.render_speed(br.Run({"fix_feet_engine": fix_feet(640.0)})).splitlines()[4]
    assert met.startswith("| Fix Feet engine, a skated walk on CMU BVH, 31 bones, 1,046 frames")
    assert "| 640 frames/s (CPU 2,000) | ProcAnim human, 22 bones: 300 frames/s |" in met
    assert met.rstrip().endswith("| ≥ 500 frames/s | met |")
    slow = br.render_speed(br.Run({"fix_feet_engine": fix_feet(450.0)})).splitlines()[4]
    assert slow.rstrip().endswith("| **not met** |")


def test_terrain_table2_places_cells_and_refusals():
    lines = []
    for kind, level, coll, refused, paper in (
        ("walk", "ankle", 0, "", (0, 2.3)),
        ("walk", "knee", 1, "", (2, 3.9)),
        ("walk", "waist", 11, "The terrain 'Zigzag' rises 0.52 m", (5, 4.6)),
    ):
        lines.append(
            f'BENCH {{"table": "terrain_table2", "row": "{kind}, {level}", "kind": "{kind}", "level": "{level}", '
            f'"collisions": {coll}, "length_err_pct": 0.00012, "refused": "{refused}", "paper_collisions": '
            f'{paper[0]}, "paper_length_err_pct": {paper[1]}}}'
        )
    table = br.render_terrain_table2(br.Run({"terrain_table2": log("terrain_table2", *lines)}))
    assert table.splitlines()[-1] == (
        "| walk | 0 / 0.00012 % | 1 / 0.00012 % | 11 / 0.00012 % (refused by default: beyond a step) | "
        "5 / 4.6 %, 2 / 3.9 %, 0 / 2.3 % |"
    )


def test_sections_are_replaced_between_markers_only():
    text = (
        "intro\n<!-- bench:bake_speed -->\nold table\n<!-- /bench:bake_speed -->\nmiddle\n"
        "<!-- bench:batch -->\nold batch\n<!-- /bench:batch -->\nend\n"
    )
    skipped: list[str] = []
    new = br.replace_sections(text, br.Run({"bake_speed": BAKE}), skipped)
    assert new.startswith("intro\n<!-- bench:bake_speed -->\n**Bake speed**")
    assert "old table" not in new and "| 10,000 | 1.500 s |" in new
    assert new.endswith("middle\n<!-- bench:batch -->\nold batch\n<!-- /bench:batch -->\nend\n")  # no figures: kept
    assert skipped == ["batch"]
    with pytest.raises(KeyError):
        br.replace_sections("<!-- bench:nosuch -->\nx\n<!-- /bench:nosuch -->\n", br.Run({}))
    with pytest.raises(ValueError):
        br.markers("<!-- bench:speed -->\nnever closed\n")


@pytest.mark.parametrize("rel", br.FILES)
def test_every_marker_in_the_docs_has_a_renderer(rel):
    names = br.markers((ROOT / rel).read_text(encoding="utf-8"))
    assert names, f"{rel} has no bench section"
    assert set(names) <= set(br.RENDERERS), set(names) - set(br.RENDERERS)
    assert len(names) == len(set(names))


def test_the_readme_shows_issue_12s_table_and_every_table_of_its_benchmarks_section():
    names = set(br.markers((ROOT / "README.md").read_text(encoding="utf-8")))
    assert {"run", "speed", "bake_speed", "handshake", "path_walk_follow", "terrain_table2", "batch"} <= names


def test_every_table_a_bench_emits_is_rendered_and_every_such_bench_is_run_by_bench_sh():
    source = (ROOT / "tools" / "bench_readme.py").read_text(encoding="utf-8")
    bench_sh = (ROOT / "tools" / "bench.sh").read_text(encoding="utf-8")
    emitting = 0
    for path in sorted((ROOT / "bench").glob("*.py")):
        tables = set(re.findall(r'\bemit\(\s*"([a-z0-9_]+)"', path.read_text(encoding="utf-8")))
        for t in tables:
            assert f'"{t}"' in source, f"{path.name} emits table {t!r}, which no renderer reads"
        if tables:
            emitting += 1
            assert f"bench/{path.name}" in bench_sh, f"tools/bench.sh does not run {path.name}"
    assert emitting >= 7
