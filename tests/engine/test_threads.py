"""The process's BLAS thread limit: set once, on the OpenBLAS numpy loaded; the user's own
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
from procanim_addon.threads import blas_threads, limit_blas_threads
before = blas_threads()
took = limit_blas_threads()
print(json.dumps({"before": before, "took": took, "after": blas_threads()}))
"""


def _probe(**env) -> dict:
    clean = {k: v for k, v in os.environ.items() if k not in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS")}
    out = subprocess.run([sys.executable, "-c", PROBE, str(ROOT)], env={**clean, **env}, capture_output=True,
                         text=True, check=True).stdout
    return json.loads(out.strip().splitlines()[-1])


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="numpy's OpenBLAS found through /proc/self/maps")
def test_numpys_openblas_runs_one_thread_once_limited():
    got = _probe()
    assert got["before"], "no OpenBLAS found in the process"
    assert got["took"] == len(got["before"]) and got["after"] == [1] * len(got["before"]), got


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="numpy's OpenBLAS found through /proc/self/maps")
def test_the_users_own_thread_setting_wins():
    got = _probe(OPENBLAS_NUM_THREADS="2")
    assert got["took"] == 0 and got["after"] == got["before"], got
