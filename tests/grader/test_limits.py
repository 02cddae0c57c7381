"""Every limit of a grading run in one place (:mod:`dpgrader.limits`): its description and default, the config, the
command line, and a setting left where a limit used to live stopping the run with its new name."""

from __future__ import annotations

import pytest
from traitlets.config import Config

from dpgrader import Course
from dpgrader.classroom.cli import main
from dpgrader.course import REPO_ROOT
from dpgrader.limits import FORMER_SETTINGS, GradingLimits, describe, names, parse_override


def test_every_limit_has_a_description_a_positive_default_and_a_type():
    for name, default, description in describe():
        assert default > 0 and len(description) > 20, name
    assert names()[0] == "cell_seconds" and len(names()) == len(set(names()))
    assert set(FORMER_SETTINGS.values()) <= set(names())


@pytest.mark.parametrize("bad", [{"cell_seconds": 0}, {"memory_bytes": -1}, {"processes": True}, {"cpu_cores": "1"}])
def test_a_limit_that_is_not_a_positive_number_is_refused_with_its_name(bad):
    (name,) = bad
    with pytest.raises(ValueError, match=f"GradingLimits.{name} must be a positive number"):
        GradingLimits(**bad)


def test_limits_come_from_the_config_then_the_command_line():
    config = Config()
    config.GradingLimits.cell_seconds = 30
    limits = GradingLimits.from_config(config)
    assert limits.cell_seconds == 30.0 and limits.memory_bytes == GradingLimits().memory_bytes
    assert limits.replace(**dict([parse_override("memory_bytes=1073741824")])).memory_bytes == 1 << 30
    with pytest.raises(ValueError, match="unknown grading limit timeout"):
        limits.replace(timeout=3)
    for text in ("timeout=3", "cell_seconds", "cell_seconds=soon"):
        with pytest.raises(ValueError, match="cell_seconds"):
            parse_override(text)
    written = Config()
    limits.to_config(written)
    assert GradingLimits.from_config(written) == limits


@pytest.mark.parametrize(("section", "name"), sorted(FORMER_SETTINGS))
def test_a_limit_set_where_it_used_to_live_stops_the_run_with_its_new_name(section, name):
    config = Config()
    config[section][name] = 5
    with pytest.raises(ValueError, match=rf"c\.{section}\.{name} \(now c\.GradingLimits\.{FORMER_SETTINGS[section, name]}\)"):
        GradingLimits.from_config(config)


def test_the_time_budget_is_the_factor_times_the_reference_and_at_least_the_floor():
    limits = GradingLimits(time_budget_factor=10, min_notebook_seconds=30)
    assert limits.time_budget(2.0).notebook_seconds == 30.0
    assert limits.time_budget(12.0).notebook_seconds == 120.0
    assert limits.time_budget(12.0).cell_seconds == limits.cell_seconds


def test_the_repository_config_sets_limits_only_in_grading_limits():
    limits = GradingLimits.from_config(Course(REPO_ROOT).config())
    assert limits.cell_seconds == 60 and limits.cpu_cores == 1.0


def test_the_command_line_refuses_an_unknown_limit_naming_the_known_ones(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["grade", "--limit", "timeout=3"])
    assert exit_.value.code == 2
    said = capsys.readouterr().err
    assert "timeout=3" in said and "cell_seconds" in said and "memory_bytes" in said
