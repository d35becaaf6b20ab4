"""The one door to scikit-learn's private API.

Every private scikit-learn name the package (and its test suite) uses is
imported here and nowhere else; ``tests/test_static.py`` fails on a private
``sklearn`` import in any other module. When a scikit-learn minor moves or
renames one of these, this file is the only one to change.

What is version-fragile (no deprecation cycle protects it):

* ``sklearn.utils._param_validation`` (``Interval``, ``StrOptions``,
  ``HasMethods``, ``RealNotInt``, ``validate_params``,
  ``validate_parameter_constraints``, ``InvalidParameterError``) and
  ``sklearn.base._fit_context``: the parameter-validation framework the
  package's ``_parameter_constraints`` are written in. Stable in layout since
  1.2, but private, with semantics (e.g. ``prefer_skip_nested_validation``)
  that may change in any minor.
* ``sklearn.utils.validation``'s ``_check_sample_weight``, ``_num_samples``,
  ``_check_y``, ``_check_method_params``, ``_check_n_features``,
  ``_check_feature_names``, ``_check_feature_names_in``; the last two lost
  their ``BaseEstimator`` method form in 1.6, the precedent for a silent move.
* ``sklearn.utils._indexing._safe_indexing`` (also re-exported as
  ``sklearn.utils._safe_indexing``), ``sklearn.utils._chunking``,
  ``sklearn.utils._optional_dependencies``, ``sklearn.utils._plotting``.
* ``sklearn.metrics._scorer._BaseScorer``: the scorer base class the
  package's ``MethodScorer`` subclasses for ``set_score_request``; its
  ``_score`` signature changed in 1.4 and may change again.
* ``sklearn.model_selection._split._BaseKFold``: a private base class whose
  constructor signature scikit-learn may change.
* ``sklearn.utils.metadata_routing``'s ``_MetadataRequester`` and
  ``_routing_enabled``: the routing machinery, still evolving.
* ``sparse_interface`` (new in 1.9): :func:`align_sparse_interface` reads the
  setting itself, treating a missing key as ``"spmatrix"`` (the behaviour
  before 1.9).
* ``sklearn._isotonic._inplace_contiguous_isotonic_regression``: the Cython
  pool-adjacent-violators kernel (Venn-Abers runs it once per test slot; the
  public ``isotonic_regression``'s validation costs 50 times the fit there).
* Test helpers of ``sklearn.utils.estimator_checks``
  (``_enforce_estimator_tags_X``, ``_enforce_estimator_tags_y``), loaded on
  first access so that importing the package does not import the checks.
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import scipy.sparse as sp
from sklearn import get_config
from sklearn._isotonic import _inplace_contiguous_isotonic_regression
from sklearn.base import _fit_context
from sklearn.metrics._scorer import _BaseScorer
from sklearn.model_selection._split import _BaseKFold
from sklearn.utils._chunking import get_chunk_n_rows
from sklearn.utils._indexing import _safe_indexing
from sklearn.utils._optional_dependencies import check_matplotlib_support
from sklearn.utils._param_validation import (
    HasMethods,
    Hidden,
    Interval,
    InvalidParameterError,
    RealNotInt,
    StrOptions,
    validate_parameter_constraints,
    validate_params,
)
from sklearn.utils._plotting import _validate_style_kwargs
from sklearn.utils.metadata_routing import (
    MetadataRequest,
    _MetadataRequester,
    _routing_enabled,
)
from sklearn.utils.validation import (
    _check_feature_names,
    _check_feature_names_in,
    _check_method_params,
    _check_n_features,
    _check_sample_weight,
    _check_y,
    _num_samples,
)

__all__ = [
    "HasMethods",
    "Hidden",
    "Interval",
    "InvalidParameterError",
    "MetadataRequest",
    "RealNotInt",
    "StrOptions",
    "_BaseKFold",
    "_BaseScorer",
    "_MetadataRequester",
    "_check_feature_names",
    "_check_feature_names_in",
    "_check_method_params",
    "_check_n_features",
    "_check_sample_weight",
    "_check_y",
    "_fit_context",
    "_inplace_contiguous_isotonic_regression",
    "_num_samples",
    "_routing_enabled",
    "_safe_indexing",
    "_validate_style_kwargs",
    "align_sparse_interface",
    "check_matplotlib_support",
    "get_chunk_n_rows",
    "parametrize_with_checks",
    "sparse_interface",
    "validate_parameter_constraints",
    "validate_params",
]

# test-only helpers, imported on first access
_LAZY = {
    "_enforce_estimator_tags_X": "sklearn.utils.estimator_checks",
    "_enforce_estimator_tags_y": "sklearn.utils.estimator_checks",
}


def __getattr__(name):
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def parametrize_with_checks(
    estimators, *, expected_failed_checks=None, xfail_strict=False
):
    """scikit-learn's ``parametrize_with_checks``, with ``xfail_strict`` before 1.8.

    scikit-learn 1.8 added ``xfail_strict`` (an expected failure that passes
    fails the test). Before it the expected failures are non-strict
    ``xfail`` marks; here they are made strict the same way, so that a check
    that starts passing is reported on every supported version.

    Parameters
    ----------
    estimators : list of estimator instances
        Estimators to generate checks for.
    expected_failed_checks : callable, default=None
        ``estimator -> {check name: reason}`` of the checks expected to fail.
    xfail_strict : bool, default=False
        Whether the expected failures are strict ``xfail`` marks.

    Returns
    -------
    decorator : `pytest.mark.parametrize`
        As scikit-learn's.
    """
    import inspect

    import pytest
    from sklearn.utils import estimator_checks

    function = estimator_checks.parametrize_with_checks
    if "xfail_strict" in inspect.signature(function).parameters:
        return function(
            estimators,
            expected_failed_checks=expected_failed_checks,
            xfail_strict=xfail_strict,
        )
    mark = function(estimators, expected_failed_checks=expected_failed_checks)
    if not xfail_strict:
        return mark
    values = []
    for value in mark.mark.args[1]:
        marks = getattr(value, "marks", ())
        if any(m.name == "xfail" for m in marks):
            marks = [
                pytest.mark.xfail(*m.args, **{**m.kwargs, "strict": True})
                if m.name == "xfail"
                else m
                for m in marks
            ]
            value = pytest.param(*value.values, marks=marks, id=value.id)
        values.append(value)
    return pytest.mark.parametrize(mark.mark.args[0], values, **mark.mark.kwargs)


def sparse_interface():
    """Return scikit-learn's ``sparse_interface`` setting.

    Returns
    -------
    interface : {"sparray", "spmatrix"}
        ``"spmatrix"`` where the installed scikit-learn has no such setting.
    """
    return get_config().get("sparse_interface", "spmatrix")


def align_sparse_interface(X):
    """Return sparse `X` in the container ``sparse_interface`` asks for.

    The package's counterpart of scikit-learn's ``_align_api_if_sparse``: a
    ``scipy.sparse`` matrix becomes the array of the same format under
    ``"sparray"`` and an array becomes the matrix under ``"spmatrix"``;
    anything not sparse is returned unchanged.

    Parameters
    ----------
    X : object
        Any output; only ``scipy.sparse`` containers are converted.

    Returns
    -------
    X : object
        `X`, or its conversion (same format, same data).
    """
    if not sp.issparse(X):
        return X
    interface = sparse_interface()
    if interface == "sparray":
        return X if not sp.isspmatrix(X) else getattr(sp, X.format + "_array")(X)
    if interface == "spmatrix":
        return X if sp.isspmatrix(X) else getattr(sp, X.format + "_matrix")(X)
    raise ValueError(
        f"scikit-learn's sparse_interface is {interface!r}; expected 'sparray' "
        "or 'spmatrix'."
    )
