"""G-learner: outcome models walked along the Wasserstein geodesic between arms."""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import copy
from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from joblib import Parallel, delayed
from sklearn import config_context
from sklearn.base import clone
from sklearn.ensemble import BaseEnsemble, HistGradientBoostingRegressor
from sklearn.pipeline import Pipeline
from sklearn.utils import check_array
from sklearn.utils.validation import check_is_fitted, has_fit_parameter

from sklearn_iclr26.causal._base import (
    BaseCATERegressor,
    _draw,
    append_controls,
    final_step,
    fit_child,
    fit_transformer,
)
from sklearn_iclr26.causal._ot import (
    _LINPROG_MAX_ENTRIES,
    _have_pot,
    emd_plan,
    geodesic_atoms,
    sinkhorn_plan,
    sqeuclidean_cost,
)
from sklearn_iclr26.causal._t_learner import fit_arm_models
from sklearn_iclr26.utils._random import set_child_random_state
from sklearn_iclr26.utils._sklearn_compat import (
    HasMethods,
    Interval,
    StrOptions,
    _num_samples,
    _safe_indexing,
    align_sparse_interface,
)
from sklearn_iclr26.utils._validation import N_JOBS_CONSTRAINT, store_params
from sklearn_iclr26.utils._verbose import log_progress
from sklearn_iclr26.utils._warnings import warn_user

__all__ = ["GeodesicCATERegressor"]

_COMBINE = ("propensity", "source", "adapted")


def _predict(model, X):
    return np.asarray(model.predict(X), dtype=np.float64).ravel()


def fit_weighted(estimator, X, y, sample_weight, seed):
    """Fit a clone of ``estimator`` with ``sample_weight`` reaching its loss.

    A ``Pipeline`` gets the weights routed to its last step
    (``<laststep>__sample_weight``; metadata routing is switched off for this
    internal call, so the user's requests on the steps do not matter). An
    estimator without ``sample_weight`` is fitted on a weighted resample.
    """
    est = set_child_random_state(clone(estimator), seed)
    return _fit_with_weights(est, X, y, sample_weight, seed)


def _fit_with_weights(est, X, y, sample_weight, seed):
    """Fit ``est`` itself (no clone) as :func:`fit_weighted` does."""
    if sample_weight is None:
        return est.fit(X, y)
    if isinstance(est, Pipeline):
        name, last = est.steps[-1]
        if (
            last is not None
            and last != "passthrough"
            and has_fit_parameter(last, "sample_weight")
        ):
            # an internal call: the step__param form, with routing off for it
            with config_context(enable_metadata_routing=False):
                return est.fit(X, y, **{f"{name}__sample_weight": sample_weight})
    elif has_fit_parameter(est, "sample_weight"):
        return est.fit(X, y, sample_weight=sample_weight)
    rng = np.random.RandomState(seed)
    p = sample_weight / sample_weight.sum()
    rows = rng.choice(len(p), size=len(p), replace=True, p=p)
    return est.fit(_safe_indexing(X, rows), y[rows])


def _mc_dropout_sd(model, Z, n_passes, seed):
    """Standard deviation of ``n_passes`` forward passes with dropout kept on.

    ``model`` (or the final step of a ``Pipeline``) is a fitted torch
    estimator of the package whose network has ``Dropout`` layers; the passes
    come from its protected entry point ``_mc_dropout_forward`` (masks from a
    generator seeded by ``seed``; the global torch RNG is untouched). The
    spread is that of the raw network output: the regressor's output is an
    increasing affine map of it, so the ranking of the atoms (all the filter
    uses) is the same.
    """
    transformer, final = final_step(model)
    if transformer is not None:
        Z = transformer.transform(Z)
    passes = final._mc_dropout_forward(Z, n_passes, seed)
    return np.std(passes.reshape(n_passes, -1), axis=0)


