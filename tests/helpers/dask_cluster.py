"""A real Dask cluster on 127.0.0.1 for the tests: a `dask scheduler` process and `dask worker` processes.

Started as separate machines would start them (the command line, TLS certificates from files),
stopped and killed from outside. Nothing of Dask is mocked.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from distributed import WorkerPlugin

from dpgrader.course import nbgrader_env

BIN = Path(sys.executable).parent
TESTS = Path(__file__).resolve().parents[1]


def make_certificates(folder: Path) -> dict[str, Path]:
    """A CA and one certificate it signs for 127.0.0.1 (scheduler, workers and client share it here), with openssl."""
    folder.mkdir(parents=True, exist_ok=True)
    ca, ca_key, cert, key, request = (folder / n for n in ("ca.pem", "ca-key.pem", "cert.pem", "key.pem", "cert.csr"))
    run = lambda *args: subprocess.run(["openssl", *args], check=True, capture_output=True)  # noqa: E731
    run("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=dp-course test CA",
        "-keyout", str(ca_key), "-out", str(ca))
    run("req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=127.0.0.1", "-keyout", str(key), "-out", str(request))
    extensions = folder / "san.cnf"
    extensions.write_text("subjectAltName=IP:127.0.0.1,DNS:localhost\n")
    run("x509", "-req", "-in", str(request), "-CA", str(ca), "-CAkey", str(ca_key), "-CAcreateserial", "-days", "2",
        "-extfile", str(extensions), "-out", str(cert))
    return {"ca": ca, "cert": cert, "key": key}


class DaskProcesses:
    """A scheduler and workers, each its own process (a worker under its nanny, as `dask worker` starts it)."""

    def __init__(self, folder: Path, certificates: dict[str, Path] | None = None, scheduler_env: dict | None = None):
        self.folder = Path(folder)
        self.folder.mkdir(parents=True, exist_ok=True)
        self.certificates = certificates
        self.scheduler_env = scheduler_env or {}
        self.scheduler: subprocess.Popen | None = None
        self.workers: dict[str, subprocess.Popen] = {}
        self.address = ""

    def _tls(self) -> list[str]:
        c = self.certificates
        return ["--tls-ca-file", str(c["ca"]), "--tls-cert", str(c["cert"]), "--tls-key", str(c["key"])] if c else []

    def _env(self, extra: dict | None = None) -> dict:
        env = {**nbgrader_env(), **(extra or {})}
        env.pop("PYTHONWARNINGS", None)
        env["PYTHONPATH"] = os.pathsep.join([str(TESTS), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
        return env

    def start_scheduler(self) -> str:
        info = self.folder / "scheduler.json"
        info.unlink(missing_ok=True)
        protocol = ["--protocol", "tls"] if self.certificates else []
        self.scheduler = subprocess.Popen(
            [str(BIN / "dask"), "scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
             "--scheduler-file", str(info), *protocol, *self._tls()],
            env=self._env(self.scheduler_env), stdout=subprocess.DEVNULL,
            stderr=open(self.folder / "scheduler.log", "ab"), start_new_session=True)
        deadline = time.monotonic() + 60
        while not info.exists():
            if self.scheduler.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"the scheduler did not start: {(self.folder / 'scheduler.log').read_text()[-2000:]}")
            time.sleep(0.1)
        self.address = json.loads(info.read_text())["address"]
        return self.address

    def start_worker(self, name: str, env: dict | None = None, preload: str | None = None) -> subprocess.Popen:
        extra = ["--preload", preload] if preload else []
        self.workers[name] = subprocess.Popen(
            [str(BIN / "dask"), "worker", self.address, "--name", name, "--nthreads", "1", "--nworkers", "1",
             "--no-dashboard", "--local-directory", str(self.folder / name), *self._tls(), *extra],
            env=self._env(env), stdout=subprocess.DEVNULL, stderr=open(self.folder / f"{name}.log", "ab"),
            start_new_session=True)
        return self.workers[name]

    def client(self):
        from distributed import Client
        from distributed.security import Security

        c = self.certificates
        security = Security(tls_ca_file=str(c["ca"]), tls_client_cert=str(c["cert"]), tls_client_key=str(c["key"]),
                            require_encryption=True) if c else None
        return Client(self.address, security=security, timeout=60, set_as_default=False)

    def security(self):
        from dpgrader.grading.cluster import security

        c = self.certificates
        return security(c["ca"], c["cert"], c["key"]) if c else None

    def wait_for_workers(self, count: int, timeout: float = 180) -> None:
        with self.client() as client:
            client.wait_for_workers(count, timeout=timeout)

    def kill_scheduler(self) -> None:
        os.killpg(self.scheduler.pid, signal.SIGKILL)
        self.scheduler.wait()

    def stop(self) -> None:
        for process in [*self.workers.values(), self.scheduler]:
            if process is not None and process.poll() is None:
                try:
                    os.killpg(process.pid, signal.SIGTERM)
                except ProcessLookupError:
                    pass
        for process in [*self.workers.values(), self.scheduler]:
            if process is None:
                continue
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()


class CrashOnStudent(WorkerPlugin):
    """Fault injection for the tests: the worker process dies (``os._exit``) whenever it starts grading ``student``.

    Stands for a submission that kills its worker process every time, whatever the cause.
    """

    name = "test-crash-on-student"

    def __init__(self, student: str):
        self.student = student

    def transition(self, key, start, finish, **kwargs):
        if finish == "executing" and f"-{self.student}-" in str(key):
            os._exit(17)
