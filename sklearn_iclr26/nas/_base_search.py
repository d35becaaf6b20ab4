"""Shared machinery of the architecture searches (ConNAS and its baselines)."""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import math
import warnings
from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.metrics import accuracy_score, r2_score
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import LabelEncoder
from sklearn.utils import ClassifierTags, RegressorTags
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.metaestimators import available_if
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, check_random_state, validate_data

from sklearn_iclr26.nas._base_space import SearchSpace
from sklearn_iclr26.nas._cell_space import CellSearchSpace
from sklearn_iclr26.nas._mlp_space import MLPSearchSpace
from sklearn_iclr26.utils._torch import seed_from_random_state, torch_rng
from sklearn_iclr26.utils._validation import check_at_least_two_classes

_MIN_SAMPLES = 4


def _refit_enabled(self):
    if not self.refit:
        raise AttributeError(
            f"This {type(self).__name__} was built with refit=False; fit it with "
            "refit=True to predict, or train best_architecture_ yourself."
        )
    return True


def _is_classifier_task(self):
    if self.task != "classification":
        raise AttributeError(
            "predict_proba is only available for task='classification'."
        )
    return _refit_enabled(self)


class BaseNASSearch(BaseEstimator):
    """Common parts: validation, costs, data split, selection, refit, delegation."""

    _parameter_constraints: dict = {
        "search_space": [StrOptions({"mlp", "cell"}), SearchSpace, None],
        "constraint": [StrOptions({"params", "flops", "latency"}), callable],
        "budget": [Interval(Real, 0, None, closed="neither"), None],
        "task": [StrOptions({"classification", "regression"})],
        "val_fraction": [Interval(Real, 0, 1, closed="neither")],
        "refit": ["boolean"],
        "final_estimator_params": [dict, None],
        "latency_repeats": [Interval(Integral, 1, None, closed="left")],
        "dtype": [StrOptions({"float64", "float32"})],
        "device": [str],
        "n_jobs": [Integral, None],
        "random_state": ["random_state"],
        "verbose": ["verbose"],
    }

    # ------------------------------------------------------------------ setup
    def _get_search_space(self):
        if self.search_space is None or self.search_space == "mlp":
            return MLPSearchSpace()
        if isinstance(self.search_space, str):
            return CellSearchSpace()
        return self.search_space

    def _log(self, message):
        if self.verbose:
            print(f"[{type(self).__name__}] {message}", flush=True)

    def _term_cost(self, term):
        table = self.cost_table_
        if term not in table:
            if self.constraint == "latency":
                table[term] = float(
                    self._space.measure_term_latency(
                        term,
                        repeats=self.latency_repeats,
                        dtype=self.dtype,
                        device=self.device,
                    )
                )
            else:
                table[term] = float(self._space.term_cost(term, self.constraint))
        return table[term]

    def _arch_cost(self, arch):
        """Cost of a discrete architecture (tuple of operations), cached."""
        arch = tuple(arch)
        cached = self._arch_costs.get(arch)
        if cached is not None:
            return cached
        if callable(self.constraint):
            arch_dict = self._space.to_dict(arch, self._n_features, self._n_outputs)
            try:
                cost = self.constraint(arch_dict)
                cost = float(cost)
            except Exception as exc:
                raise ValueError(
                    f"The cost callable {self.constraint!r} failed on the "
                    f"architecture {arch_dict}: {type(exc).__name__}: {exc}"
                ) from exc
            if not math.isfinite(cost):
                raise ValueError(
                    f"The cost callable returned {cost} for the architecture "
                    f"{arch_dict}; costs must be finite numbers."
                )
            self.cost_table_[arch] = cost
        else:
            terms = self._space.cost_terms(arch, self._n_features, self._n_outputs)
            cost = float(sum(self._term_cost(t) for t in terms))
        self._arch_costs[arch] = cost
        return cost

    def _feasible(self, cost):
        return self.budget is None or cost <= self.budget

    def _local_costs(self, arch_idx):
        """``c[e][k]``: cost of the architecture with edge ``e`` set to op ``k``."""
        out = []
        for e, ops in enumerate(self._ops):
            row = np.empty(len(ops))
            for k in range(len(ops)):
                idx = list(arch_idx)
                idx[e] = k
                row[k] = self._arch_cost(self._to_ops(idx))
            out.append(row)
        return out

    def _to_ops(self, arch_idx):
        return tuple(ops[k] for ops, k in zip(self._ops, arch_idx))

    def _cheapest(self):
        """Cheapest architecture by coordinate descent over the edges.

        Exact for costs that are additive or monotone per edge (parameters,
        FLOPs, latency look-up tables); a heuristic for a callable cost.
        """
        idx = [0] * len(self._ops)
        for _ in range(len(self._ops) + 1):
            changed = False
            for e, costs in enumerate(self._local_costs(idx)):
                best = int(np.argmin(costs))
                if costs[best] < costs[idx[e]]:
                    idx[e] = best
                    changed = True
            if not changed:
                break
        arch = self._to_ops(idx)
        return arch, self._arch_cost(arch)

    def _prepare(self, X, y):
        """Validate data and parameters; set the fitted meta-data and costs."""
        regression = self.task == "regression"
        X, y = validate_data(
            self, X, y, dtype=[np.float64, np.float32], y_numeric=regression
        )
        n_samples = X.shape[0]
        if n_samples < _MIN_SAMPLES:
            raise ValueError(
                f"{type(self).__name__} splits the data into search-train and "
                f"validation sets and needs at least {_MIN_SAMPLES} samples; got "
                f"n_samples = {n_samples}."
            )
        if regression:
            y_search = np.asarray(y, dtype=np.float64)
            n_outputs = 1
        else:
            check_classification_targets(y)
            encoder = LabelEncoder().fit(y)
            self.classes_ = encoder.classes_
            check_at_least_two_classes(self, y)
            y_search = encoder.transform(y).astype(np.int64)
            n_outputs = len(self.classes_)
        space = self._get_search_space()
        space.check_input(X.shape[1])
        self._space = space
        self._n_features, self._n_outputs = X.shape[1], n_outputs
        self._ops = [tuple(ops) for _, ops in space.edges(X.shape[1], n_outputs)]
        self._edge_names = [name for name, _ in space.edges(X.shape[1], n_outputs)]
        self.cost_table_ = {}
        self._arch_costs = {}
        if self.budget is not None:
            arch, cost = self._cheapest()
            if cost > self.budget:
                raise ValueError(
                    f"budget={self.budget} is below the cost {cost:.6g} "
                    f"({self._constraint_name()}) of the cheapest architecture "
                    f"of the search space, {space.to_dict(arch, *self._dims())}: no "
                    "architecture can satisfy it. Raise the budget or use a "
                    "smaller search space."
                )
        return X, y, y_search

    def _dims(self):
        return self._n_features, self._n_outputs

    def _constraint_name(self):
        c = self.constraint
        return c if isinstance(c, str) else getattr(c, "__name__", "callable")

    def _split(self, X, y_search, rng):
        stratify = None
        if self.task == "classification":
            _, counts = np.unique(y_search, return_counts=True)
            n_val = math.ceil(self.val_fraction * len(y_search))
            if (
                counts.min() >= 2
                and n_val >= len(counts)
                and len(y_search) - n_val >= len(counts)
            ):
                stratify = y_search
        idx = np.arange(X.shape[0])
        train, val = train_test_split(
            idx,
            test_size=self.val_fraction,
            random_state=rng.randint(np.iinfo(np.int32).max),
            stratify=stratify,
        )
        return train, val

    # -------------------------------------------------------------- selection
    def _select(self, history, val_losses=None):
        """Pick the architecture to return from the search history.

        ``last_feasible``: the last feasible derived architecture;
        ``best_val_feasible``: the feasible one with the lowest validation
        loss (``val_losses``: architecture -> loss); ``final``: the last
        derived architecture, feasible or not (baselines only).
        """
        select = getattr(self, "select", "last_feasible")
        feasible = [h for h in history if h["feasible"]]
        if select == "final" and history:
            return history[-1]["arch"]
        if feasible:
            if select == "best_val_feasible" and val_losses:
                archs = [h["arch"] for h in feasible]
                return min(dict.fromkeys(archs), key=lambda a: val_losses[a])
            return feasible[-1]["arch"]
        visited = [h["arch"] for h in history]
        cheapest, _cost = (
            self._cheapest() if self.budget is not None else (visited[-1], None)
        )
        candidates = [*visited, cheapest]
        arch = min(candidates, key=self._arch_cost)
        warnings.warn(
            f"No architecture visited by the search satisfied budget={self.budget}; "
            f"returning the cheapest architecture found "
            f"({self._space.to_dict(arch, *self._dims())}, cost "
            f"{self._arch_cost(arch):.6g}, "
            f"{'feasible' if self._feasible(self._arch_cost(arch)) else 'INFEASIBLE'})."
            " Increase search_epochs or rescale_factor.",
            UserWarning,
            stacklevel=3,
        )
        return arch

    def _public_history(self, history):
        out = []
        for h in history:
            record = dict(h)
            record["architecture"] = self._space.to_dict(
                record.pop("arch"), *self._dims()
            )
            out.append(record)
        return out

    # ------------------------------------------------------------------ refit
    def _refit(self, X, y, arch, seed):
        from sklearn_iclr26.nas._refit import (
            _ArchitectureClassifier,
            _ArchitectureRegressor,
        )

        cls = (
            _ArchitectureClassifier
            if self.task == "classification"
            else _ArchitectureRegressor
        )
        params = {
            "dtype": self.dtype,
            "device": self.device,
            "n_jobs": self.n_jobs,
            "random_state": seed,
        }
        params.update(self.final_estimator_params or {})
        return cls(self._space, tuple(arch), **params).fit(X, y)

    def _finish(self, X, y, arch, history, seed):
        self.best_architecture_ = self._space.to_dict(arch, *self._dims())
        self.best_cost_ = self._arch_cost(arch)
        self.budget_satisfied_ = bool(self._feasible(self.best_cost_))
        self.search_history_ = self._public_history(history)
        self.n_architectures_evaluated_ = len({h["arch"] for h in history})
        self._log(
            f"selected {self.best_architecture_} cost={self.best_cost_:.6g} "
            f"budget_satisfied={self.budget_satisfied_}"
        )
        if self.refit:
            self.best_estimator_ = self._refit(X, y, arch, seed)
        return self

    # ------------------------------------------------------------- delegation
    def _validate_for_predict(self, X):
        check_is_fitted(self)
        return validate_data(self, X, reset=False, dtype=[np.float64, np.float32])

    @available_if(_refit_enabled)
    def predict(self, X):
        """Predict with the refitted network of the best architecture.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Input data.

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
            Predicted labels (classification) or targets (regression).
        """
        X = self._validate_for_predict(X)
        return self.best_estimator_.predict(X)

    @available_if(_is_classifier_task)
    def predict_proba(self, X):
        """Class probabilities of the refitted network.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Input data.

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
            Columns follow ``classes_``.
        """
        X = self._validate_for_predict(X)
        return self.best_estimator_.predict_proba(X)

    @available_if(_refit_enabled)
    def score(self, X, y, sample_weight=None):
        """Accuracy (classification) or R^2 (regression) of the refitted network.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Test samples.
        y : array-like of shape (n_samples,)
            True labels or targets.
        sample_weight : array-like of shape (n_samples,), default=None
            Sample weights.

        Returns
        -------
        score : float
            Accuracy or coefficient of determination.
        """
        y_pred = self.predict(X)
        metric = accuracy_score if self.task == "classification" else r2_score
        return float(metric(y, y_pred, sample_weight=sample_weight))

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        if self.task == "classification":
            tags.estimator_type = "classifier"
            tags.classifier_tags = ClassifierTags()
            tags.regressor_tags = None
        else:
            tags.estimator_type = "regressor"
            tags.regressor_tags = RegressorTags()
            tags.classifier_tags = None
        tags.non_deterministic = self.constraint == "latency"
        return tags


