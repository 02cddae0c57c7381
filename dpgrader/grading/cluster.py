"""Grading on a Dask cluster: the class grader's tasks on workers of an existing scheduler.

``python -m dpgrader.classroom grade --scheduler tls://host:8786`` grades on any Dask cluster
(Slurm through dask-jobqueue, Kubernetes, SSH machines: see ``deploy/README.md``). The cluster is an
:class:`~dpgrader.grading.engine.Engine` (:class:`DaskEngine`), as the local pool is. What travels
is what the local pool sends (:mod:`dpgrader.grading.pool`): a :class:`~dpgrader.grading.task.PackedTask`
and its assignment's :class:`~dpgrader.grading.task.AssignmentBundle` as bytes (with each task:
a few hundred kB, and nothing lost with a worker, as scattered data would be), and a
:class:`~dpgrader.grading.task.GradingResult` back; the
results are merged by the same code, in the instructor's process, the one gradebook writer.

- Each worker process holds a :class:`~dpgrader.grading.cluster_worker.GradingPlugin`: nbgrader imported, the sandbox checked and
  the zygote started once, stopped with the worker. A task is graded sandboxed whatever the
  worker's environment says; a worker whose sandbox cannot start answers ``error`` with the
  reason, never a grade from an unsandboxed kernel.
- At most as many tasks are queued as the cluster has threads (memory stays flat for any class).
- A worker that dies mid-task (SIGKILL, a lost machine) has its task run again elsewhere by Dask;
  a task that killed ``distributed.scheduler.allowed-failures`` workers (3 by default) is recorded
  ``worker_crashed`` and the rest of the class is graded. A task past its time limit is recorded
  ``killed`` and its worker restarted (its kernels die with it).
- The scheduler gone mid-run stops grading with :class:`ClusterLost`; what was merged is kept and
  ``grade --resume`` grades only what is missing.
- Off the local machine, only TLS: :func:`connect` refuses a ``tcp://`` address that is not loopback.
"""

from __future__ import annotations

import contextlib
import ipaddress
import logging
import socket
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from dpgrader.grading.engine import GRADER, Engine
from dpgrader.grading.task import AssignmentBundle, GradingResult, PackedTask
from dpgrader.outcomes import Status
from dpgrader.safe_output import one_line

if TYPE_CHECKING:  # distributed is imported when a cluster is used: a local run does not pay its import
    from distributed import Client
    from distributed.security import Security

CONNECT_SECONDS = 30  # to reach the scheduler at the start


class ClusterLost(RuntimeError):
    """The scheduler stopped answering mid-run: grading stopped; what was merged is kept."""


# --- the instructor's side ---------------------------------------------------------------------------------


def is_loopback(address: str) -> bool:
    """Whether a scheduler address (``tcp://host:port``, ``tls://...``, ``inproc://...``) is on this machine."""
    parts = urlsplit(address if "://" in address else f"tcp://{address}")
    if parts.scheme == "inproc":
        return True
    host = parts.hostname or ""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        try:
            return ipaddress.ip_address(socket.gethostbyname(host)).is_loopback
        except OSError:
            return False


def security(ca_file: Path | None = None, cert: Path | None = None, key: Path | None = None) -> Security | None:
    """Dask's ``Security`` for TLS from certificate files, or None to use Dask's own configuration."""
    from distributed.security import Security

    if not (ca_file or cert or key):
        return None
    missing = [name for name, value in (("--tls-ca-file", ca_file), ("--tls-cert", cert), ("--tls-key", key)) if not value]
    if missing:
        raise ValueError(f"TLS needs the CA file, a certificate and its key: {', '.join(missing)} missing")
    return Security(tls_ca_file=str(ca_file), tls_client_cert=str(cert), tls_client_key=str(key), require_encryption=True)


def connect(address: str, tls: Security | None = None) -> Client:
    """A client of the scheduler at ``address``; off this machine only over TLS.

    Raises ``ValueError`` for a plain ``tcp://`` address that is not loopback, and
    :class:`ClusterLost` if the scheduler cannot be reached within :data:`CONNECT_SECONDS`.
    """
    from distributed import Client

    for name in ("distributed.client", "distributed.utils", "distributed.comm", "distributed.core"):
        logging.getLogger(name).setLevel(logging.CRITICAL)  # a lost scheduler is said once, by ClusterLost
    if not address.startswith(("tls://", "inproc://")) and not is_loopback(address):
        raise ValueError(f"the scheduler {address} is not on this machine: connect with tls:// and --tls-ca-file, "
                         "--tls-cert, --tls-key (or Dask's distributed.comm.tls configuration)")
    needs_certificates = (f"{address} needs TLS certificates: --tls-ca-file, --tls-cert and --tls-key (or Dask's "
                          "distributed.comm.tls configuration)")
    # Asked before a Client exists: one that fails on TLS without certificates waits a minute to close when freed.
    if address.startswith("tls://") and _client_tls_context(tls) is None:
        raise ValueError(needs_certificates)
    try:
        return Client(address, security=tls, timeout=CONNECT_SECONDS, set_as_default=False)
    except TypeError as error:  # Dask's words for a tls:// address without certificates
        raise ValueError(f"{needs_certificates}: {error}") from None
    except (OSError, TimeoutError) as error:
        raise ClusterLost(f"cannot reach the Dask scheduler at {address}: {error}") from None


def _client_tls_context(tls: Security | None):
    """The SSL context a client would connect with: ``tls``'s, or that of Dask's configuration; None without one."""
    from distributed.security import Security

    return (tls or Security()).get_connection_args("client").get("ssl_context")


