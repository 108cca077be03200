"""One BLAS thread for this process, set once where the process starts (the extension's
``register()``, a batch command's own process; batch worker processes get it from their
environment).

After a threaded call OpenBLAS's idle worker threads busy-wait before they sleep: on a machine
whose other cores run other work (Blender's own thread, a pool of batch workers, one per core) that
is CPU taken for nothing. With one thread the engine's numerics can stay plain numpy. numpy ships
only its bundled OpenBLAS, so the limit is set through its exported setter (``ctypes``), the way
threadpoolctl does, without depending on threadpoolctl.
"""

from __future__ import annotations

import ctypes
import os
import sys
from pathlib import Path

import numpy as np

# OpenBLAS's setters: a 64-bit-integer build suffixes them, scipy-openblas (numpy 2's wheels) prefixes them
SETTERS = ("openblas_set_num_threads64_", "openblas_set_num_threads", "scipy_openblas_set_num_threads64_",
           "scipy_openblas_set_num_threads")
GETTERS = tuple(name.replace("_set_", "_get_") for name in SETTERS)
ENV_VARIABLE = "OPENBLAS_NUM_THREADS"  # the user's own setting, when given, is left alone


def limit_blas_threads(n: int = 1) -> int:
    """Set the OpenBLAS libraries this process has loaded to ``n`` threads, unless the environment
    sets :data:`ENV_VARIABLE`. Returns how many libraries took the setting (0 where none is found)."""
    if ENV_VARIABLE in os.environ:
        return 0
    done = 0
    for lib in _openblas_libraries():
        setter = _function(lib, SETTERS)
        if setter is not None:
            setter(ctypes.c_int(n))
            done += 1
    return done


def blas_threads() -> list[int]:
    """The thread count of each OpenBLAS library this process has loaded."""
    counts = []
    for lib in _openblas_libraries():
        getter = _function(lib, GETTERS)
        if getter is not None:
            counts.append(int(getter()))
    return counts


def _function(lib: ctypes.CDLL, names: tuple[str, ...]):
    return next((getattr(lib, name) for name in names if hasattr(lib, name)), None)


def _openblas_libraries() -> list[ctypes.CDLL]:
    """Handles of the loaded OpenBLAS libraries: those mapped into this process (Linux), else the
    ones numpy bundles (opening a library already loaded returns the loaded one)."""
    paths = _mapped_openblas()
    if paths is None:
        package = Path(np.__file__).resolve().parent
        folders = (package.parent / "numpy.libs", package / ".dylibs", package.parent / "scipy_openblas64" / "lib",
                   package.parent / "scipy_openblas32" / "lib")
        paths = sorted(str(p) for folder in folders if folder.is_dir() for p in folder.iterdir()
                       if "openblas" in p.name.lower() and p.suffix in (".so", ".dylib", ".dll"))
    libs = []
    for path in paths:
        try:
            libs.append(ctypes.CDLL(path))
        except OSError:
            continue
    return libs


def _mapped_openblas() -> list[str] | None:
    """Paths of the OpenBLAS libraries in /proc/self/maps, or None without /proc."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        with open("/proc/self/maps", encoding="utf-8", errors="replace") as maps:
            return sorted({line.split()[-1] for line in maps if "openblas" in line.lower() and "/" in line})
    except OSError:
        return None
