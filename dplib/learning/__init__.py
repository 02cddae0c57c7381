"""Learning: a classifier on locally privatized data (08), and logistic regression trained privately
with noisy gradient descent (09).

Modules (their names of earlier terms, still importable as ``dplib.<name>``, in brackets):

- ``local_model`` (``learning``): learning on locally privatized data: k-RR on the columns of a table, a classifier, its accuracy.
- ``logistic_model`` (``logistic_regression``): logistic regression, the model unit 09 trains privately: Adult as a design matrix, the loss, per-person gradients.
- ``noisy_gd`` (``private_learning``): private learning in the central model: noisy gradient descent (DP-GD) for logistic regression.
"""

from dplib.learning.local_model import (
    adult_learning_data,
    FEATURES,
    LABEL,
    private_accuracy,
    PRIVATE_COLUMNS,
    privatize_columns,
    train_and_score,
)
from dplib.learning.logistic_model import (
    adult_design_matrices,
    design_matrix,
    logistic_accuracy,
    logistic_loss,
    nonprivate_logistic_regression,
    per_example_gradients,
    require_design,
    require_theta,
)
from dplib.learning.noisy_gd import (
    central_accuracy,
    clip_gradients,
    CLIP_NORM,
    DELTA,
    LEARNING_RATE,
    noisy_gradient,
    noisy_gradient_descent,
    noisy_gradient_descent_path,
    STEPS,
)
