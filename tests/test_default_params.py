"""``check_estimator(Est())`` with DEFAULT parameters, for every public estimator.

A user runs exactly this. The fast instances of ``tests/test_common.py`` stay
beside it; this file runs the checks once more with nothing changed, except for
the estimators of the one exemption table (``utils/_exemptions.py``), whose bare
``fit(X, y)`` must raise a ``ValueError`` naming the input it needs.

An estimator one of whose ``tests/test_common.py`` instances already has the
default parameters is left out here: the common checks ran on exactly
``Est()`` there, and running them twice checks nothing new. For the others,
``Est()`` is one more instance of a class whose first test instance ran every
check in ``tests/test_common.py``: like an option variant there, it runs every
check but the option-independent ones (``OPTION_INDEPENDENT_CHECKS`` in
``sklearn_iclr26/utils/_test_common.py``: the class, its parameters and the
validation of the input, which no default value reaches), and every check when
a default it changes holds an estimator.

Where ``Est()`` differs from a test instance in the training budget alone
(``BUDGET_PARAMS``: ``max_iter``), the instance is the default estimator
trained for fewer epochs: every check whose outcome does not read how far
training went (the code each epoch runs is the same) ran on it, and ``Est()``
runs the ``BUDGET_DEPENDENT_CHECKS`` at the default budget: a quality
threshold, an iteration count, or a tolerance on the trained outputs.
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import re

import numpy as np
import pytest
from sklearn.base import BaseEstimator

from sklearn_iclr26.utils._exemptions import DEFAULT_PARAMS_EXEMPTIONS
from sklearn_iclr26.utils._test_common import (
    first_test_instances,
    parametrize_with_narrowed_checks,
    yield_test_instances,
)
from sklearn_iclr26.utils.discovery import all_estimators

ESTIMATORS = all_estimators()


def _same_params(a, b):
    """Whether two parameter values are equal (estimators by their params)."""
    if isinstance(a, BaseEstimator) or isinstance(b, BaseEstimator):
        return type(a) is type(b) and _same_params(
            a.get_params(deep=False), b.get_params(deep=False)
        )
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same_params(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return type(a) is type(b) and len(a) == len(b) and all(map(_same_params, a, b))
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return np.array_equal(a, b)
    try:
        return bool(a == b)
    except (TypeError, ValueError):
        return a is b


def _checked_with_defaults_in_test_common():
    """Names whose test_common instances include one equal to ``Est()``."""
    return {
        type(est).__name__
        for est in yield_test_instances()
        if _same_params(est.get_params(deep=False), type(est)().get_params(deep=False))
    }


CHECKED_IN_TEST_COMMON = _checked_with_defaults_in_test_common()
DEFAULT_PARAMS_ESTIMATORS = [
    cls
    for name, cls in ESTIMATORS
    if name not in DEFAULT_PARAMS_EXEMPTIONS and name not in CHECKED_IN_TEST_COMMON
]


def test_same_params_tells_default_instances_apart():
    # the skip rule above must not hide an estimator whose test instance
    # differs from the default (that one is checked here and nowhere else)
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline

    assert _same_params(
        LogisticRegression().get_params(deep=False),
        LogisticRegression().get_params(deep=False),
    )
    assert not _same_params(
        {"estimator": LogisticRegression(C=2.0)}, {"estimator": LogisticRegression()}
    )
    assert not _same_params(
        make_pipeline(LogisticRegression()).get_params(deep=False),
        make_pipeline(LogisticRegression(max_iter=5)).get_params(deep=False),
    )
    assert not _same_params({"w": np.zeros(2)}, {"w": np.ones(2)})
    # the set is not empty (the duplicates exist) and every name in it is public
    assert CHECKED_IN_TEST_COMMON
    assert CHECKED_IN_TEST_COMMON <= {name for name, _ in ESTIMATORS}


BUDGET_PARAMS = {"max_iter"}
BUDGET_DEPENDENT_CHECKS = {
    # a score threshold on the trained model
    "check_classifiers_train",
    "check_regressors_train",
    # a tolerance or a tie rule on trained outputs
    "check_classifiers_classes",
    "check_decision_proba_consistency",
    "check_fit_idempotent",
    "check_methods_sample_order_invariance",
    "check_methods_subset_invariance",
    "check_sample_weight_equivalence_on_dense_data",
    "check_sample_weight_equivalence_on_sparse_data",
    # float32/int training for the whole default budget
    "check_estimators_dtypes",
    # the iteration count
    "check_non_transformer_estimators_n_iter",
    "check_transformer_n_iter",
}


def _differs_in_budget_only(cls):
    """Whether a test instance of ``cls`` is ``cls()`` but for BUDGET_PARAMS."""
    default = cls().get_params(deep=False)
    for est in yield_test_instances():
        if type(est) is not cls:
            continue
        params = est.get_params(deep=False)
        differ = {k for k in default if not _same_params(default[k], params[k])}
        if differ and differ <= BUDGET_PARAMS:
            return True
    return False


BUDGET_ONLY = {
    cls.__name__ for cls in DEFAULT_PARAMS_ESTIMATORS if _differs_in_budget_only(cls)
}


def _check_name(value):
    check = getattr(value, "values", value)[1]
    while hasattr(check, "__wrapped__"):
        check = check.__wrapped__
    return getattr(check, "func", check).__name__


def _default_parameter_checks():
    mark = parametrize_with_narrowed_checks(
        [Estimator() for Estimator in DEFAULT_PARAMS_ESTIMATORS],
        first_test_instances(),
    ).mark
    argnames, argvalues = mark.args
    kept = [
        value
        for value in argvalues
        if type(getattr(value, "values", value)[0]).__name__ not in BUDGET_ONLY
        or _check_name(value) in BUDGET_DEPENDENT_CHECKS
    ]
    return pytest.mark.parametrize(argnames, kept, ids=mark.kwargs["ids"])


def test_budget_rule():
    from sklearn.utils.estimator_checks import parametrize_with_checks

    from sklearn_iclr26.neural_network import TorchMLPClassifier

    # a check name that is no check would keep nothing
    names = {
        _check_name(value)
        for value in parametrize_with_checks([TorchMLPClassifier()]).mark.args[1]
    }
    assert BUDGET_DEPENDENT_CHECKS - names <= {
        "check_regressors_train",
        "check_sample_weight_equivalence_on_sparse_data",
        "check_transformer_n_iter",
    }
    # TorchMLPClassifier's test instance is its default with max_iter=30
    assert "TorchMLPClassifier" in BUDGET_ONLY
    # CVQR's differs in its network too
    assert "CVQRRegressor" not in BUDGET_ONLY


# scikit-learn's check_estimator(Est()) as one test per check, the expected
# failures strict (an expectation that passes is stale)
@_default_parameter_checks()
def test_check_estimator_default_parameters(estimator, check):
    check(estimator)


@pytest.mark.parametrize("name", sorted(DEFAULT_PARAMS_EXEMPTIONS))
def test_exempt_estimators_name_the_missing_input(name):
    entry = DEFAULT_PARAMS_EXEMPTIONS[name]
    assert entry["reason"]
    Estimator = dict(ESTIMATORS)[name]
    rng = np.random.RandomState(0)
    X, y = rng.normal(size=(30, 3)), rng.randint(0, 2, size=30)
    with pytest.raises(ValueError, match=re.escape(entry["missing"])):
        Estimator().fit(X, y)
