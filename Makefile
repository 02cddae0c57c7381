# Two commands on a fresh machine with Python >= 3.11:
#   make lab    install everything into .venv (first time only) and start JupyterLab on the course
#   make test   install everything into .venv (first time only) and run the whole test suite
PYTHON ?= python3
VENV := .venv
BIN := $(CURDIR)/$(VENV)/bin
STAMP := $(VENV)/.installed
# JupyterHub for a class on this machine (deploy/jupyterhub/). Every user's server runs in .venv-hub,
# built from a Python every user may execute (HUB_PYTHON; .venv's may live in root's home).
HUB_PYTHON ?= $(shell test -x /usr/bin/python3 && echo /usr/bin/python3 || echo $(PYTHON))
HUB_VENV := $(CURDIR)/.venv-hub
HUB_STAMP := .venv-hub/.installed
# nbgrader runs `alembic` as a subprocess: the environment's bin/ must come first on PATH.
export PATH := $(BIN):$(PATH)
PIP_FLAGS := --quiet --disable-pip-version-check

.PHONY: install lab test test-fast demo release bench clean-venv hub hub-down hub-install student-repo

install: $(STAMP)

# The course's HTML export (`jupyter nbconvert --to html`): the dp_course template (WCAG 2.1 AA: figures' alt
# text, contrast, underlined links), chosen by the environment's nbconvert config (course/nbconvert/).
NBCONVERT_FILES := course/nbconvert/jupyter_nbconvert_config.json course/nbconvert/dp_course/conf.json course/nbconvert/dp_course/index.html.j2
define install_nbconvert
	mkdir -p "$(1)/etc/jupyter" "$(1)/share/jupyter/nbconvert/templates/dp_course"
	cp course/nbconvert/jupyter_nbconvert_config.json "$(1)/etc/jupyter/"
	cp course/nbconvert/dp_course/conf.json course/nbconvert/dp_course/index.html.j2 "$(1)/share/jupyter/nbconvert/templates/dp_course/"
endef

$(STAMP): pyproject.toml scripts/jupyterlab_overrides.json $(NBCONVERT_FILES)
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "Python >= 3.11 is needed; set PYTHON=/path/to/python3.11")'
	$(PYTHON) -m venv $(VENV)
	"$(BIN)/python" -m pip install $(PIP_FLAGS) --upgrade pip
	"$(BIN)/python" -m pip install $(PIP_FLAGS) -e '.[test]'
	# Lab defaults for the course: Markdown opens rendered, no news prompt.
	mkdir -p $(VENV)/share/jupyter/lab/settings
	cp scripts/jupyterlab_overrides.json $(VENV)/share/jupyter/lab/settings/overrides.json
	$(call install_nbconvert,$(VENV))
	touch $(STAMP)

# JupyterLab refuses to start as root without --allow-root (containers, CI machines).
lab: $(STAMP)
	"$(BIN)/jupyter" lab --ServerApp.root_dir="$(CURDIR)" $(if $(filter 0,$(shell id -u)),--allow-root) course/syllabus.md

# Tests write Python's bytecode caches (__pycache__/, git-ignored) even where the machine sets PYTHONDONTWRITEBYTECODE:
# pytest's rewritten test modules alone cost each test process about 5 s to compile again.
test test-fast: export PYTHONDONTWRITEBYTECODE :=

test: $(STAMP) $(HUB_STAMP)
	"$(BIN)/python" -m pytest -n auto --dist loadgroup --durations=25

# Everything but the slow nbgrader pipeline, browser and lecture-kernel tests.
test-fast: $(STAMP)
	"$(BIN)/python" -m pytest -n auto --dist loadgroup -m "not pipeline and not browser and not lecture"

# Regenerate release/ from source/ (commit the result).
release: $(STAMP)
	"$(BIN)/python" -m dpgrader.release

bench: $(STAMP)
	"$(BIN)/python" benchmarks/bench_mechanisms.py

# A class of 30 made-up students hands in every released assignment: grade it all into demo/
# (demo/grades.csv, demo/feedback/, demo/grade_distribution.png, a summary on the terminal).
demo: $(STAMP)
	"$(BIN)/python" -m dpgrader.simulation demo

clean-venv:
	rm -rf $(VENV)


hub-install: $(HUB_STAMP)

$(HUB_STAMP): pyproject.toml scripts/jupyterlab_overrides.json deploy/jupyterhub/package-lock.json $(NBCONVERT_FILES)
	# the proxy from npm, as pinned (without npm, jupyterhub_config.py falls back to the PyPI one)
	if command -v npm >/dev/null; then npm ci --prefix deploy/jupyterhub --no-audit --no-fund --loglevel=error; fi
	$(HUB_PYTHON) -m venv "$(HUB_VENV)"
	"$(HUB_VENV)/bin/python" -m pip install $(PIP_FLAGS) --upgrade pip
	"$(HUB_VENV)/bin/python" -m pip install $(PIP_FLAGS) -e '.[hub]'
	mkdir -p "$(HUB_VENV)/share/jupyter/lab/settings"
	cp scripts/jupyterlab_overrides.json "$(HUB_VENV)/share/jupyter/lab/settings/overrides.json"
	$(call install_nbconvert,$(HUB_VENV))
	touch $(HUB_STAMP)

# Try the hub: one instructor and two made-up students (needs root: it creates system users);
# prints the URL and the logins. `make hub-down` removes those users again.
hub: $(STAMP) $(HUB_STAMP)
	"$(BIN)/python" deploy/jupyterhub/local_hub.py up

hub-down: $(STAMP)
	"$(BIN)/python" deploy/jupyterhub/local_hub.py down

# A repository for students: release/, course/, dplib and its install files, never source/.
student-repo: $(STAMP)
	"$(BIN)/python" scripts/make_student_repo.py build/student-repo
