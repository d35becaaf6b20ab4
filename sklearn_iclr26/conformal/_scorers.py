"""Scorers of the conformal classifiers: what the prediction sets are for.

Callables ``scorer(estimator, X, y) -> float``, greater is better, usable in
``GridSearchCV(scoring=...)`` as objects or by name through
:func:`sklearn_iclr26.metrics.get_scorer`. The estimator is a conformal
classifier (anything with ``predict_set`` and ``classes_``), or a
``Pipeline`` ending in one (its earlier steps transform ``X`` first).

Signs, and which to use for model selection:

* ``"set_coverage"`` (+1, coverage): alone it picks the biggest sets (a
  higher ``confidence_level``); a check, not a selection criterion.
* ``"neg_mean_set_size"`` (-1, mean set size): alone it picks the emptiest
  sets (a lower ``confidence_level``, undercovering); a check.
* ``"singleton_rate"`` (+1): alone it also favours low levels; a check.
* ``"set_efficiency"`` (-1, size penalised when coverage falls below the
  target): **the scorer for model selection** (``lam``,
  ``conformity_score``, the inner model): minus the mean set size, minus
  ``n_classes`` times the coverage shortfall below the target level. A
  shortfall of ``d`` costs as much as ``d * n_samples`` full label sets, so a
  candidate that undercovers loses to any that covers.
* ``"worst_group_coverage"`` (+1): the smallest coverage over the groups,
  the true classes, or the bins when ``bins`` is given: the conditional
  (Mondrian) check.

Every scorer takes ``bins`` (the Mondrian bin of every row), passed to
``predict_set(X, bins=...)`` for an estimator with ``conditional="bins"``
and, in ``worst_group_coverage``, grouping the rows. In a search it is
metadata: ``GridSearchCV(...).fit(X, y, bins=bins)`` under
``sklearn.config_context(enable_metadata_routing=True)``, with the
estimator's ``set_fit_request(bins=True)`` and the scorer's
``set_score_request(bins=True)``, so that each split's test rows are scored
with their own bins.
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import numpy as np
from sklearn.utils import column_or_1d

from sklearn_iclr26.conformal._region_scorers import REGION_SCORERS
from sklearn_iclr26.metrics._scorers import MethodScorer
from sklearn_iclr26.metrics._set_metrics import _covered, _set_sizes

__all__ = [
    "SCORERS",
    "set_coverage",
    "set_efficiency",
    "set_mean_size",
    "set_singleton_rate",
    "set_worst_group_coverage",
]


def _final_and_X(estimator, X):
    """The conformal classifier and its input (through a Pipeline's steps)."""
    if hasattr(estimator, "predict_set"):
        return estimator, X
    steps = getattr(estimator, "steps", None)
    if steps and hasattr(steps[-1][1], "predict_set"):
        return estimator[-1], estimator[:-1].transform(X)
    raise TypeError(
        f"{type(estimator).__name__} has no predict_set: the set scorers need a "
        "conformal classifier (or a Pipeline ending in one)."
    )


def _predict_sets(estimator, X, confidence_level=None, bins=None):
    """``(final, sets)``: the conformal classifier and its sparse sets of ``X``.

    ``bins`` reaches ``predict_set`` only when given, so that estimators
    without Mondrian bins are called as before.
    """
    final, Xt = _final_and_X(estimator, X)
    kwargs = {} if bins is None else {"bins": bins}
    sets = final.predict_set(
        Xt, confidence_level=confidence_level, output="sparse", **kwargs
    )
    return final, sets


def _sets_and_covered(estimator, X, y, confidence_level=None, bins=None):
    final, sets = _predict_sets(estimator, X, confidence_level, bins)
    covered, sets = _covered(y, sets, final.classes_)
    return final, sets, covered


def _average(values, sample_weight):
    return float(np.average(values, weights=sample_weight))


def set_coverage(
    estimator, X, y, *, confidence_level=None, sample_weight=None, bins=None
):
    """Coverage of ``estimator.predict_set(X, bins=bins)`` (greater covers more)."""
    _, _, covered = _sets_and_covered(estimator, X, y, confidence_level, bins)
    return _average(covered, sample_weight)


def set_mean_size(
    estimator, X, y, *, confidence_level=None, sample_weight=None, bins=None
):
    """Mean size of ``estimator.predict_set(X)`` (smaller is more informative)."""
    _, sets = _predict_sets(estimator, X, confidence_level, bins)
    return _average(_set_sizes(sets), sample_weight)


def set_singleton_rate(
    estimator, X, y, *, confidence_level=None, sample_weight=None, bins=None
):
    """Fraction of singleton sets of ``estimator.predict_set(X)``."""
    _, sets = _predict_sets(estimator, X, confidence_level, bins)
    return _average(_set_sizes(sets) == 1, sample_weight)


def set_worst_group_coverage(
    estimator, X, y, *, confidence_level=None, sample_weight=None, bins=None
):
    """Smallest coverage over the true classes, or over the bins if given.

    The Mondrian check: with ``conditional="bins"`` every bin should be
    covered at the level, and this is the worst one (groups without rows
    are left out; weighted by ``sample_weight`` within each group).
    """
    *_, covered = _sets_and_covered(estimator, X, y, confidence_level, bins)
    if bins is None:
        _, index = np.unique(column_or_1d(y), return_inverse=True)
    else:
        bins = column_or_1d(bins)
        if bins.shape[0] != covered.shape[0]:
            raise ValueError(
                f"bins has {bins.shape[0]} entries for {covered.shape[0]} samples."
            )
        _, index = np.unique(bins, return_inverse=True)
    weights = (
        np.ones(covered.shape[0])
        if sample_weight is None
        else np.asarray(sample_weight, dtype=float)
    )
    totals = np.bincount(index, weights=weights)
    hits = np.bincount(index, weights=weights * covered)
    present = totals > 0
    return float(np.min(hits[present] / totals[present]))


def set_efficiency(
    estimator,
    X,
    y,
    *,
    target_level=None,
    confidence_level=None,
    sample_weight=None,
    bins=None,
):
    """Mean set size plus ``n_classes`` times the coverage shortfall.

    ``size + n_classes * max(0, target_level - coverage)``: smaller is better
    (the registered scorer negates it). ``target_level`` defaults to the
    estimator's ``confidence_level``; fix it when the search varies the
    level itself.
    """
    final, sets, covered = _sets_and_covered(estimator, X, y, confidence_level, bins)
    if target_level is None:
        target_level = (
            final.confidence_level if confidence_level is None else confidence_level
        )
    size = _average(_set_sizes(sets), sample_weight)
    coverage = _average(covered, sample_weight)
    return size + sets.shape[1] * max(0.0, float(target_level) - coverage)


#: The set scorers, by name (``metrics.get_scorer`` finds them).
SCORERS = {
    "set_coverage": MethodScorer(set_coverage, sign=1, name="set_coverage"),
    "neg_mean_set_size": MethodScorer(set_mean_size, sign=-1, name="neg_mean_set_size"),
    "singleton_rate": MethodScorer(set_singleton_rate, sign=1, name="singleton_rate"),
    "set_efficiency": MethodScorer(set_efficiency, sign=-1, name="set_efficiency"),
    "worst_group_coverage": MethodScorer(
        set_worst_group_coverage, sign=1, name="worst_group_coverage"
    ),
}

# the conformal regressors' scorers (coverage, log-volume, worst slab)
SCORERS.update(REGION_SCORERS)
