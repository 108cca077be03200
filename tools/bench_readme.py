"""The README's Benchmarks tables, regenerated from the benches' own output (never typed by hand).

    bash tools/bench.sh                     # runs bench/, each bench's output saved in out/bench/
    python3 tools/bench_readme.py           # rewrites the text between the markers (README.md and
                                            # docs/performance.md's "Latest run") from out/bench/
    python3 tools/bench_readme.py --check   # exit 1 and show a diff if a file is not what out/bench/ gives
    python3 tools/bench_readme.py --print [NAME ...]   # print the rendered sections, write nothing

Each bench prints its figures as ``BENCH {json}`` lines (bench/benchlog.py); tools/bench.sh adds a
``run`` record before and after each bench (date, commit, cores, Blender version, exit status) and
samples the load average while it runs (``NAME.load``). A file section
``<!-- bench:NAME -->`` … ``<!-- /bench:NAME -->`` is replaced by ``RENDERERS[NAME](run)``; when
out/bench/ holds no figure for a section, the section is left as it is (and said so). Plain Python
3.11, no numpy, no Blender.
"""

from __future__ import annotations

import argparse
import difflib
import json
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LOGS = ROOT / "out" / "bench"
FILES = ("README.md", "docs/performance.md")
PREFIX = "BENCH "
MARKER = re.compile(r"<!-- bench:([a-z0-9_]+) -->\n(.*?)<!-- /bench:\1 -->", re.S)
ANY_MARKER = re.compile(r"<!-- (/?)bench:([a-z0-9_]+) -->")

# Goals of issues 10, 12 and 14 (what "met" means in the tables)
GOAL_PATH_WALK_RATIO = 20.0  # × Bake Action's time, same rig and frames
GOAL_CROWD_S = 0.3  # s per 1,000 character-frames
GOAL_HANDSHAKE_FPS = 240.0  # operator end to end
GOAL_TERRAIN_FPS = 240.0
GOAL_IK_MS = 0.2  # per arm per frame
GOAL_CONTROL_MS = 1.0  # per frame, end to end
GOAL_POOL_SPEEDUP = 1.8  # local pool of 2 over sequential, 2 cores
GOAL_OVERHEAD_S = 0.3  # per shot beyond the operator
GOAL_LENGTH_EXPONENT = 1.1  # issue 28: path walk time ∝ frames^k, k at most this
GOAL_FIX_FEET_FPS = 500.0  # issue 25: Fix Feet's engine on a 31-bone clip, frames per second


# ----------------------------------------------------------------------------------------- reading


@dataclass
class BenchLog:
    """One bench's saved output: its figures, the run records of tools/bench.sh, its load samples."""

    name: str
    records: list[dict] = field(default_factory=list)
    start: dict = field(default_factory=dict)
    end: dict = field(default_factory=dict)
    loads: list[float] = field(default_factory=list)  # 1-minute load average, one sample every few s


@dataclass
class Run:
    logs: dict[str, BenchLog]

    def rows(self, table: str) -> list[dict]:
        """Every record of ``table``, in the order printed; each knows its bench as ``_bench``."""
        return [r for log in self.logs.values() for r in log.records if r.get("table") == table]

    def row(self, table: str, row: str) -> dict | None:
        found = [r for r in self.rows(table) if r.get("row") == row]
        return found[-1] if found else None

    def log_of(self, record: dict) -> BenchLog:
        return self.logs[record["_bench"]]


def parse_records(text: str) -> list[dict]:
    """The ``BENCH {json}`` lines of a bench's output (anything else is ignored)."""
    out = []
    for line in text.splitlines():
        if line.startswith(PREFIX):
            out.append(json.loads(line[len(PREFIX) :]))
    return out


def parse_loads(text: str) -> list[float]:
    """``epoch load1 load5 load15 running/total`` lines (tools/bench.sh's sampler) → the load1 values."""
    return [float(line.split()[1]) for line in text.splitlines() if len(line.split()) >= 2]