class BaseGradientNASSearch(BaseNASSearch):
    """First-order DARTS bilevel search; subclasses modify the arch gradient."""

    _parameter_constraints: dict = {
        **BaseNASSearch._parameter_constraints,
        "relaxation": [StrOptions({"softmax", "gumbel"})],
        "temperature": [Interval(Real, 0, None, closed="neither")],
        "search_epochs": [Interval(Integral, 1, None, closed="left")],
        "batch_size": [Interval(Integral, 1, None, closed="left"), None],
        "weight_lr": [Interval(Real, 0, None, closed="neither")],
        "weight_decay": [Interval(Real, 0, None, closed="left")],
        "arch_lr": [Interval(Real, 0, None, closed="neither")],
        "arch_betas": [tuple],
        "arch_weight_decay": [Interval(Real, 0, None, closed="left")],
    }

    def _modify_arch_gradient(self, grad, arch_idx, cost, probs):
        """Return ``(grad, modified)``; the hook of ConNAS and the penalty baseline."""
        raise NotImplementedError

    def _search(self, X_train, y_train, X_val, y_val):
        """Bilevel first-order search; returns (history, alpha, val losses)."""
        import torch
        import torch.nn.functional as F

        from sklearn_iclr26.utils._torch import torch_dtype

        dtype = torch_dtype(self.dtype)
        device = self.device
        regression = self.task == "regression"
        module_cls, module_params = self._space.supernet(*self._dims())
        supernet = module_cls(**module_params, dtype=dtype).to(device)
        alpha = [
            torch.nn.Parameter(1e-3 * torch.randn(len(ops), dtype=dtype, device=device))
            for ops in self._ops
        ]
        w_params = list(supernet.parameters())
        w_opt = (
            torch.optim.Adam(
                w_params, lr=self.weight_lr, weight_decay=self.weight_decay
            )
            if w_params
            else None
        )
        a_opt = torch.optim.Adam(
            alpha,
            lr=self.arch_lr,
            betas=tuple(self.arch_betas),
            weight_decay=self.arch_weight_decay,
        )
        to_t = lambda a: torch.as_tensor(a, dtype=dtype, device=device)
        Xt, Xv = to_t(X_train), to_t(X_val)
        if regression:
            yt, yv = to_t(y_train).reshape(-1, 1), to_t(y_val).reshape(-1, 1)
            loss_fn = F.mse_loss
        else:
            yt = torch.as_tensor(y_train, device=device)
            yv = torch.as_tensor(y_val, device=device)
            loss_fn = F.cross_entropy

        def relax(detach):
            if self.relaxation == "gumbel":
                w = [F.gumbel_softmax(a, tau=self.temperature) for a in alpha]
            else:
                w = [F.softmax(a / self.temperature, dim=0) for a in alpha]
            return [x.detach() for x in w] if detach else w

        n_train, n_val = len(Xt), len(Xv)
        bs = n_train if self.batch_size is None else min(self.batch_size, n_train)
        bs_val = n_val if self.batch_size is None else min(self.batch_size, n_val)
        n_steps = math.ceil(n_train / bs)
        history = []
        step = 0
        for epoch in range(self.search_epochs):
            perm = (
                torch.randperm(n_train, device=device)
                if bs < n_train
                else torch.arange(n_train, device=device)
            )
            perm_v = (
                torch.randperm(n_val, device=device)
                if bs_val < n_val
                else torch.arange(n_val, device=device)
            )
            n_modified = 0
            for b in range(n_steps):
                rows = perm[b * bs : (b + 1) * bs]
                start = (b * bs_val) % n_val
                rows_v = perm_v[start : start + bs_val]
                if len(rows_v) == 0:
                    rows_v = perm_v[:bs_val]
                # 1. weight step on the search-train batch, logits fixed
                if w_opt is not None:
                    loss = loss_fn(supernet(Xt[rows], relax(True)), yt[rows])
                    w_opt.zero_grad()
                    loss.backward()
                    w_opt.step()
                # 2. architecture gradient on the validation batch
                v_loss = loss_fn(supernet(Xv[rows_v], relax(False)), yv[rows_v])
                grads = torch.autograd.grad(v_loss, alpha)
                g = [gr.detach().cpu().numpy().astype(np.float64) for gr in grads]
                arch_idx = [int(torch.argmax(a)) for a in alpha]
                arch = self._to_ops(arch_idx)
                cost = self._arch_cost(arch)
                with torch.no_grad():
                    probs = [
                        F.softmax(a, dim=0).cpu().numpy().astype(np.float64)
                        for a in alpha
                    ]
                # 3. modification (ConNAS rule or penalty), 4. logit step
                g, modified = self._modify_arch_gradient(g, arch_idx, cost, probs)
                n_modified += bool(modified)
                for a, gr in zip(alpha, g):
                    a.grad = torch.as_tensor(gr, dtype=dtype, device=device)
                a_opt.step()
                history.append(
                    {
                        "step": step,
                        "epoch": epoch,
                        "arch": arch,
                        "cost": cost,
                        "feasible": self._feasible(cost),
                        "val_loss": float(v_loss.detach()),
                        "modified": bool(modified),
                    }
                )
                step += 1
            last = history[-1]
            self._log(
                f"epoch {epoch + 1}/{self.search_epochs} "
                f"arch={self._space.to_dict(last['arch'], *self._dims())} "
                f"cost={last['cost']:.6g} feasible={last['feasible']} "
                f"val_loss={last['val_loss']:.4f} modified={n_modified}/{n_steps}"
            )
        # the architecture derived after the last step
        arch = self._to_ops([int(torch.argmax(a)) for a in alpha])
        cost = self._arch_cost(arch)

        def discrete_val_loss(arch_ops):
            weights = []
            for ops, op in zip(self._ops, arch_ops):
                w = torch.zeros(len(ops), dtype=dtype, device=device)
                w[ops.index(op)] = 1.0
                weights.append(w)
            with torch.no_grad():
                return float(loss_fn(supernet(Xv, weights), yv))

        history.append(
            {
                "step": step,
                "epoch": self.search_epochs,
                "arch": arch,
                "cost": cost,
                "feasible": self._feasible(cost),
                "val_loss": discrete_val_loss(arch),
                "modified": False,
            }
        )
        val_losses = None
        if getattr(self, "select", None) == "best_val_feasible":
            val_losses = {
                h["arch"]: discrete_val_loss(h["arch"])
                for h in history
                if h["feasible"]
            }
        self.alpha_ = [a.detach().cpu().numpy().astype(np.float64) for a in alpha]
        return history, val_losses

    def _fit(self, X, y):
        rng = check_random_state(self.random_state)
        seed = seed_from_random_state(rng)
        with torch_rng(seed, self.n_jobs, self.device):
            X, y, y_search = self._prepare(X, y)
            train, val = self._split(X, y_search, rng)
            y_tr, y_val = y_search[train], y_search[val]
            if self.task == "regression":
                mean, std = y_tr.mean(), y_tr.std()
                std = std if std > 0 else 1.0
                y_tr, y_val = (y_tr - mean) / std, (y_val - mean) / std
            history, val_losses = self._search(
                np.asarray(X[train], dtype=np.float64),
                y_tr,
                np.asarray(X[val], dtype=np.float64),
                y_val,
            )
            arch = self._select(history, val_losses)
        return self._finish(X, y, arch, history, seed)
