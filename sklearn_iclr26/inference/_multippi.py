"""Multiple-prediction-powered inference (Cowen-Breen et al., ICLR 2026)."""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

from numbers import Integral, Real

import numpy as np
from scipy.stats import norm
from sklearn.base import BaseEstimator, clone
from sklearn.covariance import EmpiricalCovariance, LedoitWolf
from sklearn.utils import check_array, check_random_state
from sklearn.utils.validation import (
    check_consistent_length,
    check_is_fitted,
    validate_data,
)

from sklearn_iclr26.inference._allocate import (
    _check_contrast,
    _check_covariance,
    _optimal_weights,
    multippi_allocate,
)
from sklearn_iclr26.utils._atomic import atomic_fit
from sklearn_iclr26.utils._persistence import dict_from_pairs, pairs_from_dict
from sklearn_iclr26.utils._sklearn_compat import (
    HasMethods,
    Interval,
    StrOptions,
    _fit_context,
)
from sklearn_iclr26.utils._validation import store_params
from sklearn_iclr26.utils._verbose import log_progress

__all__ = ["MultiPPIMeanEstimator"]


def _check_magnitude(Z):
    """Refuse finite values whose squares or sums overflow float64.

    The covariance and the means sum squares and products of the observed
    values (Ledoit-Wolf's shrinkage even fourth powers); with values near the
    float64 limit (1e300) they overflow to ``inf``/``NaN`` and scikit-learn's
    covariance estimators then report "Input contains NaN" about an input that
    has none. The limit, ``(max float / n_rows) ** (1/4) / 4``, is about 1e76
    for 50 rows.
    """
    observed = np.abs(Z[~np.isnan(Z)])
    largest = float(observed.max()) if observed.size else 0.0
    limit = (np.finfo(np.float64).max / max(Z.shape[0], 1)) ** 0.25 / 4
    if largest > limit:
        raise ValueError(
            f"X and y hold values up to {largest:.3g} in absolute value: their "
            "squares and sums, which the covariance and the means need, overflow "
            f"float64 above {limit:.3g} for {Z.shape[0]} rows. Rescale the "
            "columns (e.g. change their units) before fitting."
        )


