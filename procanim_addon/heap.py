"""Freed memory kept in the process for the engine's next whole-clip arrays (glibc's malloc).

The key planner and the control-rig conversion work in whole-clip arrays of a few to tens of
megabytes, made and dropped by the hundred. glibc's malloc hands a freed block back to the system
when it was mapped on its own (above the *mmap threshold*) or when the free memory at the top of the
heap exceeds the *trim threshold*; both start at 128 KiB and glibc raises them by itself only up to the
size of the largest block freed so far. The next array of that size is then faulted in again page by
page: about 30,000 page faults per plan of the 1,000-frame walk onto a Rigify human
(``bench/control_rig_bake.py --pairs 5`` prints them; docs/keys.md, Speed, has the times with and
without).

:func:`keep` sets the two thresholds to the values glibc adopts by itself once the process has freed a
32 MiB block (its largest automatic mmap threshold, and twice that): blocks up to 32 MiB come from the
heap, and up to 64 MiB freed at its top stays there for the next bake. Process-wide and for good, as
glibc's own adjustment is; only where the C library is glibc (another C library, or an allocator that
replaces malloc, such as the jemalloc Debian's Blender links, does not read them: nothing happens).
The user's own settings are left alone: glibc's ``MALLOC_MMAP_THRESHOLD_``, ``MALLOC_TRIM_THRESHOLD_``
or malloc tunables in ``GLIBC_TUNABLES``, or ``PROCANIM_KEEP_HEAP=0`` (glibc's defaults, as before).
"""

from __future__ import annotations

import ctypes
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager

M_TRIM_THRESHOLD = -1  # mallopt's parameter numbers (glibc's malloc.h)
M_MMAP_THRESHOLD = -3
MMAP_BYTES = 32 << 20  # glibc's DEFAULT_MMAP_THRESHOLD_MAX on 64-bit systems
TRIM_BYTES = 2 * MMAP_BYTES  # the trim threshold glibc pairs with it

_set: bool | None = None  # whether keep() set the thresholds (None: not tried yet)
OFF_VARIABLE = "PROCANIM_KEEP_HEAP"  # "0": leave glibc's thresholds as they are
USER_VARIABLES = ("MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_")  # the user's own settings win
REPLACEMENTS = ("mallctl", "tc_malloc", "mi_malloc")  # jemalloc's, tcmalloc's, mimalloc's own functions


def keep() -> bool:
    """Set glibc's mmap and trim thresholds (see the module docstring), once per process; returns
    whether they are set (False without glibc, or when the environment sets them or turns this off)."""
    global _set
    if _set is None:
        _set = not _left_to_the_user() and _set_thresholds()
    return _set


def _left_to_the_user() -> bool:
    env = os.environ
    return (env.get(OFF_VARIABLE) == "0" or any(v in env for v in USER_VARIABLES)
            or "glibc.malloc." in env.get("GLIBC_TUNABLES", ""))


def _set_thresholds() -> bool:
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None)  # the C library the process runs on
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return False
    if not hasattr(libc, "gnu_get_libc_version"):  # glibc's own: not another C library's mallopt
        return False
    if any(hasattr(libc, name) for name in REPLACEMENTS):  # malloc is another allocator's: glibc's unused
        return False
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    mallopt.restype = ctypes.c_int
    return bool(mallopt(M_MMAP_THRESHOLD, MMAP_BYTES)) and bool(mallopt(M_TRIM_THRESHOLD, TRIM_BYTES))


@contextmanager
def kept() -> Iterator[None]:
    """:func:`keep` on entering the ``with`` block (or the decorated function)."""
    keep()
    yield
