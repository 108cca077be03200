"""How a shot's output files are written: each to a temporary name next to it, then moved into place
with ``os.replace``, so that a file under its final name is always complete.

The temporary name carries this host's name and this process's id (:func:`partial`):
:func:`sweep` removes those a killed process left behind. Stdlib only: the command's own process
writes its report with :func:`write_json` too.
"""

from __future__ import annotations

import json
import os
import socket
from pathlib import Path

from .processes import process_alive


def partial(final: Path, suffix: str) -> Path:
    """A temporary file next to ``final`` that names this host and process (see :func:`sweep`)."""
    return final.with_name(f".{final.stem}.{socket.gethostname()}.{os.getpid()}.partial{suffix}")


def sweep(final: Path) -> None:
    """Remove temporary files of ``final`` left by processes of this host that no longer exist
    (a worker killed while writing)."""
    host = socket.gethostname()
    for stale in final.parent.glob(f".{final.stem}.{host}.*.partial*"):
        pid = stale.name[len(f".{final.stem}.{host}.") :].split(".")[0]
        if pid.isdigit() and int(pid) != os.getpid() and not process_alive(int(pid)):
            stale.unlink(missing_ok=True)


def write_json(path: Path, data: dict) -> None:
    """Write ``data`` as JSON to ``path`` atomically (temporary file, then ``os.replace``)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = partial(path, ".json")
    with open(tmp, "w", encoding="utf-8") as fh:
        json.dump(data, fh, indent=1, sort_keys=True)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)
