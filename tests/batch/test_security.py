"""Batch security (docs/batch.md, Security): the Python inside a shot's .blend runs in no batch mode
unless the run says ``--trust-scripts``, and a Dask cluster started with TLS takes only clients
that show a certificate of its CA.

Auto-run is switched on in every Blender involved, as an artist's preferences would have it: in this
process around the in-process runs, and in the command's subprocesses, its pool workers and the
Dask workers' Blender children through a ``sitecustomize`` on ``PYTHONPATH`` that switches
``preferences.filepaths.use_scripts_auto_execute`` on as soon as ``bpy`` is imported (the ``bpy``
wheel reads no preferences file). Each test first shows that the switch is effective: a file opened
the ordinary way runs its script.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import socket
import ssl
import subprocess
import sys
from pathlib import Path

import bpy
import pytest
from in_process import in_process_host
from launcher import run_batch_command
from script_checks import (
    check_scripts_not_run,
    check_scripts_run,
    clear_markers,
    markers,
    metrics,
    report_rows,
    write_job,
)

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))
from batch_cluster import local_cluster, make_certificates  # noqa: E402

AUTORUN_SITE = '''
import importlib.abc
import importlib.util
import sys


class AutoRunOn(importlib.abc.MetaPathFinder):
    """Switch Blender's auto-run preference on right after bpy is imported."""

    def find_spec(self, name, path, target=None):
        if name != "bpy":
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec("bpy")
        exec_module = spec.loader.exec_module

        def exec_then_switch_on(module):
            exec_module(module)
            module.context.preferences.filepaths.use_scripts_auto_execute = True

        spec.loader.exec_module = exec_then_switch_on
        return spec


