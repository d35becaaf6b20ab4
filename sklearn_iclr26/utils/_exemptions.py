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
    "AdaptiveCompositionClassifier": {
        "reason": (
            "composes the fitted modules of a hub for a new task; the hub's modules are"
            " trained on source tasks of the user's feature space, which no default can"
            " give. The common checks run with a hub of stateless FunctionTransformer "
            "modules (ensemble/_test_instances.py)."
        ),
        "missing": "hub",
    },
    "AdaptiveCompositionRegressor": {
        "reason": (
            "composes the fitted modules of a hub for a new task; the hub's modules are"
            " trained on source tasks of the user's feature space, which no default can"
            " give. The common checks run with a hub of stateless FunctionTransformer "
            "modules (ensemble/_test_instances.py)."
        ),
        "missing": "hub",
    },
    "DiffusionInterestFusionClassifier": {
        "reason": (
            "fit needs the block layout of X (long-term history, sessions, candidate): "
            "the layout= parameter or a DataFrame with the column names of "
            "InteractionSequenceEncoder; an unnamed matrix has no blocks to guess by "
            "position. The common checks run through its test instance (pre-computed "
            "embeddings by integer positions)."
        ),
        "missing": "layout",
    },
    "ConformalITERegressor": {
        "reason": (
            "fit needs a binary treatment vector (metadata `treatment`, or a "
            "`treatment_column` of the wrapped CATE learner); the common checks run "
            "through the declared instance of causal/_test_instances.py, whose learner"
            " reads it from column 0 of X with treatment_threshold."
        ),
        "missing": "`treatment`",
    },
    "GeodesicCATERegressor": {
        "reason": (
            "fit needs a binary treatment vector (metadata `treatment`, or a user-named"
            " `treatment_column`); the common checks run through the declared instances"
            " of causal/_test_instances.py, which read it from column 0 of X with "
            "treatment_threshold."
        ),
        "missing": "`treatment`",
    },
    "InteractionSequenceEncoder": {
        "reason": (
            "fit takes an interaction table (a DataFrame with user, item and timestamp "
            "columns), not a feature matrix. Its tags declare two_d_array=False and "
            "tests/test_ifusion.py runs the API checks on logs."
        ),
        "missing": "interaction table",
    },
    "PerformanceMonitor": {
        "reason": (
            "monitors a fitted (deployed) model, which no default can give; X is that "
            "model's input, handed to it untouched, so its tags declare "
            "two_d_array=False. The common contracts (pickle, skops, clone, global "
            "RNGs, interrupts) run through its test instance "
            "(inference/_test_instances.py: a FrozenEstimator of a fitted logistic "
            "regression) and tests/test_performance_monitor.py runs the API checks."
        ),
        "missing": "estimator",
    },
    "ResamplingUtilityEstimator": {
        "reason": (
            "fit takes per-sample binary records (accepted, correct, problem id), not a"
            " feature matrix; random features are rejected as non-binary. Its tags "
            "declare two_d_array=False and tests/test_inference.py runs the API checks "
            "on records."
        ),
        "missing": "per-sample binary records `accepted` and `correct`",
    },
    "TLearnerRegressor": {
        "reason": "fit needs a binary treatment vector (see GeodesicCATERegressor).",
        "missing": "`treatment`",
    },
    "XLearnerRegressor": {
        "reason": "fit needs a binary treatment vector (see GeodesicCATERegressor).",
        "missing": "`treatment`",
    },
    "CausalForestRegressor": {
        "reason": "fit needs a binary treatment vector (see GeodesicCATERegressor).",
        "missing": "`treatment`",
    },
    "DRLearnerRegressor": {
        "reason": "fit needs a binary treatment vector (see GeodesicCATERegressor).",
        "missing": "`treatment`",
    },
    "RLearnerRegressor": {
        "reason": "fit needs a binary treatment vector (see GeodesicCATERegressor).",
        "missing": "`treatment`",
    },
}
