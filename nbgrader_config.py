"""nbgrader configuration of the course (read by every `nbgrader` command run from this folder)."""

c = get_config()  # noqa: F821 (provided by nbgrader)

c.CourseDirectory.course_id = "dp-course"
c.CourseDirectory.root = "."

# Only notebooks (and what they truly need) go to students: nothing else from source/.
c.CourseDirectory.ignore = [
    ".ipynb_checkpoints",
    "*.pyc",
    "__pycache__",
    "feedback",
    ".*",
    "*.md",
    "*.txt",
    "*.db",
    "*.log",
    "*.bak",
]

# The stub students see in a solution cell.
c.ClearSolutions.code_stub = {"python": "# YOUR CODE HERE\nraise NotImplementedError()"}
c.ClearSolutions.text_stub = "YOUR ANSWER HERE"

# Per-cell timeout while autograding (ExecutePreprocessor.timeout would be ignored).
# An infinite loop costs that student this many seconds and one cell, nothing more.
c.Execute.timeout = 60

# A deleted test cell, or one whose metadata was stripped by copy-paste, comes back
# from the gradebook and is scored.
c.OverwriteCells.add_missing_cells = True

# Safety net: nbgrader scores 0 for any test cell that writes to stderr. Tests already
# silence what they cause (dplib.testing.quiet); this drops stray warning lines too.
c.IgnorePattern.enabled = True
c.IgnorePattern.pattern = r"\b\w*Warning\b"