def make_log(name: str, text: str, load_text: str = "") -> BenchLog:
    log = BenchLog(name, loads=parse_loads(load_text))
    for rec in parse_records(text):
        if rec.get("table") == "run":
            setattr(log, "start" if rec.get("row") == "start" else "end", rec)
        else:
            log.records.append({**rec, "_bench": name})
    return log


def read_run(folder: Path = LOGS) -> Run:
    logs = {}
    for path in sorted(folder.glob("*.log")):
        load = path.with_suffix(".load")
        text = path.read_text(encoding="utf-8", errors="replace")
        logs[path.stem] = make_log(path.stem, text, load.read_text() if load.exists() else "")
    return Run(logs)


# ----------------------------------------------------------------------------------------- formatting


def f(x, digits: int = 2) -> str:
    """A number with ``digits`` decimals and thousands separators; None (not measured) as a dash."""
    return "—" if x is None else f"{x:,.{digits}f}"


def span(values: list[float], digits: int = 2) -> str:
    """``lo–hi`` of the values (one value when they are all the same at this precision)."""
    lo, hi = f(min(values), digits), f(max(values), digits)
    return lo if lo == hi else f"{lo}–{hi}"


def verdict(ok: bool) -> str:
    return "met" if ok else "**not met**"


def table(head: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines) + "\n"


def load_span(logs: list[BenchLog]) -> str:
    values = [v for log in logs for v in log.loads]
    return f"{min(values):.1f}–{max(values):.1f}" if values else "not sampled"


def source_note(run: Run, records: list[dict]) -> str:
    """``run 2030-01-02, load 0.9–1.4``: when the bench behind a table ran, and under which load."""
    logs = {r["_bench"]: run.log_of(r) for r in records}
    return "; ".join(f"run {log.start.get('date', '?')[:10]}, load {load_span([log])}" for log in logs.values())


# ----------------------------------------------------------------------------------------- sections


def render_run(run: Run, per_bench: str = "[docs/performance.md](docs/performance.md#latest-run)") -> str:
    """The sentence above the tables: when, what, on which machine, under which load."""
    starts = [log.start for log in run.logs.values() if log.start]
    if not starts:
        return ""
    dates = sorted(s.get("date", "?") for s in starts)
    commits = sorted({s.get("commit", "?") + ("+" if s.get("dirty") else "") for s in starts})
    blender = sorted({s["blender"] for s in starts if s.get("blender")})
    cores = sorted({str(s.get("cores", "?")) for s in starts})
    cpus = sorted({s["cpu"] for s in starts if s.get("cpu")})
    when = dates[0][:16].replace("T", " ") + (" – " + dates[-1][:16].replace("T", " ") if len(dates) > 1 else "")
    return (
        f"Measured {when} UTC by `bash tools/bench.sh` at commit {', '.join(commits)}; Blender "
        f"{', '.join(blender) or '?'} (bpy wheel), {'/'.join(cores)} cores ({'; '.join(cpus) or 'CPU not recorded'}); "
        f"1-minute load average during the run {load_span(list(run.logs.values()))} (a bench itself counts for "
        "about 1; the rest of the team was working on the same machine unless that figure is below 1). Tables "
        f"regenerated from the run's output by `python3 tools/bench_readme.py`; per bench: {per_bench}.\n"
    )


