"""A Dask cluster on this machine, as real processes: ``dask scheduler`` and ``dask worker`` — for
trying ``--scheduler`` on one machine, for the batch tests and for the bench.

    python tools/batch_cluster.py [--workers 2] [--tls]   # prints the address; Ctrl+C stops it

In Python::

    from batch_cluster import local_cluster, make_certificates
    tls = make_certificates(folder / "tls")            # optional: a cluster that speaks only TLS
    with local_cluster(folder, workers=2, env={"PROCANIM_ZIP": zip}, tls=tls) as cluster:
        ...  # cluster.address, cluster.workers (Popen), cluster.blender_logs

``--tls`` makes a throw-away certificate authority and two certificates it signs (one for the
scheduler and the workers, one for the batch command) with the ``cryptography`` package, and
starts every process with Dask's ``--tls-ca-file``/``--tls-cert``/``--tls-key``: the scheduler then
takes only clients and workers that show a certificate of that CA.

Each worker runs ``--nthreads 1 --no-nanny`` (a killed worker stays dead, which the tests want;
production clusters usually keep the nanny, which restarts it) with its Blender's log at
``<folder>/blender-<i>.log`` (``PROCANIM_BATCH_LOG``).
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import ipaddress
import json
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

DASK = str(Path(sys.executable).parent / "dask")
CERT_DAYS = 30  # the throw-away certificates' life


@dataclass
class TlsFiles:
    """PEM files of a throw-away certificate authority and of two certificates it signed."""

    ca: Path
    cluster_cert: Path  # the scheduler's and the workers'
    cluster_key: Path
    client_cert: Path  # the batch command's
    client_key: Path

    def dask_flags(self) -> list[str]:
        """``dask scheduler``'s and ``dask worker``'s TLS flags."""
        return ["--tls-ca-file", str(self.ca), "--tls-cert", str(self.cluster_cert), "--tls-key", str(self.cluster_key)]

    def client_flags(self) -> list[str]:
        """The batch command's TLS flags (the same names)."""
        return ["--tls-ca-file", str(self.ca), "--tls-cert", str(self.client_cert), "--tls-key", str(self.client_key)]

    def client_security(self):
        from distributed.security import Security

        return Security(
            require_encryption=True,
            tls_ca_file=str(self.ca),
            tls_client_cert=str(self.client_cert),
            tls_client_key=str(self.client_key),
        )


