"""What the batch command shows and writes: a progress bar, a final table, a JSON report.

The progress bar is tqdm's when tqdm is importable (the pipeline runner's environment) and the
terminal is interactive; otherwise one line per finished shot. The JSON report lists every shot of
the run — ``done``, ``skipped`` (outputs already made from the same content hash) or ``failed``
with the reason — and the totals; it is written atomically like the shots' own files.
"""

from __future__ import annotations

import sys
import time
from datetime import UTC, datetime
from pathlib import Path

from .outputs import write_json

try:  # the pipeline runner's environment has tqdm; Blender's own Python need not (never shipped)
    from tqdm import tqdm  # type: ignore[import-untyped, import-not-found, unused-ignore]
except ImportError:
    tqdm = None

STATUSES = ("done", "skipped", "failed")


class Progress:
    """Shots done/failed and ETA, while the batch runs."""

    def __init__(self, total: int, quiet: bool = False):
        self.done = self.failed = 0
        self.total = total
        self.quiet = quiet
        self.t0 = time.perf_counter()
        self.bar = None
        if not quiet and total and sys.stderr.isatty() and tqdm is not None:
            self.bar = tqdm(total=total, unit="shot", desc="baking", dynamic_ncols=True)

    def update(self, name: str, result: dict) -> None:
        if result["status"] == "done":
            self.done += 1
        else:
            self.failed += 1
        line = f"{name}: {result['status']}"
        if result["status"] != "done":
            line += f" — {result.get('message', '')}"
        if self.bar is not None:
            self.bar.set_postfix(done=self.done, failed=self.failed, refresh=False)
            self.bar.update(1)
            if result["status"] != "done":
                self.bar.write(line, file=sys.stderr)
        elif not self.quiet:
            n = self.done + self.failed
            elapsed = time.perf_counter() - self.t0
            eta = elapsed / n * (self.total - n)
            print(f"[{n}/{self.total}] {line} ({elapsed:.1f} s, ETA {eta:.0f} s)", file=sys.stderr, flush=True)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def table(rows: list[dict]) -> str:
    """The final table: one row per shot (status, seconds, armatures, why it failed)."""
    head = ("shot", "generator", "status", "seconds", "armatures / message")
    cells = []
    for r in rows:
        seconds = r.get("seconds", {}).get("total")
        detail = ", ".join(r.get("armatures", [])) if r["status"] != "failed" else r.get("message", "")
        cells.append((r["shot"], r["generator"], r["status"], f"{seconds:.2f}" if seconds else "", detail))
    widths = [max(len(head[i]), *(len(c[i]) for c in cells)) if cells else len(head[i]) for i in range(4)]
    lines = ["  ".join(h.ljust(w) for h, w in zip(head, widths)) + "  " + head[4]]
    for c in cells:
        lines.append("  ".join(v.ljust(w) for v, w in zip(c, widths)) + "  " + c[4])
    counts = {s: sum(1 for r in rows if r["status"] == s) for s in STATUSES}
    lines.append(", ".join(f"{counts[s]} {s}" for s in STATUSES))
    return "\n".join(lines)


def summary(rows: list[dict]) -> dict:
    return {"total": len(rows), **{s: sum(1 for r in rows if r["status"] == s) for s in STATUSES}}


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def write_report(path: Path, header: dict, rows: list[dict]) -> None:
    write_json(path, {**header, "finished": now(), "summary": summary(rows), "shots": rows})