def _speed_path_walk(run: Run) -> list[str] | None:
    r = run.row("path_walk_speed", "metarig")
    if r is None:
        return None
    n = r["frames"]
    reduced = ""
    if "reduced_wall_s" in r:  # the same walk at the default key tolerance, timed beside it
        reduced = (f"; at the default key tolerance (1 mm, the fewest keys): {f(1000 * r['reduced_wall_s'] / n, 2)} "
                   f"ms/frame, {f(r['ratio_reduced_wall'], 1)}× faster than Bake Action")
    return [
        f"path walk on Rigify's human metarig ({r['bones']} bones), {f(n, 0)} frames, operator end to end, "
        "every frame keyed (`key_tolerance=0`, as Bake Action keys)",
        f"{f(1000 * r['procanim_wall_s'] / n, 2)} ms/frame{reduced}",
        f"Bake Action (`nla.bake`, visual keying) of the same rig with IK legs and arms: "
        f"{f(1000 * r['peer_wall_s'] / n, 2)} ms/frame",
        f"**{f(r['ratio_wall'], 1)}×** faster (CPU: {f(r['ratio_cpu'], 1)}×)",
        f"≥ {GOAL_PATH_WALK_RATIO:g}×",
        verdict(r["ratio_wall"] >= GOAL_PATH_WALK_RATIO),
    ]


def _speed_path_walk_length(run: Run) -> list[str] | None:
    """Issue 28's row: the path walk engine's time against the walk's length."""
    walks = [r for r in run.rows("path_walk_length") if r["row"].startswith("this tree: ") and "frames" in r]
    growth = run.row("path_walk_length", "this tree: growth")
    if not walks or growth is None:
        return None
    short, long = walks[0], walks[-1]
    return [
        f"path walk engine, straight walks of {', '.join(f(r['frames'], 0) for r in walks)} frames "
        "(time against length)",
        f"{f(long['frames'], 0)} frames in {f(long['cpu_s'], 2)} s CPU, peak {f(long['peak_mb'], 0)} MB",
        f"{f(short['frames'], 0)} frames in {f(short['cpu_s'], 3)} s CPU",
        f"time ∝ frames^{f(growth['exponent_cpu'], 2)}",
        f"≤ frames^{GOAL_LENGTH_EXPONENT:g}",
        verdict(growth["exponent_cpu"] <= GOAL_LENGTH_EXPONENT),
    ]


def _speed_crowd(run: Run) -> list[str] | None:
    """The crowd row: judged on ``procanim.crowd_walk`` (one call) when the run has it, with one
    ``procanim.path_walk`` call per character beside it."""
    single = run.row("crowd", "humans")
    one_call = run.row("crowd", "crowd operator")
    r = one_call or single
    if r is None:
        return None
    how = "one `procanim.crowd_walk` call" if one_call else "one `procanim.path_walk` call per character"
    beside = f"the engine alone, same inputs: {f(r['engine_per_1000_wall_s'], 3)} s"
    if one_call and single:
        beside = f"one `procanim.path_walk` call per character: {f(single['per_1000_wall_s'], 3)} s; " + beside
    reduced = run.row("crowd", "crowd operator, 1 mm")
    if reduced is not None:
        beside += f"; `crowd_walk` at the default key tolerance (1 mm): {f(reduced['per_1000_wall_s'], 3)} s"
    return [
        f"crowd: {r['characters']} ProcAnim humans on parallel curves, {f(r['character_frames'], 0)} "
        f"character-frames, one process, {how}, every frame keyed",
        f"{f(r['per_1000_wall_s'], 3)} s per 1,000 character-frames (CPU {f(r['per_1000_cpu_s'], 3)})",
        beside,
        "",
        f"≤ {GOAL_CROWD_S:g} s",
        verdict(r["per_1000_wall_s"] <= GOAL_CROWD_S),
    ]


