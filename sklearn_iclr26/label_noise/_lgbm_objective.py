"""LightGBM objectives: the corrected loss and the forward class-conditional one.

Module-level callable classes with exactly three call parameters ``(y_true,
y_pred, weight)``: LightGBM passes ``weight`` only to three-parameter
objectives and never multiplies the gradient by it itself (LightGBM's
``sklearn.py``, ``_ObjectiveFunctionWrapper``), so the sample weights are
multiplied in here. ``y_pred`` is the raw score,
including the ``init_score`` passed to ``fit``.

They pickle, show their hyperparameters in the repr and support
:func:`sklearn.base.clone` through ``__sklearn_clone__`` (a fresh instance with
the same hyperparameters and a reset round counter). They deliberately do
**not** define ``get_params``: ``LGBMModel.get_params(deep=True)`` would expand
them into ``objective__*`` entries that LightGBM then receives as booster
parameters, and an array-valued one (fixed flip rates, a transition matrix)
makes LightGBM raise ``TypeError``.
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import copy

import numpy as np
from scipy.special import expit, softmax

from sklearn_iclr26.label_noise._loss import corrected_grad_hess, logistic_grad_hess
from sklearn_iclr26.label_noise._loss_kernels import corrected_grad_hess_fused
from sklearn_iclr26.utils._validation import store_params

__all__ = ["ForwardCorrectedObjective", "NoiseCorrectedObjective"]


class _Objective:
    """Hyperparameters from ``__init__``, repr, clone and equality by value."""

    _param_names: tuple = ()

    def _params(self):
        return {name: getattr(self, name) for name in self._param_names}

    def __sklearn_clone__(self):
        return type(self)(**copy.deepcopy(self._params()))

    def __repr__(self):
        def short(value):
            if isinstance(value, np.ndarray):
                return f"<array of shape {value.shape}>"
            return repr(value)

        args = ", ".join(f"{k}={short(v)}" for k, v in self._params().items())
        return f"{type(self).__name__}({args})"


class NoiseCorrectedObjective(_Objective):
    """Binary LightGBM objective for the regularized corrected loss.

    The first ``warmup`` boosting rounds use the plain logistic loss; later
    rounds the corrected loss (see :func:`corrected_grad_hess`). The round
    counter ``n_calls_`` lives on the instance. LightGBM's ``train``
    deep-copies its parameters, objective included, so each fit counts on a
    fresh copy from 0 (checked with lightgbm 4.7) and the instance stored in
    the estimator keeps no counter.

    Parameters
    ----------
    beta, lam, phi, detach_rho, hessian, hessian_floor
        See :class:`~sklearn_iclr26.label_noise.InstanceNoiseCorrector`.
    warmup : int, default=0
        Number of plain logistic rounds.
    rho : ndarray of shape (n_samples,) or None, default=None
        Fixed flip rates of the training rows (offline estimators); ``None``
        recomputes them from the margin at every round.
    """

    _param_names = (
        "beta",
        "lam",
        "phi",
        "warmup",
        "detach_rho",
        "hessian",
        "hessian_floor",
        "rho",
    )

    def __init__(
        self,
        *,
        beta=2.0,
        lam=0.0,
        phi="logistic",
        warmup=0,
        detach_rho=True,
        hessian="gauss_newton",
        hessian_floor=1e-6,
        rho=None,
    ):
        store_params(self, locals())

    def __call__(self, y_true, y_pred, weight):
        self.n_calls_ = getattr(self, "n_calls_", 0) + 1
        y_true = np.asarray(y_true, dtype=np.float64)
        if y_pred.ndim != 1:
            raise ValueError("NoiseCorrectedObjective is binary only.")
        if self.n_calls_ <= self.warmup:
            grad, hess = logistic_grad_hess(y_pred, y_true)
        else:
            loss = {
                "beta": self.beta,
                "lam": self.lam,
                "phi": self.phi,
                "rho": self.rho,
                "detach_rho": self.detach_rho,
                "hessian": self.hessian,
            }
            fused = corrected_grad_hess_fused(y_pred, y_true, weight=weight, **loss)
            if fused is not None:  # one compiled pass, weights included
                return fused
            grad, hess = corrected_grad_hess(
                y_pred, y_true, hessian_floor=self.hessian_floor, **loss
            )
        if weight is not None:
            grad = grad * weight
            hess = hess * weight
        return grad, hess


class ForwardCorrectedObjective(_Objective):
    """LightGBM objective of forward correction (Patrini et al. 2017).

    Loss ``-log q(y_noisy)`` with ``q = T^T p`` the noisy-label probabilities
    implied by the model's clean ones ``p``. Binary targets (one raw score):
    ``q1 = T[0, 1] (1 - p) + T[1, 1] p``, and the hessian is the positive
    surrogate ``|T[1, 1] - T[0, 1]| p (1 - p)`` (the logistic curvature scaled
    by the slope of ``q1``): the Gauss-Newton term ``(dq1/dh)^2 / (q1 (1 -
    q1))`` vanishes faster than the gradient on confident rows and gave
    exploding leaves. Multi-class targets (one raw score per class, ``p`` the
    softmax): the gradient of the raw score of class ``k`` is ``p_k (1 -
    T[k, y~] / q(y~))`` (``p_k - [k = y~]``, the softmax loss's, at ``T =
    I``), the hessian the softmax curvature ``p_k (1 - p_k)``.

    Parameters
    ----------
    transition_matrix : ndarray of shape (n_classes, n_classes)
        ``T[i, j] = P(Y~ = j | Y = i)``.
    """

    _param_names = ("transition_matrix",)

    def __init__(self, transition_matrix=None):
        self.transition_matrix = transition_matrix

    def __call__(self, y_true, y_pred, weight):
        T = np.asarray(self.transition_matrix, dtype=np.float64)
        y_pred = np.asarray(y_pred, dtype=np.float64)
        if y_pred.ndim == 2:
            grad, hess = self._multiclass(T, np.asarray(y_true, dtype=int), y_pred)
            if weight is not None:
                grad = grad * weight[:, None]
                hess = hess * weight[:, None]
            return grad, hess
        y_true = np.asarray(y_true, dtype=np.float64)
        p = expit(y_pred)
        slope = T[1, 1] - T[0, 1]
        q1 = np.clip(T[0, 1] + slope * p, 1e-12, 1.0 - 1e-12)
        dq1 = slope * p * (1.0 - p)
        grad = -(y_true / q1 - (1.0 - y_true) / (1.0 - q1)) * dq1
        hess = np.maximum(np.abs(slope) * p * (1.0 - p), 1e-12)
        if weight is not None:
            grad = grad * weight
            hess = hess * weight
        return grad, hess

    @staticmethod
    def _multiclass(T, y, raw):
        p = softmax(raw, axis=1)
        T_y = T[:, y].T  # T_y[i, k] = T[k, y~_i]
        q = np.maximum(np.sum(T_y * p, axis=1, keepdims=True), 1e-12)
        grad = p * (1.0 - T_y / q)
        hess = np.maximum(p * (1.0 - p), 1e-12)
        return grad, hess
