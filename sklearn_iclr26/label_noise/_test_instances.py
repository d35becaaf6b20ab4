"""Test-friendly instances of the label-noise estimators (see utils/_test_common)."""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

from lightgbm import LGBMClassifier
from sklearn.linear_model import LogisticRegression
from sklearn.utils import get_tags

from sklearn_iclr26.utils._torch_mlp_classifier import TorchMLPClassifier

# min_child_samples=5: on tiny data LightGBM with a callable objective raises
# "Check failed: (train_data->num_features()) > (0)" (the corrector then falls
# back to a constant model with a warning); 5 lets it grow trees on the checks'
# small data sets
_LGBM = LGBMClassifier(n_estimators=20, min_child_samples=5, n_jobs=1, verbose=-1)

_LGBM_WEIGHTS = (
    "LightGBM builds its histogram bins and applies min_child_samples on rows, "
    "not weights, so weighting rows is not equivalent to repeating them (plain "
    "LightGBM fails this check too)"
)
_CV_WEIGHTS = (
    "the transition matrix is estimated from a random cross-validation split, "
    "which differs for weighted vs repeated rows"
)


def _weight_failures(estimator, reason):
    failures = {"check_sample_weight_equivalence_on_dense_data": reason}
    if get_tags(estimator._get_estimator()).input_tags.sparse:
        failures["check_sample_weight_equivalence_on_sparse_data"] = reason
    return failures


def _corrector_failures(estimator):
    child = estimator._get_estimator()
    # trees grow on the checks' data (with a ``cv`` parameter the check uses
    # 45-57 rows; with the default min_child_samples=20 and no ``cv`` it used
    # 15-27, where no tree grew: a constant model, for which weighting is
    # repeating)
    if isinstance(child, LGBMClassifier):
        return _weight_failures(estimator, _LGBM_WEIGHTS)
    return {}


def _cc_failures(estimator):
    if estimator.transition_matrix is None:
        return _weight_failures(estimator, _CV_WEIGHTS)
    return {}


TEST_PARAMS = {
    "InstanceNoiseCorrector": [
        {"estimator": _LGBM},
        {"estimator": TorchMLPClassifier(max_iter=30)},
        {"estimator": LogisticRegression()},
    ],
    "ClassConditionalNoiseCorrector": [
        {"estimator": LogisticRegression()},
        {"estimator": TorchMLPClassifier(max_iter=30), "method": "forward"},
    ],
}

EXPECTED_FAILED_CHECKS = {
    "InstanceNoiseCorrector": _corrector_failures,
    "ClassConditionalNoiseCorrector": _cc_failures,
}


def _label_issues_case():
    from sklearn.datasets import make_classification

    from sklearn_iclr26.datasets import make_label_noise
    from sklearn_iclr26.label_noise import InstanceNoiseCorrector

    X, y = make_classification(
        n_samples=200, n_features=6, n_informative=4, n_classes=3, random_state=0
    )
    y_noisy, _ = make_label_noise(y, kind="symmetric", rate=0.2, random_state=0)
    estimator = InstanceNoiseCorrector(LogisticRegression(), random_state=0)
    return estimator, X, y_noisy, {}


DISPLAY_CASES = {"LabelIssuesDisplay": _label_issues_case}
