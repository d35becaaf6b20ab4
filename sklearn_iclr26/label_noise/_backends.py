"""How the correctors fit their inner classifier: one backend per strategy.

Both correctors (:class:`InstanceNoiseCorrector`,
:class:`ClassConditionalNoiseCorrector`) fit an inner classifier with a
corrected loss in one of three ways, chosen from the classifier (or, for a
``Pipeline``, from its final step; the steps before it are fitted on ``X`` as
usual and the corrected loss applies to the final step):

* :class:`LightGBMBackend`: the loss as a LightGBM custom objective (binary);
* :class:`TorchBackend`: the loss as the training criterion of a
  :class:`~sklearn_iclr26.neural_network.TorchMLPClassifier`, through its
  protected entry point ``_fit_with_criterion``;
* :class:`WeightsBackend`: any classifier whose ``fit`` accepts
  ``sample_weight`` (routed as ``<final step>__sample_weight`` through a
  ``Pipeline``): the loss is applied by (signed) reweighting of stacked copies
  of the rows. The other two backends can reweight too.

A loss is described by a loss specification (:class:`CorrectedLossSpec`,
:class:`ForwardLossSpec`) that gives its LightGBM objective and its torch
criterion. ``X`` reaches the inner estimator untouched.
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import time
from abc import ABC, abstractmethod

import numpy as np
from scipy.special import logit, softmax
from sklearn.base import clone
from sklearn.frozen import FrozenEstimator
from sklearn.utils.validation import has_fit_parameter

from sklearn_iclr26.label_noise._common import (
    proba_from_raw,
    split_pipeline,
    warmup_count,
)
from sklearn_iclr26.utils._sklearn_compat import _num_samples, _safe_indexing
from sklearn_iclr26.utils._torch_estimator import TorchClassifierMixin
from sklearn_iclr26.utils._validation import store_params
from sklearn_iclr26.utils._verbose import log_progress
from sklearn_iclr26.utils._warnings import warn_user

__all__ = [
    "CorrectedLossSpec",
    "ForwardLossSpec",
    "LightGBMBackend",
    "TorchBackend",
    "WeightsBackend",
    "get_backend",
]


# ------------------------------------------------------------ loss specs


class CorrectedLossSpec:
    """The instance-dependent corrected loss (NDX), binary.

    Parameters are those of :class:`InstanceNoiseCorrector`; ``rho`` holds
    fixed flip rates of the training rows (offline estimators) or ``None``
    (margin, recomputed during training).
    """

    n_outputs = 2

    def __init__(self, *, beta, lam, phi, warmup, detach_rho, hessian, rho=None):
        store_params(self, locals())

    def lightgbm_objective(self, n_rounds, n_classes):
        from sklearn_iclr26.label_noise._lgbm_objective import (
            NoiseCorrectedObjective,
        )

        return NoiseCorrectedObjective(
            beta=self.beta,
            lam=self.lam,
            phi=self.phi,
            warmup=warmup_count(self.warmup, n_rounds),
            detach_rho=self.detach_rho,
            hessian=self.hessian,
            rho=self.rho,
        )

    def torch_criterion(self, n_epochs, n_classes):
        """``(criterion, criterion_params, aux, callbacks)``."""
        from sklearn_iclr26.label_noise._torch_loss import (
            EpochToCriterion,
            NoiseCorrectedLoss,
        )

        params = {
            "beta": self.beta,
            "lam": self.lam,
            "phi": self.phi,
            "warmup": warmup_count(self.warmup, n_epochs),
            "detach_rho": self.detach_rho,
        }
        aux = None if self.rho is None else {"rho": self.rho}
        callbacks = [("epoch_to_criterion", EpochToCriterion())]
        return NoiseCorrectedLoss, params, aux, callbacks


class ForwardLossSpec:
    """Forward class-conditional correction ``-log (T^T p(x))[y~]``."""

    def __init__(self, transition_matrix):
        self.transition_matrix = transition_matrix

    def lightgbm_objective(self, n_rounds, n_classes):
        from sklearn_iclr26.label_noise._lgbm_objective import (
            ForwardCorrectedObjective,
        )

        return ForwardCorrectedObjective(transition_matrix=self.transition_matrix)

    def torch_criterion(self, n_epochs, n_classes):
        from sklearn_iclr26.label_noise._torch_loss import ForwardCorrectedLoss

        params = {"transition_matrix": self.transition_matrix}
        return ForwardCorrectedLoss, params, None, []


# -------------------------------------------------------------- backends


def _final(fitted):
    return split_pipeline(fitted)[2]


def _final_input(fitted, X):
    """``X`` as the final step of a fitted Pipeline sees it."""
    head, _, _ = split_pipeline(fitted)
    return X if head is None else head.transform(X)


class Backend(ABC):
    """One way of fitting the inner classifier with a corrected loss.

    Parameters
    ----------
    estimator : estimator object
        The unfitted template: a classifier, or a ``Pipeline`` ending in one.
    """

    name = None
    supports_loss = False

    def __init__(self, estimator):
        self.estimator = estimator
        _, self.final_name, self.final = split_pipeline(estimator)

    @property
    def what(self):
        """The classifier the loss applies to, for messages."""
        kind = type(self.final).__name__
        if self.final_name is None:
            return kind
        return f"the final step {self.final_name!r} ({kind}) of the Pipeline"

    @property
    def supports_weights(self):
        return has_fit_parameter(self.final, "sample_weight")

    def _route(self, **params):
        """Fit parameters of the final step, prefixed through a Pipeline."""
        params = {k: v for k, v in params.items() if v is not None}
        if self.final_name is None:
            return params
        return {f"{self.final_name}__{k}": v for k, v in params.items()}

    def fit_weighted(self, X, y, sample_weight=None):
        """A clone fitted on ``(X, y)`` with the weights routed to the classifier."""
        if sample_weight is not None and not self.supports_weights:
            raise ValueError(f"{self.what} does not accept sample_weight in fit.")
        params = self._route(sample_weight=sample_weight)
        return clone(self.estimator).fit(X, y, **params)

    def fit_stacked(self, X, labels, weights):
        """A clone fitted on ``len(labels)`` stacked copies of ``X``, signed weights.

        ``labels`` and ``weights`` are lists (one entry per copy) of arrays of
        shape (n_samples,). Rows with weight exactly 0 are dropped. Rows are
        indexed with scikit-learn's safe indexing, so DataFrames and sparse
        matrices stay what they are.
        """
        n = _num_samples(X)
        rows = np.tile(np.arange(n), len(labels))
        y_all = np.concatenate(labels)
        w_all = np.concatenate(weights)
        keep = w_all != 0
        X_all = _safe_indexing(X, rows[keep])
        try:
            return clone(self.estimator).fit(
                X_all, y_all[keep], **self._route(sample_weight=w_all[keep])
            )
        except ValueError as exc:
            if "negative" in str(exc).lower():
                raise ValueError(
                    f"{self.what} rejects negative sample weights, which the "
                    "loss-correction stacking needs (rows with the other label get "
                    "negative weights). Use an estimator that accepts them, such as "
                    "LogisticRegression, or strategy='objective'/method='forward' with "
                    "LightGBM or TorchMLPClassifier."
                ) from exc
            raise

    @abstractmethod
    def fit_loss(self, X, y, sample_weight, loss, *, n_classes, owner, prefix=""):
        """Fit a clone with ``loss`` (a loss specification).

        Returns ``(fitted, offset)``, the offset being added to the raw score
        (LightGBM's ``init_score``). ``owner`` is the corrector, whose
        ``verbose`` drives the progress lines (prefixed by ``prefix``).
        """

    def train_raw_score(self, fitted, X, offset=0.0):
        """:meth:`raw_score` on the rows ``fit_loss`` just trained on.

        A backend that kept the training rows' final scores (LightGBM's own
        running sums) returns them, once, instead of predicting again.
        """
        raw = getattr(self, "_train_raw", None)
        self._train_raw = None
        if raw is not None and len(raw) == _num_samples(X):
            return raw
        return self.raw_score(fitted, X, offset)

    def raw_score(self, fitted, X, offset=0.0):
        """Binary raw score ``h(x)`` (logit of class 1) of a fitted clone."""
        if hasattr(fitted, "decision_function"):
            scores = np.asarray(fitted.decision_function(X), dtype=np.float64)
            if scores.ndim == 1:
                return scores + offset
        proba = np.asarray(fitted.predict_proba(X), dtype=np.float64)[:, 1]
        return logit(np.clip(proba, 1e-15, 1 - 1e-15)) + offset

    def predict_proba(self, fitted, X, offset=0.0):
        """Class probabilities of a fitted clone, columns in label-code order."""
        return np.asarray(fitted.predict_proba(X), dtype=np.float64)


class WeightsBackend(Backend):
    """Any classifier whose ``fit`` takes ``sample_weight``: reweighting only."""

    name = "weights"

    def fit_loss(self, X, y, sample_weight, loss, *, n_classes, owner, prefix=""):
        raise ValueError(
            f"{self.what} takes no custom loss; a LGBMClassifier or a "
            "TorchMLPClassifier does."
        )


class LightGBMBackend(Backend):
    """A ``LGBMClassifier`` (or a Pipeline ending in one): custom objectives."""

    name = "lightgbm"
    supports_loss = True

    def fit_loss(self, X, y, sample_weight, loss, *, n_classes, owner, prefix=""):
        """Fit with ``loss`` as custom objective and ``init_score`` set.

        On data too small for LightGBM to keep any feature, a callable
        objective makes LightGBM abort ("num_features() > 0") where the
        built-in one returns a constant model; then the built-in binary
        objective is used (a constant model: there is nothing to correct),
        with a warning, and the offset is 0.
        """
        from lightgbm.basic import LightGBMError

        from sklearn_iclr26.label_noise._common import init_score

        current = self.final.get_params().get("objective")
        if current not in (None, "binary"):
            raise ValueError(
                "The LGBMClassifier must keep objective=None (or 'binary'): the "
                f"corrector sets its own objective, got objective={current!r}."
            )
        n_rounds = self.final.get_params()["n_estimators"]
        objective = loss.lightgbm_objective(n_rounds, n_classes)
        est = clone(self.estimator)
        est.set_params(**self._route(objective=objective))
        if n_classes > 2:
            # log class priors: the softmax's boost_from_average
            prior = np.bincount(y, weights=sample_weight, minlength=n_classes)
            init = np.log(np.maximum(prior / prior.sum(), 1e-6))
            init_rows = np.tile(init, (_num_samples(X), 1))
        else:
            init = init_score(y, sample_weight)
            init_rows = np.full(_num_samples(X), init)
        scores = _TrainScores()
        callbacks = [scores]
        if getattr(owner, "verbose", 0):
            callbacks.append(_LightGBMProgress(owner, n_rounds, prefix))
        self._train_raw = None
        try:
            est.fit(
                X,
                y,
                **self._route(
                    sample_weight=sample_weight,
                    init_score=init_rows,
                    callbacks=callbacks,
                ),
            )
        except LightGBMError as exc:
            if "num_features" not in str(exc):
                raise
            warn_user(
                "LightGBM found no usable feature (too few samples); fitting a "
                "constant model with the built-in objective instead."
            )
            return self.fit_weighted(X, y, sample_weight), 0.0
        if n_classes == 2 and scores.raw is not None:
            self._train_raw = scores.raw
        return est, init

    def raw_score(self, fitted, X, offset=0.0):
        final = _final(fitted)
        raw = final.predict(_final_input(fitted, X), raw_score=True)
        return np.asarray(raw, dtype=np.float64) + offset

    def predict_proba(self, fitted, X, offset=0.0):
        if callable(_final(fitted).get_params().get("objective")):
            raw = self.raw_score(fitted, X, offset)
            if raw.ndim == 2:
                return softmax(raw, axis=1)
            return proba_from_raw(raw)
        return super().predict_proba(fitted, X, offset)


class TorchBackend(Backend):
    """A torch classifier of the package (``TorchMLPClassifier`` or any other
    whose ``_accepts_criterion`` is true), or a Pipeline ending in one."""

    name = "torch"
    supports_loss = True

    def fit_loss(self, X, y, sample_weight, loss, *, n_classes, owner, prefix=""):
        from sklearn_iclr26.utils._skorch_net import EpochProgress

        est = clone(self.estimator)
        head, _, final = split_pipeline(est)
        Xt = X if head is None else head.fit_transform(X, y)
        criterion, params, aux, callbacks = loss.torch_criterion(
            final.max_iter, n_classes
        )
        callbacks = list(callbacks)
        if getattr(owner, "verbose", 0):
            progress = EpochProgress(
                owner, final.max_iter, prefix=prefix, every=_every(final.max_iter)
            )
            callbacks.append(("corrector_progress", progress))
        final._fit_with_criterion(
            Xt,
            y,
            n_outputs=n_classes,
            criterion=criterion,
            criterion_params=params,
            aux=aux,
            sample_weight=sample_weight,
            callbacks=callbacks,
        )
        return est, 0.0

    def raw_score(self, fitted, X, offset=0.0):
        logits = _final(fitted)._raw_decision(_final_input(fitted, X))
        return logits[:, 1] - logits[:, 0] + offset


def _every(total):
    return max(1, int(total) // 10)


class _TrainScores:
    """LightGBM callback: the training rows' raw scores after the last round.

    LightGBM keeps every training row's running score (``init_score`` plus
    the rounds' leaf values, summed round by round); reading it after the
    last round saves the corrector an in-sample ``predict`` over all the
    rows. The sum runs in another order than ``predict``'s (trees first,
    ``init_score`` last), so the two agree to a few ulps, not bit for bit
    (``tests/test_label_noise.py`` states the tolerance). The buffer is read
    through the booster's private ``__inner_predict``; where that is missing
    (another LightGBM version), ``raw`` stays None and the corrector predicts.
    """

    order = 200

    def __init__(self):
        self.raw = None

    def __call__(self, env):
        if env.iteration + 1 != env.end_iteration:
            return
        inner = getattr(env.model, "_Booster__inner_predict", None)
        if inner is None:
            return
        try:
            self.raw = np.array(inner(data_idx=0), dtype=np.float64)
        except (TypeError, ValueError):
            self.raw = None


class _LightGBMProgress:
    """LightGBM callback: a plain-text progress line every tenth of the rounds."""

    order = 100

    def __init__(self, owner, total, prefix=""):
        store_params(self, locals())
        self.start = time.perf_counter()

    def __call__(self, env):
        done = env.iteration + 1
        if done % _every(self.total) and done != self.total:
            return
        elapsed = time.perf_counter() - self.start
        log_progress(
            self.owner,
            f"{self.prefix}boosting round {done}/{self.total} ({elapsed:.2f} s)",
        )


def get_backend(estimator):
    """The backend for ``estimator`` (a classifier or a Pipeline ending in one)."""
    from lightgbm import LGBMClassifier

    _, _, final = split_pipeline(estimator)
    if isinstance(final, FrozenEstimator):
        raise ValueError(  # noqa: TRY004 (an unusable value, like the others)
            "A FrozenEstimator cannot be retrained with a corrected loss: pass the "
            "unfitted classifier as estimator. A fitted preprocessing can be "
            "reused as transformer=FrozenEstimator(preprocessor) (rho options "
            "computed on X) or as a FrozenEstimator step of the Pipeline."
        )
    if isinstance(final, LGBMClassifier):
        return LightGBMBackend(estimator)
    if isinstance(final, TorchClassifierMixin) and final._accepts_criterion:
        # every torch classifier of the package that trains a plain
        # per-sample loss (the base's protected _fit_with_criterion)
        return TorchBackend(estimator)
    return WeightsBackend(estimator)