class MultiPPIMeanEstimator(BaseEstimator):
    """Mean of a gold measurement from rows that observe subsets of predictors.

    Multiple-prediction-powered inference (MultiPPI, Cowen-Breen et al., ICLR
    2026): the best linear unbiased estimator of a contrast ``a' E[Z]`` of the
    means of ``Z = [y, X columns]`` (by default the mean of the gold ``y``)
    from independent rows, each observing only some of the sources. Each row's
    observed pattern (its non-``NaN`` entries of ``[y, X]``) is the subset it
    was sampled under; rows of one pattern are averaged, and the averages are
    combined with the optimal weights for the covariance and the realised
    counts. Classical sampling (only ``y``), PPI++ (``y`` with one proxy, plus
    rows of the proxy alone), vector PPI++ and cascaded PPI are special cases:
    the estimator uses whichever patterns the data hold. Use :meth:`allocate`
    (or :func:`multippi_allocate`) to decide how many rows of each subset to
    collect for a budget.

    This is an estimator of a population quantity (like
    ``sklearn.covariance``), not a predictor: the proxies are the
    ``predict``/``predict_proba`` outputs of fitted models (or raters), put
    side by side as the columns of ``X``.

    Read more in the :ref:`User Guide <inference>`.

    Parameters
    ----------
    contrast : array-like of shape (1 + n_features,) or None, default=None
        Coefficients ``a`` over ``[y, X columns]``; ``None`` estimates the mean
        of ``y``. E.g. ``[1, -1, 0]`` is the mean of ``y`` minus that of the
        first column of ``X``.
    covariance_estimator : {"ledoit_wolf", "empirical"}, covariance estimator \
            or array-like of shape (k, k), default="ledoit_wolf"
        How the covariance of ``[y, X columns]`` used for the weights is
        obtained. The strings estimate it on the rows observing every source
        (the burn-in rows), with :class:`sklearn.covariance.LedoitWolf` (the
        paper's choice) or :class:`sklearn.covariance.EmpiricalCovariance`; an
        estimator with a ``covariance_`` attribute after ``fit`` (e.g.
        :class:`sklearn.covariance.OAS`, as in
        :class:`~sklearn.discriminant_analysis.LinearDiscriminantAnalysis`'s
        ``covariance_estimator``) is cloned and fitted on the same rows; an
        array is a known covariance (then no fully observed row is needed).
    confidence_level : float, default=0.95
        Level of the normal confidence interval (ppi-python's default is
        0.90, the paper's 0.95).
    subsets : "all" or list of tuples, default="all"
        Candidate subsets for :meth:`allocate` (tuples of indices into
        ``[y, X columns]``, 0 being ``y``). Not used by :meth:`fit`.
    solver : {"active_set", "multiplicative", "slsqp", "cvxpy"}, \
            default="active_set"
        Solver of :meth:`allocate` (see :func:`multippi_allocate`).
    max_iter : int, default=5000
        Iteration cap of the allocation solver used by :meth:`allocate`
        (``fit`` runs no iterative solver, so there is no ``n_iter_``; the
        iterations of an allocation are its result's ``n_iter``).
    tol : float, default=1e-6
        Equivalence-theorem gap of the allocation solver (see
        :func:`multippi_allocate`).
    cross_fit : bool, default=False
        If True, estimate the covariance on a random half of the fully observed
        rows and estimate the mean from the other rows only (sample
        splitting: exactly unbiased, fewer rows). The paper reuses the same
        rows for both (``False``), which can under-cover slightly with few
        burn-in rows.
    random_state : int, RandomState instance or None, default=None
        Seed of the ``cross_fit`` split.
    verbose : int, default=0
        Print the design and the estimate when positive.

    Attributes
    ----------
    estimate_ : float
        Point estimate of ``a' E[Z]``.
    stderr_ : float
        Its standard error ``sqrt(a' S a)``, ``S = pinv(sum_I n_I Q_I)``.
    confidence_interval_ : ndarray of shape (2,)
        Normal interval at ``confidence_level``.
    weights_ : dict
        ``{subset: lambda_I}``: the weight vector of each observed subset's
        mean (they sum, embedded, to the contrast).
    design_ : dict
        ``{subset: n_I}``: rows per observed pattern used in the estimate.
    means_ : dict
        ``{subset: mean of Z_I}`` over those rows.
    covariance_ : ndarray of shape (k, k)
        Covariance used for the weights.
    contrast_ : ndarray of shape (k,)
        The contrast ``a``.
    effective_sample_size_ : float
        Number of fully gold-labelled rows a classical estimate would need for
        the same variance: ``a' Sigma a / stderr_**2``.
    source_names_ : list of str
        ``["y", *feature names]``: the sources the subset indices refer to.
    n_features_in_ : int
        Number of columns of ``X``.
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Column names of ``X`` when it is a DataFrame with string column names.

    See Also
    --------
    multippi_allocate : Budget-optimal number of rows per subset.

    References
    ----------
    Cowen-Breen, Agarwal, Bates, Cohen, Eisenstein, Globerson, Fisch.
    Multiple-Prediction-Powered Inference. ICLR 2026, arXiv:2603.27414.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_iclr26.inference import MultiPPIMeanEstimator
    >>> rng = np.random.RandomState(0)
    >>> y = rng.normal(1.0, 1.0, size=2000)
    >>> proxy = y + rng.normal(0.0, 0.5, size=2000)
    >>> y[200:] = np.nan  # gold observed on 200 rows, the proxy on all
    >>> est = MultiPPIMeanEstimator().fit(proxy.reshape(-1, 1), y)
    >>> sorted(est.design_.items())
    [((0, 1), 200), ((1,), 1800)]
    >>> bool(est.confidence_interval_[0] < 1.0 < est.confidence_interval_[1])
    True
    >>> bool(est.effective_sample_size_ > 200)
    True
    """

    _parameter_constraints = {
        "contrast": ["array-like", None],
        "covariance_estimator": [
            StrOptions({"ledoit_wolf", "empirical"}),
            HasMethods(["fit"]),
            "array-like",
        ],
        "confidence_level": [Interval(Real, 0, 1, closed="neither")],
        "subsets": [StrOptions({"all"}), list, tuple],
        "solver": [StrOptions({"active_set", "multiplicative", "slsqp", "cvxpy"})],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="neither")],
        "cross_fit": ["boolean"],
        "random_state": ["random_state"],
        "verbose": ["verbose"],
    }

    def __init__(
        self,
        contrast=None,
        *,
        covariance_estimator="ledoit_wolf",
        confidence_level=0.95,
        subsets="all",
        solver="active_set",
        max_iter=5000,
        tol=1e-6,
        cross_fit=False,
        random_state=None,
        verbose=0,
    ):
        store_params(self, locals())

    # the fitted dicts are keyed by tuples of sources, which skops's format
    # cannot hold: saved as (key, value) pairs
    _TUPLE_KEYED = ("design_", "means_", "weights_")

    def __getstate__(self):
        return pairs_from_dict(super().__getstate__(), self._TUPLE_KEYED)

    def __setstate__(self, state):
        super().__setstate__(dict_from_pairs(state, self._TUPLE_KEYED))

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True
        tags.target_tags.required = True
        return tags

    @atomic_fit
    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        """Estimate the contrast of means from rows observing subsets of sources.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Predictions or ratings (the proxies), ``NaN`` where a source was not
            queried for that row.
        y : array-like of shape (n_samples,)
            Gold measurement, ``NaN`` where it was not observed.

        Returns
        -------
        self : object
            Fitted estimator.
        """
        if y is None:
            raise ValueError(
                f"{type(self).__name__} requires y to be passed, but the target y "
                "is None."
            )
        X = validate_data(self, X, ensure_all_finite="allow-nan", ensure_min_samples=2)
        y = check_array(
            y,
            ensure_2d=False,
            ensure_all_finite="allow-nan",
            dtype=np.float64,
            input_name="y",
        )
        if y.ndim != 1:
            raise ValueError(f"y must be 1-dimensional, got shape {y.shape}.")
        check_consistent_length(X, y)
        Z = np.column_stack([y, X.astype(np.float64)])
        if np.any(np.isinf(Z)):
            raise ValueError("X and y must not contain infinite values.")
        _check_magnitude(Z)
        k = Z.shape[1]
        names = list(getattr(self, "feature_names_in_", []))
        if not names:
            names = [f"x{j}" for j in range(k - 1)]
        self.source_names_ = ["y", *map(str, names)]
        observed = ~np.isnan(Z)
        never = np.flatnonzero(~observed.any(axis=0))
        if never.size and never[0] == 0:
            raise ValueError(
                "The gold measurement y is never observed (all NaN): it cannot be "
                "estimated without bias."
            )
        if never.size:
            raise ValueError(
                "These columns of X are never observed (all NaN): "
                f"{[self.source_names_[j] for j in never]}. Drop them."
            )
        a = _check_contrast(self.contrast, k)
        full = np.flatnonzero(observed.all(axis=1))
        used = np.ones(Z.shape[0], dtype=bool)
        if isinstance(self.covariance_estimator, str) or hasattr(
            self.covariance_estimator, "fit"
        ):
            cov_rows = full
            if self.cross_fit:
                rng = check_random_state(self.random_state)
                cov_rows = rng.permutation(full)[: full.size // 2]
                used[cov_rows] = False
            if cov_rows.size < 2:
                raise ValueError(
                    f"covariance_estimator={self.covariance_estimator!r} needs at "
                    "least 2 rows observing y and every column of X (burn-in rows) to "
                    f"estimate the covariance, got {cov_rows.size}"
                    + (" after the cross_fit split" if self.cross_fit else "")
                    + ". Pass a known covariance matrix instead."
                )
            if isinstance(self.covariance_estimator, str):
                model = (
                    LedoitWolf()
                    if self.covariance_estimator == "ledoit_wolf"
                    else EmpiricalCovariance()
                )
                cov = model.fit(Z[cov_rows]).covariance_
            else:
                model = clone(self.covariance_estimator).fit(Z[cov_rows])
                if not hasattr(model, "covariance_"):
                    raise TypeError(
                        f"covariance_estimator {type(model).__name__} has no "
                        "covariance_ attribute after fit."
                    )
                cov = _check_covariance(model.covariance_, k)
        else:
            cov = _check_covariance(self.covariance_estimator, k)

        patterns = observed[used]
        rows = Z[used]
        nonempty = patterns.any(axis=1)
        patterns, rows = patterns[nonempty], rows[nonempty]
        # one integer code per pattern (bit j set when source j is observed)
        if k <= 62:
            codes = patterns @ (1 << np.arange(k, dtype=np.int64))
            _, first, inverse = np.unique(codes, return_index=True, return_inverse=True)
        else:
            _, first, inverse = np.unique(
                patterns, axis=0, return_index=True, return_inverse=True
            )
        inverse = inverse.ravel()
        design, means = {}, {}
        for p, row in enumerate(first):
            subset = tuple(int(j) for j in np.flatnonzero(patterns[row]))
            members = rows[inverse == p][:, list(subset)]
            design[subset] = int(members.shape[0])
            means[subset] = members.mean(axis=0)
        if not any(0 in subset for subset in design):
            raise ValueError(
                "The gold measurement y is not observed in any row left for "
                "estimation (with cross_fit, every labelled row went to the "
                "covariance)."
            )
        weights, S = _optimal_weights(cov, design, a)
        estimate = sum(float(weights[s] @ means[s]) for s in weights)
        variance = max(float(a @ S @ a), 0.0)
        z = norm.ppf(0.5 + self.confidence_level / 2)
        std = np.sqrt(variance)
        self.covariance_ = cov
        self.contrast_ = a
        self.design_ = design
        self.means_ = means
        self.weights_ = weights
        self.estimate_ = float(estimate)
        self.stderr_ = float(std)
        self.confidence_interval_ = np.array([estimate - z * std, estimate + z * std])
        classical = float(a @ cov @ a)
        self.effective_sample_size_ = (
            classical / variance if variance > 0 else float("inf")
        )
        log_progress(
            self,
            f"design {design}; estimate {self.estimate_:.6g} +/- {self.stderr_:.3g}",
        )
        return self

    def allocate(self, budget, costs=None, *, burn_in="observed"):
        """Budget-optimal rows per subset for the fitted covariance.

        Parameters
        ----------
        budget : float
            Budget to spend on new rows, in the units of ``costs``.
        costs : array-like of shape (k,), dict, callable or None, default=None
            Cost of a row of each subset (see :func:`multippi_allocate`);
            ``None`` means every source costs 1.
        burn_in : "observed" or None, default="observed"
            ``"observed"`` counts the rows seen in ``fit`` (``design_``) as
            free information the estimate will reuse; ``None`` plans from
            scratch.

        Returns
        -------
        allocation : :class:`~sklearn.utils.Bunch`
            As returned by :func:`multippi_allocate`; ``counts`` are the new
            rows to collect per subset.

        Examples
        --------
        >>> import numpy as np
        >>> from sklearn_iclr26.inference import MultiPPIMeanEstimator
        >>> rng = np.random.RandomState(0)
        >>> y = rng.normal(size=250)
        >>> X = np.c_[y + rng.normal(scale=0.3, size=250), rng.normal(size=250)]
        >>> est = MultiPPIMeanEstimator().fit(X, y)
        >>> plan = est.allocate(100, costs=[1.0, 0.05, 0.05])
        >>> sorted(plan.counts)  # the useless second proxy is never bought
        [(1,)]
        """
        check_is_fitted(self)
        if burn_in not in ("observed", None):
            raise ValueError(f"burn_in must be 'observed' or None, got {burn_in!r}.")
        return multippi_allocate(
            self.covariance_,
            costs,
            budget,
            subsets=self.subsets,
            a=self.contrast_,
            burn_in=dict(self.design_) if burn_in == "observed" else None,
            solver=self.solver,
            max_iter=self.max_iter,
            tol=self.tol,
        )
