"""Test-friendly instances of the conformal estimators (see utils/_test_common)."""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

from sklearn.linear_model import LogisticRegression


def _lightgbm():
    from lightgbm import LGBMClassifier

    return LGBMClassifier(n_estimators=20, min_child_samples=5, n_jobs=1, verbose=-1)


class _SignBins:
    """Mondrian bins of the predictive-system instance: the sign of column 0.

    A class with a fixed ``repr`` (a function's repr holds its address, which
    differs between the test processes of ``pytest -n``, so their test ids
    would not match).
    """

    def __call__(self, X):
        import numpy as np

        return (np.asarray(X)[:, 0] > 0).astype(int)

    def __repr__(self):
        return "_SignBins()"


TEST_PARAMS = {
    # a small, fast network; the default confidence_level (0.9) with the
    # checks' tiny data sets exercises the calibration policy (warn, threshold
    # inf, regions the whole space)
    "CVQRRegressor": [
        {
            "max_iter": 30,
            "learning_rate_init": 3e-2,
            "warmup_epochs": 3,
            "hidden_layer_sizes": (8,),
            "batch_size": None,
            "inner_max_iter": 20,
            # the default forest residual, cross-fitted on 2 folds, not 5 (a
            # forest per fold dominated every check; cv=5 is the default run)
            "cv": 2,
        },
        # the plain variant (the default is the forest-residual one)
        {
            "max_iter": 30,
            "learning_rate_init": 3e-2,
            "warmup_epochs": 3,
            "hidden_layer_sizes": (8,),
            "batch_size": None,
            "inner_max_iter": 20,
            "residual_estimator": None,
        },
    ],
    "BonferroniBoxRegressor": [{}, {"conformal_cv": 3}],
    "ConformalizedQuantileRegressor": [
        {},
        {"symmetric_correction": True},
        {"conformal_cv": 3},
    ],
    # normalized (kNN difficulty) Mondrian variant of the predictive system
    "ConformalPredictiveRegressor": [
        {},
        {"normalizer": "knn", "n_neighbors": 5, "mondrian": _SignBins()},
    ],
    "EllipsoidRegressor": [
        {},
        {"covariance": "local", "n_neighbors": 10},
        {"conformal_cv": 3},
    ],
    "OTCPRegressor": [
        {},
        {"transport": "local", "n_neighbors": 10},
    ],
    "SOCOPClassifier": [
        {},
        {"lam": 0.1, "k0": 2, "estimator": LogisticRegression(C=10.0)},
        {"estimator": _lightgbm()},
        {"conditional": "class"},
        # cross-conformal (a numeric lam: "auto" needs a tuning split)
        {"lam": 0.1, "cv": 3},
    ],
    "SplitConformalClassifier": [
        {},
        {"conformity_score": "aps", "score_params": {"randomized": True}},
        {"conditional": "class"},
        {"label_noise": 0.1},
        {"cv": 3},
    ],
    # cross Venn-Abers with the one-vs-one coupling
    "VennAbersClassifier": [{}, {"cv": 3, "multi_class": "ovo"}],
}

EXPECTED_FAILED_CHECKS = {}


def _classifier_display_case():
    """Small case of the common display test for the set displays."""
    from sklearn.datasets import make_classification

    from sklearn_iclr26.conformal import SplitConformalClassifier

    X, y = make_classification(
        n_samples=300, n_features=6, n_informative=4, n_classes=3, random_state=0
    )
    return SplitConformalClassifier(random_state=0), X, y, {}


def _region_display_case():
    """Small two-target case of the common display test for RegionDisplay."""
    import numpy as np

    from sklearn_iclr26.conformal import EllipsoidRegressor

    rng = np.random.RandomState(0)
    X = rng.normal(size=(200, 3))
    Y = X[:, :2] + rng.normal(scale=0.3, size=(200, 2))
    return EllipsoidRegressor(random_state=0), X, Y, {}


DISPLAY_CASES = {
    "ConditionalCoverageDisplay": _classifier_display_case,
    "RegionDisplay": _region_display_case,
    "SetSizeDisplay": _classifier_display_case,
}
