"""What a grading kernel is charged for an interval of wall-clock time: the time it got, not the time others took.

:class:`~dpgrader.preprocessors.execute.GuardedExecute` charges each interval between two readings of the
kernel (its threads' wait for a CPU, its cgroup's CPU and throttled periods) to the running cell's limit and
the notebook's time budget.
"""

from __future__ import annotations

FAIR_SHARE = 0.9  # a kernel that used this much of its CPU cap in an interval was not starved in it
MAX_STRETCH = 4  # no time limit lasts longer than this many times its length in wall-clock seconds


def charged_seconds(wall: float, waited: float, cpu: float | None, cores: float | None, throttled: float = 0.0) -> float:
    """The seconds of an interval of ``wall`` seconds charged to a kernel's limits.

    ``waited``: seconds its threads waited, ready to run, for a CPU in that interval (summed over its
    threads); ``cpu``: CPU seconds its cgroup used; ``cores``: its cgroup's CPU cap; ``throttled``: the
    fraction of its CFS periods in the interval in which that cap stopped it. A kernel that got its
    share (``cpu >= FAIR_SHARE * cores * wall``) is charged the whole interval (whatever it waited for
    were its own processes). One that got less may have been starved by others: its wait is given back,
    but never

    - the part of the interval its own cap throttled it in (it got its whole cap in those periods);
    - so much that it is charged less than the CPU it used over its cap, ``cpu / cores`` (threads that
      wait for each other, or for the cap, add up their waits: that is no one else's doing);
    - more than ``1 - 1 / MAX_STRETCH`` of the interval.

    So a time limit of ``t`` seconds never buys more than ``t * cores`` CPU seconds.

    >>> charged_seconds(8.0, 6.0, cpu=2.0, cores=1.0)  # starved: charged what it got
    2.0
    >>> charged_seconds(8.0, 7.9, cpu=0.1, cores=1.0)  # never less than a quarter
    2.0
    >>> charged_seconds(8.0, 6.0, cpu=7.5, cores=1.0)  # it used its share: its own processes kept it waiting
    8.0
    >>> charged_seconds(8.0, 25.0, cpu=4.4, cores=1.0)  # four threads and a sleep: charged at least the CPU it used
    4.4
    >>> charged_seconds(8.0, 6.0, cpu=5.0, cores=1.0, throttled=1.0)  # stopped by its own cap in every period
    8.0
    """
    if cpu is not None and cores is not None and cpu >= FAIR_SHARE * cores * wall:
        return wall
    unthrottled = 1.0 - min(max(throttled, 0.0), 1.0)
    given = min(max(waited, 0.0), wall * (1 - 1 / MAX_STRETCH), wall * unthrottled)
    if cpu is not None and cores is not None:
        given = min(given, wall - cpu / cores)
    return wall - max(given, 0.0)
