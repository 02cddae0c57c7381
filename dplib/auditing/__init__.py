"""Auditing: testing a claim of epsilon-DP from a mechanism's outputs, the confidence bounds of an
audit, and the vendor mechanisms audited in lecture 11.

Modules (their names of earlier terms, still importable as ``dplib.<name>``, in brackets):

- ``event_audit`` (``auditing``): auditing a claim of epsilon-DP: a lower bound on epsilon from running the mechanism many times.
- ``confidence_bounds`` (``audit_bounds``): the bounds of an audit: exact binomial intervals, the lower bound on epsilon from one event, its power.
- ``vendors``: eight "vendor" mechanisms that all claim ε-DP: three keep the promise, five break it as real code does.
"""

from dplib.auditing.event_audit import (
    audit_events,
    audit_threshold,
    audit_vendors,
    event_counts,
    EventAudit,
    EVENTS,
    mechanism_outputs,
)
from dplib.auditing.confidence_bounds import (
    clopper_pearson,
    detection_probability,
    epsilon_lower_bound,
    miss_probability,
)
from dplib.auditing.vendors import (
    clamped_sum,
    data_scaled_sum,
    DEFECTS,
    float_laplace_count,
    geometric_count,
    GRID,
    laplace_count,
    ReusedNoiseCount,
    scale_times_epsilon_sum,
    TRUE_EPSILON,
    unclamped_sum,
    Vendor,
    vendor_mechanisms,
)
