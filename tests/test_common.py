"""scikit-learn's common checks over every public estimator of the package.

The first test instance of each estimator runs every check; a further instance
(an option variant) runs every check but the option-independent ones
(``OPTION_INDEPENDENT_CHECKS`` in ``sklearn_iclr26/utils/_test_common.py``),
unless its option holds an estimator (then it runs every check too).
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import pytest
from sklearn.utils.estimator_checks import (
    check_dataframe_column_names_consistency,
    check_param_validation,
    parametrize_with_checks,
)

from sklearn_iclr26.utils._test_common import (
    OPTION_INDEPENDENT_CHECKS,
    _check_name,
    first_test_instances,
    parametrize_with_narrowed_checks,
    runs_every_check,
    yield_test_instances,
)
from sklearn_iclr26.utils.discovery import all_estimators

ESTIMATORS = list(yield_test_instances())


def _id(estimator):
    return type(estimator).__name__


FIRST = first_test_instances(ESTIMATORS)


def test_every_exported_estimator_is_discovered():
    import sklearn_iclr26

    exported = {
        name
        for name in sklearn_iclr26.__all__
        if isinstance(getattr(sklearn_iclr26, name), type)
        and not name.endswith("Display")
    }
    discovered = {name for name, _ in all_estimators()}
    assert exported == discovered


def test_option_independent_checks_are_checks():
    # a misspelt or retired name would silently run nothing less; every name
    # is a check some first instance runs. Under an older supported
    # scikit-learn (the CI's oldest-version step) a newer check may be missing
    # from it (1.7 has no check_all_zero_sample_weights_error); under the
    # newest (1.9) none may be
    import sklearn
    from sklearn.utils import estimator_checks

    names = {
        _check_name(getattr(value, "values", value)[1])
        for value in parametrize_with_checks(list(FIRST.values())).mark.args[1]
    }
    missing = OPTION_INDEPENDENT_CHECKS - names
    if tuple(int(v) for v in sklearn.__version__.split(".")[:2]) < (1, 9):
        missing = {name for name in missing if hasattr(estimator_checks, name)}
    assert not missing, missing


def test_runs_every_check_when_the_option_is_an_estimator():
    from sklearn.linear_model import LogisticRegression

    from sklearn_iclr26.conformal import SplitConformalClassifier

    first = SplitConformalClassifier()
    assert not runs_every_check(SplitConformalClassifier(conditional="class"), first)
    assert runs_every_check(SplitConformalClassifier(LogisticRegression(C=10.0)), first)


@parametrize_with_narrowed_checks(ESTIMATORS, FIRST)
def test_sklearn_compatible_estimator(estimator, check):
    check(estimator)


# the parameter constraints are validated at the top of fit, before any
# option is used: once per estimator
@pytest.mark.parametrize("estimator", list(FIRST.values()), ids=_id)
def test_param_validation(estimator):
    check_param_validation(_id(estimator), estimator)


@pytest.mark.parametrize("estimator", ESTIMATORS, ids=_id)
def test_dataframe_column_names_consistency(estimator):
    check_dataframe_column_names_consistency(_id(estimator), estimator)
