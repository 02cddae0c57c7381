"""Text from a submission, made safe for the places the grader writes it: a CSV cell, a flag, a terminal.

What a student hands in reaches the instructor as text: a notebook's file name in a message, code
quoted back in a review flag (``runs a shell command (!echo ...)``), an error message. Three places
read that text as more than text:

- **a spreadsheet** opening ``grades.csv`` runs a cell that starts with ``=``, ``+``, ``-`` or ``@``
  as a formula (``=HYPERLINK(...)`` links out, ``=WEBSERVICE(...)`` sends data away), and a tab or
  carriage return starts one in some of them. :func:`csv_field` neutralizes such a cell as OWASP
  advises ("CSV Injection", owasp.org/www-community/attacks/CSV_Injection): a leading ``'``, which
  spreadsheets take as "text" and do not show. A number (``-1.5``) is left as it is, and so is a
  field that is not text. A field that already starts with ``'`` gets one more, so reading the
  file back (:func:`from_csv_field`) gives every field exactly as it was.
- **a terminal** obeys the control characters in what is printed to it: ``ESC ]0;...BEL`` sets the
  window title, ``ESC [2J`` clears the screen, ``CR`` overwrites a line, and Unicode's bidirectional
  overrides (``U+202E``) show a line in another order than it is. :func:`terminal_text` writes every
  such character as a visible escape (``\\x1b``, ``\\u202e``); line breaks and tabs are kept.
- **a flag** is one line of ``grades.csv``'s ``flags`` cell, which joins flags with ``"; "``, and of
  the summary and formgrader's comment: :func:`flag_text` makes it one line without ``;``, its
  control characters escaped as above.
"""

from __future__ import annotations

import csv
import re
from collections.abc import Iterable, Mapping
from pathlib import Path

#: First characters that make a spreadsheet read a cell as a formula (OWASP's list), and the quote that escapes them.
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
QUOTE = "'"

# C0 controls but tab and line feed, DEL, C1 controls, and Unicode's invisible direction marks and overrides
# (LRM, RLM, ALM, LRE/RLE/PDF/LRO/RLO, LRI/RLI/FSI/PDI).
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u061c\u202a-\u202e\u2066-\u2069]")
_CONTROL_AND_BREAKS = re.compile("[\x00-\x1f\x7f-\x9f\u200e\u200f\u061c\u202a-\u202e\u2066-\u2069\u2028\u2029]")
_NUMBER = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?")


def _escape(match: re.Match) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def terminal_text(text: object) -> str:
    r"""``text`` as a terminal should receive it: every control character written as a visible escape.

    Line breaks and tabs are kept; ESC, CR, BEL, backspace, the other C0 and C1 controls, DEL and the
    bidirectional marks and overrides become visible escapes (``\x1b``, ``\x0d``, ``\u202e`` ...).

    Examples
    --------
    >>> terminal_text("ok\x1b]0;owned\x07\x1b[2J\nnext")
    'ok\\x1b]0;owned\\x07\\x1b[2J\nnext'
    >>> terminal_text("abc\u202edcba")
    'abc\\u202edcba'
    """
    return _CONTROL.sub(_escape, str(text))


def one_line(text: object) -> str:
    r"""``text`` as one line of a terminal or a table: :func:`terminal_text`, line breaks escaped too.

    >>> one_line("forged\nstudent/01: ok")
    'forged\\x0astudent/01: ok'
    """
    return _CONTROL_AND_BREAKS.sub(_escape, str(text))


def flag_text(text: object) -> str:
    r"""A flag (or any one-line note about a submission) as ``grades.csv``, the summary and formgrader hold it.

    One line (line breaks escaped too), no ``;`` (``grades.csv`` joins flags with ``"; "``: it becomes
    ``,``), control characters escaped as in :func:`terminal_text`.

    Examples
    --------
    >>> flag_text("process control: runs a shell command (!echo \x1b[2J; ls\nrm)")
    'process control: runs a shell command (!echo \\x1b[2J, ls\\x0arm)'
    """
    return one_line(text).replace(";", ",")


def csv_field(value: object) -> object:
    """``value`` as a CSV cell a spreadsheet shows as text: a ``'`` before a leading formula character.

    Values that are not strings, and strings that are numbers, are returned as they are. A string
    starting with ``'`` gets one more ``'`` (a spreadsheet shows one; :func:`from_csv_field` removes one).

    Examples
    --------
    >>> csv_field('=HYPERLINK("http://x","y")')
    '\\'=HYPERLINK("http://x","y")'
    >>> csv_field("-1.5"), csv_field(-1.5), csv_field("@SUM(A1)"), csv_field("ok")
    ('-1.5', -1.5, "'@SUM(A1)", 'ok')
    """
    if not isinstance(value, str) or not value or _NUMBER.fullmatch(value):
        return value
    return QUOTE + value if value.startswith(FORMULA_START + (QUOTE,)) else value


def from_csv_field(text: str) -> str:
    """The value :func:`csv_field` neutralized, read back from a CSV file the grader wrote.

    >>> all(from_csv_field(csv_field(s)) == s for s in ["=1+1", "'quoted", "''", "-1.5", "-x", "plain", ""])
    True
    """
    if text.startswith(QUOTE) and text[1:].startswith(FORMULA_START + (QUOTE,)):
        return text[1:]
    return text


def csv_row(row: Mapping[str, object]) -> dict[str, object]:
    """Every field of ``row`` through :func:`csv_field`."""
    return {key: csv_field(value) for key, value in row.items()}


def write_csv(path: Path, fieldnames: list[str], rows: Iterable[Mapping[str, object]]) -> Path:
    """Write ``rows`` to the CSV file ``path`` (UTF-8, a header first), every field through :func:`csv_field`."""
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=fieldnames)
        writer.writeheader()
        writer.writerows(csv_row(row) for row in rows)
    return Path(path)
