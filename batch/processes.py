"""Process helpers shared by the two sides of a batch worker's pipe and by the atomic writes
(``outputs.py``).

* :func:`process_alive` — whether a pid still runs here (stale temporary files, stale installs);
* :data:`ONE_BLAS_THREAD` — one BLAS thread per worker process, set in its environment before it
  starts (a process already running calls ``procanim_addon.threads.limit_blas_threads``).

Stdlib only: the Dask worker processes import this package without Blender.
"""

from __future__ import annotations

import os

# One BLAS thread per baking process: the pool already runs one worker per core, and OpenBLAS's
# extra threads busy-wait after each small LAPACK call, taking the other workers' cores. The
# caller's environment wins when it sets these.
ONE_BLAS_THREAD = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}


def process_alive(pid: int) -> bool:
    """Whether a process ``pid`` runs on this host (one of another user counts as alive; a zombie,
    killed and not yet reaped, does not)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        with open(f"/proc/{pid}/status", encoding="ascii", errors="replace") as fh:
            return "State:\tZ" not in fh.read()
    except FileNotFoundError:  # it ended meanwhile (or no /proc: then os.kill above decided)
        return not os.path.isdir("/proc/self")
    except OSError:
        return True