sys.meta_path.insert(0, AutoRunOn())
'''

PROBE = """
import os, sys, bpy
bpy.ops.wm.open_mainfile(filepath=sys.argv[1])
print("auto-run:", bpy.context.preferences.filepaths.use_scripts_auto_execute, flush=True)
os._exit(0)
"""


@contextlib.contextmanager
def autorun_here():
    """Blender's auto-run preference on in this process (setting it also sets Blender's flag)."""
    paths = bpy.context.preferences.filepaths
    before = paths.use_scripts_auto_execute
    paths.use_scripts_auto_execute = True
    try:
        yield
    finally:
        paths.use_scripts_auto_execute = not before
        paths.use_scripts_auto_execute = before


@pytest.fixture(scope="module")
def autorun_env(tmp_path_factory, extension_zip, scripted_inputs) -> dict:
    """The environment of a batch subprocess whose Blenders have auto-run on (checked here)."""
    site = tmp_path_factory.mktemp("autorun_site")
    (site / "sitecustomize.py").write_text(AUTORUN_SITE)
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(site), os.environ.get("PYTHONPATH")])),
        "PROCANIM_ZIP": str(extension_zip),
        "PYTHONDONTWRITEBYTECODE": "1",
    }
    probe = subprocess.run(
        [sys.executable, "-c", PROBE, str(scripted_inputs["scripted"])],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert "auto-run: True" in probe.stdout, probe.stdout + probe.stderr
    assert len(markers(scripted_inputs)) == 1, "opened the ordinary way, the file's script runs"
    clear_markers(scripted_inputs)
    return env


def test_in_process_bakes_run_no_script_of_the_shots(cli, scripted_inputs, tmp_path, capsys):
    """``--workers 0`` and ``--shot`` in this process, auto-run on: no script runs, the shots bake;
    ``--trust-scripts`` runs them (and bakes again: the trust is part of the content hash)."""
    job, out = write_job(tmp_path, scripted_inputs), tmp_path / "out"
    host = in_process_host(cli)
    clear_markers(scripted_inputs)
    with autorun_here():
        assert bpy.ops.wm.open_mainfile(filepath=str(scripted_inputs["scripted"])) == {"FINISHED"}
        assert len(markers(scripted_inputs)) == 1, "opened the ordinary way, the file's script runs"
        clear_markers(scripted_inputs)

        status = cli.main(["bake", str(job), "--workers", "0"], host)
        text = capsys.readouterr().out
        assert status == 1, text
        report, rows = report_rows(out)
        assert report["mode"] == "inline" and report["trust_scripts"] is False
        check_scripts_not_run(out, rows, scripted_inputs)

        status = cli.main(["bake", "--shot", "scripted", "--force", str(job)], host)
        text = capsys.readouterr().out
        assert status == 0 and "1 done" in text, text
        assert markers(scripted_inputs) == []

        status = cli.main(["bake", str(job), "--workers", "0", "--trust-scripts"], host)
        text = capsys.readouterr().out
        assert status == 0 and "2 done" in text, text
        report, rows = report_rows(out)
        assert report["trust_scripts"] is True
        check_scripts_run(out, rows, scripted_inputs)
        assert metrics(out, "scripted")["worker"]["pid"] == os.getpid()
    clear_markers(scripted_inputs)


def test_pool_workers_run_no_script_of_the_shots(autorun_env, scripted_inputs, tmp_path):
    job, out = write_job(tmp_path, scripted_inputs), tmp_path / "out"
    proc = run_batch_command(autorun_env, "bake", job, "--workers", "2")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    report, rows = report_rows(out)
    assert report["mode"] == "pool" and report["trust_scripts"] is False
    check_scripts_not_run(out, rows, scripted_inputs)
    assert rows["scripted"]["worker"]["pid"] != os.getpid()

    proc = run_batch_command(autorun_env, "bake", job, "--workers", "1", "--trust-scripts")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    report, rows = report_rows(out)
    assert report["trust_scripts"] is True
    check_scripts_run(out, rows, scripted_inputs)
    clear_markers(scripted_inputs)


# ------------------------------------------------------------------------------ Dask over TLS


@pytest.fixture(scope="module")
def tls_cluster(tmp_path_factory, autorun_env):
    """A scheduler and two workers started with the TLS flags and a new CA's certificates; the
    workers' Blender children have auto-run on."""
    folder = tmp_path_factory.mktemp("dask-tls")
    tls = make_certificates(folder / "tls")
    env = {key: autorun_env[key] for key in ("PYTHONPATH", "PROCANIM_ZIP")}
    with local_cluster(folder, workers=2, env=env, tls=tls) as cluster:
        yield cluster, tls


def test_the_job_bakes_over_tls_running_no_script_of_the_shots(tls_cluster, autorun_env, scripted_inputs, tmp_path):
    cluster, tls = tls_cluster
    assert cluster.address.startswith("tls://")
    job, out = write_job(tmp_path, scripted_inputs), tmp_path / "out"
    proc = run_batch_command(autorun_env, "bake", job, "--scheduler", cluster.address, *tls.client_flags())
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "is not TLS" not in proc.stderr
    report, rows = report_rows(out)
    assert report["mode"] == "dask" and report["trust_scripts"] is False
    assert rows["scripted"]["worker"]["dask_worker"].startswith("tls://127.0.0.1:")
    check_scripts_not_run(out, rows, scripted_inputs)


def test_the_scheduler_refuses_a_client_without_a_certificate_of_its_ca(
    tls_cluster, cli, scripted_inputs, tmp_path, capsys
):
    from distributed import Client

    cluster, tls = tls_cluster
    host_name, port = cluster.address.removeprefix("tls://").rsplit(":", 1)

    # a TLS client that checks the scheduler against the CA but shows no certificate: the
    # scheduler ends the connection
    context = ssl.create_default_context(cafile=str(tls.ca))
    context.check_hostname = False
    with socket.create_connection((host_name, int(port)), timeout=10) as raw:
        try:
            with context.wrap_socket(raw) as conn:
                conn.sendall(b"\0" * 8)
                answer: bytes | Exception = conn.recv(1)
        except (ssl.SSLError, ConnectionError) as err:  # (a timeout is neither: the test fails)
            answer = err
    assert answer == b"" or isinstance(answer, Exception), answer

    # a Dask client whose certificate another CA signed; plain TCP to the TLS port
    other = make_certificates(tmp_path / "other")
    impostor = dataclasses.replace(tls, client_cert=other.client_cert, client_key=other.client_key)
    for address, security in ((cluster.address, impostor.client_security()), (f"tcp://{host_name}:{port}", None)):
        with pytest.raises(OSError):
            Client(address, timeout="5s", security=security)

    # the batch command: a certificate is required, and one of another CA is refused
    job, out = write_job(tmp_path, scripted_inputs), tmp_path / "out"
    host = in_process_host(cli)
    flags = {
        "no certificate": ["--tls-ca-file", str(tls.ca)],
        "another CA's": impostor.client_flags(),
        "not tls://": tls.client_flags(),
    }
    said = {}
    for case, args in flags.items():
        address = cluster.address if case != "not tls://" else f"tcp://{host_name}:{port}"
        assert cli.main(["bake", str(job), "--scheduler", address, *args], host) == 2, case
        said[case] = capsys.readouterr().err
        assert "nothing was sent to the cluster" in said[case], said[case]
    assert "give --tls-ca-file and --tls-cert" in said["no certificate"]
    assert "cannot connect to the Dask scheduler" in said["another CA's"]
    assert "need a tls:// address" in said["not tls://"]
    assert not list(out.glob("*.blend"))