def _has_dropout(estimator):
    """Whether the (final step of the) estimator is a package torch network
    with a positive ``dropout`` parameter."""
    from sklearn_iclr26.utils._torch_estimator import BaseTorchEstimator

    _, final = final_step(estimator)
    return (
        isinstance(final, BaseTorchEstimator)
        and float(final.get_params().get("dropout", 0.0) or 0.0) > 0
    )


def _check_warm_start(estimator):
    _, final = final_step(estimator)
    if isinstance(final, (BaseEnsemble, HistGradientBoostingRegressor)):
        raise ValueError(  # noqa: TRY004 - a parameter combination, not a type
            "warm_start_chain=True continues the previous model's optimisation; "
            f"{type(final).__name__} would only add trees (or none at all), so "
            "use warm_start_chain=False with it."
        )
    if "warm_start" not in final.get_params():
        raise ValueError(
            f"warm_start_chain=True needs an estimator with a `warm_start` "
            f"parameter; {type(final).__name__} has none."
        )


def _warm_started(previous, estimator):
    """A deep copy of the fitted ``previous`` model set to continue training."""
    _check_warm_start(estimator)
    model = copy.deepcopy(previous)
    if isinstance(model, Pipeline):
        model.set_params(**{f"{model.steps[-1][0]}__warm_start": True})
    else:
        model.set_params(warm_start=True)
    return model