def _key(task: PackedTask) -> str:
    """The Dask key of a task: who and what (the dashboard shows it), and the token."""
    return f"grade-{task.assignment}-{task.student}-{task.token[:12]}"


class DaskEngine(Engine):
    """The :class:`~dpgrader.grading.engine.Engine` of the Dask cluster of a scheduler.

    At most as many tasks run as the cluster has threads (memory stays flat for any class); each
    task's assignment bundle travels with it (a few hundred kB, nothing lost with a worker). Raises
    :class:`ClusterLost` if the scheduler goes away.

    Parameters
    ----------
    scheduler : str
        Its address (``tls://host:8786``; ``tcp://`` on this machine only).
    tls : distributed.security.Security, optional
        None: Dask's configuration.
    grader : str
        What grades a task on a worker, ``"module:function"``.
    """

    def __init__(self, scheduler: str, tls: Security | None = None, grader: str = GRADER):
        self.scheduler, self.tls, self.grader = scheduler, tls, grader
        self.client: Client | None = None
        self.running: dict = {}  # future -> task
        self.packed: dict[str, bytes] = {}  # bundle digest -> bytes
        self.description = scheduler

    def start(self) -> None:
        from dpgrader.grading.cluster_worker import PLUGIN_NAME, GradingPlugin

        self.client = connect(self.scheduler, self.tls)
        try:
            self.client.register_plugin(GradingPlugin(), name=PLUGIN_NAME)
            services = self.client.scheduler_info().get("services", {})
        except OSError as error:
            raise ClusterLost(_lost(self.client, error)) from None
        dashboard = self.client.dashboard_link if "dashboard" in services else "none (the scheduler runs without one)"
        self.description = (f"the Dask cluster at {self.scheduler}: {_threads(self.client)} worker thread(s); "
                            f"dashboard: {dashboard}")

    def close(self) -> None:
        if self.client is not None:
            self.client.close()

    def free(self) -> int:
        with self._talking():
            return max(1, _threads(self.client)) - len(self.running)

    def submit(self, task: PackedTask, bundle: AssignmentBundle) -> None:
        from dpgrader.grading.cluster_worker import grade_on_worker

        if bundle.digest not in self.packed:
            self.packed[bundle.digest] = bundle.to_bytes()
        with self._talking():
            future = self.client.submit(grade_on_worker, task.to_bytes(), self.packed[bundle.digest], self.grader,
                                        key=_key(task), pure=False)
        self.running[future] = task

    def finished(self, timeout: float) -> list[tuple[str, GradingResult]]:
        from distributed import wait

        with self._talking():
            try:
                with self.client.as_current():
                    done, _ = wait(list(self.running), timeout=max(1.0, timeout), return_when="FIRST_COMPLETED")
            except TimeoutError:  # nothing finished before the nearest deadline
                done = set()
            if self.client.status != "running" and not any(f.status == "finished" for f in done):
                raise ClusterLost(_lost(self.client, None))
            return [(task.token, _result_of(self.client, future, task))
                    for future, task in ((future, self.running.pop(future)) for future in done)]

    def stop(self, token: str) -> None:
        for future, task in list(self.running.items()):
            if task.token == token:
                del self.running[future]
                with self._talking():
                    _stop(self.client, future)

    @contextlib.contextmanager
    def _talking(self):
        """Any failure to talk to the scheduler (a closed connection, futures cancelled because the client lost
        it) raises :class:`ClusterLost`."""
        from distributed.client import FuturesCancelledError

        try:
            yield
        except (FuturesCancelledError, OSError) as error:  # CommClosedError is an OSError
            raise ClusterLost(_lost(self.client, error)) from None


def _threads(client: Client) -> int:
    return sum(client.nthreads().values())


def _result_of(client: Client, future, task: PackedTask) -> GradingResult:
    """The result of a finished future: accepted only if it is one (files inside their folder, no field of
    anything else); else the task is an ``error``, and the class goes on (the token is checked by the engine)."""
    if future.status == "finished":
        try:
            result = GradingResult.from_bytes(future.result())
        except (ValueError, TypeError, KeyError) as error:  # a file outside its folder, a field of no result, ...
            return GradingResult.failed(task, Status.ERROR, "a worker answered with something that is not a grading "
                                        f"result ({type(error).__name__}: {one_line(str(error))[:200]}): not graded")
        return result
    if future.status == "cancelled" or client.status != "running":
        raise ClusterLost(_lost(client, None))
    error = future.exception()
    if type(error).__name__ == "KilledWorker":
        import dask

        allowed = dask.config.get("distributed.scheduler.allowed-failures")
        return GradingResult.failed(task, Status.WORKER_CRASHED,
                                    f"not graded: grading it stopped {allowed + 1} grading workers in a row "
                                    "(a person must look at it)")
    return GradingResult.failed(task, Status.ERROR, f"grading failed on the cluster: {type(error).__name__}: {error}")


def _stop(client: Client, future) -> None:
    """Cancel a task past its time limit and restart the worker running it (its kernels die with it)."""
    processing = client.processing()
    future.cancel()
    workers = [worker for worker, keys in processing.items() if future.key in keys]
    if workers:
        try:
            client.restart_workers(workers, timeout=60, raise_for_error=False)
        except Exception:  # noqa: BLE001 -- a worker that cannot restart is the cluster's to replace
            pass


def _lost(client: Client, error: BaseException | None) -> str:
    scheduler = getattr(client.scheduler, "address", None) or "the scheduler"
    why = f" ({type(error).__name__}: {' '.join(str(error).split())[:300]})" if error else ""
    return f"the Dask scheduler at {scheduler} stopped answering{why}"
