"""dpgrader: the course's grading platform, for instructors (students import only :mod:`dplib`).

It grades a class in sandboxed kernels (:mod:`dpgrader.classroom`, :mod:`dpgrader.sandbox`,
:mod:`dpgrader.guard`), reviews and compares submissions (:mod:`dpgrader.review`,
:mod:`dpgrader.similarity`), plugs into nbgrader (:mod:`dpgrader.preprocessors`, named in
``nbgrader_config.py``), releases assignments (:mod:`dpgrader.release`) and simulates a class
(:mod:`dpgrader.simulation`, ``make demo``). Only :mod:`dpgrader.guard` runs inside a grading
kernel. The helpers below run the nbgrader pipeline on throwaway course folders.
"""

__all__ = ["CellGrade", "Course", "assignments_in", "notebooks_of"]


def __getattr__(name: str):
    # Loaded on first use: a grading kernel imports dpgrader.guard, and sees nothing else of the grader.
    if name in __all__:
        from dpgrader import course

        return getattr(course, name)
    raise AttributeError(f"module 'dpgrader' has no attribute {name!r}")