def _speed_handshake(run: Run) -> list[list[str]]:
    rows = [r for r in run.rows("handshake") if r["row"] != "Blender IK"]
    default = [r for r in rows if r.get("default")]
    if not default:
        return []
    d, others = default[-1], [r for r in rows if not r.get("default")]
    blender = d["blender_ik_ms"]
    out = [[
        f"handshake, operator end to end, {d['row']} (default)",
        f"{f(d['fps'], 0)} frames/s (CPU)",
        f"other solver pairs: {span([r['fps'] for r in others], 0)} frames/s"
        if others else "—",
        "",
        f"≥ {GOAL_HANDSHAKE_FPS:g} frames/s",
        verdict(d["fps"] >= GOAL_HANDSHAKE_FPS),
    ]]
    ms = max(d["ms_initiator"], d["ms_partner"])
    out.append([
        f"IK per arm per frame, {d['row'].split(' + ')[0]} (default; the slower arm)",
        f"{f(ms, 3)} ms",
        f"Blender's IK constraint on the same grip path: {f(blender, 3)} ms",
        f"{f(ms / blender, 1)}× Blender's time",
        f"≤ {GOAL_IK_MS:g} ms",
        verdict(ms <= GOAL_IK_MS),
    ])
    if others:
        per = [r[k] for r in others for k in ("ms_initiator", "ms_partner")]
        names = sorted({s for r in others for s in r["row"].split(" + ")})
        out.append([
            f"IK per arm per frame, the other solvers ({', '.join(names)})",
            f"{span(per, 2)} ms",
            f"Blender's IK: {f(blender, 3)} ms",
            f"{span([p / blender for p in per], 1)}×",
            f"≤ {GOAL_IK_MS:g} ms",
            verdict(max(per) <= GOAL_IK_MS),
        ])
    return out


def _speed_terrain(run: Run) -> list[str] | None:
    rows = run.rows("terrain_speed")
    if not rows:
        return None
    slow = min(rows, key=lambda r: r["fps"])
    return [
        f"terrain adaptation of a walk over blocks, operator end to end ({len(rows)} walks; the slowest: "
        f"{slow['row']}, {slow['frames']} frames)",
        f"{f(slow['fps'], 0)} frames/s (CPU; the others {', '.join(f(r['fps'], 0) for r in rows if r is not slow)})",
        f"Bake Action of the same frames: {f(slow['peer_fps'], 0)} frames/s",
        f"{f(slow['ratio'], 1)}× Bake Action's time",
        f"≥ {GOAL_TERRAIN_FPS:g} frames/s",
        verdict(slow["fps"] >= GOAL_TERRAIN_FPS),
    ]


def _speed_control_rig(run: Run) -> list[str] | None:
    rows = run.rows("control_rig")
    if not rows:
        return None
    r = rows[-1]
    n = r["frames"]
    ms = r["procanim_ms"] / n
    return [
        f"path walk baked onto a generated Rigify human's controls ({r['row']}, {r['controls']} controls), "
        f"{f(n, 0)} frames, end to end",
        f"{f(ms, 2)} ms/frame",
        f"Bake Action of the same controls: {f(r['peer_ms'] / n, 2)} ms/frame",
        f"{f(r['ratio_end_to_end'], 1)}× faster",
        f"≤ {GOAL_CONTROL_MS:g} ms/frame",
        verdict(ms <= GOAL_CONTROL_MS),
    ]


def _speed_bake(run: Run) -> list[str] | None:
    r = run.row("bake_speed", "1000 frames")
    if r is None or r.get("ratio") is None:
        return None
    return [
        "the baker (`foreach_set`), duck walk, 1,000 keys per channel",
        f"{f(r['bake_s'], 3)} s",
        f"the same keys with `keyframe_insert`: {f(r['keyframe_insert_s'], 2)} s",
        f"{f(r['ratio'], 0)}× faster",
        "—",
        "",
    ]


