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
a default it changes holds an estimator. The default budgets (``max_iter``...)
are kept: the checks run on what a user gets from ``Est()``.
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


# scikit-learn's check_estimator(Est()) as one test per check, the expected
# failures strict (an expectation that passes is stale)
@parametrize_with_narrowed_checks(
    [Estimator() for Estimator in DEFAULT_PARAMS_ESTIMATORS], first_test_instances()
)
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
