"""The batch command as a pipeline runner starts it: ``python tools/batch.py …`` in a subprocess of
this interpreter, handed the extension zip the tests built (``PROCANIM_ZIP``)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def batch_command(*args) -> list[str]:
    """``python tools/batch.py *args`` (this interpreter) as an argument list."""
    return [sys.executable, str(ROOT / "tools" / "batch.py"), *map(str, args)]


def batch_env(extension_zip) -> dict:
    """This process's environment, plus the zip every batch process installs and no ``.pyc`` written."""
    return {**os.environ, "PROCANIM_ZIP": str(extension_zip), "PYTHONDONTWRITEBYTECODE": "1"}


def run_batch_command(env: dict, *args, timeout: float = 600) -> subprocess.CompletedProcess:
    """Run ``python tools/batch.py *args`` with ``env`` to its end (at most ``timeout`` s), its output
    captured as text; a failing status is returned, not raised."""
    return subprocess.run(batch_command(*args), capture_output=True, text=True, env=env, timeout=timeout, check=False)
