"""IPython magics and shell commands in a student's cell: the harmless ones, the code they run, and the rest.

IPython rewrites a cell before Python reads it: ``%matplotlib inline`` becomes
``get_ipython().run_line_magic('matplotlib', 'inline')``, a ``%%time`` cell becomes
``get_ipython().run_cell_magic('time', '', body)``, ``!pip list`` becomes
``get_ipython().system('pip list')`` (``x = !cmd``: ``getoutput``). Any use of the shell
is flagged (it can read every cell's code, the hidden tests' included, and change how
cells run), except the magics an honest notebook keeps, with arguments that do nothing else:

- ``%matplotlib`` with a known backend (``inline``, ``widget``, ...; not ``module://...``,
  which imports a module);
- ``%time``, ``%timeit``, ``%%time``, ``%%timeit``: the code they time is reviewed like the
  rest of the cell (read with IPython's own option parsers, so it is the code IPython runs);
  ``%timeit -v name`` binds ``name``, which is checked like an assignment;
- ``%config InlineBackend.<trait> = <literal>`` (``%config`` runs its argument as code),
  ``%precision``, ``%who``, ``%whos``, ``%pwd``, ``%lsmagic``, ``%autosave``;
- ``name?`` and ``name??`` (``%pinfo``, ``%pinfo2``, ``%pdoc``, ``%pdef``) on a dotted name;
- ``%pip`` and ``!pip`` with ``list``, ``freeze``, ``show <packages>`` or ``--version``.

IPython expands ``{expression}`` and ``$name`` in the arguments of most magics and of
shell commands, running the expression: an argument holding ``{``, ``}`` or ``$`` is never
harmless. Everything else (``%run``, ``%load``, ``%history``, ``%reset``, ``%env``,
``%store``, ``%load_ext``, ``%%bash``, ``%pip install``, ``!`` with any other command, ...)
is flagged with what it can do (:data:`DANGEROUS`).
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

#: The methods of the shell IPython's rewriting calls, with what their arguments are.
SHELL_METHODS = ("run_line_magic", "run_cell_magic", "system", "getoutput")
#: IPython runs ``{expression}`` and ``$name`` in these arguments (not in those of %time and %timeit).
EXPANDS = re.compile(r"[{}$]")
_DOTTED = r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*"
_PIP = r"(?:list|freeze|--version|show(?:\s+[\w.\-]+)+)"
#: Line magics an honest notebook keeps, with the arguments (whole, stripped) that are harmless.
HONEST_LINE_MAGICS = {
    "matplotlib": re.compile(r"|inline|widget|ipympl|notebook|nbagg|agg|svg|pdf|-l|--list"),
    "config": re.compile(r"|InlineBackend|InlineBackend\.\w+\s*=\s*(?:'[\w.\-]*'|\"[\w.\-]*\"|-?\d+(?:\.\d+)?|True|False|None)"),
    "precision": re.compile(r"|\d{1,2}|%[#0\- +]?\d{0,2}(?:\.\d{1,2})?[eEfFgG]"),
    "who": re.compile(r"(?:\w+(?:\s+\w+)*)?"),
    "whos": re.compile(r"(?:\w+(?:\s+\w+)*)?"),
    "who_ls": re.compile(r"(?:\w+(?:\s+\w+)*)?"),
    "pwd": re.compile(r""),
    "lsmagic": re.compile(r""),
    "autosave": re.compile(r"\d{1,5}"),
    "pip": re.compile(_PIP),
    "pinfo": re.compile(_DOTTED),
    "pinfo2": re.compile(_DOTTED),
    "pdoc": re.compile(_DOTTED),
    "pdef": re.compile(_DOTTED),
}
#: Shell commands (``!cmd``, ``x = !cmd``) an honest notebook keeps.
HONEST_COMMANDS = re.compile(rf"(?:python3?\s+-m\s+)?pip3?\s+{_PIP}|python3?\s+--version")
#: Magics whose argument (and body) is Python code, reviewed like the rest of the cell.
TIMING_MAGICS = ("time", "timeit")

_SHELL = "runs a shell command"
_FILES = "runs code from a file or from the notebook's history, out of the review's sight"
#: What the magics the review knows to be dangerous can do: ``name -> (kind, reason)``.
DANGEROUS = {
    "history": ("introspection", "reads every cell's code, the hidden tests' included"),
    "hist": ("introspection", "reads every cell's code, the hidden tests' included"),
    "rerun": ("dynamic code", "runs earlier cells again, the hidden tests' included"),
    "recall": ("dynamic code", "brings back earlier cells, the hidden tests' included"),
    "macro": ("dynamic code", "builds code from earlier cells"),
    "save": ("writes files", "writes cells to a file"),
    "logstart": ("writes files", "logs every cell, the hidden tests' included, to a file"),
    "run": ("dynamic code", _FILES),
    "load": ("dynamic code", _FILES),
    "loadpy": ("dynamic code", _FILES),
    "edit": ("dynamic code", _FILES),
    "reset": ("tampering", "deletes the notebook's names, the test helpers' included"),
    "reset_selective": ("tampering", "deletes the notebook's names, the test helpers' included"),
    "xdel": ("tampering", "deletes a name of the notebook"),
    "env": ("process control", "reads or changes environment variables"),
    "set_env": ("process control", "changes environment variables"),
    "store": ("writes files", "stores values in a database that outlives the kernel"),
    "load_ext": ("dynamic code", "loads an IPython extension: its code runs and can hook every later cell, "
                                 "the hidden tests' included"),
    "reload_ext": ("dynamic code", "reloads an IPython extension (its code runs)"),
    "unload_ext": ("dynamic code", "unloads an IPython extension"),
    "autoreload": ("dynamic code", "reloads modules before every cell, the hidden tests' included "
                                   "(a reloaded module replaces the functions the tests call)"),
    "aimport": ("dynamic code", "reloads modules before every cell, the hidden tests' included"),
    "bash": ("process control", _SHELL), "sh": ("process control", _SHELL),
    "script": ("process control", _SHELL), "system": ("process control", _SHELL),
    "sx": ("process control", _SHELL), "perl": ("process control", _SHELL),
    "ruby": ("process control", _SHELL), "python": ("process control", "runs code in another Python"),
    "python2": ("process control", "runs code in another Python"),
    "python3": ("process control", "runs code in another Python"),
    "pypy": ("process control", "runs code in another Python"),
    "killbgscripts": ("process control", "kills background processes"),
    "writefile": ("writes files", "writes a file"),
    "pip": ("process control", "installs or removes packages (only %pip list, freeze, show are harmless)"),
    "conda": ("process control", "installs or removes packages"),
    "mamba": ("process control", "installs or removes packages"),
    "micromamba": ("process control", "installs or removes packages"),
    "cd": ("files", "changes the working directory"),
    "pushd": ("files", "changes the working directory"), "popd": ("files", "changes the working directory"),
    "bookmark": ("files", "changes the working directory"), "dhist": ("files", "lists visited directories"),
    "ls": ("files", "lists the course's files"), "cat": ("files", "reads a file"),
    "rm": ("writes files", "deletes files"), "mv": ("writes files", "moves files"), "cp": ("writes files", "copies files"),
    "mkdir": ("writes files", "creates folders"), "rmdir": ("writes files", "deletes folders"),
    "alias": ("process control", "defines shell commands"), "unalias": ("process control", "defines shell commands"),
    "rehashx": ("process control", "defines shell commands"),
    "xmode": ("tampering", "changes how errors are reported (the tracebacks of failing tests)"),
    "pdb": ("process control", "starts the debugger on errors"), "debug": ("process control", "starts the debugger"),
    "tb": ("introspection", "prints the last traceback (it reaches the tests' frames)"),
    "prun": ("dynamic code", "profiles code (which the review does not follow)"),
    "capture": ("tampering", "hides a cell's output"),
    "automagic": ("tampering", "changes how the shell reads cells"),
    "autocall": ("tampering", "changes how the shell reads cells"),
    "doctest_mode": ("tampering", "changes how the shell reads cells"),
    "config": ("dynamic code", "changes the shell's configuration (%config runs its argument as code; only "
                               "InlineBackend settings with a plain value are harmless)"),
    "matplotlib": ("dynamic code", "picks a plotting backend the review does not know (module://... imports a module)"),
    "html": ("tampering", "shows raw HTML (it runs in the browser of whoever opens the graded notebook)"),
    "javascript": ("tampering", "runs JavaScript in the browser of whoever opens the graded notebook"),
    "js": ("tampering", "runs JavaScript in the browser of whoever opens the graded notebook"),
    "psource": ("introspection", "reads source code"), "pfile": ("introspection", "reads a source file"),
}


@dataclass(frozen=True)
class ShellCall:
    """One call IPython's rewriting makes: a line or cell magic, or a shell command (``name`` ``"!"``)."""

    method: str
    name: str
    line: str
    body: str | None = None

    def __str__(self) -> str:
        if self.name == "!":
            return f"!{self.line}"
        head = f"%%{self.name}" if self.body is not None else f"%{self.name}"
        return f"{head} {self.line}".strip()


