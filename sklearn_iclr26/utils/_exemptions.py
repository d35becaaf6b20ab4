"""Estimators whose bare ``fit(X, y)`` cannot work with default parameters.

``tests/test_default_params.py`` runs ``check_estimator(Est())`` with default
parameters for every public estimator except those listed here. An estimator
belongs here only when ``fit`` needs an input that no default can give (a
treatment vector, a hub of fitted modules, a second sample); it still passes
the full checks through its declared test instance, and the default-parameter
test asserts that its bare ``fit(X, y)`` raises a ``ValueError`` whose message
names the missing input (the value of this table's ``"missing"`` entry).

``{class name: {"reason": str, "missing": str}}``.
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

__all__ = ["DEFAULT_PARAMS_EXEMPTIONS"]

DEFAULT_PARAMS_EXEMPTIONS = {
    "GeodesicCATERegressor": {
        "reason": (
            "fit needs a binary treatment vector (metadata `treatment`, or a "
            "user-named `treatment_column`); the common checks run through the "
            "declared instances of causal/_test_instances.py, which read it from "
            "column 0 of X with treatment_threshold."
        ),
        "missing": "`treatment`",
    },
    "GLearner": {
        "reason": "alias of GeodesicCATERegressor (same class, same reason).",
        "missing": "`treatment`",
    },
    "TLearnerRegressor": {
        "reason": "fit needs a binary treatment vector (see GeodesicCATERegressor).",
        "missing": "`treatment`",
    },
    "XLearnerRegressor": {
        "reason": "fit needs a binary treatment vector (see GeodesicCATERegressor).",
        "missing": "`treatment`",
    },
    "ResamplingUtilityEstimator": {
        "reason": (
            "fit takes per-sample binary records (accepted, correct, problem id), "
            "not a feature matrix; random features are rejected as non-binary. "
            "Its tags declare two_d_array=False and tests/test_inference.py runs "
            "the API checks on records."
        ),
        "missing": "per-sample binary records `accepted` and `correct`",
    },
}