def make_certificates(folder: Path, hosts: tuple[str, ...] = ("localhost", "127.0.0.1")) -> TlsFiles:
    """A new certificate authority in ``folder`` and two certificates it signs for ``hosts``
    (names or IP addresses), each valid for :data:`CERT_DAYS` days. Keys are written owner-only."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    folder.mkdir(parents=True, exist_ok=True)
    now = datetime.datetime.now(datetime.UTC)

    def name(common: str) -> x509.Name:
        return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common)])

    def write_key(key, path: Path) -> Path:
        path.touch(mode=0o600)
        pkcs8, no_password = serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        path.write_bytes(key.private_bytes(serialization.Encoding.PEM, pkcs8, no_password))
        return path

    def write_cert(cert, path: Path) -> Path:
        path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
        return path

    def builder(subject: str, issuer: str, public_key) -> x509.CertificateBuilder:
        return (
            x509.CertificateBuilder()
            .subject_name(name(subject))
            .issuer_name(name(issuer))
            .public_key(public_key)
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(days=CERT_DAYS))
            .add_extension(x509.SubjectKeyIdentifier.from_public_key(public_key), critical=False)
        )

    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = f"ProcAnim batch CA {folder.name}"
    ca = (
        builder(ca_name, ca_name, ca_key.public_key())
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                key_cert_sign=True,
                crl_sign=True,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .sign(ca_key, hashes.SHA256())
    )
    alt_names: list[x509.GeneralName] = []
    for host in hosts:
        try:
            alt_names.append(x509.IPAddress(ipaddress.ip_address(host)))
        except ValueError:
            alt_names.append(x509.DNSName(host))
    usage_client = ExtendedKeyUsageOID.CLIENT_AUTH
    files = {"ca": write_cert(ca, folder / "ca.pem")}
    for role in ("cluster", "client"):
        key = ec.generate_private_key(ec.SECP256R1())
        cert = (
            builder(f"procanim-dask-{role}", ca_name, key.public_key())
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), critical=False)
            .add_extension(x509.SubjectAlternativeName(alt_names), critical=False)
            .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH, usage_client]), critical=False)
            .sign(ca_key, hashes.SHA256())
        )
        files[f"{role}_cert"] = write_cert(cert, folder / f"{role}.pem")
        files[f"{role}_key"] = write_key(key, folder / f"{role}-key.pem")
    return TlsFiles(**files)


@dataclass
class LocalCluster:
    address: str
    scheduler: subprocess.Popen
    workers: list[subprocess.Popen]
    blender_logs: list[Path]


def wait_for(predicate, timeout: float, what: str):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.05)
    raise TimeoutError(f"{what} within {timeout:g} s")


@contextlib.contextmanager
def local_cluster(
    folder: Path, workers: int = 2, env: dict | None = None, timeout: float = 120.0, tls: TlsFiles | None = None
):
    """Start a scheduler and ``workers`` workers (logs in ``folder``), over TLS with ``tls``'s
    certificates when given; stop them all on exit."""
    folder.mkdir(parents=True, exist_ok=True)
    scheduler_file = folder / "scheduler.json"
    scheduler_file.unlink(missing_ok=True)
    procs: list[subprocess.Popen] = []
    logs = []

    def start(args: list[str], log: Path, extra_env: dict) -> subprocess.Popen:
        logs.append(open(log, "wb"))  # noqa: SIM115 (closed on exit)
        procs.append(subprocess.Popen(args, stdout=logs[-1], stderr=subprocess.STDOUT, env={**os.environ, **extra_env}))
        return procs[-1]

    tls_flags = tls.dask_flags() if tls is not None else []
    try:
        scheduler = start(
            [DASK, "scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard"]
            + ["--protocol", "tls" if tls is not None else "tcp", *tls_flags]
            + ["--scheduler-file", str(scheduler_file)],
            folder / "scheduler.log",
            env or {},
        )
        address = wait_for(
            lambda: scheduler_file.is_file() and json.loads(scheduler_file.read_text() or "{}").get("address"),
            timeout,
            "the Dask scheduler did not start",
        )
        worker_procs, blender_logs = [], []
        for i in range(workers):
            blender_logs.append(folder / f"blender-{i}.log")
            worker_procs.append(
                start(
                    [DASK, "worker", address, "--nthreads", "1", "--no-nanny", "--no-dashboard", *tls_flags]
                    + ["--name", f"w{i}", "--local-directory", str(folder / f"w{i}")],
                    folder / f"worker-{i}.log",
                    {**(env or {}), "PROCANIM_BATCH_LOG": str(blender_logs[-1])},
                )
            )
        from distributed import Client

        security = tls.client_security() if tls is not None else None
        with Client(address, timeout="30s", security=security) as client:
            client.wait_for_workers(workers, timeout=timeout)
        yield LocalCluster(address, scheduler, worker_procs, blender_logs)
    finally:
        # the workers first (a worker closing while the scheduler goes away can hang), then the scheduler
        for group in (procs[1:], procs[:1]):
            for proc in group:
                if proc.poll() is None:
                    proc.terminate()
            for proc in group:
                try:
                    proc.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
        for log in logs:
            log.close()


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description="A local Dask cluster for ProcAnim's batch command.")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--tls", action="store_true", help="TLS only, with new self-signed certificates")
    args = parser.parse_args(argv)
    folder = Path(tempfile.mkdtemp(prefix="procanim-dask-"))
    tls = make_certificates(folder / "tls") if args.tls else None
    with local_cluster(folder, args.workers, tls=tls) as cluster:
        print(f"scheduler {cluster.address} with {args.workers} workers (logs: {folder}); Ctrl+C stops it")
        flags = " ".join(tls.client_flags()) + " " if tls is not None else ""
        print(f"  python tools/batch.py bake JOBS.toml --scheduler {cluster.address} {flags}".rstrip(), flush=True)
        try:
            while all(p.poll() is None for p in (cluster.scheduler, *cluster.workers)):
                time.sleep(1.0)
        except KeyboardInterrupt:
            pass
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