@dataclass(frozen=True)
class Verdict:
    """What to do with a :class:`ShellCall`: a flag (``kind``, ``reason``) or none, and the code it runs.

    ``code`` holds ``(python_code, first_line)`` pairs to review as part of the cell
    (``first_line``: the cell line the code starts on); ``binds`` the names it assigns.
    """

    kind: str | None = None
    reason: str | None = None
    code: tuple[tuple[str, int], ...] = ()
    binds: tuple[str, ...] = ()


def shell_call(node: ast.Call, receiver: str | None) -> ShellCall | None:
    """The :class:`ShellCall` of ``node`` if it is ``<shell>.<method>('<constant>', ...)``, else None.

    ``receiver`` is the resolved path of the object the method is called on
    (``"IPython.shell"`` for ``get_ipython()``). Arguments that are not string literals
    (code that builds a magic at run time) are not a :class:`ShellCall`: the review flags
    them as any other use of the shell.
    """
    if receiver != "IPython.shell" or not isinstance(node.func, ast.Attribute) or node.func.attr not in SHELL_METHODS:
        return None
    expected = {"run_line_magic": 2, "run_cell_magic": 3, "system": 1, "getoutput": 1}[node.func.attr]
    if node.keywords or len(node.args) != expected:
        return None
    if not all(isinstance(a, ast.Constant) and isinstance(a.value, str) for a in node.args):
        return None
    values = [a.value for a in node.args]
    if node.func.attr in ("system", "getoutput"):
        return ShellCall(node.func.attr, "!", values[0])
    return ShellCall(node.func.attr, values[0], values[1], values[2] if len(values) == 3 else None)


