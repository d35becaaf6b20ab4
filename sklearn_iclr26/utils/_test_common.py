"""Private test-instance generator for the common scikit-learn checks.

Every public estimator found by :func:`~sklearn_iclr26.utils.discovery.all_estimators`
is checked. Test-friendly parameters and the checks expected to fail (each with
its reason) are declared next to the estimators, in the optional module
``sklearn_iclr26/<subpackage>/_test_instances.py``, which defines

* ``TEST_PARAMS``: ``{class name: [dict of parameters, ...]}``, one instance per
  dict (default: one instance with default parameters);
* ``EXPECTED_FAILED_CHECKS``: ``{class name: callable(estimator) -> {check name:
  reason}}``.

So a new estimator is covered by ``tests/test_common.py`` just by being exported;
its subpackage says how to build it quickly and what is known to fail, and why.

The first instance of an estimator runs every scikit-learn check. A further
instance (an option variant: the same class with one option changed, or the
default parameters in ``tests/test_default_params.py``) runs every check except
those of :data:`OPTION_INDEPENDENT_CHECKS`: checks whose outcome is settled
before any option is read (the class, its parameters and tags, the validation
of ``X``, ``y`` and ``sample_weight`` at the top of ``fit``), so running them
again on another value of an option asserts nothing new.
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import pkgutil
from functools import partial
from importlib import import_module
from pathlib import Path

from sklearn.base import clone

from sklearn_iclr26.utils.discovery import all_estimators

__all__ = [
    "OPTION_INDEPENDENT_CHECKS",
    "first_test_instances",
    "get_expected_failed_checks",
    "parametrize_with_narrowed_checks",
    "runs_every_check",
    "yield_test_instances",
]

# Checks whose outcome does not depend on an option's value (an option that
# holds an estimator excepted: see runs_every_check). Each is settled by code
# that runs the same whatever the option:
_CLASS_AND_PARAMETERS = (
    # BaseEstimator's parameter handling, the class's signature, tags and
    # methods, the class's own defaults; the option is one more value
    "check_do_not_raise_errors_in_init_or_set_params",
    "check_estimator_cloneable",  # every instance is built by clone() above
    "check_estimator_repr",
    "check_estimator_tags_renamed",
    "check_estimators_unfitted",  # check_is_fitted at the top of each method
    "check_fit_score_takes_y",
    "check_get_params_invariance",
    "check_mixin_order",
    "check_no_attributes_set_in_init",
    "check_parameters_default_constructible",
    "check_set_params",
    "check_valid_tag_types",
)
_INPUT_VALIDATION = (
    # validate_data / _check_sample_weight at the top of fit and of the
    # prediction methods: they accept, convert or reject X, y and
    # sample_weight before the option is read, and the option's code then sees
    # the same validated ndarray (layout-, dtype-, sparse- and memmap-sensitive
    # checks are NOT here: they reach the option's code)
    "check_all_zero_sample_weights_error",
    "check_classifier_data_not_an_array",
    "check_classifiers_regression_target",
    "check_complex_data",
    "check_dtype_object",
    "check_estimators_empty_data_messages",
    "check_estimators_nan_inf",
    "check_estimators_partial_fit_n_features",
    "check_fit1d",
    "check_fit2d_predict1d",
    "check_n_features_in",
    "check_n_features_in_after_fitting",
    "check_positive_only_tag_during_fit",
    "check_regressor_data_not_an_array",
    "check_requires_y_none",
    "check_sample_weights_list",
    "check_sample_weights_not_an_array",
    "check_sample_weights_pandas_series",
    "check_sample_weights_shape",
    "check_supervised_y_no_nan",
    "check_transformer_data_not_an_array",
)
OPTION_INDEPENDENT_CHECKS = frozenset(_CLASS_AND_PARAMETERS + _INPUT_VALIDATION)


def _registries():
    params, failures = {}, {}
    root = Path(__file__).parent.parent
    for info in pkgutil.iter_modules([str(root)]):
        if not info.ispkg:
            continue
        try:
            module = import_module(f"sklearn_iclr26.{info.name}._test_instances")
        except ModuleNotFoundError as exc:
            if exc.name != f"sklearn_iclr26.{info.name}._test_instances":
                raise
            continue
        params.update(getattr(module, "TEST_PARAMS", {}))
        failures.update(getattr(module, "EXPECTED_FAILED_CHECKS", {}))
    return params, failures


def yield_test_instances():
    """Yield one or more test-friendly instances of every public estimator."""
    params, _ = _registries()
    for name, cls in all_estimators():
        for kwargs in params.get(name, [{}]):
            yield clone(cls(**kwargs))


def get_expected_failed_checks(estimator):
    """Checks known to fail for ``estimator``, with the reason for each."""
    _, failures = _registries()
    entry = failures.get(type(estimator).__name__)
    if entry is None:
        return {}
    return dict(entry(estimator)) if callable(entry) else dict(entry)


def _is_estimator(value):
    return hasattr(value, "fit") and hasattr(value, "get_params")


def runs_every_check(estimator, first):
    """Whether ``estimator``, a further instance beside ``first``, runs every check.

    It does when an option it changes holds an estimator (``estimator=``,
    ``representation=``...): a meta-estimator hands ``X`` to its inner
    estimator untouched, so even the validation checks depend on that option.
    """
    a, b = first.get_params(deep=False), estimator.get_params(deep=False)
    return any(
        _is_estimator(a[key]) or _is_estimator(b.get(key))
        for key in a
        if repr(a[key]) != repr(b.get(key))
    )


def first_test_instances(estimators=None):
    """{class name: first instance in ``estimators``} (default: the test instances)."""
    first = {}
    for estimator in yield_test_instances() if estimators is None else estimators:
        first.setdefault(type(estimator).__name__, estimator)
    return first


def _check_name(check):
    while hasattr(check, "__wrapped__"):
        check = check.__wrapped__
    return check.func.__name__ if isinstance(check, partial) else check.__name__


def parametrize_with_narrowed_checks(estimators, first):
    """``parametrize_with_checks`` over ``estimators``, further instances narrowed.

    ``first`` maps a class name to its first test instance: an estimator that
    is it runs every check, as does one that :func:`runs_every_check`; any
    other runs every check but :data:`OPTION_INDEPENDENT_CHECKS`. Expected
    failures are those of :func:`get_expected_failed_checks`, strict.
    """
    import pytest

    from sklearn_iclr26.utils._sklearn_compat import parametrize_with_checks

    argnames, argvalues, ids = ("estimator", "check"), [], None
    for estimator in estimators:
        reference = first[type(estimator).__name__]
        narrowed = estimator is not reference and not runs_every_check(
            estimator, reference
        )
        mark = parametrize_with_checks(
            [estimator],
            expected_failed_checks=get_expected_failed_checks,
            xfail_strict=True,
        ).mark
        ids = mark.kwargs["ids"]
        for value in mark.args[1]:
            check = getattr(value, "values", value)[1]
            if not (narrowed and _check_name(check) in OPTION_INDEPENDENT_CHECKS):
                argvalues.append(value)
    return pytest.mark.parametrize(argnames, argvalues, ids=ids)
