"""Scorers for what the estimators are for, usable by ``GridSearchCV``.

A scorer is a callable ``scorer(estimator, X, y) -> float`` where greater is
better (scikit-learn's convention). Each family declares its scorers in its
optional module ``sklearn_iclr26/<family>/_scorers.py`` as
``SCORERS = {name: scorer}``; :func:`get_scorer` finds them by name (falling
back to :func:`sklearn.metrics.get_scorer`), so
``GridSearchCV(est, grid, scoring=get_scorer("set_efficiency"))`` tunes the
quantity the estimator exists for, not the inner model's accuracy.
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import copy
import pkgutil
from importlib import import_module
from pathlib import Path

from sklearn_iclr26.utils._sklearn_compat import _BaseScorer, validate_params

__all__ = ["MethodScorer", "get_scorer", "get_scorer_names"]


class MethodScorer(_BaseScorer):
    """A scorer ``(estimator, X, y) -> float`` built from a metric function.

    A scikit-learn scorer object (a subclass of scikit-learn's scorer base,
    as :func:`~sklearn.metrics.make_scorer` returns), so it takes part in
    metadata routing: with ``sklearn.set_config(enable_metadata_routing=True)``,
    ``scorer.set_score_request(sample_weight=True)`` makes ``GridSearchCV``
    (or ``cross_validate``) hand it the test fold's rows of
    ``fit(..., sample_weight=w)``. Any keyword argument of ``score_func`` can
    be requested the same way. With routing disabled (the default),
    ``sample_weight`` reaches it as it reaches scikit-learn's scorers.

    Parameters
    ----------
    score_func : callable
        ``score_func(estimator, X, y, **kwargs) -> float``, defined at module
        level (so that the scorer pickles for parallel searches).
    sign : {1, -1}, default=1
        ``1`` when a larger value of ``score_func`` is better, ``-1`` when a
        smaller one is (the scorer returns ``sign * value``, so that
        ``GridSearchCV`` maximises it; ``-1`` scorers report negated values, as
        scikit-learn's ``neg_*`` scorers do).
    name : str, default=None
        Registry name, shown in the repr.
    **kwargs
        Fixed keyword arguments of ``score_func`` (e.g. ``confidence_level``).

    Attributes
    ----------
    score_func : callable
        The metric function.
    sign : {1, -1}
        The sign the value is multiplied by.
    kwargs : dict
        The fixed keyword arguments.
    name : str
        The registry name.

    Examples
    --------
    >>> from sklearn_iclr26.metrics import MethodScorer
    >>> def n_features(estimator, X, y):
    ...     return X.shape[1]
    >>> MethodScorer(n_features, sign=-1, name="neg_n_features")
    MethodScorer(neg_n_features)
    """

    def __init__(self, score_func, *, sign=1, name=None, **kwargs):
        if sign not in (1, -1):
            raise ValueError(f"sign must be 1 or -1, got {sign!r}.")
        # the metric calls the estimator itself: no response method to cache,
        # and every estimator has ``fit`` (scikit-learn's multi-metric scorer
        # looks a response method up on the estimator for each scorer object)
        super().__init__(
            score_func=score_func, sign=sign, kwargs=kwargs, response_method="fit"
        )
        self.name = name or getattr(score_func, "__name__", "scorer")

    @property
    def score_func(self):
        """The metric function."""
        return self._score_func

    @property
    def sign(self):
        """``1`` or ``-1``, the sign the metric is multiplied by."""
        return self._sign

    @property
    def kwargs(self):
        """The fixed keyword arguments of ``score_func``."""
        return self._kwargs

    def __call__(self, estimator, X, y=None, **kwargs):
        """Score ``estimator`` on ``(X, y)``; greater is better.

        ``y`` defaults to ``None`` for unsupervised estimators (a search
        fitted without ``y`` calls ``scorer(estimator, X)``). ``kwargs``
        (``sample_weight``, or any other keyword argument of ``score_func``)
        are passed on to ``score_func``, routing enabled or not; they take
        precedence over the fixed ``kwargs`` of the constructor.
        """
        return self._score(None, estimator, X, y, **kwargs)

    def _score(self, method_caller, estimator, X, y_true, **kwargs):
        """``sign * score_func(estimator, X, y_true, **kwargs)``.

        ``method_caller`` (scikit-learn's prediction cache) is unused: the
        metric calls the estimator's methods itself.
        """
        kwargs = {k: v for k, v in kwargs.items() if v is not None}
        self._warn_overlap(
            message=(
                "Metadata passed to the scorer overrides its fixed keyword arguments."
            ),
            kwargs=kwargs,
        )
        params = {**self._kwargs, **kwargs}
        return self._sign * float(self._score_func(estimator, X, y_true, **params))

    def __repr__(self):
        return f"MethodScorer({self.name})"

    def _routing_repr(self):
        return repr(self)


def _registry():
    registry = {}
    root = Path(__file__).parent.parent
    for info in pkgutil.iter_modules([str(root)]):
        if not info.ispkg:
            continue
        module_name = f"sklearn_iclr26.{info.name}._scorers"
        try:
            module = import_module(module_name)
        except ModuleNotFoundError as exc:
            if exc.name != module_name:
                raise
            continue
        for name, scorer in getattr(module, "SCORERS", {}).items():
            if name in registry:
                raise RuntimeError(f"Scorer name {name!r} registered twice.")
            registry[name] = scorer
    return registry


@validate_params({}, prefer_skip_nested_validation=True)
def get_scorer_names():
    """Return the names of the package's scorers (scikit-learn's are also accepted).

    Returns
    -------
    names : list of str
        Sorted.

    Examples
    --------
    >>> from sklearn_iclr26.metrics import get_scorer_names
    >>> isinstance(get_scorer_names(), list)
    True
    """
    return sorted(_registry())


@validate_params({"scoring": [str, callable]}, prefer_skip_nested_validation=True)
def get_scorer(scoring):
    """A scorer by name: the package's first, then scikit-learn's.

    Pass what it returns, not the name, as ``scoring=`` to scikit-learn:
    ``GridSearchCV(est, grid, scoring=get_scorer("set_efficiency"))``.
    scikit-learn checks a ``scoring`` string against its own registry, which
    this package does not patch, so ``scoring="set_efficiency"`` raises
    scikit-learn's ``InvalidParameterError`` there.

    Parameters
    ----------
    scoring : str or callable
        A name from :func:`get_scorer_names`, a scikit-learn scorer name, or a
        callable (returned unchanged).

    Returns
    -------
    scorer : callable
        ``scorer(estimator, X, y) -> float``, greater is better.

    Examples
    --------
    >>> from sklearn_iclr26.metrics import get_scorer
    >>> get_scorer("accuracy")
    make_scorer(accuracy_score, response_method='predict')
    """
    if callable(scoring):
        return scoring
    registry = _registry()
    if scoring in registry:
        # a copy, as scikit-learn's get_scorer: set_score_request on it
        # leaves the registry's scorer unchanged
        return copy.deepcopy(registry[scoring])
    from sklearn.metrics import get_scorer as sk_get_scorer

    try:
        return sk_get_scorer(scoring)
    except ValueError:
        raise ValueError(
            f"{scoring!r} is not a valid scoring value. The package's scorers are "
            f"{sorted(registry)}; scikit-learn's are listed by "
            "sklearn.metrics.get_scorer_names()."
        ) from None
