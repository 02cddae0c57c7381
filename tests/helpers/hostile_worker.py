"""A grading worker process that lies on its result pipe, for the tests of :mod:`dpgrader.grading.pool`.

Run as the pool runs a worker (``python -m helpers.hostile_worker <scratch>``). It grades nothing: for
every task it writes, before the one genuine answer (the task's token, the message ``genuine <student>``),
every forgery a worker's pipe could carry, and after it the genuine answer again:

- a line that is no JSON; a result before any task was sent;
- a result with a token never sent, and one with the token of the task this worker had before (a replay);
- the right token with a field naming another student, with files outside the result's folder, with a
  score that is no number;
- the genuine result once more once it was accepted.
"""

from __future__ import annotations

import json
import secrets
import sys

from dpgrader.grading.task import GradingResult, PackedTask
from dpgrader.grading.worker import READY
from dpgrader.outcomes import Status


def _line(result: GradingResult, **changed) -> str:
    fields = json.loads(result.to_bytes())
    fields.update(changed)
    return json.dumps(fields)


def forgeries(task: PackedTask, previous: str | None) -> list[str]:
    """The lines written for ``task``: the forgeries, the genuine result, and the genuine result replayed."""
    genuine = GradingResult(task.token, Status.OK, (f"genuine {task.student}",))
    lines = ["not json at all", _line(genuine, token=secrets.token_hex(16), messages=["never sent"])]
    if previous is not None:
        lines.append(_line(genuine, token=previous, messages=["replayed from the task before"]))
    lines += [
        _line(genuine, student="someone-else", messages=["names another student"]),
        _line(genuine, autograded={"../../escaped.ipynb": "e30="}, messages=["a file outside its folder"]),
        _line(genuine, feedback={"/tmp/escaped.html": "e30="}, messages=["an absolute file"]),
        _line(genuine, notebooks={"nb": {"scores": {"t": {"auto_score": "1e9", "needs_manual_grade": False}},
                                         "comments": {}, "late_penalty": None}}, messages=["a score that is text"]),
        genuine.to_bytes().decode(),
        _line(genuine, messages=["the genuine result replayed"]),
    ]
    return lines


def main() -> None:
    out = sys.stdout
    out.write(READY + "\n")
    out.write(GradingResult(secrets.token_hex(16), Status.OK, ("before any task",)).to_bytes().decode() + "\n")
    out.flush()
    previous = None
    for line in sys.stdin:
        if line.strip():
            task = PackedTask.from_bytes(json.loads(line)["task"])
            out.write("".join(forged + "\n" for forged in forgeries(task, previous)))
            out.flush()
            previous = task.token


if __name__ == "__main__":
    main()
