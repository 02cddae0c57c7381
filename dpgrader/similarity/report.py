"""The instructor's similarity report: every reported pair side by side, the copies of the reference counted, and the
submissions that could not be compared (see :mod:`dpgrader.similarity`)."""

from __future__ import annotations

import html
from datetime import datetime
from pathlib import Path

from dpgrader.course import Course, notebooks_of
from dpgrader.similarity.flags import handed_in_first, submission_times
from dpgrader.similarity.matches import (
    MIN_TOKENS,
    REFERENCE,
    REFERENCE_MIN_TOKENS,
    REFERENCE_THRESHOLD,
    THRESHOLD,
    UNCHECKED,
    Match,
    course_matches,
    minimum_sizes,
)


def _pair(match: Match, first: str | None) -> str:
    order = f" <span class=order>{html.escape(first)} handed in first</span>" if first else ""
    return (
        f"<section><h2>{html.escape(match.grade_id)}: {html.escape(match.student)} and "
        f"{html.escape(match.other)} <span class=score>similarity {match.score:.2f}</span>{order}</h2>"
        f"<div class=pair><div><h3>{html.escape(match.student)}</h3><pre>{html.escape(match.code)}</pre></div>"
        f"<div><h3>{html.escape(match.other)}</h3><pre>{html.escape(match.other_code)}</pre></div></div></section>"
    )


def reference_counts(matches: list[Match]) -> tuple[int, dict[str, int]]:
    """How many submissions hand in the instructor's reference on at least one exercise, and how many per exercise."""
    copies = [m for m in matches if m.kind == REFERENCE]
    per_exercise: dict[str, int] = {}
    for grade_id, _ in sorted({(m.grade_id, m.student) for m in copies}):
        per_exercise[grade_id] = per_exercise.get(grade_id, 0) + 1
    return len({m.student for m in copies}), per_exercise


def report_html(assignment: str, matches: list[Match], threshold: float = THRESHOLD,
                sizes: dict[str, int] | None = None, submitted_at: dict[str, datetime] | None = None) -> str:
    """A self-contained HTML page: every reported pair with the two cells side by side (escaped), the number of
    copies of the instructor's reference (a leaked solution key shows up as many), the submissions not compared."""
    rows, shown = [], set()
    times = submitted_at or {}
    pairs = [m for m in matches if m.kind not in (REFERENCE, UNCHECKED)]
    for match in sorted(pairs, key=lambda m: (-m.score, m.grade_id, m.student, m.other)):
        key = (match.grade_id, *sorted((match.student, match.other)))
        if key not in shown:
            shown.add(key)
            rows.append(_pair(match, handed_in_first(match.student, match.other, times)))
    students, per_exercise = reference_counts(matches)
    copies = "".join(_pair(m, None) for m in sorted((m for m in matches if m.kind == REFERENCE),
                                                    key=lambda m: (m.grade_id, m.student)))
    unchecked = [f"<li>{html.escape(m.student)}: {html.escape(m.grade_id or 'the notebook')} ({html.escape(m.other)})</li>"
                 for m in matches if m.kind == UNCHECKED]
    small = ", ".join(html.escape(n) for n, s in sorted((sizes or {}).items()) if s < MIN_TOKENS)
    short = ", ".join(html.escape(n) for n, s in sorted((sizes or {}).items()) if MIN_TOKENS <= s < REFERENCE_MIN_TOKENS)
    counts = ", ".join(f"{html.escape(g)} {n}" for g, n in per_exercise.items())
    return (
        "<!DOCTYPE html><html lang=en><head><meta charset=utf-8>"
        # no script runs and nothing loads: every text of a submission is escaped, this is the second layer
        "<meta http-equiv=Content-Security-Policy content=\"default-src 'none'; style-src 'unsafe-inline'; "
        "base-uri 'none'; form-action 'none'\">"
        f"<title>Similarity report: {html.escape(assignment)}</title><style>"
        "body{font-family:sans-serif;margin:2em}pre{background:#f6f6f6;padding:.6em;overflow-x:auto;font-size:90%}"
        ".pair{display:grid;grid-template-columns:1fr 1fr;gap:1em}.score{color:#a00;font-weight:normal}"
        ".order{color:#555;font-weight:normal;font-size:80%}.warning{color:#a00}"
        f"</style></head><body><main><h1>Similarity report: {html.escape(assignment)}</h1>"
        + (f"<p class=warning>{len(unchecked)} submission cell(s) could not be compared: a person must compare "
           f"them.</p><ul>{''.join(unchecked)}</ul>" if unchecked else "")
        + f"<p>{len(rows)} pair(s) of solution cells with a similarity of at least {threshold:.2f} (winnowed "
        "syntax-tree fingerprints: renaming, layout, comments, docstrings, statement order and statements whose "
        "result nothing uses do not count), or a copy of dplib's implementation. A match is a reason to look, not "
        f"a verdict. Exercises too small to tell copies apart{': ' + small if small else ''} are not compared.</p>"
        + ("".join(rows) or "<p>No pair above the threshold.</p>")
        + f"<h2 id=reference>Copies of the instructor's reference solution</h2><p class=count>{students} "
        f"submission(s) hold at least {REFERENCE_THRESHOLD:.0%} of the reference solution of an exercise"
        f"{' (' + counts + ')' if counts else ''}. Many of them point to a leaked solution key. Exercises whose "
        f"reference is too short for independent answers to differ{': ' + short if short else ''} are not "
        "counted.</p>" + copies
        + "</main></body></html>"
    )


def write_report(root: Path | Course, assignment: str, target: Path | None = None, **kwargs) -> tuple[Path, list[Match]]:
    """Write ``<root>/similarity/<assignment>.html``; return its path and the matches."""
    course = root if isinstance(root, Course) else Course(root)
    matches = course_matches(course, assignment, **kwargs)
    sizes: dict[str, int] = {}
    for source in notebooks_of(course.source(assignment)):
        sizes.update(minimum_sizes(source))
    target = Path(target or course.similarity_report(assignment))
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(report_html(assignment, matches, kwargs.get("threshold", THRESHOLD), sizes,
                                  submission_times(course.root, assignment)))
    return target, matches
