"""Conditional vector quantile regression with neural optimal transport (CVQR)."""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import math
from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin, _fit_context, clone
from sklearn.utils._param_validation import (
    HasMethods,
    Interval,
    RealNotInt,
    StrOptions,
)
from sklearn.utils.validation import (
    check_array,
    check_is_fitted,
    check_random_state,
    validate_data,
)

from sklearn_iclr26.conformal._scores import conformal_quantile
from sklearn_iclr26.utils._torch import (
    seed_from_random_state,
    torch_dtype,
    torch_rng,
    train_module,
)
from sklearn_iclr26.utils._validation import check_alpha, check_calibration_size

__all__ = ["CVQRRegressor"]

_CHUNK = 2048


def _log_unit_ball_volume(d):
    return 0.5 * d * math.log(math.pi) - math.lgamma(0.5 * d + 1)


class CVQRRegressor(RegressorMixin, BaseEstimator):
    """Conditional vector quantile regression and multivariate conformal regions.

    Learns the conditional Monge-Kantorovich vector quantile map
    ``Q(u | x) = grad_u phi(u, x)`` that pushes a reference law ``F_U`` on
    ``R^d`` (standard Gaussian or uniform on the unit ball) to the law of
    ``Y | X = x``. ``phi`` is a partially input-convex network (convex in ``u``,
    free in ``x``, with a learned strongly-convex term), fitted on the
    semi-dual optimal-transport objective
    ``E[phi(U, X)] + E[phi*(Y, X)]``. The conjugate ``phi*`` and the
    multivariate rank ``R(y | x) = argmax_u <u, y> - phi(u, x)`` are computed
    by an amortization network refined with warm-started Newton steps.

    The rank norm ``||R(y | x)||`` (``conformity_score="pb"``) is then conformalized by
    split conformal prediction on a held-out calibration set: the region
    ``{y : ||R(y | x)|| <= q}`` = ``Q(B(0, q) | x)`` has marginal coverage at
    least ``1 - alpha`` whatever the quality of the learned map, and adapts
    its shape to the conditional law. Regions can be non-convex; the core
    primitive is :meth:`contains`.

    Read more in the :ref:`User Guide <cvqr>`.

    Parameters
    ----------
    alpha : float, default=0.1
        Default miscoverage level of the regions, in (0, 1); each region
        method also takes its own ``alpha``.
    conformity_score : {"pb", "hpd"}, default="pb"
        Conformity score. ``"pb"`` (pullback): the rank norm
        ``||R(y | x)||``; regions are images of balls. ``"hpd"``: the negative
        learned log-density ``-log f_U(R) + log det Hessian_u phi(R, x)``;
        regions are density level sets.
    solver : {"amortized", "lbfgs", "entropic"}, default="amortized"
        Conjugate solver used in training. ``"amortized"``: the amortization
        network's guess refined by a few Newton steps (AC-NQR).
        ``"lbfgs"``: cold-start L-BFGS at every step (C-NQR, slow).
        ``"entropic"``: Monte-Carlo log-sum-exp smoothing of the conjugate,
        no inner optimization (EC-NQR). Ranks after training are always the
        exact conjugate argmax by damped Newton, warm-started from the
        amortizer (``"amortized"``), from zero (``"lbfgs"``) or from the
        entropic soft argmax (``"entropic"``).
    reference : {"gaussian", "uniform_ball"}, default="gaussian"
        Reference law ``F_U``.
    hidden_dim : int, default=32
        Width of the potential and amortization networks.
    n_layers : int, default=2
        Number of hidden layers.
    max_iter : int, default=100
        Number of training epochs (warm-up included).
    batch_size : int or None, default=256
        Mini-batch size, clipped to the training size; ``None`` is full batch.
    learning_rate : float, default=1e-2
        AdamW learning rate, annealed to 0 with a cosine schedule.
    weight_decay : float, default=1e-4
        AdamW weight decay.
    warmup_epochs : int, default=10
        Epochs (counted in ``max_iter``) fitting ``grad phi(u, x) ~ u`` and
        ``a(x, y) ~ y`` before the OT objective.
    inner_max_iter : int, default=50
        Newton iteration budget of the rank solver (the same at calibration
        and at test time, so that ranks are a fixed function of ``(x, y)``);
        also the L-BFGS budget per step of ``solver="lbfgs"``.
    train_inner_iter : int, default=5
        Newton refinement steps per training batch (``solver="amortized"``).
    epsilon : float, default=1e-3
        Entropic regularization of ``solver="entropic"`` (standardized units).
    n_mc : int, default=512
        Monte-Carlo reference points per batch of ``solver="entropic"``.
    residual_estimator : estimator or None, default=None
        Optional point regressor. If given, it is fitted on 25% of the
        training part and CVQR models the residuals ``y - f(x)`` on the rest
        (the paper's PBS variant).
    calibration_size : float or int, default=0.25
        Fraction (float in (0, 1)) or number (int) of samples held out for
        conformal calibration.
    dtype : {"float64", "float32"}, default="float64"
        Precision of the torch modules.
    device : str, default="cpu"
        torch device.
    n_jobs : int or None, default=None
        torch threads; ``None`` means 1.
    random_state : int, RandomState instance or None, default=None
        Seeds the calibration split, the initialization and the training.
    verbose : int, default=0
        If positive, print the training loss after each epoch.

    Attributes
    ----------
    n_features_in_ : int
        Number of features seen during fit.
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of features seen during fit. Defined only when `X` has feature
        names that are all strings.
    n_outputs_ : int
        Dimension ``d`` of the response.
    net_ : skorch.NeuralNet
        The fitted skorch net; ``net_.module_`` holds the potential and the
        amortization network.
    n_iter_ : int
        Number of epochs run.
    residual_estimator_ : estimator or None
        The fitted point regressor (PBS variant), else ``None``.
    calibration_scores_ : ndarray of shape (n_calibration,)
        Sorted conformity scores of the calibration set.
    threshold_ : float
        Conformal threshold at ``alpha``.

    See Also
    --------
    BonferroniBoxRegressor : Coordinate-wise split-conformal box.
    EllipsoidRegressor : Residual-normalized (local) ellipsoids.

    Notes
    -----
    ``X`` and ``Y`` are standardized with training statistics; ranks live in
    the reference space and volumes are reported in the original units of
    ``Y``. The score is plain split conformal on a frozen function of
    ``(x, y)``, so marginal coverage holds for exchangeable data; conditional
    coverage depends on the quality of the learned transport map.

    ``transform``/``inverse_transform`` of the original API sketch are named
    :meth:`rank` and :meth:`quantile`: scikit-learn treats any estimator with
    a ``transform`` method as a transformer of ``X`` alone.

    References
    ----------
    .. [1] Kondratyev, Fishkov, Kotelevskii, Hegazy, Flamary, Panov and
       Moulines, "Neural Optimal Transport Meets Multivariate Conformal
       Prediction", ICLR 2026, arXiv:2509.25444.
    .. [2] Carlier, Chernozhukov and Galichon, "Vector quantile regression: an
       optimal transport approach", Annals of Statistics, 2016.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_iclr26.conformal import CVQRRegressor
    >>> rng = np.random.RandomState(0)
    >>> X = rng.uniform(size=(400, 1))
    >>> Y = np.c_[X[:, 0], X[:, 0] ** 2] + (0.1 + X) * rng.normal(size=(400, 2))
    >>> reg = CVQRRegressor(max_iter=20, random_state=0).fit(X, Y)
    >>> reg.predict(X[:2]).shape
    (2, 2)
    >>> reg.contains(X[:3], Y[:3]).shape
    (3,)
    """

    _parameter_constraints: dict = {
        "alpha": [Interval(Real, 0, 1, closed="neither")],
        "conformity_score": [StrOptions({"pb", "hpd"})],
        "solver": [StrOptions({"amortized", "lbfgs", "entropic"})],
        "reference": [StrOptions({"gaussian", "uniform_ball"})],
        "hidden_dim": [Interval(Integral, 1, None, closed="left")],
        "n_layers": [Interval(Integral, 0, None, closed="left")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "batch_size": [Interval(Integral, 1, None, closed="left"), None],
        "learning_rate": [Interval(Real, 0, None, closed="neither")],
        "weight_decay": [Interval(Real, 0, None, closed="left")],
        "warmup_epochs": [Interval(Integral, 0, None, closed="left")],
        "inner_max_iter": [Interval(Integral, 1, None, closed="left")],
        "train_inner_iter": [Interval(Integral, 1, None, closed="left")],
        "epsilon": [Interval(Real, 0, None, closed="neither")],
        "n_mc": [Interval(Integral, 1, None, closed="left")],
        "residual_estimator": [HasMethods(["fit", "predict"]), None],
        "calibration_size": [
            Interval(RealNotInt, 0, 1, closed="neither"),
            Interval(Integral, 1, None, closed="left"),
        ],
        "dtype": [StrOptions({"float64", "float32"})],
        "device": [str],
        "n_jobs": [Integral, None],
        "random_state": ["random_state"],
        "verbose": ["verbose"],
    }

    def __init__(
        self,
        *,
        alpha=0.1,
        conformity_score="pb",
        solver="amortized",
        reference="gaussian",
        hidden_dim=32,
        n_layers=2,
        max_iter=100,
        batch_size=256,
        learning_rate=1e-2,
        weight_decay=1e-4,
        warmup_epochs=10,
        inner_max_iter=50,
        train_inner_iter=5,
        epsilon=1e-3,
        n_mc=512,
        residual_estimator=None,
        calibration_size=0.25,
        dtype="float64",
        device="cpu",
        n_jobs=None,
        random_state=None,
        verbose=0,
    ):
        self.alpha = alpha
        self.conformity_score = conformity_score
        self.solver = solver
        self.reference = reference
        self.hidden_dim = hidden_dim
        self.n_layers = n_layers
        self.max_iter = max_iter
        self.batch_size = batch_size
        self.learning_rate = learning_rate
        self.weight_decay = weight_decay
        self.warmup_epochs = warmup_epochs
        self.inner_max_iter = inner_max_iter
        self.train_inner_iter = train_inner_iter
        self.epsilon = epsilon
        self.n_mc = n_mc
        self.residual_estimator = residual_estimator
        self.calibration_size = calibration_size
        self.dtype = dtype
        self.device = device
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.verbose = verbose

    # ------------------------------------------------------------------ fit
    @_fit_context(prefer_skip_nested_validation=False)
    def fit(self, X, Y):
        """Fit the transport map and calibrate the conformal threshold.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Covariates.
        Y : array-like of shape (n_samples,) or (n_samples, n_outputs)
            Multivariate responses (``d >= 1``).

        Returns
        -------
        self : object
            Fitted estimator.
        """
        from skorch.callbacks import GradientNormClipping, LRScheduler
        from torch.optim.lr_scheduler import CosineAnnealingLR

        from sklearn_iclr26.conformal._cvqr_modules import (
            CVQRModule,
            PassthroughLoss,
            WarmupPhase,
        )

        X, Y = validate_data(
            self,
            X,
            Y,
            dtype=[np.float64, np.float32],
            multi_output=True,
            y_numeric=True,
            ensure_min_samples=2,
        )
        Y = np.asarray(Y, dtype=np.float64)
        self._y_1d = Y.ndim == 1
        Y = Y.reshape(Y.shape[0], -1)
        n_samples, d = Y.shape
        self.n_outputs_ = d

        n_cal = (
            int(self.calibration_size)
            if isinstance(self.calibration_size, Integral)
            else math.floor(self.calibration_size * n_samples)
        )
        if n_cal >= n_samples - 1:
            raise ValueError(
                f"calibration_size={self.calibration_size} leaves "
                f"{n_samples - n_cal} training samples out of {n_samples}; at "
                "least 2 are needed."
            )
        check_calibration_size(n_cal, self.alpha)
        rng = check_random_state(self.random_state)
        perm = rng.permutation(n_samples)
        cal_idx, train_idx = perm[:n_cal], perm[n_cal:]

        X_train, Y_train = X[train_idx], Y[train_idx]
        if self.residual_estimator is not None:
            n_point = max(1, len(train_idx) // 4)
            if len(train_idx) - n_point < 2:
                raise ValueError(
                    "Too few training samples to fit residual_estimator on 25% and "
                    "the transport map on the rest."
                )
            est = clone(self.residual_estimator)
            if "random_state" in est.get_params():
                est.set_params(random_state=rng.randint(np.iinfo(np.int32).max))
            est.fit(
                X_train[:n_point], Y_train[:n_point] if d > 1 else Y_train[:n_point, 0]
            )
            self.residual_estimator_ = est
            X_train, Y_train = X_train[n_point:], Y_train[n_point:]
        else:
            self.residual_estimator_ = None
        R_train = Y_train - self._center(X_train)

        self._x_mean = X_train.mean(axis=0).astype(np.float64)
        x_std = X_train.std(axis=0).astype(np.float64)
        self._x_scale = np.where(x_std > 1e-12, x_std, 1.0)
        self._y_mean = R_train.mean(axis=0)
        y_std = R_train.std(axis=0)
        self._y_scale = np.where(y_std > 1e-12, y_std, 1.0)

        Xs = self._scale_x(X_train)
        Ys = (R_train - self._y_mean) / self._y_scale
        warmup = min(self.warmup_epochs, self.max_iter - 1)
        callbacks = [
            ("warmup", WarmupPhase(warmup)),
            (
                "lr_schedule",
                LRScheduler(policy=CosineAnnealingLR, T_max=self.max_iter),
            ),
            ("clip", GradientNormClipping(gradient_clip_value=1.0)),
        ]
        self.net_ = train_module(
            CVQRModule,
            Xs,
            None,
            criterion=PassthroughLoss,
            module_params={
                "n_features": Xs.shape[1],
                "n_outputs": d,
                "hidden_dim": self.hidden_dim,
                "n_layers": self.n_layers,
                "solver": self.solver,
                "reference": self.reference,
                "inner_max_iter": self.inner_max_iter,
                "train_inner_iter": self.train_inner_iter,
                "epsilon": self.epsilon,
                "n_mc": self.n_mc,
            },
            aux={"Y": Ys},
            max_epochs=self.max_iter,
            batch_size=self.batch_size,
            learning_rate=self.learning_rate,
            optimizer="adamw",
            weight_decay=self.weight_decay,
            dtype=self.dtype,
            device=self.device,
            random_state=seed_from_random_state(rng),
            n_jobs=self.n_jobs,
            verbose=self.verbose,
            callbacks=callbacks,
        )
        self.n_iter_ = len(self.net_.history)

        self._set_calibration(X[cal_idx], Y[cal_idx])
        return self

    def _set_calibration(self, X, Y):
        scores = self._scores(X, Y)
        if not np.all(np.isfinite(scores)) and self.conformity_score == "pb":
            raise RuntimeError("Non-finite calibration ranks: the training diverged.")
        self.calibration_scores_ = np.sort(scores)
        self.threshold_ = conformal_quantile(self.calibration_scores_, 1 - self.alpha)

    def calibrate(self, X, Y):
        """Re-calibrate the conformal threshold on new data, keeping the map.

        Replaces the calibration scores of :meth:`fit` by those of ``(X, Y)``
        (which must not have been used to train the map), e.g. to study
        coverage over many calibration sets or after a distribution shift of
        the calibration data.

        Parameters
        ----------
        X : array-like of shape (n_calibration, n_features)
            Calibration covariates.
        Y : array-like of shape (n_calibration, n_outputs)
            Calibration responses.

        Returns
        -------
        self : object
            The re-calibrated estimator.
        """
        check_is_fitted(self)
        X = self._check_X(X)
        Y = self._check_Y(Y, X.shape[0])
        check_calibration_size(X.shape[0], self.alpha)
        self._set_calibration(X, Y)
        return self

    # -------------------------------------------------------------- helpers
    def _center(self, X):
        if getattr(self, "residual_estimator_", None) is None:
            return 0.0
        pred = np.asarray(self.residual_estimator_.predict(X), dtype=np.float64)
        return pred.reshape(pred.shape[0], -1)

    def _scale_x(self, X):
        return (np.asarray(X, dtype=np.float64) - self._x_mean) / self._x_scale

    def _to_torch(self, a):
        import torch

        return torch.as_tensor(
            np.ascontiguousarray(a), dtype=torch_dtype(self.dtype)
        ).to(self.device)

    def _run(self, fn, *arrays):
        """Apply ``fn`` to torch chunks of ``arrays``; concatenate numpy outputs."""
        n = arrays[0].shape[0]
        outs = []
        module = self.net_.module_
        module.eval()
        with torch_rng(0, self.n_jobs, self.device):
            for start in range(0, max(n, 1), _CHUNK):
                chunk = [self._to_torch(a[start : start + _CHUNK]) for a in arrays]
                out = fn(module, *chunk)
                outs.append(out.detach().cpu().numpy().astype(np.float64))
        return np.concatenate(outs, axis=0)

    def _check_X(self, X):
        X = validate_data(self, X, reset=False, dtype=[np.float64, np.float32])
        return X

    def _check_Y(self, Y, n_samples, name="Y"):
        Y = check_array(Y, ensure_2d=False, dtype=np.float64, input_name=name)
        if Y.ndim == 1:
            Y = Y.reshape(-1, 1) if self.n_outputs_ == 1 else Y.reshape(1, -1)
        if Y.ndim != 2 or Y.shape[1] != self.n_outputs_:
            raise ValueError(
                f"{name} must have {self.n_outputs_} columns, got shape {Y.shape}."
            )
        if Y.shape[0] != n_samples:
            raise ValueError(
                f"X and {name} have inconsistent numbers of samples: "
                f"{n_samples} and {Y.shape[0]}."
            )
        return Y

    def _standardize_y(self, X, Y):
        return (Y - self._center(X) - self._y_mean) / self._y_scale

    def _ranks(self, X, Y):
        Xs = self._scale_x(X)
        Ys = self._standardize_y(X, Y)
        return self._run(lambda m, x, y: m.rank(x, y), Xs, Ys)

    def _scores(self, X, Y):
        import torch

        from sklearn_iclr26.conformal._cvqr_modules import reference_log_density

        ranks = self._ranks(X, Y)
        if self.conformity_score == "pb":
            return np.linalg.norm(ranks, axis=1)

        def neg_log_density(module, x, u):
            hess = module.hessian(x, u)
            logdet = torch.linalg.slogdet(hess)[1]
            return logdet - reference_log_density(u, module.reference)

        return self._run(neg_log_density, self._scale_x(X), ranks)

    def _threshold(self, alpha):
        if alpha is None:
            return self.threshold_
        alpha = check_alpha(alpha)
        if not check_calibration_size(
            len(self.calibration_scores_), alpha, error=False
        ):
            return math.inf
        return conformal_quantile(self.calibration_scores_, 1 - alpha)

    # ------------------------------------------------------------- predict
    def predict(self, X):
        """Conditional vector median ``Q(0 | x)`` in the units of ``Y``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Covariates.

        Returns
        -------
        Y_pred : ndarray of shape (n_samples,) or (n_samples, n_outputs)
            Conditional vector medians (1-D if ``Y`` was 1-D in fit).
        """
        check_is_fitted(self)
        X = self._check_X(X)
        out = self._quantile(X, np.zeros((X.shape[0], self.n_outputs_)))
        return out[:, 0] if self._y_1d else out

    def quantile(self, X, U):
        """Conditional vector quantile map ``Q(u | x)`` (inverse of :meth:`rank`).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Covariates.
        U : array-like of shape (n_samples, n_outputs)
            Points of the reference space (for ``reference="gaussian"``,
            ``||u|| = r`` is the Gaussian quantile contour of radius ``r``).

        Returns
        -------
        Y : ndarray of shape (n_samples, n_outputs)
            Quantiles in the units of ``Y``.
        """
        check_is_fitted(self)
        X = self._check_X(X)
        U = self._check_Y(U, X.shape[0], name="U")
        return self._quantile(X, U)

    def _quantile(self, X, U):
        Qs = self._run(lambda m, x, u: m.quantile(x, u), self._scale_x(X), U)
        return Qs * self._y_scale + self._y_mean + self._center(X)

    def rank(self, X, Y):
        """Multivariate ranks ``R(y | x) = argmax_u <u, y> - phi(u, x)``.

        Computed by the same deterministic solver (warm start and iteration
        budget) at calibration and at test time.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Covariates.
        Y : array-like of shape (n_samples, n_outputs)
            Responses.

        Returns
        -------
        U : ndarray of shape (n_samples, n_outputs)
            Ranks in the reference space.
        """
        check_is_fitted(self)
        X = self._check_X(X)
        Y = self._check_Y(Y, X.shape[0])
        return self._ranks(X, Y)

    def conformity_scores(self, X, Y):
        """Conformity scores (larger means less conforming).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Covariates.
        Y : array-like of shape (n_samples, n_outputs)
            Responses.

        Returns
        -------
        scores : ndarray of shape (n_samples,)
            ``||R(y | x)||`` for ``conformity_score="pb"``; the negative learned
            log-density (up to a constant) for ``conformity_score="hpd"``.
        """
        check_is_fitted(self)
        X = self._check_X(X)
        Y = self._check_Y(Y, X.shape[0])
        return self._scores(X, Y)

    def contains(self, X, Y, alpha=None):
        """Whether each ``y`` lies in the conformal region at ``x``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Covariates.
        Y : array-like of shape (n_samples, n_outputs)
            Candidate responses.
        alpha : float, default=None
            Miscoverage level; ``None`` uses the constructor's ``alpha``.

        Returns
        -------
        inside : ndarray of shape (n_samples,), dtype=bool
            Membership of each ``(x, y)``.
        """
        check_is_fitted(self)
        threshold = self._threshold(alpha)
        X = self._check_X(X)
        Y = self._check_Y(Y, X.shape[0])
        return self._scores(X, Y) <= threshold

    def predict_region(self, X, alpha=None, n_points=100):
        """Boundary of the ``conformity_score="pb"`` regions, for ``d <= 2``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Covariates.
        alpha : float, default=None
            Miscoverage level; ``None`` uses the constructor's ``alpha``.
        n_points : int, default=100
            Number of boundary points for ``d = 2``.

        Returns
        -------
        boundary : ndarray of shape (n_samples, n_points, 2) or (n_samples, 2, 1)
            For ``d = 2``, the closed curve ``Q(q S^1 | x)``; for ``d = 1``,
            the interval ``[Q(-q | x), Q(q | x)]``. Infinite where the
            threshold is infinite (calibration set too small for ``alpha``).
        """
        check_is_fitted(self)
        if self.conformity_score != "pb":
            raise ValueError(
                "predict_region is available for conformity_score='pb' only: HPD "
                "regions are density level sets, not images of a ball. Use "
                "contains()."
            )
        if self.n_outputs_ > 2:
            raise ValueError(
                f"predict_region needs d <= 2, got d={self.n_outputs_}; use "
                "contains() and region_volume()."
            )
        X = self._check_X(X)
        q = self._threshold(alpha)
        n = X.shape[0]
        if self.n_outputs_ == 1:
            directions = np.array([[-1.0], [1.0]])
        else:
            theta = np.linspace(0, 2 * np.pi, n_points, endpoint=False)
            directions = np.c_[np.cos(theta), np.sin(theta)]
        k = directions.shape[0]
        if not np.isfinite(q):
            out = np.full((n, k, self.n_outputs_), np.inf)
            if self.n_outputs_ == 1:
                out[:, 0] = -np.inf
            return out
        X_rep = np.repeat(X, k, axis=0)
        U = np.tile(q * directions, (n, 1))
        return self._quantile(X_rep, U).reshape(n, k, self.n_outputs_)

    def region_volume(self, X, alpha=None, n_samples=128):
        """Log-volume of the conformal regions, in the units of ``Y``.

        For ``conformity_score="pb"``, change of variables through
        ``Q = grad phi``:
        ``vol = vol(B(0, q)) * E_{u ~ Unif(B(0, q))}[det Hessian_u phi(u, x)]``
        times the product of the ``Y`` scales. For ``conformity_score="hpd"``,
        importance sampling from the reference law. Monte-Carlo points are fixed
        (seeded), so the estimate is deterministic.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Covariates.
        alpha : float, default=None
            Miscoverage level; ``None`` uses the constructor's ``alpha``.
        n_samples : int, default=128
            Monte-Carlo points per ``x``.

        Returns
        -------
        log_volume : ndarray of shape (n_samples,)
            Natural log of the region volume (``inf`` where the threshold is
            infinite). Divide by ``n_outputs_`` for the paper's (log V)/d.
        """
        import torch

        from sklearn_iclr26.conformal._cvqr_modules import (
            reference_log_density,
            sample_reference,
        )

        check_is_fitted(self)
        X = self._check_X(X)
        q = self._threshold(alpha)
        n, d = X.shape[0], self.n_outputs_
        if not np.isfinite(q):
            return np.full(n, np.inf)
        gen = torch.Generator().manual_seed(0)
        if self.conformity_score == "pb":
            U = (
                sample_reference(
                    n_samples, d, "uniform_ball", generator=gen, dtype=torch.float64
                ).numpy()
                * q
            )
        else:
            U = sample_reference(
                n_samples, d, self.reference, generator=gen, dtype=torch.float64
            ).numpy()
        X_rep = np.repeat(self._scale_x(X), n_samples, axis=0)
        U_rep = np.tile(U, (n, 1))

        def log_terms(module, x, u):
            logdet = torch.linalg.slogdet(module.hessian(x, u))[1]
            if self.conformity_score == "pb":
                return logdet
            log_f = reference_log_density(u, module.reference)
            inside = (logdet - log_f) <= q
            return torch.where(inside, logdet - log_f, torch.full_like(logdet, -np.inf))

        terms = self._run(log_terms, X_rep, U_rep).reshape(n, n_samples)
        finite_max = np.max(terms, axis=1, keepdims=True)
        finite_max = np.where(np.isfinite(finite_max), finite_max, 0.0)
        with np.errstate(divide="ignore"):
            log_mean = (
                np.log(np.mean(np.exp(terms - finite_max), axis=1)) + finite_max[:, 0]
            )
        if self.conformity_score == "pb":
            log_mean = log_mean + _log_unit_ball_volume(d) + d * math.log(q)
        return log_mean + np.sum(np.log(self._y_scale))

    def sample(self, X, n_samples=1, random_state=None):
        """Draw from the learned conditional law: ``Q(U | x)``, ``U ~ F_U``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Covariates.
        n_samples : int, default=1
            Draws per row of ``X``.
        random_state : int, RandomState instance or None, default=None
            Seeds the reference draws.

        Returns
        -------
        Y : ndarray of shape (n_rows, n_samples, n_outputs)
            Samples in the units of ``Y``.
        """
        check_is_fitted(self)
        X = self._check_X(X)
        n, d = X.shape[0], self.n_outputs_
        rng = check_random_state(random_state)
        Z = rng.standard_normal((n * n_samples, d))
        if self.reference == "uniform_ball":
            Z /= np.maximum(np.linalg.norm(Z, axis=1, keepdims=True), 1e-30)
            Z *= rng.uniform(size=(n * n_samples, 1)) ** (1.0 / d)
        out = self._quantile(np.repeat(X, n_samples, axis=0), Z)
        return out.reshape(n, n_samples, d)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.multi_output = True
        tags.target_tags.single_output = True
        return tags
