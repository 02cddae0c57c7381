"""The Dask deployments of deploy/dask/ produce what the class grader's cluster needs.

No Slurm and no Kubernetes here: the Slurm job script is built by dask-jobqueue itself around a real TLS
scheduler on loopback, with certificates from ``deploy/dask/make_certs.sh``; the Kubernetes manifest is
parsed and its worker started, as written (certificate paths and address aside), against that scheduler.
Checked: one thread per worker, TLS everywhere (a plain ``tcp://`` connection and a stranger's certificate
are refused), the course's environment and image, memory for one kernel (``GradingLimits``) and its worker,
and the securityContext bubblewrap needs in a pod.
"""

from __future__ import annotations

import importlib.util
import json
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml
from dask.utils import parse_bytes

from dpgrader.limits import GradingLimits

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"
DASK = DEPLOY / "dask"
VENV = Path("/opt/dp-course/.venv")  # a course environment on a shared filesystem (need not exist here)
PROCESSES = 4
GiB = 2**30


def load_slurm_module():
    spec = importlib.util.spec_from_file_location("slurm_cluster", DASK / "slurm_cluster.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def make_certs(folder: Path) -> Path:
    subprocess.run(["sh", str(DASK / "make_certs.sh"), str(folder)], check=True, capture_output=True, timeout=60)
    return folder


def client_security(tls: Path):
    from distributed.security import Security

    return Security(tls_ca_file=str(tls / "ca.pem"), tls_client_cert=str(tls / "client.pem"),
                    tls_client_key=str(tls / "client-key.pem"), require_encryption=True)


def option(command: list[str], name: str) -> str:
    """The value after ``name`` in ``command`` (exactly once)."""
    assert command.count(name) == 1, f"{name} appears {command.count(name)} times in {command}"
    return command[command.index(name) + 1]


@pytest.fixture(scope="module")
def tls(tmp_path_factory) -> Path:
    return make_certs(tmp_path_factory.mktemp("dask") / "tls")


@pytest.fixture(scope="module")
def slurm(tls):
    """deploy/dask/slurm_cluster.py's cluster: its TLS scheduler runs here, on loopback; no job is submitted."""
    module = load_slurm_module()
    cluster = module.make_cluster(tls, VENV, processes=PROCESSES, account="ACCOUNT", partition="PARTITION",
                                  walltime="01:30:00", host="127.0.0.1", port=0, dashboard="127.0.0.1:0")
    yield module, cluster
    cluster.close()


@pytest.fixture(scope="module")
def job_script(slurm) -> str:
    return slurm[1].job_script()


@pytest.fixture(scope="module")
def worker_command(job_script) -> list[str]:
    [line] = [line for line in job_script.splitlines() if "distributed.cli.dask_worker" in line]
    return line.split()


@pytest.fixture(scope="module")
def manifest() -> dict[tuple[str, str], dict]:
    docs = list(yaml.safe_load_all((DASK / "kubernetes.yaml").read_text()))
    return {(doc["kind"], doc["metadata"]["name"]): doc for doc in docs}


@pytest.fixture(scope="module")
def pods(manifest) -> dict[str, dict]:
    """The pod templates of the manifest's Deployments, by component."""
    found = {}
    for (kind, _), doc in manifest.items():
        if kind == "Deployment":
            template = doc["spec"]["template"]
            assert doc["spec"]["selector"]["matchLabels"].items() <= template["metadata"]["labels"].items()
            found[template["metadata"]["labels"]["app.kubernetes.io/component"]] = template["spec"]
    assert set(found) == {"scheduler", "worker"}
    return found


def per_worker_memory() -> int:
    """One kernel under the default limits and the worker around it."""
    return GradingLimits().memory_bytes + 1 * GiB


# --- make_certs.sh -----------------------------------------------------------------------------------------------


def test_make_certs_signs_each_role_with_the_class_authority(tls, tmp_path):
    for role in ("scheduler", "worker", "client"):
        subprocess.run(["openssl", "verify", "-CAfile", str(tls / "ca.pem"), str(tls / f"{role}.pem")],
                       check=True, capture_output=True)
        assert (tls / f"{role}-key.pem").stat().st_mode & 0o077 == 0, f"{role}-key.pem is readable by others"
    other = make_certs(tmp_path / "other")
    stranger = subprocess.run(["openssl", "verify", "-CAfile", str(tls / "ca.pem"), str(other / "client.pem")],
                              capture_output=True)
    assert stranger.returncode != 0, "another class's certificate passes this class's authority"
    again = subprocess.run(["sh", str(DASK / "make_certs.sh"), str(tls)], capture_output=True, text=True)
    assert again.returncode != 0 and "not overwriting" in again.stderr


# --- Slurm -------------------------------------------------------------------------------------------------------


def test_slurm_workers_have_one_thread_each_and_a_kernels_memory(job_script, worker_command):
    assert option(worker_command, "--nthreads") == "1"
    assert option(worker_command, "--nworkers") == str(PROCESSES)
    assert parse_bytes(option(worker_command, "--memory-limit")) == per_worker_memory()
    assert f"#SBATCH --cpus-per-task={PROCESSES}\n" in job_script
    [mem] = re.findall(r"^#SBATCH --mem=(\d+)G$", job_script, flags=re.M)
    assert int(mem) * GiB == PROCESSES * per_worker_memory()
    for directive in ("-A ACCOUNT", "-p PARTITION", "-t 01:30:00"):
        assert f"#SBATCH {directive}\n" in job_script


def test_slurm_workers_connect_with_tls(slurm, tls, worker_command):
    _, cluster = slurm
    assert cluster.scheduler_address.startswith("tls://127.0.0.1:")
    assert worker_command[3] == cluster.scheduler_address, "the worker is not given the scheduler's address"
    assert option(worker_command, "--protocol") == "tls://"
    assert option(worker_command, "--tls-ca-file") == str(tls / "ca.pem")
    assert option(worker_command, "--tls-cert") == str(tls / "worker.pem")
    assert option(worker_command, "--tls-key") == str(tls / "worker-key.pem")


def test_slurm_job_runs_in_the_course_environment_and_checks_bubblewrap(job_script, worker_command):
    lines = job_script.splitlines()
    activate = lines.index(f"source {VENV}/bin/activate")
    [probe] = [i for i, line in enumerate(lines) if line.startswith("bwrap --unshare-all")]
    [worker] = [i for i, line in enumerate(lines) if "distributed.cli.dask_worker" in line]
    assert activate < probe < worker
    assert "--proc /proc" in lines[probe], "the probe must mount a fresh /proc, as every kernel does"
    assert "exit 1" in lines[probe], "a node without a working bubblewrap must end the job"
    assert worker_command[:3] == [f"{VENV}/bin/python", "-m", "distributed.cli.dask_worker"]


def test_slurm_worker_command_is_one_dask_worker_accepts(worker_command):
    from distributed.cli.dask_worker import main as dask_worker

    params = dask_worker.make_context("dask worker", worker_command[3:]).params
    assert params["nthreads"] == 1 and params["n_workers"] == str(PROCESSES)


def test_the_scheduler_takes_the_class_certificate_only(slurm, tls, tmp_path):
    from distributed import Client

    _, cluster = slurm
    with Client(cluster.scheduler_address, security=client_security(tls), timeout=20) as client:
        assert client.scheduler_info()["address"] == cluster.scheduler_address
    plain = cluster.scheduler_address.replace("tls://", "tcp://")
    with pytest.raises(OSError):
        Client(plain, timeout=3)
    stranger = make_certs(tmp_path / "stranger")
    with pytest.raises(OSError):
        Client(cluster.scheduler_address, security=client_security(stranger), timeout=3)


# --- Kubernetes --------------------------------------------------------------------------------------------------


def container(pod: dict) -> dict:
    [only] = pod["containers"]
    return only


def mounted_files(pod: dict) -> dict[str, str]:
    """Path in the container -> key of the TLS Secret, for the pod's secret volume."""
    [mount] = container(pod)["volumeMounts"]
    [volume] = [v for v in pod["volumes"] if v["name"] == mount["name"]]
    assert mount["readOnly"] is True and volume["secret"]["secretName"] == "dp-grading-tls"
    return {f"{mount['mountPath']}/{item['path']}": item["key"] for item in volume["secret"]["items"]}


def test_kubernetes_uses_the_course_image(pods):
    values = yaml.safe_load((DEPLOY / "kubernetes" / "values.yaml").read_text())
    image = f"{values['singleuser']['image']['name']}:{values['singleuser']['image']['tag']}"
    assert {component: container(pod)["image"] for component, pod in pods.items()} == {
        "scheduler": image, "worker": image}


def test_kubernetes_workers_reach_the_scheduler_service_with_tls(manifest, pods):
    service = manifest[("Service", "dp-grading-scheduler")]
    scheduler = container(pods["scheduler"])
    args = container(pods["worker"])["args"]
    assert args[:2] == ["dask", "worker"]
    [comm] = [p for p in service["spec"]["ports"] if p["name"] == "tls-comm"]
    assert args[2] == f"tls://{service['metadata']['name']}:{comm['port']}"
    ports = {p["name"]: p["containerPort"] for p in scheduler["ports"]}
    assert ports[comm["targetPort"]] == comm["port"] == int(option(scheduler["args"], "--port"))
    assert option(scheduler["args"], "--protocol") == "tls"
    labels = manifest[("Deployment", "dp-grading-scheduler")]["spec"]["template"]["metadata"]["labels"]
    assert service["spec"]["selector"].items() <= labels.items()
    for component, role in (("worker", "worker"), ("scheduler", "scheduler")):
        files = mounted_files(pods[component])
        command = container(pods[component])["args"]
        assert files[option(command, "--tls-ca-file")] == "ca.pem"
        assert files[option(command, "--tls-cert")] == f"{role}.pem"
        assert files[option(command, "--tls-key")] == f"{role}-key.pem"
        assert "ca-key.pem" not in files.values() and "client-key.pem" not in files.values()


def test_kubernetes_worker_is_one_thread_with_a_kernels_memory(pods):
    worker = container(pods["worker"])
    assert option(worker["args"], "--nthreads") == "1" and option(worker["args"], "--nworkers") == "1"
    memory = parse_bytes(option(worker["args"], "--memory-limit"))
    assert memory == per_worker_memory()
    resources = worker["resources"]
    assert parse_bytes(resources["limits"]["memory"].replace("Gi", "GiB")) == memory
    assert resources["requests"]["memory"] == resources["limits"]["memory"]
    assert resources["limits"]["cpu"] == "1"


def test_kubernetes_worker_may_run_bubblewrap_and_nothing_more(pods):
    worker = pods["worker"]
    assert worker["hostUsers"] is False, "procMount: Unmasked is refused outside a user namespace of the pod's own"
    assert worker["securityContext"]["seccompProfile"] == {"type": "Unconfined"}
    assert worker["securityContext"]["appArmorProfile"] == {"type": "Unconfined"}
    assert worker["securityContext"]["runAsNonRoot"] is True
    uid = re.search(r"useradd .*--uid (\d+) jovyan", (DEPLOY / "kubernetes" / "Dockerfile").read_text()).group(1)
    assert worker["securityContext"]["runAsUser"] == int(uid)
    context = container(worker)["securityContext"]
    assert context["procMount"] == "Unmasked"
    assert context["privileged"] is False and context["allowPrivilegeEscalation"] is False
    assert context["capabilities"] == {"drop": ["ALL"]}
    assert "add" not in context["capabilities"]
    scheduler = pods["scheduler"]
    assert "hostUsers" not in scheduler and "procMount" not in container(scheduler)["securityContext"]
    assert scheduler["securityContext"]["seccompProfile"] == {"type": "RuntimeDefault"}


def in_a_fake_mount(command: list[str], pod: dict, tls: Path, mount: Path) -> list[str]:
    """``command`` with the Secret's files of ``pod`` copied from ``tls`` to ``mount``, as Kubernetes mounts them."""
    files = mounted_files(pod)
    mount.mkdir()
    command = list(command)
    for path, key in files.items():
        copy = mount / Path(path).name
        shutil.copy(tls / key, copy)
        command = [str(copy) if arg == path else arg for arg in command]
    return command


def test_kubernetes_commands_are_ones_dask_accepts(pods, tls, tmp_path):
    from distributed.cli.dask_scheduler import main as dask_scheduler
    from distributed.cli.dask_worker import main as dask_worker

    for component, cli in (("worker", dask_worker), ("scheduler", dask_scheduler)):
        args = in_a_fake_mount(container(pods[component])["args"], pods[component], tls, tmp_path / component)
        assert args[:2] == ["dask", component]
        cli.make_context(f"dask {component}", args[2:])


def with_option(command: list[str], name: str, value: str) -> list[str]:
    """``command`` with the value after ``name`` replaced by ``value``."""
    option(command, name)
    at = command.index(name) + 1
    return command[:at] + [value] + command[at + 1:]


def stop(process: subprocess.Popen) -> None:
    process.terminate()
    try:
        process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def scheduler_address(scheduler_file: Path, scheduler: subprocess.Popen, seconds: float = 60) -> str:
    """The address a ``dask scheduler`` wrote to its ``--scheduler-file``, once the file is complete."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and scheduler.poll() is None:
        try:
            return json.loads(scheduler_file.read_text())["address"]
        except (OSError, ValueError, KeyError):
            time.sleep(0.2)
    raise AssertionError(f"the scheduler wrote no address (exit status {scheduler.poll()})")


def test_kubernetes_scheduler_and_worker_as_written_work_together_over_tls_only(pods, tls, tmp_path):
    """The manifest's two commands, run here: only the certificate paths, the ports and the address change."""
    from distributed import Client

    dask = str(Path(sys.executable).with_name("dask"))
    scheduler_args = in_a_fake_mount(container(pods["scheduler"])["args"], pods["scheduler"], tls, tmp_path / "s")
    scheduler_args = with_option(with_option(scheduler_args, "--port", "0"), "--dashboard-address", "127.0.0.1:0")
    scheduler_file = tmp_path / "scheduler.json"
    scheduler = subprocess.Popen([dask, *scheduler_args[1:], "--host", "127.0.0.1", "--scheduler-file",
                                  str(scheduler_file)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    processes = [scheduler]
    try:
        address = scheduler_address(scheduler_file, scheduler)
        assert address.startswith("tls://127.0.0.1:")
        worker_args = in_a_fake_mount(container(pods["worker"])["args"], pods["worker"], tls, tmp_path / "w")
        processes.append(subprocess.Popen([dask, worker_args[1], address, *worker_args[3:]],
                                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        with Client(address, security=client_security(tls), timeout=20) as client:
            deadline = time.monotonic() + 90
            while not client.nthreads() and time.monotonic() < deadline and processes[1].poll() is None:
                time.sleep(0.5)
            assert list(client.nthreads().values()) == [1], "the worker did not join with one thread"
        with pytest.raises(OSError):
            Client(address.replace("tls://", "tcp://"), timeout=3)
    finally:
        for process in reversed(processes):
            stop(process)


# --- the image ---------------------------------------------------------------------------------------------------


def test_dockerfile_installs_bubblewrap_as_root():
    lines = (DEPLOY / "kubernetes" / "Dockerfile").read_text().splitlines()
    [install] = [i for i, line in enumerate(lines) if re.match(r"RUN apt-get update && apt-get install -y .*\bbubblewrap\b", line)]
    [user] = [i for i, line in enumerate(lines) if line.startswith("USER ")]
    assert install < user
