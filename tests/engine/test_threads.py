"""The process's BLAS thread limit: set once, on the OpenBLAS numpy loaded (found in the process's
memory map, or among numpy's bundled libraries where there is no /proc); the user's own
OPENBLAS_NUM_THREADS wins."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PROBE = """
import json, sys
sys.path.insert(0, sys.argv[1])
import numpy
from procanim_addon import threads
if sys.argv[2] == "bundled":  # as on a system without /proc: numpy's own folder of libraries
    threads._mapped_openblas = lambda: None
before = threads.blas_threads()
took = threads.limit_blas_threads()
print(json.dumps({"before": before, "took": took, "after": threads.blas_threads()}))
"""


def _probe(where: str = "mapped", **env) -> dict:
    clean = {k: v for k, v in os.environ.items() if k not in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS")}
    out = subprocess.run([sys.executable, "-c", PROBE, str(ROOT), where], env={**clean, **env}, capture_output=True,
                         text=True, check=True).stdout
    got = json.loads(out.strip().splitlines()[-1])
    if not got["before"]:
        pytest.skip(f"this numpy's BLAS is not an OpenBLAS found {where}")
    return got


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/maps")
@pytest.mark.parametrize("where", ["mapped", "bundled"])
def test_numpys_openblas_runs_one_thread_once_limited(where):
    got = _probe(where)
    assert got["took"] == len(got["before"]) and got["after"] == [1] * len(got["before"]), got


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/maps")
def test_the_users_own_thread_setting_wins():
    got = _probe(OPENBLAS_NUM_THREADS="2")
    assert got["took"] == 0 and got["after"] == got["before"], got