def _speed_batch(run: Run) -> list[list[str]]:
    pool, dask = run.row("batch", "local pool"), run.row("batch", "Dask")
    if pool is None:
        return []
    load = pool["load_before"][0]
    quiet = "" if load < 1.0 else f" (load {load:.1f} before the run: not idle, the speed-up cannot show)"
    return [
        [
            f"batch: {pool['shots']} path-walk shots, local pool of {pool['workers']} vs sequential, "
            f"{pool['cores']} cores",
            f"{f(pool['speedup_baking'], 2)}× sequential's throughput{quiet}",
            f"{dask['workers']} Dask workers: {f(dask['speedup_baking'], 2)}×" if dask else "—",
            "",
            f"≥ {GOAL_POOL_SPEEDUP:g}×",
            verdict(pool["speedup_baking"] >= GOAL_POOL_SPEEDUP),
        ],
        [
            "batch: per-shot overhead beyond the operator (open, save the .blend and the metrics)",
            f"{f(pool['inside'], 2)} s in a pool worker (end to end {f(pool['end_to_end'], 2)} s)",
            f"Dask worker: {f(dask['inside'], 2)} s (end to end {f(dask['end_to_end'], 2)} s)" if dask else "—",
            "",
            f"< {GOAL_OVERHEAD_S:g} s",
            verdict(pool["inside"] < GOAL_OVERHEAD_S),
        ],
    ]


def _speed_fix_feet(run: Run) -> list[str] | None:
    """Issue 25's row: Fix Feet's engine on the 31-bone clip, the 22-bone one beside it."""
    rows = run.rows("fix_feet_engine")
    wide = [r for r in rows if r["bones"] >= 31]
    if not wide:
        return None
    r, others = wide[-1], [o for o in rows if o["bones"] < 31]
    return [
        f"Fix Feet engine, a skated walk on {r['row']}, {f(r['frames'], 0)} frames (best of 3)",
        f"{f(r['fps_wall'], 0)} frames/s (CPU {f(r['fps_cpu'], 0)})",
        f"{others[-1]['row']}: {f(others[-1]['fps_wall'], 0)} frames/s" if others else "—",
        "",
        f"≥ {GOAL_FIX_FEET_FPS:g} frames/s",
        verdict(r["fps_wall"] >= GOAL_FIX_FEET_FPS),
    ]


def render_speed(run: Run) -> str:
    """Issue 12's table: each row ProcAnim beside its peer in the same run, the ratio, the goal."""
    rows: list[list[str]] = []
    for one in (_speed_path_walk, _speed_path_walk_length, _speed_crowd):
        row = one(run)
        if row:
            rows.append(row)
    rows += _speed_handshake(run)
    for one in (_speed_terrain, _speed_control_rig, _speed_fix_feet, _speed_bake):
        row = one(run)
        if row:
            rows.append(row)
    rows += _speed_batch(run)
    if not rows:
        return ""
    head = ["work", "ProcAnim", "peer, same run", "ratio", "goal", ""]
    return (
        "**Speed** (issues 10, 12, 14, 25; wall time unless marked CPU — CPU time where the bench measures it so, "
        "because the machine is shared):\n\n" + table(head, rows)
    )


def render_bake_speed(run: Run) -> str:
    rows = run.rows("bake_speed")
    if not rows:
        return ""
    body = []
    for r in rows:
        ins = r.get("keyframe_insert_s")
        body.append([
            f(r["frames"], 0),
            f"{f(r['generate_s'], 3)} s",
            f"{f(r['bake_s'], 3)} s",
            f"{f(ins, 1)} s" if ins is not None else "(minutes; `--insert-10k`)",
            f"{f(r['ratio'], 0)}×" if r.get("ratio") is not None else "",
        ])
    head = ["frames", "generate (engine)", "bake (`foreach_set`)", "same keys with `keyframe_insert`", "ratio"]
    return (
        f"**Bake speed** (`bench/bake_speed.py`; duck walk, a key on every frame; {source_note(run, rows)}):\n\n"
        + table(head, body)
    )


