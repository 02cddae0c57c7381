"""The instructor's similarity report: every reported pair, the two cells side by side (see :mod:`dpgrader.similarity`)."""

from __future__ import annotations

import html
from datetime import datetime
from pathlib import Path

from dpgrader.similarity.matches import (
    MIN_TOKENS,
    THRESHOLD,
    Match,
    _handed_in_first,
    course_matches,
    minimum_sizes,
    submission_times,
)


def report_html(assignment: str, matches: list[Match], threshold: float = THRESHOLD,
                sizes: dict[str, int] | None = None, submitted_at: dict[str, datetime] | None = None) -> str:
    """A self-contained HTML page: every reported pair, the two cells side by side (escaped)."""
    rows = []
    shown = set()
    times = submitted_at or {}
    for match in sorted(matches, key=lambda m: (-m.score, m.grade_id, m.student, m.other)):
        key = (match.grade_id, *sorted((match.student, match.other)))
        if key in shown:
            continue
        shown.add(key)
        first = _handed_in_first(match.student, match.other, times)
        order = f" <span class=order>{html.escape(first)} handed in first</span>" if first else ""
        rows.append(
            f"<section><h2>{html.escape(match.grade_id)}: {html.escape(match.student)} and "
            f"{html.escape(match.other)} <span class=score>similarity {match.score:.2f}</span>{order}</h2>"
            f"<div class=pair><div><h3>{html.escape(match.student)}</h3><pre>{html.escape(match.code)}</pre></div>"
            f"<div><h3>{html.escape(match.other)}</h3><pre>{html.escape(match.other_code)}</pre></div></div></section>"
        )
    small = ", ".join(html.escape(n) for n, s in sorted((sizes or {}).items()) if s < MIN_TOKENS)
    return (
        "<!DOCTYPE html><html><head><meta charset=utf-8>"
        f"<title>Similarity report: {html.escape(assignment)}</title><style>"
        "body{font-family:sans-serif;margin:2em}pre{background:#f6f6f6;padding:.6em;overflow-x:auto;font-size:90%}"
        ".pair{display:grid;grid-template-columns:1fr 1fr;gap:1em}.score{color:#a00;font-weight:normal}"
        ".order{color:#555;font-weight:normal;font-size:80%}"
        f"</style></head><body><h1>Similarity report: {html.escape(assignment)}</h1>"
        f"<p>{len(rows)} pair(s) of solution cells with a similarity of at least {threshold:.2f} (winnowed "
        "syntax-tree fingerprints: renaming, layout, comments, docstrings and statement order do not count). "
        "A match is a reason to look, not a verdict. Exercises too small to tell copies apart"
        f"{': ' + small if small else ''} are not compared.</p>"
        + ("".join(rows) or "<p>No pair above the threshold.</p>")
        + "</body></html>"
    )


def write_report(root: Path, assignment: str, target: Path | None = None, **kwargs) -> tuple[Path, list[Match]]:
    """Write ``<root>/similarity/<assignment>.html``; return its path and the matches."""
    root = Path(root)
    matches = course_matches(root, assignment, **kwargs)
    sizes: dict[str, int] = {}
    for source in sorted((root / "source" / assignment).glob("*.ipynb")):
        sizes.update(minimum_sizes(source))
    target = Path(target or root / "similarity" / f"{assignment}.html")
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(report_html(assignment, matches, kwargs.get("threshold", THRESHOLD), sizes,
                                  submission_times(root, assignment)))
    return target, matches
