"""Attacks: why removing names is not anonymisation (linkage, differencing), reconstruction from noisy
counts, and the floating-point attack on the textbook Laplace sampler.

Modules (their names of earlier terms, still importable as ``dplib.<name>``, in brackets):

- ``linkage`` (``attacks``): why removing names is not anonymisation: uniqueness, linkage and differencing attacks.
- ``reconstruction``: the reconstruction attack of Dinur and Nissim (2003): many noisy subset counts give away almost every secret bit.
- ``floating_point``: the floating-point attack on the textbook Laplace sampler (Mironov 2012).
"""

from dplib.attacks.linkage import (
    differencing_attack,
    reidentify,
    uniqueness,
)
from dplib.attacks.reconstruction import (
    answer_queries,
    reconstruct,
    reconstruction_accuracy,
    subset_queries,
)
from dplib.attacks.floating_point import (
    can_produce,
    textbook_laplace,
    textbook_laplace_output,
    UNIFORM_STEPS,
)
