"""procanim_addon/heap.py: freed whole-clip arrays stay in the process for the next ones (glibc)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from procanim_addon import heap

ROOT = Path(__file__).resolve().parents[2]

# Three 8 MiB arrays made, filled and dropped, twenty times — the pattern of a plan's temporaries; the
# page faults of the last nineteen rounds (the first one grows the heap in any case).
CYCLES = """
import json, resource, sys
import numpy as np
sys.path.insert(0, {root!r})
from procanim_addon import heap
kept = heap.keep() if {keep} else None
def cycle():
    arrays = [np.ones(1 << 20) for _ in range(3)]
    del arrays
cycle()
before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
for _ in range(19):
    cycle()
print(json.dumps({{"kept": kept, "faults": resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before}}))
"""


def faults(keep: bool, **env: str) -> dict:
    environment = {k: v for k, v in os.environ.items() if k not in ("PROCANIM_KEEP_HEAP", *heap.USER_VARIABLES)}
    out = subprocess.run([sys.executable, "-c", CYCLES.format(root=str(ROOT), keep=keep)], capture_output=True,
                         text=True, check=True, env={**environment, **env})
    return json.loads(out.stdout)


def test_kept_memory_is_not_faulted_in_again():
    """Without :func:`heap.keep` glibc hands the 24 MiB back after every round (above its trim threshold
    then) and faults it in again page by page; with it they stay in the heap."""
    kept = faults(True)
    if not kept["kept"]:
        pytest.skip("not glibc: the thresholds are not set")
    plain = faults(False)
    assert plain["faults"] > 19 * 250  # faulted in again on every round (~1,000 faults each here)
    assert kept["faults"] * 20 < plain["faults"]


def test_the_users_own_malloc_settings_are_left_alone():
    """PROCANIM_KEEP_HEAP=0, or glibc's own variables set by the user: keep() sets nothing (and the
    faults come back, as before)."""
    if not faults(True)["kept"]:
        pytest.skip("not glibc: the thresholds are not set")
    off = faults(True, PROCANIM_KEEP_HEAP="0")
    assert off["kept"] is False and off["faults"] > 19 * 250
    assert faults(True, MALLOC_TRIM_THRESHOLD_="1000000000")["kept"] is False


def _jemalloc() -> Path | None:
    """A jemalloc library on this machine (the system's, or the one in the real-Blender chroot)."""
    cache = Path(os.environ.get("PROCANIM_CACHE", Path.home() / ".cache" / "procanim"))
    for folder in (Path("/usr/lib/x86_64-linux-gnu"), cache / "chroot-trixie" / "usr" / "lib" / "x86_64-linux-gnu"):
        found = sorted(folder.glob("libjemalloc.so*")) if folder.is_dir() else []
        if found:
            return found[0]
    return None


def test_another_allocator_in_the_process_is_left_alone():
    """A process whose malloc is jemalloc's (Debian's Blender links it) does not read glibc's
    thresholds: keep() sets nothing and says so."""
    if not faults(True)["kept"]:
        pytest.skip("not glibc: the thresholds are not set")
    library = _jemalloc()
    if library is None:
        pytest.skip("no jemalloc on this machine")
    assert faults(True, LD_PRELOAD=str(library))["kept"] is False