def render_handshake(run: Run) -> str:
    rows = [r for r in run.rows("handshake") if r["row"] != "Blender IK"]
    blender = run.row("handshake", "Blender IK")
    if not rows or blender is None:
        return ""
    body = []
    for r in rows:
        paper = r.get("paper_both_mean_cm")
        body.append([
            r["row"] + (" (default)" if r.get("default") else ""),
            f"{f(r['both_mean_cm'], 4)} / {f(r['both_std_cm'], 4)} / {f(r['both_max_cm'], 4)}",
            f"{f(paper, 2)} / {f(r['paper_both_std_cm'], 2)}" if paper is not None else "—",
            f"{f(r['ms_initiator'], 2)} / {f(r['ms_partner'], 2)}",
            f"{f(r['ratio_initiator'], 1)} / {f(r['ratio_partner'], 1)}",
            f(r["fps"], 0),
        ])
    body.append([
        "Blender's IK constraint, same grip path",
        f"{f(blender['ta_mean_cm'], 4)} / {f(blender['ta_std_cm'], 4)} / {f(blender['ta_max_cm'], 4)} (one hand)",
        "",
        f(blender["ms_initiator"], 2),
        "1",
        "",
    ])
    better = [r["row"] for r in rows if r["both_max_cm"] < blender["ta_max_cm"]]
    worse = [r["row"] for r in rows if r["both_max_cm"] >= blender["ta_max_cm"]]
    head = ["configuration", "both hands mean / std / max", "paper (mean / std)", "ms per frame (each hand)",
            "× Blender's IK", "operator frames/s (CPU)"]
    text = (
        "**Handshake, the paper's Table 3** (`bench/handshake_blender.py`; shake phase, cm; two 1.75 m humans 0.9 m "
        "apart; grip point as defined in [docs/handshake.md](docs/handshake.md); measured on the evaluated pose; "
        f"{source_note(run, rows)}):\n\n" + table(head, body)
    )
    text += f"\nWorst grip-to-grip error below Blender's own IK's worst grip error ({f(blender['ta_max_cm'], 4)} cm): "
    text += ", ".join(better) or "none"
    text += (f"; above it: {', '.join(worse)}" if worse else "") + ".\n"
    return text


def render_path_walk_follow(run: Run) -> str:
    rows = run.rows("path_walk_follow")
    if not rows:
        return ""
    body = [
        [
            r["row"],
            f(r["seconds"], 2),
            f(r["fps"], 0),
            f"{f(r['skate_mean'], 2)} / {f(r['skate_p95'], 2)}",
            f(r["penetration"], 2),
            f(r["deviation"], 2),
        ]
        for r in rows
    ]
    head = ["method", "bake s", "frames/s", "skate mean / p95 cm/s", "penetration cm", "pelvis off path cm"]
    return (
        f"**Path walk** (`bench/path_walk_blender.py`; a {f(rows[0]['length_m'], 0)} m S-curve, "
        f"{f(rows[0]['frames'], 0)} frames; skate of sole points in contact; bake s: the operator end to end for "
        f"ProcAnim, `nla.bake` alone for the others; {source_note(run, rows)}):\n\n" + table(head, body)
    )


def render_terrain_table2(run: Run) -> str:
    rows = {(r["kind"], r["level"]): r for r in run.rows("terrain_table2")}
    if not rows:
        return ""
    levels = ("ankle", "knee", "waist")
    kinds = [k for k in ("walk", "jump", "tumble") if any((k, lv) in rows for lv in levels)]
    body = []
    for kind in kinds:
        cells = [kind]
        for lv in levels:
            r = rows.get((kind, lv))
            if r is None:
                cells.append("—")
                continue
            refused = " (refused by default: beyond a step)" if r.get("refused") else ""
            cells.append(f"{r['collisions']} / {f(r['length_err_pct'], 5)} %{refused}")
        paper = [rows.get((kind, lv)) for lv in reversed(levels)]
        cells.append(", ".join(f"{p['paper_collisions']} / {p['paper_length_err_pct']:g} %" for p in paper if p))
        body.append(cells)
    head = ["motion", "ankle: collisions / length err", "knee", "waist", "paper (waist / knee / ankle)"]
    return (
        "**Terrain adaptation, the paper's Table 2** (`bench/terrain_blender.py`; collisions = frames with a limb "
        "under the surface on the evaluated pose; bone-length error in %; "
        f"{source_note(run, list(rows.values()))}) — full table with speeds in [docs/terrain.md](docs/terrain.md):\n\n"
        + table(head, body)
    )


