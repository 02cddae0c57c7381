"""A Dask cluster for the class grader on Slurm: a TLS scheduler here (a login node), workers as Slurm jobs.

Run on a login node of the Slurm cluster, in the course's environment (``pip install -e .``, which brings
``distributed``; ``pip install dask-jobqueue``), with the certificates of ``deploy/dask/make_certs.sh``
on a filesystem the compute nodes share (your home, usually)::

    python deploy/dask/slurm_cluster.py --tls-dir ~/dp-grading-tls --venv ~/dp-course/.venv \\
        --jobs 4 --processes 8 --account ACCOUNT --partition PARTITION --walltime 02:00:00

It prints the scheduler's ``tls://`` address for the instructor's
``python -m dpgrader.classroom grade --scheduler ...`` and keeps the cluster until Ctrl-C. Each job is one
node's share: ``processes`` Dask workers of one thread each (one notebook kernel each, one core each),
``KERNEL_MEMORY + WORKER_MEMORY`` of memory each. No Slurm is needed to build the job script
(``make_cluster(...).job_script()``): ``tests/deploy/test_dask_deploy.py`` checks it.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

GiB = 2**30
KERNEL_MEMORY = 2 * GiB  # dpgrader.limits.GradingLimits.memory_bytes: one notebook kernel
WORKER_MEMORY = 1 * GiB  # the Dask worker and nbgrader around the kernel
SCHEDULER_PORT = 8786
DASHBOARD = "127.0.0.1:8787"  # loopback: reach it with ssh -L 8787:127.0.0.1:8787 <login node>
# The job stops at once, with a message in its log, where bubblewrap cannot sandbox kernels on the node
# (dpgrader.sandbox.bwrap_problem's probe, with the fresh /proc every kernel gets).
BWRAP_PROBE = ('bwrap --unshare-all --die-with-parent --ro-bind / / --proc /proc true '
               '|| { echo "bubblewrap cannot run on $(hostname): no grading here" >&2; exit 1; }')


def tls_files(tls_dir: Path) -> dict[str, str]:
    """``distributed.security.Security`` keywords for the certificates of ``make_certs.sh`` in ``tls_dir``.

    The scheduler and its workers get their own certificate; this process (the cluster's manager, a
    client of the scheduler) uses the worker's, so the instructor's ``client-key.pem`` need not be here.
    """
    tls_dir = Path(tls_dir).expanduser().resolve()
    return {
        "tls_ca_file": str(tls_dir / "ca.pem"),
        "tls_scheduler_cert": str(tls_dir / "scheduler.pem"),
        "tls_scheduler_key": str(tls_dir / "scheduler-key.pem"),
        "tls_worker_cert": str(tls_dir / "worker.pem"),
        "tls_worker_key": str(tls_dir / "worker-key.pem"),
        "tls_client_cert": str(tls_dir / "worker.pem"),
        "tls_client_key": str(tls_dir / "worker-key.pem"),
    }


def cluster_kwargs(tls_dir: Path, venv: Path, processes: int = 8, account: str = "ACCOUNT",
                   partition: str = "PARTITION", walltime: str = "02:00:00", host: str | None = None,
                   port: int = SCHEDULER_PORT, dashboard: str = DASHBOARD, interface: str | None = None,
                   extra_directives: tuple[str, ...] = ()) -> dict:
    """The keywords of ``dask_jobqueue.SLURMCluster`` for grading (a pure function: nothing starts).

    Parameters
    ----------
    tls_dir : Path
        Folder of ``make_certs.sh``'s files, on a filesystem the compute nodes see at the same path.
    venv : Path
        The course's virtual environment (``pip install -e .``), also seen by the compute nodes.
    processes : int
        Workers (and cores) per job: one single-threaded worker per core.
    account, partition, walltime : str
        ``#SBATCH -A``, ``-p`` and ``-t`` of each job; replace the placeholders.
    host, port : str or None, int
        Where the scheduler listens (``host`` None: Dask's choice, or that of ``interface``).
    dashboard : str
        Where the scheduler's dashboard listens (plain HTTP: keep it on loopback).
    interface : str or None
        Network interface of workers and scheduler (``ib0``, ``eth0``) where the default one is not
        the one the nodes reach each other on.
    extra_directives : tuple of str
        More ``#SBATCH`` lines, e.g. ``("--qos=normal",)``.
    """
    from distributed.security import Security

    if processes < 1:
        raise ValueError(f"processes must be at least 1, got {processes}")
    venv = Path(venv).expanduser().resolve()
    scheduler_options = {"port": port, "dashboard_address": dashboard}
    if host is not None:
        scheduler_options["host"] = host
    return {
        "cores": processes,  # one thread per worker: cores == processes gives --nthreads 1
        "processes": processes,
        "memory": f"{processes * (KERNEL_MEMORY + WORKER_MEMORY) // GiB}GiB",  # split evenly between the workers
        "account": account,
        "queue": partition,
        "walltime": walltime,
        "job_extra_directives": list(extra_directives),
        "job_script_prologue": [f"source {venv}/bin/activate", BWRAP_PROBE],
        "python": str(venv / "bin" / "python"),
        "protocol": "tls://",
        "security": Security(**tls_files(tls_dir), require_encryption=True),
        "scheduler_options": scheduler_options,
        "interface": interface,
        "death_timeout": 120,  # workers leave when the scheduler is gone
    }


def make_cluster(tls_dir: Path, venv: Path, **options):
    """A ``dask_jobqueue.SLURMCluster`` with :func:`cluster_kwargs` (its scheduler starts here; no job yet)."""
    from dask_jobqueue import SLURMCluster

    return SLURMCluster(**cluster_kwargs(tls_dir, venv, **options))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tls-dir", type=Path, required=True, help="make_certs.sh's folder (shared with the nodes)")
    parser.add_argument("--venv", type=Path, required=True, help="the course's environment (shared with the nodes)")
    parser.add_argument("--jobs", type=int, default=1, help="Slurm jobs (nodes' shares) to start")
    parser.add_argument("--processes", type=int, default=8, help="single-threaded workers (cores) per job")
    parser.add_argument("--account", default="ACCOUNT")
    parser.add_argument("--partition", default="PARTITION")
    parser.add_argument("--walltime", default="02:00:00")
    parser.add_argument("--interface", default=None, help="network interface, e.g. ib0")
    parser.add_argument("--port", type=int, default=SCHEDULER_PORT)
    args = parser.parse_args(argv)
    cluster = make_cluster(args.tls_dir, args.venv, processes=args.processes, account=args.account,
                           partition=args.partition, walltime=args.walltime, interface=args.interface,
                           port=args.port)
    print(cluster.job_script(), flush=True)
    cluster.scale(jobs=args.jobs)
    print(f"scheduler: {cluster.scheduler_address}\ndashboard: {cluster.dashboard_link}\n"
          f"grade with: python -m dpgrader.classroom grade --scheduler {cluster.scheduler_address} "
          "--tls-ca-file ca.pem --tls-cert client.pem --tls-key client-key.pem\n"
          "Ctrl-C ends the jobs and the scheduler.", flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        pass
    finally:
        cluster.close()


if __name__ == "__main__":
    main()
