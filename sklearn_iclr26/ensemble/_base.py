"""Adaptive module composition (MoMa): the shared base of the two estimators.

The fine-tune of the merged network (``merge="weights"``) is the torch base's
training (:class:`~sklearn_iclr26.utils._torch_estimator.
BaseTorchEstimator`: the shared training parameters, early stopping,
``warm_start``, ``callbacks``, ``loss_curve_``); the proxy, the weight solve,
the merge and the prediction heads are MoMa's own.
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

from abc import abstractmethod
from numbers import Integral, Real

import numpy as np
from sklearn.utils.validation import check_is_fitted, check_random_state, validate_data

from sklearn_iclr26.ensemble._hub import ModuleHub, _is_torch_mlp
from sklearn_iclr26.ensemble._proxy import knn_proxy_predictions
from sklearn_iclr26.ensemble._simplex import simplex_least_squares
from sklearn_iclr26.utils._batching import batched
from sklearn_iclr26.utils._sklearn_compat import Interval, StrOptions, _safe_indexing
from sklearn_iclr26.utils._torch import _NonFiniteError, forward_module
from sklearn_iclr26.utils._torch_estimator import BaseTorchEstimator
from sklearn_iclr26.utils._validation import store_params
from sklearn_iclr26.utils._verbose import log_progress
from sklearn_iclr26.utils._warnings import warn_user

_HUB_MISSING = "a `hub` of fitted modules (ModuleHub)"


#: Parameters shared by the classifier and the regressor (class docstrings).
PARAMETERS_DOC = """hub : ModuleHub
    Fitted source-task modules. Required: ``fit`` raises a ``ValueError``
    without it.
n_neighbors : int, default=5
    Neighbours of the kNN proxy.
temperature : float, default=0.2
    Temperature of the affinity ``exp(cos / temperature)``.