class GeodesicCATERegressor(BaseCATERegressor):
    """G-learner: CATE by gradual self-training along the Wasserstein geodesic.

    Fits the outcome model ``h0`` on the control units and ``h1`` on the
    treated units (a T-learner), then walks each model to the other arm: the
    exact optimal-transport plan between the two covariate samples (squared
    Euclidean cost, uniform masses) defines ``K = n_steps`` intermediate
    populations by McCann interpolation, ``(1 - kappa) x0_i + kappa x1_j``
    for each plan entry, at ``kappa = k / (K + 1)``; at each step the
    previous model pseudo-labels the atoms and the next model is fitted on
    them with the plan masses as sample weights (a fresh clone, or, with
    ``warm_start_chain=True``, the previous network trained further: the
    paper's fine-tuning), the last step landing on the other arm
    (``kappa = 1`` for ``h0``, ``0`` for ``h1``). A fraction ``keep`` of the
    atoms with the smallest uncertainty may be kept at each step (the paper's
    filter, by MC dropout for a dropout network; off by default). ICLR 2026
    paper "Adjusting Prediction Model Through Wasserstein Geodesic for Causal
    Inference" (OpenReview pYLoHuLV45); the algorithm is reconstructed from
    its notes. The default prediction rule ``combine="adapted"`` pairs each
    model with the population it was adapted to, as the paper's theorem does.

    Self-training passes the previous model's own predictions on: for a model
    class that contains its pseudo-labels (e.g. ``LinearRegression``) every
    chain model equals its source model and the G-learner is exactly the
    T-learner, whatever ``n_steps``. Any difference from the T-learner comes
    from what the base learner does when refitted on its own outputs at
    shifted inputs (its regularisation, its smoothness).

    Identification assumes ignorability (no unmeasured confounding given the
    covariates) and overlap (``0 < P(T=1 | x) < 1``); a warning is raised when
    estimated propensities come close to 0 or 1.

    Parameters
    ----------
    estimator : regressor, default=None
        Outcome model. Its clones fitted on each arm's raw ``X`` (untouched)
        are the source models; the chain models are clones of its final step
        (or of itself, when it is not a ``Pipeline``) fitted in the numeric
        space of ``transformer``, with the plan masses as ``sample_weight``
        (routed to the last step of a ``Pipeline``; an estimator without
        ``sample_weight`` is fitted on a weighted resample). ``None``:
        ``HistGradientBoostingRegressor()``.
    n_steps : int, default=3
        Number ``K`` of intermediate populations; ``0`` is a single jump to
        the other arm.
    keep : float in (0, 1], default=1.0
        Fraction ``r`` of atoms kept at each step, those with the smallest
        uncertainty (the paper uses ``r = 0.6``); ``1.0`` keeps all.
    uncertainty : {"auto", "mc_dropout", "bagging"}, default="auto"
        How the uncertainty of a pseudo-label is measured when ``keep < 1``.
        ``"mc_dropout"`` (the paper's filter): the standard deviation of the
        previous model's prediction over ``n_uncertainty_samples`` forward
        passes with dropout kept on; it needs a torch network of the package
        with ``dropout > 0`` (e.g. ``TorchMLPRegressor(dropout=0.1)``).
        ``"bagging"``: the standard deviation over ``n_uncertainty_samples``
        clones of the chain model fitted on bootstrap resamples of the
        previous step's atoms (for any model). ``"auto"``: ``"mc_dropout"``
        for such a dropout network, else ``"bagging"``.
    n_uncertainty_samples : int, default=5
        MC-dropout passes or bagging members.
    scale_covariates : bool, default=True
        Standardise the covariates (in ``transformer`` space) for the
        optimal-transport cost; the squared Euclidean cost is scale
        sensitive. Interpolation commutes with this scaling, so the chain
        models see the unscaled ``transformer`` space.
    transformer : transformer, "passthrough" or None, default=None
        How ``X`` is made numeric for the optimal transport and the chain
        models. ``None``: the steps of ``estimator`` before its final step
        when it is a ``Pipeline`` (fitted on all units), else nothing.
        ``"passthrough"``: nothing (``X`` must be numeric; the chain models
        are clones of the whole ``estimator``).
    warm_start_chain : bool, default=False
        Fine-tune along the chain, as the paper does: each step is a copy of
        the previous model trained further on the new atoms (``warm_start``;
        e.g. ``TorchMLPRegressor``, whose ``n_iter_`` then accumulates over
        the steps) instead of a fresh clone. Tree ensembles are refused.
    combine : {"adapted", "propensity", "source"}, default="adapted"
        How the four models are merged at prediction time. ``"adapted"``
        (the paper's theorem's pairing): ``(h00, h10)`` for controls and
        ``(h01, h11)`` for treated units, the arm taken from
        ``treatment_column`` when set, else ``e(x) >= 0.5``;
        ``"propensity"`` (our blend, not the paper's):
        ``h0 = (1 - e) h00 + e h01`` and ``h1 = e h11 + (1 - e) h10`` with
        the propensity ``e(x)``; ``"source"``: ``h00`` and ``h11`` (exactly
        the T-learner). All three come from one fit (see
        :meth:`predict_outcomes`).
    propensity_estimator : classifier, default=None
        Propensity model, fitted in the numeric ``transformer`` space.
        ``None``: a standardised ``LogisticRegression``.
    %(aipw_cv_parameter)s
    ot_solver : {"auto", "emd", "sinkhorn"}, default="auto"
        ``"emd"``: the exact plan (POT's ``ot.emd`` when installed, else
        scipy's HiGHS dual simplex). ``"sinkhorn"``: entropic plan with
        regularisation ``ot_reg``, keeping its ``n0 + n1`` largest entries.
        ``"auto"``: exact when POT is installed or the problem is small, else
        Sinkhorn (with a warning).
    ot_reg : float, default=0.05
        Sinkhorn regularisation, relative to the mean cost.
    max_ot_samples : int, default=5000
        Above this many units, the plan is computed on a random subsample of
        this size (each arm in proportion, with a warning). The approximate
        mode ``max_ot_samples=1000, n_steps=1`` fits in 3-4x econml's
        ``TLearner`` at n = 2,000-10,000 (the defaults: 10-26x) for +0.005
        PEHE on the benchmark of the user guide (issue 46).
    treatment_column : int or str, default=None
        The column of ``X`` holding the treatment (removed from the
        covariates). ``None``: pass ``treatment`` to ``fit``.
    %(cate_parameters)s
    n_jobs : int, default=None
        Threads running the two chains (``None``: 1; ``-1``: all).
    random_state : int, RandomState instance or None, default=None
        Seeds every clone, the subsample and the bootstrap.
    verbose : int, default=0
        Progress messages, one per chain step.

    Attributes
    ----------
    estimators_ : list of two regressors
        Source models ``[h00, h11]`` fitted on raw ``X`` of each arm.
    chains_ : dict
        ``{0: [h00', h0k..., h01], 1: [h11', h1k..., h10]}``: each chain from
        its source model (in ``transformer`` space) to the other arm, length
        ``n_steps + 2``.
    uncertainty_ : {"mc_dropout", "bagging"} or None
        The filter's uncertainty measure (``None`` when ``keep=1``).
    kept_mask_ : dict
        ``{0: [mask, ...], 1: [...]}``: boolean masks of the atoms kept at
        each step (all ``True`` when ``keep=1``).
    ot_plan_ : CSR sparse matrix or array of shape (n_control_, n_treated_)
        The transport plan between control and treated units (in the order
        they appear in ``X``); a ``csr_array`` when fitted under
        ``sparse_interface="sparray"``, as scikit-learn's attributes.
    ot_solver_ : str
        The solver used (``"emd"`` or ``"sinkhorn"``).
    transformer_ : transformer or None
        The fitted ``transformer``.
    %(cate_attributes)s

    See Also
    --------
    TLearnerRegressor : The source models alone (``combine="source"``).
    XLearnerRegressor : A classic baseline over the same ``estimator``.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.linear_model import LinearRegression
    >>> from sklearn_iclr26.causal import GeodesicCATERegressor
    >>> rng = np.random.RandomState(0)
    >>> X = rng.normal(size=(200, 3))
    >>> t = (rng.uniform(size=200) < 1 / (1 + np.exp(-X[:, 0]))).astype(int)
    >>> y = X[:, 0] + 2.0 * t + rng.normal(scale=0.1, size=200)
    >>> est = GeodesicCATERegressor(LinearRegression(), n_steps=2, random_state=0)
    >>> est = est.fit(X, y, treatment=t)
    >>> len(est.chains_[0])
    4
    >>> round(float(est.predict(X).mean()), 1)
    2.0
    """

    _parameter_constraints: dict = {
        **BaseCATERegressor._parameter_constraints,
        "n_steps": [Interval(Integral, 0, None, closed="left")],
        "keep": [Interval(Real, 0, 1, closed="right")],
        "uncertainty": [StrOptions({"auto", "mc_dropout", "bagging"})],
        "n_uncertainty_samples": [Interval(Integral, 2, None, closed="left")],
        "scale_covariates": ["boolean"],
        "transformer": [
            HasMethods(["fit", "transform"]),
            StrOptions({"passthrough"}),
            None,
        ],
        "warm_start_chain": ["boolean"],
        "combine": [StrOptions(set(_COMBINE))],
        "ot_solver": [StrOptions({"auto", "emd", "sinkhorn"})],
        "ot_reg": [Interval(Real, 0, None, closed="neither")],
        "max_ot_samples": [Interval(Integral, 4, None, closed="left")],
        "aipw_cv": ["cv_object"],
        "n_jobs": N_JOBS_CONSTRAINT,
    }

    def __init__(
        self,
        estimator=None,
        *,
        n_steps=3,
        keep=1.0,
        uncertainty="auto",
        n_uncertainty_samples=5,
        scale_covariates=True,
        transformer=None,
        warm_start_chain=False,
        combine="adapted",
        propensity_estimator=None,
        aipw_cv=5,
        ot_solver="auto",
        ot_reg=0.05,
        max_ot_samples=5000,
        treatment_column=None,
        treatment_threshold=None,
        n_bootstrap=0,
        bootstrap_type="pivot",
        n_jobs=None,
        random_state=None,
        verbose=0,
    ):
        store_params(self, locals())

    _propensity_reuses_preprocessing = False

    # --------------------------------------------------------------- spaces
    def _chain_estimator(self):
        estimator = self._get_estimator()
        if self.transformer is None:
            return final_step(estimator)[1]
        return estimator

    def _transform(self, X):
        Z = X if self.transformer_ is None else self.transformer_.transform(X)
        if sp.issparse(Z):
            Z = Z.toarray()
        try:
            return check_array(Z, dtype=np.float64, input_name="X")
        except (TypeError, ValueError) as exc:
            raise type(exc)(
                f"{exc} {type(self).__name__} computes optimal transport on X "
                "itself and needs numeric, finite features: pass `transformer=` "
                "(e.g. a ColumnTransformer that encodes and imputes), or an "
                "estimator Pipeline whose steps before the final one do so."
            ) from None

    def _propensity_features(self, X):
        """The propensity model sees the numeric ``transformer`` space."""
        return self._transform(X)

    def _fit_transformer(self, X, sample_weight=None):
        if self.transformer is None:
            transformer, _ = final_step(self._get_estimator())
        elif isinstance(self.transformer, str):
            transformer = None
        else:
            transformer = self.transformer
        self.transformer_ = (
            None
            if transformer is None
            else fit_transformer(clone(transformer), X, sample_weight)
        )

    # ------------------------------------------------------------------- OT
    def _fit_plan(self, Z0, Z1, Z, rng, w0=None, w1=None):
        n0, n1 = len(Z0), len(Z1)
        idx0, idx1 = np.arange(n0), np.arange(n1)
        if n0 + n1 > self.max_ot_samples:
            m0 = int(np.clip(round(self.max_ot_samples * n0 / (n0 + n1)), 2, n0))
            m1 = int(np.clip(self.max_ot_samples - m0, 2, n1))
            idx0 = np.sort(rng.choice(n0, m0, replace=False))
            idx1 = np.sort(rng.choice(n1, m1, replace=False))
            warn_user(
                f"{n0 + n1} units exceed max_ot_samples={self.max_ot_samples}: the "
                f"transport plan is computed on a random subsample of {m0} control "
                f"and {m1} treated units."
            )
        A, B = Z0[idx0], Z1[idx1]
        if self.scale_covariates:
            mean, std = Z.mean(axis=0), Z.std(axis=0)
            std[std == 0] = 1.0
            A, B = (A - mean) / std, (B - mean) / std
        C = sqeuclidean_cost(A, B)
        m0, m1 = len(A), len(B)
        if w0 is None:
            a, b = np.full(m0, 1.0 / m0), np.full(m1, 1.0 / m1)
        else:
            # the weighted empirical distributions of the two arms
            a, b = w0[idx0] / w0[idx0].sum(), w1[idx1] / w1[idx1].sum()
        solver = self.ot_solver
        if solver == "auto":
            if _have_pot() or m0 * m1 <= _LINPROG_MAX_ENTRIES:
                solver = "emd"
            else:
                solver = "sinkhorn"
                warn_user(
                    f"POT is not installed and the plan has {m0 * m1} entries: "
                    "using the Sinkhorn plan (approximate marginals) instead of "
                    "the exact one. Install the causal extra for the exact plan."
                )
        log_progress(self, f"transport plan ({solver}) between {m0} and {m1} units")
        if solver == "emd":
            plan = emd_plan(a, b, C)
        else:
            plan = sinkhorn_plan(a, b, C, reg=self.ot_reg, n_keep=m0 + m1)
        self.ot_solver_ = solver
        rows, cols = idx0[plan.row], idx1[plan.col]
        self.ot_plan_ = align_sparse_interface(
            sp.csr_matrix((plan.data, (rows, cols)), shape=(n0, n1))
        )
        return rows, cols, plan.data * len(plan.data)

    # --------------------------------------------------------------- chains
    def _uncertainty(self, chain_est, train, Zk, seed):
        Zp, yp, wp = train
        rng = np.random.RandomState(seed)
        preds = []
        for _ in range(self.n_uncertainty_samples):
            rows = rng.randint(0, len(yp), size=len(yp))
            w = None if wp is None else wp[rows]
            model = fit_weighted(chain_est, Zp[rows], yp[rows], w, _draw(rng))
            preds.append(_predict(model, Zk))
        return np.std(preds, axis=0)

    def _run_chain(self, arm, start, start_train, Z0, Z1, rows, cols, w, seed):
        rng = np.random.RandomState(seed)
        chain_est = self._chain_estimator()
        K = self.n_steps
        chain, masks = [start], []
        model, train = start, start_train
        for k in range(1, K + 2):
            kappa = k / (K + 1) if arm == 0 else 1.0 - k / (K + 1)
            Zk = geodesic_atoms(Z0, Z1, rows, cols, kappa)
            yk = _predict(model, Zk)
            mask = np.ones(len(yk), dtype=bool)
            if self.keep < 1.0:
                if self.uncertainty_ == "mc_dropout":
                    sd = _mc_dropout_sd(
                        model, Zk, self.n_uncertainty_samples, _draw(rng)
                    )
                else:
                    sd = self._uncertainty(chain_est, train, Zk, _draw(rng))
                n_keep = max(2, int(np.ceil(self.keep * len(yk))))
                mask[:] = False
                mask[np.argsort(sd, kind="stable")[:n_keep]] = True
            log_progress(
                self,
                f"chain of arm {arm}: step {k}/{K + 1} (kappa={kappa:.3f}), "
                f"{mask.sum()} of {len(mask)} atoms",
            )
            seed_k = _draw(rng)
            if self.warm_start_chain:
                model = _warm_started(model, chain_est)
                _fit_with_weights(model, Zk[mask], yk[mask], w[mask], seed_k)
            else:
                model = fit_weighted(chain_est, Zk[mask], yk[mask], w[mask], seed_k)
            chain.append(model)
            masks.append(mask)
            train = (Zk[mask], yk[mask], w[mask])
        return chain, masks

    def _fit_cate(self, X, y, t, rng, sample_weight=None):
        if self.n_jobs == 0:
            raise ValueError("n_jobs == 0 has no meaning; use None, -1 or >= 1.")
        if self.warm_start_chain:
            _check_warm_start(self._chain_estimator())
        dropout = _has_dropout(self._chain_estimator())
        if self.uncertainty == "mc_dropout" and not dropout:
            raise ValueError(
                "uncertainty='mc_dropout' needs a torch network of the package "
                "with dropout > 0 as the chain model (e.g. "
                "TorchMLPRegressor(dropout=0.1)); use uncertainty='bagging' for "
                f"{type(final_step(self._chain_estimator())[1]).__name__}."
            )
        self.uncertainty_ = (
            None
            if self.keep == 1.0
            else (
                "mc_dropout" if dropout and self.uncertainty != "bagging" else "bagging"
            )
        )
        self.estimators_, source_seeds = fit_arm_models(
            self, X, y, t, rng, sample_weight
        )
        self._fit_transformer(X, sample_weight)
        Z = self._transform(X)
        rows0, rows1 = np.flatnonzero(t == 0), np.flatnonzero(t == 1)
        Z0, Z1 = Z[rows0], Z[rows1]
        sw = sample_weight
        if sw is not None and (sw[rows0].sum() <= 0 or sw[rows1].sum() <= 0):
            raise ValueError("sample_weight must have a positive sum in each arm.")
        rows, cols, w = self._fit_plan(
            Z0,
            Z1,
            Z,
            rng,
            None if sw is None else sw[rows0],
            None if sw is None else sw[rows1],
        )
        chain_est = self._chain_estimator()
        starts = []
        for arm, (Za, ra) in enumerate([(Z0, rows0), (Z1, rows1)]):
            # the chain starts in the numeric space with the source model's
            # seed: for numeric X and no transformer it *is* the source model,
            # so it is reused; the draws never depend on the type of X
            if (
                isinstance(X, np.ndarray)
                and self.transformer_ is None
                and chain_est is self._get_estimator()
            ):
                start = self.estimators_[arm]
            elif sw is not None:
                start = fit_child(
                    set_child_random_state(clone(chain_est), source_seeds[arm]),
                    Za,
                    y[ra],
                    sw[ra],
                    role=f"outcome model of arm {arm}",
                )
            else:
                start = fit_weighted(chain_est, Za, y[ra], None, source_seeds[arm])
            starts.append((start, (Za, y[ra], None)))
        seeds = [_draw(rng), _draw(rng)]
        n_jobs = 1 if self.n_jobs is None else self.n_jobs
        results = Parallel(n_jobs=n_jobs, prefer="threads")(
            delayed(self._run_chain)(
                arm, *starts[arm], Z0, Z1, rows, cols, w, seeds[arm]
            )
            for arm in (0, 1)
        )
        self.chains_ = {arm: results[arm][0] for arm in (0, 1)}
        self.kept_mask_ = {arm: results[arm][1] for arm in (0, 1)}

    # -------------------------------------------------------------- predict
    def _predict_outcomes(self, X, t, combine=None):
        combine = self.combine if combine is None else combine
        h00 = _predict(self.estimators_[0], X)
        h11 = _predict(self.estimators_[1], X)
        if combine == "source":
            return h00, h11
        Z = self._transform(X)
        h01 = _predict(self.chains_[0][-1], Z)
        h10 = _predict(self.chains_[1][-1], Z)
        e = self._propensity(X)
        if combine == "propensity":
            return (1 - e) * h00 + e * h01, e * h11 + (1 - e) * h10
        treated = (e >= 0.5) if t is None else (t == 1)
        return np.where(treated, h01, h00), np.where(treated, h11, h10)

    def predict_outcomes(self, X, *, W=None, combine=None):
        """Predicted potential outcomes ``(mu0, mu1)``.

        Parameters
        ----------
        X : {array-like, DataFrame} of shape (n_samples, n_features)
            Covariates (with the treatment column when ``treatment_column``
            is set).
        W : {array-like, DataFrame} of shape (n_samples, n_controls), default=None
            Controls, required when ``fit`` had them.
        combine : {"adapted", "propensity", "source"}, default=None
            Overrides the fitted ``combine`` rule (all rules come from the
            same fit).

        Returns
        -------
        mu0, mu1 : ndarray of shape (n_samples,)
            Predicted outcomes under control and under treatment.
        """
        from sklearn_iclr26.utils._batching import batched

        if combine is not None and combine not in _COMBINE:
            raise ValueError(f"combine must be one of {_COMBINE}, got {combine!r}.")
        covariates, t = self._validate_predict(X)
        W = self._controls_for_predict(W, _num_samples(covariates))
        return batched(
            lambda Xb, tb: self._predict_outcomes(Xb, tb, combine),
            append_controls(covariates, W),
            t,
            row_bytes=8 * 16 * max(self.n_features_in_ + self.n_controls_in_, 1),
        )

    def predict(self, X, *, combine=None):
        """Conditional average treatment effect ``tau(x) = mu1(x) - mu0(x)``.

        Parameters
        ----------
        X : {array-like, DataFrame} of shape (n_samples, n_features)
            Covariates.
        combine : {"adapted", "propensity", "source"}, default=None
            Overrides the fitted ``combine`` rule (not with controls ``W``:
            the effect model was then fitted to the fitted rule).

        Returns
        -------
        tau : ndarray of shape (n_samples,)
            Estimated effect of the treatment at each row.
        """
        if combine is None:
            return super().predict(X)
        check_is_fitted(self)
        if self.final_estimator_ is not None:
            raise ValueError(
                "combine= cannot be overridden for a G-learner fitted with "
                "controls W: its effect model was fitted to the combine rule "
                f"{self.combine!r}."
            )
        mu0, mu1 = self.predict_outcomes(X, combine=combine)
        return mu1 - mu0
