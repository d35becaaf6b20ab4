"""CATE scorers: model selection with and without known effects.

``SCORERS`` (found by :func:`sklearn_iclr26.metrics.get_scorer`), all greater
is better:

* ``"neg_sqrt_pehe"``: minus sqrt(PEHE) against the true effects, routed as
  the metadata ``tau_true`` (simulations, IHDP);
* ``"neg_dr_cate_mse"``: minus the mean squared distance between the
  estimated effect and a cross-fitted doubly robust (AIPW) pseudo-outcome on
  the scoring fold; needs ``treatment``. It ranks candidates like the PEHE
  up to a constant that is the same for every candidate on that fold;
* ``"neg_r_loss"``: minus the R-loss of Nie and Wager (2021),
  ``mean(((y - m(x)) - (t - e(x)) tau(x)) ** 2)`` with cross-fitted
  ``m(x) = E[y | x]`` and ``e(x)``; needs ``treatment``.

``treatment`` and ``tau_true`` are requested by default, so with
``sklearn.set_config(enable_metadata_routing=True)`` ``GridSearchCV`` routes
them; an estimator with ``treatment_column`` gives its own treatment.

The cross-fitted nuisances of ``"dr"`` and ``"r_loss"`` depend only on the
scoring rows, the nuisance models and ``random_state``, not on the candidate,
so the scorer keeps them per scoring fold (keyed on a hash of the rows'
``X``, ``y`` and treatment and of the nuisance models' parameters; the last
``_CACHE_SIZE`` folds): a search fits them once per fold instead of once per
candidate and fold. With ``random_state=None`` (fresh nuisances each call)
or ``cache=False`` nothing is kept.
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

from collections import OrderedDict
from numbers import Integral

import joblib
import numpy as np
from sklearn.base import clone
from sklearn.model_selection import StratifiedKFold

from sklearn_iclr26.causal._base import (
    check_treatment,
    default_outcome_estimator,
    default_propensity_estimator,
)
from sklearn_iclr26.causal._metrics import pehe_score
from sklearn_iclr26.utils._random import set_child_random_state
from sklearn_iclr26.utils._sklearn_compat import (
    HasMethods,
    Interval,
    MetadataRequest,
    StrOptions,
    _MetadataRequester,
    _num_samples,
    _safe_indexing,
    validate_params,
)
from sklearn_iclr26.utils._validation import store_params

__all__ = ["SCORERS", "make_cate_scorer"]

_KINDS = {"dr": "neg_dr_cate_mse", "r_loss": "neg_r_loss", "pehe": "neg_sqrt_pehe"}
# scoring folds whose nuisances a scorer keeps (a search's cv folds)
_CACHE_SIZE = 16


def _predict(model, X):
    return np.asarray(model.predict(X), dtype=np.float64).ravel()


class _CATEScorer(_MetadataRequester):
    """Scorer ``(estimator, X, y, **metadata) -> float``, greater is better."""

    def __init__(
        self, kind, outcome_estimator, propensity_estimator, cv, random_state, cache
    ):
        store_params(self, locals())
        self._nuisance_cache = OrderedDict()
        self._metadata_request = MetadataRequest(owner=self)
        param = "tau_true" if kind == "pehe" else "treatment"
        self._metadata_request.score.add_request(param=param, alias=True)

    def set_score_request(self, **kwargs):
        """Set the metadata requests (``treatment``, ``tau_true``)."""
        for param, alias in kwargs.items():
            self._metadata_request.score.add_request(param=param, alias=alias)
        return self

    def __repr__(self):
        return f"make_cate_scorer(kind={self.kind!r})"

    def __getstate__(self):
        # a copy sent to a worker process starts with an empty cache
        state = self.__dict__.copy()
        state["_nuisance_cache"] = OrderedDict()
        return state

    def _cache_key(self, X, y, t):
        """Hash of the scoring rows and of everything the nuisances depend on."""
        if not self.cache or not isinstance(self.random_state, Integral):
            return None
        return joblib.hash(
            (
                X,
                y,
                t,
                self.outcome_estimator,
                self.propensity_estimator,
                self.cv,
                self.random_state,
            )
        )

    def _cached_nuisances(self, X, y, t):
        key = self._cache_key(X, y, t)
        if key is None:
            return self._nuisances(X, y, t)
        cache = self.__dict__.setdefault("_nuisance_cache", OrderedDict())
        if key in cache:
            cache.move_to_end(key)
        else:
            cache[key] = self._nuisances(X, y, t)
            while len(cache) > _CACHE_SIZE:
                cache.popitem(last=False)
        return tuple(a.copy() for a in cache[key])

    def _nuisances(self, X, y, t):
        """Cross-fitted mu0, mu1, m = E[y|x] and e(x) on the scoring rows."""
        n = len(y)
        mu0, mu1, m, e = (np.empty(n) for _ in range(4))
        outcome = (
            default_outcome_estimator()
            if self.outcome_estimator is None
            else self.outcome_estimator
        )
        propensity = (
            default_propensity_estimator()
            if self.propensity_estimator is None
            else self.propensity_estimator
        )
        rng = np.random.RandomState(self.random_state)
        folds = StratifiedKFold(
            self.cv, shuffle=True, random_state=rng.randint(2**31 - 1)
        )
        for train, test in folds.split(np.zeros(n), t):
            Xtr, Xte = _safe_indexing(X, train), _safe_indexing(X, test)
            for arm, out in ((0, mu0), (1, mu1)):
                rows = train[t[train] == arm]
                model = set_child_random_state(clone(outcome), rng.randint(2**31 - 1))
                out[test] = _predict(model.fit(_safe_indexing(X, rows), y[rows]), Xte)
            model = set_child_random_state(clone(outcome), rng.randint(2**31 - 1))
            m[test] = _predict(model.fit(Xtr, y[train]), Xte)
            model = set_child_random_state(clone(propensity), rng.randint(2**31 - 1))
            model.fit(Xtr, t[train].astype(int))
            e[test] = model.predict_proba(Xte)[:, list(model.classes_).index(1)]
        return mu0, mu1, m, np.clip(e, 0.01, 0.99)

    def __call__(self, estimator, X, y, treatment=None, tau_true=None):
        tau = _predict(estimator, X)
        if self.kind == "pehe":
            if tau_true is None:
                raise ValueError(
                    "The 'pehe' CATE scorer needs the true effects `tau_true` "
                    "(routed as metadata)."
                )
            return -pehe_score(tau_true, tau)
        covariates = X
        if (
            treatment is None
            and getattr(estimator, "treatment_column", None) is not None
        ):
            covariates, treatment = estimator._split_treatment_column(X)
        t = check_treatment(treatment, _num_samples(covariates))
        if min(t.sum(), len(t) - t.sum()) < self.cv:
            raise ValueError(
                f"The {self.kind!r} CATE scorer cross-fits with cv={self.cv} and needs "
                f"at least {self.cv} units per arm on the scoring fold."
            )
        y = np.asarray(y, dtype=np.float64).ravel()
        mu0, mu1, m, e = self._cached_nuisances(covariates, y, t)
        if self.kind == "dr":
            phi = mu1 - mu0 + t * (y - mu1) / e - (1 - t) * (y - mu0) / (1 - e)
            return -float(np.mean((phi - tau) ** 2))
        return -float(np.mean(((y - m) - (t - e) * tau) ** 2))


@validate_params(
    {
        "kind": [StrOptions(set(_KINDS))],
        "outcome_estimator": [HasMethods(["fit", "predict"]), None],
        "propensity_estimator": [HasMethods(["fit", "predict_proba"]), None],
        "cv": [Interval(Integral, 2, None, closed="left")],
        "random_state": ["random_state"],
        "cache": ["boolean"],
    },
    prefer_skip_nested_validation=True,
)
def make_cate_scorer(
    kind="dr",
    *,
    outcome_estimator=None,
    propensity_estimator=None,
    cv=3,
    random_state=0,
    cache=True,
):
    """A scorer for CATE estimators, greater is better.

    Parameters
    ----------
    kind : {"dr", "r_loss", "pehe"}, default="dr"
        ``"pehe"``: ``-sqrt(PEHE)`` against the true effects ``tau_true``
        (metadata; simulations only). ``"dr"``: ``-mean((phi - tau_hat)^2)``
        with the doubly robust pseudo-outcome
        ``phi = mu1 - mu0 + t (y - mu1) / e - (1 - t) (y - mu0) / (1 - e)``.
        ``"r_loss"``: ``-mean(((y - m) - (t - e) tau_hat)^2)``. The last two
        need ``treatment`` (metadata, or the estimator's
        ``treatment_column``) and fit their nuisance models on the scoring
        rows by ``cv``-fold cross-fitting.
    outcome_estimator : regressor, default=None
        Nuisance outcome model (per arm for ``mu0, mu1``; on all rows for
        ``m``). ``None``: ``HistGradientBoostingRegressor()``.
    propensity_estimator : classifier, default=None
        Nuisance propensity model (clipped to [0.01, 0.99]). ``None``: a
        standardised ``LogisticRegression``.
    cv : int, default=3
        Cross-fitting folds on the scoring rows.
    random_state : int, RandomState instance or None, default=0
        Seeds the folds and the nuisance models (fixed by default so every
        candidate is scored against the same pseudo-outcomes).
    cache : bool, default=True
        Keep the cross-fitted nuisances of each scoring fold (keyed on a hash
        of its rows and of the nuisance models' parameters), so a search fits
        them once per fold, not once per candidate; the scores are the same.
        Only with an integer ``random_state`` (otherwise each call draws
        fresh nuisances). A copy sent to another process starts empty.

    Returns
    -------
    scorer : callable
        ``scorer(estimator, X, y, treatment=None, tau_true=None) -> float``,
        with ``set_score_request``.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.linear_model import LinearRegression
    >>> from sklearn_iclr26.causal import TLearnerRegressor, make_cate_scorer
    >>> rng = np.random.RandomState(0)
    >>> X = rng.normal(size=(300, 2))
    >>> t = (rng.uniform(size=300) < 0.5).astype(int)
    >>> y = X[:, 0] + t * (1 + X[:, 1]) + rng.normal(scale=0.1, size=300)
    >>> est = TLearnerRegressor(LinearRegression()).fit(X, y, treatment=t)
    >>> scorer = make_cate_scorer("pehe")
    >>> -0.1 < scorer(est, X, y, tau_true=1 + X[:, 1]) <= 0
    True
    >>> make_cate_scorer("r_loss")(est, X, y, treatment=t) < 0
    True
    """
    return _CATEScorer(
        kind, outcome_estimator, propensity_estimator, cv, random_state, cache
    )


SCORERS = {name: make_cate_scorer(kind) for kind, name in _KINDS.items()}
