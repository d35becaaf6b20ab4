"""Adaptive module composition (MoMa): the shared base of the two estimators."""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

from abc import abstractmethod
from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils import _safe_indexing
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted, validate_data

from sklearn_iclr26.ensemble._hub import ModuleHub, _is_torch_mlp
from sklearn_iclr26.ensemble._proxy import knn_proxy_predictions
from sklearn_iclr26.ensemble._simplex import simplex_least_squares
from sklearn_iclr26.utils._batching import batched
from sklearn_iclr26.utils._random import seed_from_random_state
from sklearn_iclr26.utils._torch import _NonFiniteError, forward_module, train_module
from sklearn_iclr26.utils._validation import N_JOBS_CONSTRAINT
from sklearn_iclr26.utils._verbose import log_progress
from sklearn_iclr26.utils._warnings import warn_user

_HUB_MISSING = "a `hub` of fitted modules (ModuleHub)"


class BaseAdaptiveComposition(BaseEstimator):
    """Proxy, weight solve, merge and fine-tune shared by both estimators."""

    _parameter_constraints: dict = {
        "hub": [ModuleHub, None],
        "n_neighbors": [Interval(Integral, 1, None, closed="left")],
        "temperature": [Interval(Real, 0, None, closed="neither")],
        "proxy_samples": [Interval(Integral, 2, None, closed="left")],
        "max_modules": [Interval(Integral, 1, None, closed="left"), None],
        "weights": [StrOptions({"proxy", "uniform"}), "array-like"],
        "merge": [StrOptions({"weights", "predictions"}), None],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "learning_rate_init": [Interval(Real, 0, None, closed="neither")],
        "batch_size": [Interval(Integral, 1, None, closed="left"), None],
        "alpha": [Interval(Real, 0, None, closed="left")],
        "dtype": [StrOptions({"float64", "float32"})],
        "device": [str],
        "n_jobs": N_JOBS_CONSTRAINT,
        "random_state": ["random_state"],
        "verbose": ["verbose"],
    }

    def __init__(
        self,
        hub=None,
        *,
        n_neighbors=5,
        temperature=0.2,
        proxy_samples=800,
        max_modules=None,
        weights="proxy",
        merge=None,
        max_iter=200,
        learning_rate_init=1e-2,
        batch_size=None,
        alpha=0.0,
        dtype="float64",
        device="cpu",
        n_jobs=None,
        random_state=None,
        verbose=0,
    ):
        self.hub = hub
        self.n_neighbors = n_neighbors
        self.temperature = temperature
        self.proxy_samples = proxy_samples
        self.max_modules = max_modules
        self.weights = weights
        self.merge = merge
        self.max_iter = max_iter
        self.learning_rate_init = learning_rate_init
        self.batch_size = batch_size
        self.alpha = alpha
        self.dtype = dtype
        self.device = device
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.verbose = verbose

    # ------------------------------------------------------------ hooks
    @abstractmethod
    def _validate_targets(self, X, y):
        """Validate; return (X, proxy target matrix (n, k), fine-tune target)."""

    @abstractmethod
    def _proxy_error(self, proxy, target):
        """Proxy error of one module (lower is better)."""

    @abstractmethod
    def _finetune_spec(self, n_outputs):
        """(criterion class, criterion params) of the fine-tune."""

    @abstractmethod
    def _make_head(self):
        """Unfitted head trained on one module's embedding (predictions mode)."""

    # ------------------------------------------------------------ fit
    def _check_hub(self):
        if self.hub is None:
            raise ValueError(
                f"{type(self).__name__} needs {_HUB_MISSING}; got hub=None. Build "
                "one with ModuleHub().add_task(...) or ModuleHub().add_module(...)."
            )
        if len(self.hub) == 0:
            raise ValueError(
                f"{type(self).__name__}: the hub is empty; add modules with "
                "ModuleHub.add_task or ModuleHub.add_module."
            )

    def _resolve_merge(self, names):
        all_torch = all(_is_torch_mlp(self.hub[n]) for n in names)
        merge = self.merge
        if merge is None:
            merge = "weights" if all_torch else "predictions"
        if merge == "weights":
            if not all_torch:
                others = [n for n in names if not _is_torch_mlp(self.hub[n])]
                raise ValueError(
                    "merge='weights' needs torch MLP modules (TorchMLPRegressor/"
                    f"TorchMLPClassifier); modules {others} are not. Use "
                    "merge='predictions'."
                )
            if not self.hub.shares_initialisation(names):
                raise ValueError(
                    "merge='weights' needs modules trained from one shared "
                    "initialisation (same architecture, number of features and "
                    "integer random_state, as ModuleHub.add_task gives); the hub's "
                    "modules do not share one. Use merge='predictions'."
                )
        return merge

    def _fit(self, X, y):
        self._check_hub()
        X_mod, Y, y_fit = self._validate_targets(X, y)
        n_samples = Y.shape[0]
        if n_samples < self.n_neighbors + 1:
            raise ValueError(
                f"The downstream set has n_samples = {n_samples}; the kNN proxy "
                f"needs at least n_neighbors + 1 = {self.n_neighbors + 1} samples."
            )
        names = self.hub.names
        merge = self._resolve_merge(names)
        seed = seed_from_random_state(self.random_state)
        rng = np.random.RandomState(seed)
        if n_samples > self.proxy_samples:
            sub = np.sort(rng.choice(n_samples, self.proxy_samples, replace=False))
        else:
            sub = np.arange(n_samples)
        self.proxy_indices_ = sub
        X_sub = _safe_indexing(X_mod, sub)
        Y_sub = Y[sub]

        n_modules = len(names)
        proxies = np.full((len(sub), Y.shape[1], n_modules), np.nan)
        errors = np.full(n_modules, np.nan)
        valid = np.zeros(n_modules, dtype=bool)
        for j, name in enumerate(names):
            try:
                embedding = self.hub.embed(name, X_sub)
            except _NonFiniteError:  # a torch module's non-finite embedding
                embedding = np.full((len(X_sub), 1), np.nan)
            proxy = (
                knn_proxy_predictions(
                    embedding,
                    Y_sub,
                    n_neighbors=self.n_neighbors,
                    temperature=self.temperature,
                )
                if np.all(np.isfinite(embedding))
                else np.full(Y_sub.shape, np.nan)
            )
            if not np.all(np.isfinite(proxy)):
                warn_user(
                    f"Module {name!r} gives non-finite embeddings or proxy "
                    "predictions on the downstream data; it is dropped."
                )
                continue
            valid[j] = True
            proxies[:, :, j] = proxy
            errors[j] = self._proxy_error(proxy, Y_sub)
            log_progress(self, f"proxy of module {name!r}: error {errors[j]:.4g}")
        if not valid.any():
            raise ValueError(
                "No module of the hub gives finite proxy predictions on the "
                "downstream data."
            )
        weights = np.zeros(n_modules)
        weights[valid] = self._solve_weights(proxies[:, :, valid], Y_sub, valid)
        self.module_names_ = np.asarray(names, dtype=object)
        self.module_weights_ = weights
        self.proxy_errors_ = errors
        selected = np.flatnonzero(weights > 0)
        self.selected_modules_ = self.module_names_[selected]
        self.merge_ = merge
        log_progress(
            self,
            f"weights {dict(zip(self.selected_modules_, weights[selected].round(4)))}",
        )

        if merge == "weights":
            sel_names = list(self.selected_modules_)
            body = self.hub.merge(weights[selected], sel_names)
            hidden, activation, _, n_features, _ = self.hub.init_signature(sel_names[0])
            from sklearn_iclr26.ensemble._modules import ComposedMLPModule

            X_float = validate_data(
                self.hub[sel_names[0]], X_mod, reset=False, dtype=np.float64
            )
            n_outputs = self._n_outputs()
            criterion, criterion_params = self._finetune_spec(n_outputs)
            self.net_ = train_module(
                ComposedMLPModule,
                X_float,
                y_fit,
                criterion=criterion,
                criterion_params=criterion_params,
                module_params={
                    "n_features": n_features,
                    "n_outputs": n_outputs,
                    "hidden_layer_sizes": hidden,
                    "activation": activation,
                    "body_state": body,
                },
                max_epochs=self.max_iter,
                batch_size=self.batch_size,
                learning_rate=self.learning_rate_init,
                weight_decay=self.alpha,
                dtype=self.dtype,
                device=self.device,
                random_state=seed,
                n_jobs=self.n_jobs,
                verbose=self.verbose,
            )
            self.n_iter_ = len(self.net_.history)
        else:
            self.heads_ = []
            for name in self.selected_modules_:
                head = self._make_head().fit(self.hub.embed(name, X_mod), y_fit)
                self.heads_.append(head)
            # iterations of the head solvers (1 for a closed-form ridge)
            self.n_iter_ = max(
                int(np.max(getattr(head, "n_iter_", 1))) for head in self.heads_
            )
        return self

    def _solve_weights(self, proxies, Y_sub, valid):
        n_valid = proxies.shape[-1]
        if isinstance(self.weights, str):
            if self.weights == "uniform":
                return np.full(n_valid, 1.0 / n_valid)
            w = simplex_least_squares(proxies, Y_sub)
            if self.max_modules is not None and np.count_nonzero(w) > self.max_modules:
                keep = np.sort(np.argsort(-w, kind="stable")[: self.max_modules])
                w_keep = simplex_least_squares(proxies[:, :, keep], Y_sub)
                w = np.zeros(n_valid)
                w[keep] = w_keep
            return w
        given = np.asarray(self.weights, dtype=np.float64)
        if given.shape != valid.shape:
            raise ValueError(
                f"weights must have one entry per hub module ({valid.shape[0]}), "
                f"got shape {given.shape}."
            )
        if np.any(given < 0) or not np.all(np.isfinite(given)):
            raise ValueError("weights must be finite and non-negative.")
        given = given[valid]
        if given.sum() <= 0:
            raise ValueError("weights must put positive weight on a valid module.")
        return given / given.sum()

    # ------------------------------------------------------------ predict
    def _raw_output(self, X):
        """Weights mode: network output; predictions mode: blended heads."""
        check_is_fitted(self)
        X_checked = validate_data(self, X, reset=False)
        X_mod = X if hasattr(X, "columns") else X_checked
        if self.merge_ == "weights":
            X_float = validate_data(
                self.hub[self.selected_modules_[0]],
                X_mod,
                reset=False,
                dtype=np.float64,
            )
            return forward_module(
                self.net_, X_float, dtype=self.dtype, n_jobs=self.n_jobs
            )
        weights = self.module_weights_[self.module_weights_ > 0]

        def blend(X_batch):
            out = None
            for w, name, head in zip(weights, self.selected_modules_, self.heads_):
                pred = w * self._head_output(head, self.hub.embed(name, X_batch))
                out = pred if out is None else out + pred
            return out

        return batched(blend, X_mod, row_bytes=8 * 64 * max(self.n_features_in_, 1))

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.non_deterministic = False
        return tags
