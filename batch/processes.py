"""Process helpers shared by the two sides of a batch worker's pipe and by the shot writer.

* :func:`process_alive` — whether a pid still runs here (stale temporary files, stale installs);
* :data:`ONE_BLAS_THREAD` and :func:`limit_blas_threads` — one BLAS thread per baking process.

Stdlib only: the Dask worker processes import this package without Blender.
"""

from __future__ import annotations

import os

# One BLAS thread per baking process: the pool already runs one worker per core, and OpenBLAS's
# extra threads busy-wait after each small LAPACK call, taking the other workers' cores. The
# caller's environment wins when it sets these.
ONE_BLAS_THREAD = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}

BLAS_SETTERS = (
    "openblas_set_num_threads",
    "openblas_set_num_threads64_",
    "scipy_openblas_set_num_threads64_",
    "scipy_openblas_set_num_threads",
)


def limit_blas_threads(n: int = 1) -> int:
    """One BLAS thread for the OpenBLAS already loaded in this process (numpy's bundled library,
    scipy-openblas or a system one), as :data:`ONE_BLAS_THREAD` does for a process not yet started:
    for the shots baked in the command's own process (``--workers 0``, ``--shot``), where numpy is
    loaded before the command runs. Left alone when the caller set ``OPENBLAS_NUM_THREADS``.
    Returns how many libraries took the setting (0 off Linux, where the loaded libraries are not
    listed in /proc)."""
    if "OPENBLAS_NUM_THREADS" in os.environ:
        return 0
    try:
        with open("/proc/self/maps", encoding="utf-8", errors="replace") as maps:
            paths = {line.split()[-1] for line in maps if "openblas" in line.lower() and "/" in line}
    except OSError:
        return 0
    import ctypes

    done = 0
    for path in sorted(paths):
        try:
            lib = ctypes.CDLL(path)
        except OSError:
            continue
        for name in BLAS_SETTERS:
            setter = getattr(lib, name, None)
            if setter is not None:
                setter(ctypes.c_int(n))
                done += 1
                break
    return done


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