proxy_samples : int, default=800
    At most this many downstream rows (a random subset) for the proxy and
    the weight solve (the official code's QUOTA).
max_modules : int, default=None
    Keep at most this many modules (largest weights, then re-solved on that
    support); ``None`` keeps what the simplex solution selects.
weights : {"proxy", "uniform"} or array-like of shape (n_modules,), \
            default="proxy"
    ``"proxy"`` solves for the weights (AMC); ``"uniform"`` weighs every
    module equally (the "soup" baseline); an array fixes the weights (hub
    order; normalised to sum to one), e.g. for a random-selection baseline.
merge : {"weights", "predictions"}, default=None
    ``None`` means ``"weights"`` when every module is a torch MLP of the
    package, else ``"predictions"``."""

#: Attributes shared by the classifier and the regressor (class docstrings).
ATTRIBUTES_DOC = """module_names_ : ndarray of str
    Hub module names, in hub order.
module_weights_ : ndarray of shape (n_modules,)
    Composition weights (zero for unselected or dropped modules).
selected_modules_ : ndarray of str
    Modules with positive weight.
proxy_indices_ : ndarray of int
    Downstream rows used by the proxy.
merge_ : str
    The merge mode used.
heads_ : list of estimators
    One head per selected module (``merge_ == "predictions"``).
head_n_iter_ : int
    The largest number of solver iterations of the heads
    (``merge_ == "predictions"``; 1 for a closed-form head such as ridge).
n_iter_ : int
    Fine-tune epochs run (accumulated over ``warm_start`` refits); 0 when
    ``merge_ == "predictions"`` (no network is fine-tuned).
loss_curve_ : list of float
    Fine-tune training loss of each epoch; ``len(loss_curve_) == n_iter_``.
validation_loss_curve_ : list of float or None
    Fine-tune validation loss of each epoch when ``early_stopping=True``
    (``merge_ == "weights"``), else None.
best_iter_ : int
    The fine-tune epoch whose weights are kept (1-based): the best
    validation epoch with early stopping, else ``n_iter_``.
net_ : skorch.NeuralNet
    Fine-tuned merged network (``merge_ == "weights"`` only).
n_features_in_ : int
    Number of features seen during fit.
feature_names_in_ : ndarray of shape (`n_features_in_`,)
    Names of features seen during fit. Defined only when `X` has feature
    names that are all strings."""


class BaseAdaptiveComposition(BaseTorchEstimator):
    """Proxy, weight solve, merge and fine-tune shared by both estimators."""

    #: shared docstring texts, filled by the torch base before its own
    _doc_texts = {
        "composition_parameters": PARAMETERS_DOC,
        "composition_attributes": ATTRIBUTES_DOC,
    }

    _parameter_constraints: dict = {
        **BaseTorchEstimator._parameter_constraints,
        "hub": [ModuleHub, None],
        "n_neighbors": [Interval(Integral, 1, None, closed="left")],
        "temperature": [Interval(Real, 0, None, closed="neither")],
        "proxy_samples": [Interval(Integral, 2, None, closed="left")],
        "max_modules": [Interval(Integral, 1, None, closed="left"), None],
        "weights": [StrOptions({"proxy", "uniform"}), "array-like"],
        "merge": [StrOptions({"weights", "predictions"}), None],
    }

    # the fine-tune's loss is the task's (cross-entropy / squared error) on a
    # network that only fit() can build (proxy, weights, merge)
    _accepts_criterion = False

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
        alpha=0.0,
        batch_size=None,
        learning_rate_init=1e-2,
        max_iter=200,
        early_stopping=False,
        validation_fraction=0.1,
        n_iter_no_change=10,
        tol=1e-4,
        warm_start=False,
        callbacks=None,
        dtype="float64",
        device="cpu",
        n_jobs=None,
        random_state=None,
        verbose=0,
    ):
        store_params(self, locals())

    # ------------------------------------------------------------ hooks
    @abstractmethod
    def _validate_targets(self, X, y):
        """Validate; return (X, proxy target matrix (n, k), fine-tune target)."""

    @abstractmethod
    def _proxy_error(self, proxy, target):
        """Proxy error of one module (lower is better)."""

    @abstractmethod
    def _make_head(self):
        """Unfitted head trained on one module's embedding (predictions mode)."""

    @abstractmethod
    def _n_outputs(self):
        """Number of outputs of the fine-tuned network."""

    @abstractmethod
    def _head_output(self, head, embedding):
        """A fitted head's output on an embedding (predictions mode)."""

    def _module_spec(self, X, n_outputs, sample_weight=None):
        """The merged body of the selected modules and a new output layer."""
        from sklearn_iclr26.ensemble._modules import ComposedMLPModule, flatten_body

        names = list(self.selected_modules_)
        weights = self.module_weights_[self.module_weights_ > 0]
        body = self.hub.merge(weights, names)
        hidden, activation, _, n_features, _ = self.hub.init_signature(names[0])
        return ComposedMLPModule, {
            "n_features": n_features,
            "n_outputs": n_outputs,
            "hidden_layer_sizes": tuple(hidden),
            "activation": activation,
            # one flat vector: a spec the warm_start comparison can compare
            "body_state": flatten_body(body),
        }

    def _common_test_params(self):
        # the torch contracts need a fine-tuned network: a hub of torch
        # modules (the check instances' stateless hub composes predictions)
        from sklearn_iclr26.ensemble._test_instances import torch_hub

        return {"hub": torch_hub()}

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
        rng = check_random_state(self.random_state)
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
            log_progress(
                self, f"proxy of module {name!r}: error {errors[j]:.4g}", level=2
            )
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
        names_sel = list(self.selected_modules_)
        self.merge_ = merge
        # the composition's result, at verbose=1: the fit of a stateless hub
        # by predictions trains no network, so it prints no epoch line
        log_progress(
            self,
            f"{len(names_sel)} of {n_modules} modules selected, weights "
            + str(
                {n: round(float(w), 4) for n, w in zip(names_sel, weights[selected])}
            ),
        )

        if merge == "weights":
            # the hub's first module checks X as it was trained on it
            X_float = validate_data(
                self.hub[self.selected_modules_[0]],
                X_mod,
                reset=False,
                dtype=np.float64,
            )
            self._train(X_float, y_fit, self._n_outputs())
            for name in ("heads_", "head_n_iter_"):
                self.__dict__.pop(name, None)  # of an earlier predictions fit
        else:
            self.heads_ = []
            for i, name in enumerate(self.selected_modules_, start=1):
                head = self._make_head().fit(self.hub.embed(name, X_mod), y_fit)
                self.heads_.append(head)
                log_progress(
                    self, f"head {i}/{len(names_sel)} fitted on module {name!r}"
                )
            # iterations of the head solvers (1 for a closed-form ridge)
            self.head_n_iter_ = max(
                int(np.max(getattr(head, "n_iter_", 1))) for head in self.heads_
            )
            # no network is fine-tuned: no epochs
            self.n_iter_ = 0
            self.loss_curve_ = []
            self.validation_loss_curve_ = None
            self.best_iter_ = 0
            for name in ("net_", "_fitted_module_spec"):
                self.__dict__.pop(name, None)  # of an earlier weights fit
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
    def _raw_decision(self, X):
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
