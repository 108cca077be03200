"""Machine-readable figures of the benches, one line each, beside their human-readable output.

A bench calls ``emit("table", "row", figure=value, ...)``; it prints one line

    BENCH {"table": "handshake", "row": "DLS + DLS", "ms_initiator": 0.22, ...}

to stdout. ``bash tools/bench.sh`` saves each bench's output under ``out/bench/`` and
``python3 tools/bench_readme.py`` renders the README's Benchmarks tables from these lines. Values are
numbers, strings, booleans or None (JSON; a NaN is written as None). Units are in the field names
(``_s`` seconds, ``_ms`` milliseconds, ``_cm``, ``_pct``, ``fps`` frames per second).
"""

from __future__ import annotations

import json
import math

PREFIX = "BENCH "


def _clean(value):
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {str(k): _clean(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_clean(v) for v in value]
    if hasattr(value, "item"):  # a numpy scalar
        return _clean(value.item())
    return value


def emit(table: str, row: str, **fields) -> None:
    """Print one record of ``table`` (a README table or a section of one) for ``row``."""
    print(PREFIX + json.dumps(_clean({"table": table, "row": row, **fields})), flush=True)
