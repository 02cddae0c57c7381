"""Interactive explorers for the lectures: sliders wired to dplib's pure functions.

One module per lecture, each holding a pure ``*_view`` function (the model: it computes
everything shown and returns a small frozen dataclass) beside its explorer (the GUI: the
controls, the matplotlib artists it updates in place, the PNG it renders), as in the
ipywidgets tutorial's "Separating Concerns". The shared wiring and rendering is
:mod:`dplib.widgets._render`.

A notebook cell ends with the explorer itself, e.g. ``LaplaceExplorer()``: it displays its
``.widget``. Tests set ``.value`` on a control and read ``.view``, ``.readout.value`` or
the artists.

Explorers
---------
LaplaceExplorer (:mod:`dplib.widgets.laplace`)
    epsilon and sensitivity; noisy answers on neighbours D and D'; the privacy loss.
ImageExplorer (:mod:`dplib.widgets.randomized_response`)
    alpha and beta of pixel randomized response on :func:`dplib.demo_picture`.
EstimationExplorer (:mod:`dplib.widgets.estimation`)
    epsilon and n; k-RR counts estimated back, with error bars; clipping vs projection.
FairnessExplorer (:mod:`dplib.widgets.fairness`)
    group sizes, base rates and epsilon; each group's chance of the exponential
    mechanism reporting its true majority value.
AveragingExplorer (:mod:`dplib.widgets.composition`)
    the averaging attack: k queries at epsilon each, the running mean closing in on the
    truth, and what a privacy accountant with a budget answers and refuses.
CompositionExplorer (:mod:`dplib.widgets.approximate_dp`)
    per-query epsilon and delta, k queries; total epsilon under basic composition,
    advanced composition and zCDP.
SyntheticDataExplorer (:mod:`dplib.widgets.synthetic_data`)
    epsilon, the marginals measured (1-way or a tree of 2-way) and a pair of columns; the error of
    every 2-way marginal of the synthetic table and the real and synthetic shares of the pair.
PrivateLearningExplorer (:mod:`dplib.widgets.private_learning`)
    clip norm, noise multiplier and steps of DP-GD on Adult; the test accuracy along the run, without
    noise and without privacy, and the epsilon of the steps under substitution neighbours (the run
    divides by the number of people, so no add/remove epsilon holds for it).
AuditExplorer (:mod:`dplib.widgets.auditing`)
    a vendor mechanism, its claimed epsilon and the number of runs; the output histograms on
    two neighbours, the chosen event and the lower bound on epsilon with its interval.

Adding a lecture's explorer is adding one module here and one import line below.
"""

from dplib.widgets.composition import BUDGETS, EPSILONS, AveragingExplorer, AveragingView, averaging_view
from dplib.widgets.approximate_dp import ACCOUNTINGS, CompositionExplorer, CompositionView, composition_view
from dplib.widgets.auditing import AuditExplorer, AuditView, audit_view
from dplib.widgets.estimation import EstimationExplorer, EstimationView, estimation_view
from dplib.widgets.fairness import SCORINGS, FairnessExplorer, FairnessView, fairness_view
from dplib.widgets.laplace import LaplaceExplorer, LaplaceView, laplace_view
from dplib.widgets.private_learning import PrivateLearningExplorer, PrivateLearningView, private_learning_view
from dplib.widgets.randomized_response import ImageExplorer, ImageView, image_view
from dplib.widgets.synthetic_data import SyntheticDataExplorer, SyntheticView, synthetic_view
