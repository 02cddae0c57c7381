"""Lecture 11's explorer, driven headlessly: the pure audit view against dplib.auditing.event_audit, the widget by its controls."""

from __future__ import annotations


import numpy as np
import pytest

from dplib.auditing.event_audit import audit_events
from dplib.auditing.vendors import TRUE_EPSILON, vendor_mechanisms
from dplib.widgets.auditing import AuditExplorer, audit_view
from helpers.images import pixels

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


def test_view_is_the_audit_of_the_same_runs():
    view = audit_view("B", trials=3_000, seed=4)
    vendor = {v.name: v for v in vendor_mechanisms(rng=4)}["B"]
    rng = np.random.default_rng(5)  # audit_view draws its runs from seed + 1
    runs = [vendor.mechanism(data, size=3_000, rng=rng) for data in (vendor.d, vendor.d_prime, vendor.d, vendor.d_prime)]
    assert view.audit == audit_events(*runs, vendor.thresholds, 0.05)
    assert view.claim == vendor.claim and view.claimed_epsilon == 0.5 and view.refuted
    width = np.diff(view.bin_edges)
    assert np.sum(view.density_d * width) == pytest.approx(np.mean((runs[2] >= view.bin_edges[0]) & (runs[2] < view.bin_edges[-1])))


@pytest.mark.parametrize("vendor", ["A", "C", "E"])
def test_correct_vendors_stay_below_their_true_epsilon(vendor):
    view = audit_view(vendor, trials=5_000, seed=1)
    assert not view.refuted and view.audit.epsilon_lower <= TRUE_EPSILON[vendor]


def test_a_larger_claim_can_stop_a_refutation_and_integer_outputs_get_integer_bins():
    assert audit_view("B", trials=5_000, seed=1).refuted and not audit_view("B", 10.0, trials=5_000, seed=1).refuted
    edges = audit_view("C", trials=500, seed=0).bin_edges
    assert np.allclose(edges - np.floor(edges), 0.5)


def test_view_rejects_bad_parameters():
    with pytest.raises(ValueError, match="vendor must be one of"):
        audit_view("Z")
    with pytest.raises(ValueError, match="claimed_epsilon must be a finite number > 0"):
        audit_view("A", -1.0)
    with pytest.raises(ValueError, match="trials must be an integer >= 1"):
        audit_view("A", trials=0)


def test_explorer_displays_its_widget():
    explorer = AuditExplorer()
    assert explorer._repr_mimebundle_()[WIDGET_VIEW]["model_id"] == explorer.widget.model_id
    assert bytes(explorer.image.value).startswith(b"\x89PNG")
    assert set(explorer.controls.values()) <= set(explorer.widget.children[0].children)


@pytest.mark.parametrize("control, value", [("claimed", 3.0), ("runs", 10_000.0), ("seed", 9), ("vendor", "G")])
def test_moving_a_control_redraws_the_same_artists(control, value):
    explorer = AuditExplorer(vendor="B", runs=2_000)
    artists_before = list(explorer.ax_hist.get_children()) + list(explorer.ax_epsilon.get_children())
    png_before, readout_before = bytes(explorer.image.value), explorer.readout.value
    getattr(explorer, control).value = value
    assert not np.array_equal(pixels(png_before), pixels(explorer.image.value))
    assert explorer.readout.value != readout_before
    assert list(explorer.ax_hist.get_children()) + list(explorer.ax_epsilon.get_children()) == artists_before


def test_a_new_vendor_brings_its_own_claim_in_one_redraw():
    explorer = AuditExplorer(vendor="B")
    explorer.claimed.value = 5.0
    updates = []
    original = explorer.update
    explorer.update = lambda: (updates.append(1), original())
    explorer.vendor.value = "A"
    assert explorer.claimed.value == 1.0 and explorer.view.claimed_epsilon == 1.0 and len(updates) == 1
    assert "vendor A claims epsilon = 1" in explorer.readout.value
    assert "no evidence against the claim" in explorer.readout.value


def test_readout_shows_the_event_the_bound_and_the_verdict():
    explorer = AuditExplorer(vendor="D", runs=1_000)
    audit = explorer.view.audit
    assert f"output {audit.side} {audit.threshold:.4g}" in explorer.readout.value
    assert f"epsilon &ge; {audit.epsilon_lower:.3f} with confidence 95%" in explorer.readout.value
    assert "claim refuted" in explorer.readout.value and "(1000 fresh runs each)" in explorer.readout.value
    assert explorer.threshold_line.get_xdata()[0] == audit.threshold
    assert explorer.bound.get_xdata()[0] == audit.epsilon_lower