def render_batch(run: Run) -> str:
    rows = run.rows("batch")
    if not rows:
        return ""
    body = [
        [
            r["row"] + (f" ({r['workers']})" if r["workers"] else ""),
            f(r["wall"], 1),
            f(r["ready"], 1),
            f(r["baking"], 1),
            f(r["speedup_baking"], 2),
            f(r["bake"], 3),
            f(r["inside"], 3),
            f(r["end_to_end"], 3),
        ]
        for r in rows
    ]
    before, after = rows[0]["load_before"][0], rows[0]["load_after"][0]
    head = ["mode", "wall s", "workers ready s", "baking s", "× sequential (baking)", "operator s/shot",
            "overhead in the worker s/shot", "overhead end to end s/shot"]
    return (
        f"**Batch** (`bench/batch_blender.py`; {rows[0]['shots']} path-walk shots, {rows[0]['cores']} cores; 1-minute "
        f"load average {before:.2f} before, {after:.2f} after; {source_note(run, rows)}):\n\n" + table(head, body)
    )


def _headline(run: Run, log: BenchLog) -> str:
    """One line of figures per bench for the Latest run table."""
    lines = []
    for r in log.records:
        t = r["table"]
        if t == "path_walk_speed":
            lines.append(f"metarig {r['frames']} frames: Bake Action / ProcAnim {f(r['ratio_wall'], 1)}× wall, "
                         f"{f(r['ratio_cpu'], 1)}× CPU")
        elif t == "crowd":
            how = "crowd_walk" if r["row"] == "crowd operator" else "path_walk per character"
            lines.append(f"{how}: {f(r['per_1000_wall_s'], 3)} s wall, {f(r['per_1000_cpu_s'], 3)} s CPU per "
                         "1,000 character-frames")
        elif t == "handshake" and r["row"] != "Blender IK":
            lines.append(f"{r['row']} {f(r['ms_initiator'], 2)} ms, {f(r['fps'], 0)} fr/s")
        elif t == "handshake":
            lines.append(f"Blender's IK {f(r['ms_initiator'], 3)} ms")
        elif t == "terrain_speed":
            lines.append(f"{r['row']} {f(r['fps'], 0)} fr/s")
        elif t == "terrain_table2":
            lines.append(f"{r['row']} {r['collisions']}")
        elif t == "control_rig":
            lines.append(f"{f(r['procanim_ms'] / r['frames'], 2)} ms/frame, {f(r['ratio_end_to_end'], 1)}× Bake Action")
        elif t == "bake_speed" and r.get("ratio") is not None:
            lines.append(f"{r['row']}: {f(r['ratio'], 0)}× keyframe_insert")
        elif t == "path_walk_follow":
            lines.append(f"{r['row']}: skate {f(r['skate_mean'], 2)} cm/s")
        elif t == "batch":
            lines.append(f"{r['row']} {f(r['speedup_baking'], 2)}×")
        elif t == "path_walk_length" and r["row"].startswith("this tree: ") and "frames" in r:
            lines.append(f"{f(r['frames'], 0)} frames {f(r['cpu_s'], 2)} s CPU, peak {f(r['peak_mb'], 0)} MB")
        elif t == "path_walk_length" and r["row"] == "this tree: growth":
            lines.append(f"time ∝ frames^{f(r['exponent_cpu'], 2)}")
    if log.name == "terrain_table2" and lines:
        return "collisions: " + "; ".join(lines)
    return "; ".join(lines) or "(its own tables; see the log)"


