"""scikit-learn's common checks over every public estimator of the package."""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import pytest
from sklearn.utils.estimator_checks import (
    check_dataframe_column_names_consistency,
    check_param_validation,
    parametrize_with_checks,
)

from sklearn_iclr26.utils._test_common import (
    get_expected_failed_checks,
    yield_test_instances,
)
from sklearn_iclr26.utils.discovery import all_estimators

ESTIMATORS = list(yield_test_instances())


def _id(estimator):
    return type(estimator).__name__


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


@parametrize_with_checks(
    ESTIMATORS, expected_failed_checks=get_expected_failed_checks, xfail_strict=True
)
def test_sklearn_compatible_estimator(estimator, check):
    check(estimator)


@pytest.mark.parametrize("estimator", ESTIMATORS, ids=_id)
def test_param_validation(estimator):
    check_param_validation(_id(estimator), estimator)


@pytest.mark.parametrize("estimator", ESTIMATORS, ids=_id)
def test_dataframe_column_names_consistency(estimator):
    check_dataframe_column_names_consistency(_id(estimator), estimator)
