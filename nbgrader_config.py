"""nbgrader configuration of the course (read by every `nbgrader` command run from this folder)."""

import os

c = get_config()  # noqa: F821 (provided by nbgrader)

c.CourseDirectory.course_id = "dp-course"
# The folder of this file, absolute: "." makes every command warn "root '.' is not absolute",
# and a copy of the course (the hub's, a test's) finds its own folder.
c.CourseDirectory.root = os.path.dirname(os.path.abspath(__file__))  # noqa: F821 (__file__ set by traitlets)

# Only notebooks (and what they truly need) go to students: nothing else from source/.
# The exchange copies with the same patterns: no "*.txt", or `collect` drops the submission's
# timestamp.txt and `release_feedback` fails. Notes for instructors go in *.md, never *.txt.
c.CourseDirectory.ignore = [
    ".ipynb_checkpoints",
    "*.pyc",
    "__pycache__",
    "feedback",
    ".*",
    "*.md",
    "*.db",
    "*.log",
    "*.bak",
]

# `nbgrader collect` (and formgrader's collect, and `python -m dpgrader.classroom collect`) takes only what a
# student truly handed in: a folder they own, named for them, of plain files, on the roster (the gradebook's
# students), and records the time the exchange saw it, not the student's timestamp.txt (dpgrader/exchange/).
# What it refuses is printed and appended to collect_refused.csv, and the command exits 1.
c.ExchangeFactory.collect = "dpgrader.exchange.CourseCollect"
c.CourseCollect.require_roster = True  # False: any id whose folder its owner made (no roster needed)
# A student id outside [A-Za-z0-9._@-] is refused wherever it would enter the gradebook, and formgrader (when it
# is what reads this file) escapes every name its pages show (dpgrader/formgrader.py, issue 36).
from dpgrader.formgrader import secure_nbgrader  # noqa: E402

secure_nbgrader()

# A new gradebook learns nbgrader's schema revision in this process, not from an `alembic` subprocess
# (about 1.8 CPU s a gradebook: dpgrader/gradebook.py).
from dpgrader.gradebook import stamp_new_gradebooks_in_process  # noqa: E402

stamp_new_gradebooks_in_process()

# The stub students see in a solution cell.
c.ClearSolutions.code_stub = {"python": "# YOUR CODE HERE\nraise NotImplementedError()"}
c.ClearSolutions.text_stub = "YOUR ANSWER HERE"

# Every limit of a grading run, in one place (dpgrader/limits.py lists them with their
# defaults; `python -m dpgrader.classroom grade --limit NAME=VALUE` changes one for a run).
# c.Execute.timeout and the sandbox's former settings are refused with their new names.
# An infinite loop costs that student cell_seconds and one cell, nothing more.
c.GradingLimits.cell_seconds = 60
c.GradingLimits.memory_bytes = 2 << 30  # per kernel, with everything it starts
c.GradingLimits.cpu_cores = 1.0  # a kernel's CPU cap: a classmate graded beside it keeps the rest

# Every grading kernel runs in a bubblewrap sandbox with those limits (dpgrader/sandbox/).
# Without bubblewrap, grading stops and says how to fix it;
# DPLIB_NO_SANDBOX=1 grades unsandboxed anyway (unsafe).
c.Execute.kernel_manager_class = "dpgrader.sandbox.SandboxedKernelManager"

# A deleted test cell, or one whose metadata was stripped by copy-paste, comes back
# from the gradebook and is scored.
c.OverwriteCells.add_missing_cells = True

# Safety net: nbgrader scores 0 for any test cell that writes to stderr. Tests already
# silence what they cause (dplib.testing.quiet); this drops stray warning lines too.
c.IgnorePattern.enabled = True
c.IgnorePattern.pattern = r"\b\w*Warning\b"

# Autograding that survives real submissions (dpgrader/preprocessors/ says why each
# replacement is needed): duplicated or hand-edited nbgrader metadata, deleted test and
# read-only cells, a dead or unresponsive kernel, monkeypatched builtins/numpy/test helpers,
# and test cells that award themselves partial credit. Same order as nbgrader's defaults.
c.Autograde.sanitize_preprocessors = [
    "nbgrader.preprocessors.ClearOutput",
    "dpgrader.preprocessors.SanitizeMetadata",  # replaces DeduplicateIds
    "nbgrader.preprocessors.OverwriteKernelspec",
    "dpgrader.preprocessors.RestoreCells",  # replaces OverwriteCells
    "nbgrader.preprocessors.CheckCellMetadata",
]
c.Autograde.autograde_preprocessors = [
    "dpgrader.preprocessors.GuardedExecute",  # replaces Execute (c.Execute.* still applies)
    "nbgrader.preprocessors.IgnorePattern",
    "dpgrader.preprocessors.AllOrNothingTests",
    "nbconvert.preprocessors.ClearMetadataPreprocessor",
    "nbgrader.preprocessors.LimitOutput",
    "nbgrader.preprocessors.SaveAutoGrades",
    "nbgrader.preprocessors.AssignLatePenalties",
    "nbgrader.preprocessors.CheckCellMetadata",
    # Last: the autograded notebook on disk, which formgrader renders with its own HTMLExporter, holds no
    # active content (scripts, event handlers, javascript: links, widget views; nh3 allow-list).
    "dpgrader.preprocessors.NeutralizeActiveContent",
]
# nbconvert's own HTMLExporter.sanitize_html is not a second layer here: formgrader's exporter does not read
# this file, and its bleach allow-list would strip the feedback's paragraphs, images and MathML.
# NamedFeedbackExporter cleans with nh3 instead (dpgrader/preprocessors/feedback.py).

# Feedback entries are named after the exercise ("Tests of uniqueness"), not "Test cell". Only the
# feedback exporter gets the template: a global HTMLExporter.template_name would also replace
# formgrader's grading page.
from dpgrader.preprocessors import FEEDBACK_TEMPLATE_DIRS  # noqa: E402

c.GenerateFeedback.exporter_class = "dpgrader.preprocessors.NamedFeedbackExporter"
c.NamedFeedbackExporter.template_name = "feedback_named"
c.NamedFeedbackExporter.extra_template_basedirs = FEEDBACK_TEMPLATE_DIRS

# Feedback shows each test's points and failure message, never the code of a hidden test
# (nbgrader's own feedback shows it: nbgrader#917, #1363).
c.GenerateFeedback.preprocessors = [
    "dpgrader.preprocessors.GetGradesWithPending",  # GetGrades; a written answer awaiting a grader shows as pending
    "dpgrader.preprocessors.HideReviewNotes",  # copy and tampering flags stay in formgrader
    "nbconvert.preprocessors.CSSHTMLHeaderPreprocessor",
    "dpgrader.preprocessors.HideHiddenTests",
    "dpgrader.preprocessors.NeutralizeActiveContent",  # again, for notebooks autograded before it existed
    "dpgrader.preprocessors.mathml.MathMLPreprocessor",  # math renders offline (no MathJax CDN)
]