def render_latest(run: Run) -> str:
    """docs/performance.md's Latest run: every bench of the run, when, how long, under which load."""
    if not run.logs:
        return ""
    body = []
    for log in sorted(run.logs.values(), key=lambda log: log.start.get("date", "")):
        secs = log.end.get("seconds")
        loads = log.loads
        load = f"{loads[0]:.1f} / {sum(loads) / len(loads):.1f} / {max(loads):.1f}" if loads else "—"
        status = log.end.get("status")
        body.append([
            f"`{log.start.get('command', log.name)}`",
            log.start.get("date", "?")[:16].replace("T", " "),
            f(secs / 60, 1) if secs is not None else "—",
            load,
            "ok" if status == 0 else f"**exit {status}**",
            _headline(run, log),
        ])
    head = ["bench", "started (UTC)", "minutes", "load average: start / mean / max", "", "figures"]
    return (
        render_run(run, per_bench="below")
        + "\n"
        + table(head, body)
        + "\nThe README's Benchmarks tables (goals met or not) are rendered from the same logs (out/bench/).\n"
    )


RENDERERS: dict[str, Callable[[Run], str]] = {
    "run": render_run,
    "speed": render_speed,
    "bake_speed": render_bake_speed,
    "handshake": render_handshake,
    "path_walk_follow": render_path_walk_follow,
    "terrain_table2": render_terrain_table2,
    "batch": render_batch,
    "latest": render_latest,
}


# ----------------------------------------------------------------------------------------- files


def markers(text: str) -> list[str]:
    """The section names in ``text``; ValueError if an opening and its closing do not pair up."""
    names, stack = [], []
    for m in ANY_MARKER.finditer(text):
        closing, name = m.group(1) == "/", m.group(2)
        if not closing:
            if stack:
                raise ValueError(f"bench:{name} opens inside bench:{stack[-1]}")
            stack.append(name)
            names.append(name)
        elif not stack or stack.pop() != name:
            raise ValueError(f"/bench:{name} closes nothing")
    if stack:
        raise ValueError(f"bench:{stack[-1]} is never closed")
    return names


def replace_sections(text: str, run: Run, skipped: list[str] | None = None) -> str:
    """``text`` with every marked section rendered from ``run`` (a section with no figures is kept)."""
    markers(text)

    def one(m: re.Match) -> str:
        name = m.group(1)
        if name not in RENDERERS:
            raise KeyError(f"no renderer for <!-- bench:{name} -->")
        body = RENDERERS[name](run)
        if not body:
            if skipped is not None:
                skipped.append(name)
            return m.group(0)
        return f"<!-- bench:{name} -->\n{body}<!-- /bench:{name} -->"

    return MARKER.sub(one, text)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--logs", type=Path, default=LOGS, help="where tools/bench.sh saved the output")
    ap.add_argument("--check", action="store_true", help="write nothing; exit 1 if a file would change")
    ap.add_argument("--print", nargs="*", metavar="NAME", dest="show", help="print these sections (all if none)")
    args = ap.parse_args(argv)
    run = read_run(args.logs)
    if not run.logs:
        print(f"no bench output in {args.logs}: run `bash tools/bench.sh` first", file=sys.stderr)
        return 1
    if args.show is not None:
        for name in args.show or RENDERERS:
            print(f"<!-- bench:{name} -->\n{RENDERERS[name](run)}<!-- /bench:{name} -->\n")
        return 0
    changed = False
    for rel in FILES:
        path = ROOT / rel
        old = path.read_text(encoding="utf-8")
        skipped: list[str] = []
        new = replace_sections(old, run, skipped)
        for name in skipped:
            print(f"{rel}: bench:{name} kept as it was (no figures for it in {args.logs})")
        if new == old:
            continue
        changed = True
        if args.check:
            sys.stdout.writelines(difflib.unified_diff(old.splitlines(True), new.splitlines(True), rel, rel))
        else:
            path.write_text(new, encoding="utf-8")
            print(f"{rel}: rewritten from {args.logs}")
    return 1 if args.check and changed else 0


if __name__ == "__main__":
    sys.exit(main())
