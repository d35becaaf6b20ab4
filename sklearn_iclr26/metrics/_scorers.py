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

import pkgutil
from importlib import import_module
from pathlib import Path

from sklearn.utils._param_validation import validate_params

__all__ = ["MethodScorer", "get_scorer", "get_scorer_names"]


class MethodScorer:
    """A scorer ``(estimator, X, y) -> float`` built from a metric function.

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
        self.score_func = score_func
        self.sign = sign
        self.name = name or getattr(score_func, "__name__", "scorer")
        self.kwargs = kwargs

    def __call__(self, estimator, X, y=None, sample_weight=None, **params):
        """Score ``estimator`` on ``(X, y)``; greater is better.

        ``y`` defaults to ``None`` for unsupervised estimators (a search
        fitted without ``y`` calls ``scorer(estimator, X)``). Other keyword
        arguments (metadata such as ``bins``) go to the metric function.
        """
        kwargs = {**self.kwargs, **params}
        if sample_weight is not None:
            kwargs["sample_weight"] = sample_weight
        return self.sign * float(self.score_func(estimator, X, y, **kwargs))

    def __repr__(self):
        return f"MethodScorer({self.name})"


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
        return registry[scoring]
    from sklearn.metrics import get_scorer as sk_get_scorer

    try:
        return sk_get_scorer(scoring)
    except ValueError:
        raise ValueError(
            f"{scoring!r} is not a valid scoring value. The package's scorers are "
            f"{sorted(registry)}; scikit-learn's are listed by "
            "sklearn.metrics.get_scorer_names()."
        ) from None