def judge(call: ShellCall, line: int) -> Verdict:
    """Whether ``call`` (on cell line ``line``) is harmless, and which Python code it runs."""
    shown = str(call) if len(str(call)) <= 80 else str(call)[:77] + "..."
    if call.name == "!":
        if HONEST_COMMANDS.fullmatch(call.line.strip()) and not EXPANDS.search(call.line):
            return Verdict()
        return Verdict("process control", f"runs a shell command ({shown}): it can read and change the course's "
                                          "files, the tests' included")
    if call.name in TIMING_MAGICS:
        return _timing(call, line, shown)
    pattern = HONEST_LINE_MAGICS.get(call.name)
    if call.body is None and pattern is not None and pattern.fullmatch(call.line.strip()) and not EXPANDS.search(call.line) \
            and "__" not in call.line:
        return Verdict()
    kind, why = DANGEROUS.get(call.name, ("introspection", "uses the IPython shell through a magic the review does "
                                                          "not know to be harmless"))
    return Verdict(kind, f"runs the magic {shown}: {why}")


def _timing(call: ShellCall, line: int, shown: str) -> Verdict:
    """``%time``/``%timeit`` (line or cell): the code they run, read with IPython's own parsers."""
    from IPython.core.error import UsageError
    from IPython.core.magic_arguments import parse_argstring
    from IPython.core.magics.execution import ExecutionMagics

    try:
        if call.name == "time":
            _, extra = parse_argstring(ExecutionMagics.time, call.line, partial=True)
            options, statement = {}, " ".join(extra)
        else:
            options, statement = ExecutionMagics(shell=None).parse_options(
                call.line, "n:r:tcp:qov:", posix=False, strict=False, preserve_non_opts=True)
    except (UsageError, ValueError, SystemExit) as error:  # IPython would refuse to run it: say so anyway
        return Verdict("introspection", f"runs the magic {shown} with arguments the review cannot read ({error})")
    code = [(statement, line)] if statement.strip() else []
    if call.body is not None:
        code.append((call.body, line + 1))
    binds = (options["v"],) if "v" in options else ()
    return Verdict(code=tuple(code), binds=binds)
