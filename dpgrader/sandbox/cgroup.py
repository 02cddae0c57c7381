"""Limits by cgroup: one cgroup per kernel (v1 or v2) for memory, processes and CPU, and the breaches it saw."""

from __future__ import annotations

import os
import secrets
import signal
import time
from pathlib import Path


from dpgrader.outcomes import Status

# --- cgroups ---------------------------------------------------------------------------------------


CPU_PERIOD_US = 100_000  # the CFS period of the CPU cap (the kernel's default)


class KernelCgroup:
    """A cgroup of one kernel (and all it starts): memory, process-count and CPU limits, and their breaches.

    cgroup v1 (``memory``, ``pids``, ``cpu`` and ``cpuacct`` hierarchies) or v2 (one unified
    hierarchy), created below the grader's own cgroup with an unguessable name. ``memory`` /
    ``pids`` / ``cpu_cap`` are None where the controller is not available or not writable: the
    caller falls back (memory: ``RLIMIT_AS``) or reports it (:meth:`missing`).

    The CPU cap (v1 ``cpu.cfs_quota_us`` over ``cpu.cfs_period_us``, v2 ``cpu.max``) holds every
    process of the cgroup together, whatever session or scheduler autogroup each one starts
    (autogroups only group tasks of the root cgroup): fifty busy ``setsid`` processes of one
    notebook share ``cpu_cores`` cores between them, and a classmate graded beside it keeps the rest.
    """

    def __init__(self, memory_bytes: int, processes: int, cpu_cores: float = 1.0):
        if not cpu_cores > 0:
            raise ValueError(f"cpu_cores must be positive, got {cpu_cores!r}")
        self.name = f"dplib-kernel-{secrets.token_hex(8)}"
        self._folders: set[Path] = set()
        self.memory = self._make("memory", {  # v1 and v2 names; memory + swap capped alike: no swapping past it
            "memory.limit_in_bytes": memory_bytes, "memory.memsw.limit_in_bytes": memory_bytes,
            "memory.max": memory_bytes, "memory.swap.max": 0,
        })
        self.pids = self._make("pids", {"pids.max": processes})
        quota = max(1000, round(cpu_cores * CPU_PERIOD_US))
        self.cpu_cap = self._make("cpu", {"cpu.cfs_period_us": CPU_PERIOD_US, "cpu.cfs_quota_us": quota,  # v1
                                          "cpu.max": f"{quota} {CPU_PERIOD_US}"})  # v2
        # CPU accounting: what grading a notebook costs, kernels included (v1 cpuacct, v2 cpu)
        self.cpu = self._make("cpuacct", {"cpuacct.usage": 0}) or self._make("cpu", {}, accounting=True)

    def missing(self) -> list[str]:
        """The limits that could not be installed (where the grader could make no cgroup of that controller)."""
        return [what for what, folder in (("memory", self.memory), ("processes", self.pids), ("CPU", self.cpu_cap))
                if folder is None]

    def _make(self, controller: str, values: dict, accounting: bool = False) -> Path | None:
        for base in self._bases(controller):
            folder = base / self.name
            if folder not in self._folders:  # v2: one folder for every controller
                try:
                    folder.mkdir()
                except OSError:
                    continue
            try:
                written = 0
                for key, value in values.items():
                    if (folder / key).exists():
                        (folder / key).write_text(str(value))
                        written += 1
                if written or (accounting and (folder / "cpu.stat").exists()):
                    self._folders.add(folder)
                    return folder
            except OSError:
                pass
            if folder not in self._folders:
                self._remove(folder)
        return None

    @staticmethod
    def _bases(controller: str) -> list[Path]:
        """Candidate parent folders for a new cgroup of ``controller``: under the grader's own first."""
        bases = []
        try:
            lines = Path("/proc/self/cgroup").read_text().splitlines()
        except OSError:
            return bases
        for line in lines:
            _, names, path = line.split(":", 2)
            path = path.lstrip("/")
            if controller in names.split(","):
                bases += [Path("/sys/fs/cgroup") / controller / path, Path("/sys/fs/cgroup") / controller]
            elif names == "" and (Path("/sys/fs/cgroup") / "cgroup.controllers").exists():  # v2 only
                v2 = Path("/sys/fs/cgroup") / path
                try:
                    if controller in (v2 / "cgroup.subtree_control").read_text().split():
                        bases.append(v2)
                except OSError:
                    pass
        return bases

    def enter(self, pid: int | None = None) -> None:
        """Move process ``pid`` into the cgroup (default: the calling one, a child before ``exec``)."""
        for folder in self._folders:
            (folder / "cgroup.procs").write_text(str(pid or os.getpid()))

    def breaches(self) -> list[tuple[Status, str]]:
        """The limits that were hit, as notes."""
        found = []
        if self.memory is not None and _counter(self.memory, ("memory.oom_control", "memory.events"), "oom_kill") > 0:
            found.append((Status.MEMORY_LIMIT, "the kernel ran out of its memory limit and was killed"))
        if self.pids is not None and _counter(self.pids, ("pids.events",), "max") > 0:
            found.append((Status.PROCESS_LIMIT, "the notebook tried to start more processes than allowed"))
        return found

    def cpu_seconds(self) -> float | None:
        """CPU seconds used so far by the kernel and everything it started (None without CPU accounting)."""
        if self.cpu is None:
            return None
        try:
            if (self.cpu / "cpuacct.usage").exists():
                return int((self.cpu / "cpuacct.usage").read_text()) / 1e9
        except (OSError, ValueError):
            return None
        return _counter(self.cpu, ("cpu.stat",), "usage_usec") / 1e6

    def cpu_periods(self) -> tuple[int, int] | None:
        """``(periods, throttled)`` so far: CFS periods in which the kernel ran, and those in which its CPU cap stopped it.

        From ``cpu.stat`` (``nr_periods``, ``nr_throttled``; v1 and v2), None without a CPU cap. In a
        throttled period the kernel got its whole cap: nobody else kept it waiting then.
        """
        if self.cpu_cap is None:
            return None
        periods, throttled = (_counter(self.cpu_cap, ("cpu.stat",), key) for key in ("nr_periods", "nr_throttled"))
        return periods, throttled

    def remove(self) -> None:
        for folder in self._folders:
            self._remove(folder)
        self._folders.clear()

    @staticmethod
    def _remove(folder: Path) -> None:
        try:
            for pid in (folder / "cgroup.procs").read_text().split():  # nothing should be left: the PID namespace ended
                try:
                    os.kill(int(pid), signal.SIGKILL)
                except (ProcessLookupError, ValueError):
                    pass
        except OSError:
            pass
        # A cgroup is removable once its last process is reaped: a killed kernel takes milliseconds. Look again
        # after 2, 4, 8 ... ms (at most 50), for 2.5 s in all (a fixed 50 ms cost every graded notebook 50 ms).
        pause, deadline = 0.002, time.monotonic() + 2.5
        while True:
            try:
                folder.rmdir()
                return
            except FileNotFoundError:
                return
            except OSError:
                if time.monotonic() > deadline:
                    return
                time.sleep(pause)
                pause = min(2 * pause, 0.05)


def _counter(folder: Path, files: tuple[str, ...], key: str) -> int:
    for name in files:
        try:
            for line in (folder / name).read_text().splitlines():
                parts = line.split()
                if len(parts) == 2 and parts[0] == key:
                    return int(parts[1])
        except (OSError, ValueError):
            continue
    return 0

