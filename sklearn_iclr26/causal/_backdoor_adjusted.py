"""The backdoor-adjusted (Prism) estimators' shared part: :class:`BaseBackdoorAdjusted`.

The training parameters, the engine call, ``fit`` and the forward pass are the
torch base's (:mod:`sklearn_iclr26.utils._torch_estimator`); this
base adds the method: the feature groups, the module with its adjusted copies,
the three-term loss, the per-term loss curves and the branch choice at
prediction time (``mode``).
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

from numbers import Integral, Real

import numpy as np
from sklearn.base import is_classifier
from sklearn.utils.validation import check_is_fitted

from sklearn_iclr26.utils._columns import check_disjoint, resolve_columns
from sklearn_iclr26.utils._sklearn_compat import Interval, StrOptions
from sklearn_iclr26.utils._torch_estimator import BaseTorchEstimator
from sklearn_iclr26.utils._validation import check_hidden_layer_sizes, store_params
from sklearn_iclr26.utils._verbose import log_progress
from sklearn_iclr26.utils._warnings import warn_user

__all__ = ["BaseBackdoorAdjusted"]


def _factual(module, xb, **aux):
    return module.factual(xb)


def _adjusted(module, xb, **aux):
    return module(xb)[1]


def _factual_and_adjusted(module, xb, **aux):
    import torch

    return torch.cat([module.factual(xb), module(xb)[1]], dim=1)


def _weights(module, xb, **aux):
    return module.confounder_weights(xb)


def _copies(module, xb, **aux):
    return module.copy_outputs(xb)


_BRANCHES = {
    "factual": _factual,
    "adjusted": _adjusted,
    "mix": _factual_and_adjusted,
}


#: numpydoc entries of the method's own parameters (both tasks)
PARAMETERS_DOC = """feature_groups : dict or None, default=None
    ``{"context": columns, "primary": columns}``: the "context" group is
    the features suspected to carry a background (confounding) signal; it
    is embedded separately and reweighted by the background states.
    Columns are DataFrame column names (str) or column indices (int).
    "primary" defaults to every other column. ``None`` uses all features
    in both groups (the reduction to a single-input model).
n_confounders : int, default=2
    Number ``n`` of learned background states (adjusted copies per row;
    the paper uses 2 to 8, best 4). ``0`` builds no adjusted branch: the
    plain "primary embedding + context embedding" model.
adjusted_weight : float, default=1.0
    Weight of the adjusted-branch loss ``L2`` (the paper's alpha).
uniformity_weight : float, default=1.0
    Weight of the uniformity loss ``L3`` on the background states (the
    paper's beta).
uniformity_t : float, default=2.0
    Kernel parameter ``t`` of the uniformity loss.
weight_activation : {"sigmoid", "softmax"}, default="sigmoid"
    Activation of the background-state weights (softmax normalises over
    the embedding axis).
background_states : {"learned", "constant", "random"}, default="learned"
    The background states ``a_i``: ``"learned"`` (the confounder encoder
    over the context columns, the method), or the controls ``"constant"``
    (``a_i = 0.5``: no encoder signal, no diversity) and ``"random"``
    (``sigmoid(N(0, 1))`` drawn fresh on every training pass, their mean
    0.5 at prediction). A gain can be attributed to the learned states
    only where ``"learned"`` beats ``"constant"``; with the controls the
    uniformity loss is constant (no gradient).
adjust_in : {"hidden", "output"}, default="hidden"
    Average the adjusted copies in hidden space (official code) or average
    their outputs (the paper's formula).
predict_mode : {"factual", "adjusted", "mix"}, default="factual"
    Output used by ``predict``: the factual copy (official inference), the
    adjusted branch, or the mean of both.
embed_dim : int, default=16
    Width ``d`` of the two embeddings and of the background-state weights.
hidden_layer_sizes : array-like of int, default=(32, 32)
    Hidden layers (ReLU, at least one) of the shared network. The first
    is the backbone ``f`` whose outputs ``adjust_in="hidden"`` averages;
    the others and the output layer form the head ``g``. With one hidden
    layer the head is linear and, for regression, both ``adjust_in``
    values give the same model.
confounder_hidden_size : int, default=16
    Hidden width of the confounder encoder (the tabular analogue of the
    official code's small CNN)."""

#: numpydoc entries of the method's own fitted attributes (both tasks)
ATTRIBUTES_DOC = """n_features_in_ : int
    Number of features seen during fit.
feature_names_in_ : ndarray of shape (`n_features_in_`,)
    Names of features seen during fit. Defined only when `X` has feature
    names that are all strings.
primary_features_ : ndarray of int
    Column indices of the primary group.
context_features_ : ndarray of int
    Column indices of the context group.
loss_term_history_ : dict of str to list of float
    The three loss terms per epoch, under ``"factual"`` (L1),
    ``"adjusted"`` (L2) and ``"uniformity"`` (L3): means over the
    epoch's training rows of the unweighted per-row losses (``nan`` when
    ``n_confounders=0``). Without sample weights, ``loss_curve_`` is
    ``factual + adjusted_weight * adjusted + uniformity_weight *
    uniformity`` epoch by epoch.
loss_term_curves_ : dict of str to list of float
    Deprecated name of ``loss_term_history_`` (a ``FutureWarning``); it
    will be removed in a future release."""


class BaseBackdoorAdjusted(BaseTorchEstimator):
    """Parameters, groups, module, loss and branches shared by both tasks."""

    #: shared docstring texts, filled by the torch base before its own
    _doc_texts = {
        "backdoor_parameters": PARAMETERS_DOC,
        "backdoor_attributes": ATTRIBUTES_DOC,
    }

    _parameter_constraints: dict = {
        **BaseTorchEstimator._parameter_constraints,
        "feature_groups": [dict, None],
        "n_confounders": [Interval(Integral, 0, None, closed="left")],
        "adjusted_weight": [Interval(Real, 0, None, closed="left")],
        "uniformity_weight": [Interval(Real, 0, None, closed="left")],
        "uniformity_t": [Interval(Real, 0, None, closed="neither")],
        "weight_activation": [StrOptions({"sigmoid", "softmax"})],
        "background_states": [StrOptions({"learned", "constant", "random"})],
        "adjust_in": [StrOptions({"hidden", "output"})],
        "predict_mode": [StrOptions({"factual", "adjusted", "mix"})],
        "embed_dim": [Interval(Integral, 1, None, closed="left")],
        "hidden_layer_sizes": ["array-like"],
        "confounder_hidden_size": [Interval(Integral, 1, None, closed="left")],
    }

    # the three-term loss is the method
    _accepts_criterion = False

    def __init__(
        self,
        feature_groups=None,
        *,
        n_confounders=2,
        adjusted_weight=1.0,
        uniformity_weight=1.0,
        uniformity_t=2.0,
        weight_activation="sigmoid",
        background_states="learned",
        adjust_in="hidden",
        predict_mode="factual",
        embed_dim=16,
        hidden_layer_sizes=(32, 32),
        confounder_hidden_size=16,
        alpha=0.0,
        batch_size=256,
        learning_rate_init=1e-3,
        max_iter=100,
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

    # -- groups and checks -------------------------------------------------
    def _resolve_groups(self, n_features):
        groups = self.feature_groups
        if groups is None:
            everything = list(range(n_features))
            return everything, everything
        unknown = set(groups) - {"primary", "context"}
        if unknown or "context" not in groups:
            raise ValueError(
                "feature_groups must be a dict with the key 'context' (and "
                f"optionally 'primary'); got keys {sorted(groups)!r}."
            )
        context = resolve_columns(groups["context"], self, n_features, "context")
        if groups.get("primary") is None:
            primary = [i for i in range(n_features) if i not in set(context)]
        else:
            primary = resolve_columns(groups["primary"], self, n_features, "primary")
        check_disjoint({"primary": primary, "context": context})
        return primary, context

    def _check_branches(self):
        if self.n_confounders < 1 and self.adjusted_weight > 0:
            raise ValueError(
                f"n_confounders={self.n_confounders} leaves no background states "
                f"for the adjusted branch, whose loss weight adjusted_weight="
                f"{self.adjusted_weight} is positive: use n_confounders >= 1 or "
                "adjusted_weight=0 (the plain model)."
            )
        if self.n_confounders < 1 and self.predict_mode != "factual":
            raise ValueError(
                f"predict_mode={self.predict_mode!r} needs the adjusted branch, "
                "which n_confounders=0 does not build."
            )

    # -- the torch base's hooks ----------------------------------------------
    def _module_spec(self, X, n_outputs, sample_weight=None):
        from sklearn_iclr26.causal._backdoor_adjusted_modules import PrismNet

        self._check_branches()
        hidden = check_hidden_layer_sizes(self.hidden_layer_sizes, allow_empty=False)
        primary, context = self._resolve_groups(X.shape[1])
        self.primary_features_ = np.asarray(primary, dtype=np.int64)
        self.context_features_ = np.asarray(context, dtype=np.int64)
        return PrismNet, {
            "primary": tuple(primary),
            "context": tuple(context),
            "n_outputs": n_outputs,
            "embed_dim": self.embed_dim,
            "hidden_layer_sizes": hidden,
            "n_confounders": self.n_confounders,
            "confounder_hidden_size": self.confounder_hidden_size,
            "weight_activation": self.weight_activation,
            "background_states": self.background_states,
            "adjust_in": self.adjust_in,
            "task": "classification" if is_classifier(self) else "regression",
        }

    def _criterion_spec(self, n_outputs):
        from sklearn_iclr26.causal._backdoor_adjusted_modules import PrismLoss

        classification = is_classifier(self)
        return PrismLoss, {
            "adjusted_weight": self.adjusted_weight,
            "uniformity_weight": self.uniformity_weight,
            "uniformity_t": self.uniformity_t,
            "loss": "log_loss" if classification else self.loss,
            "adjusted_is_log_proba": classification and self.adjust_in == "output",
        }

    def _training_options(self, X, y):
        from sklearn_iclr26.causal._backdoor_adjusted_modules import LossTermHistory

        log_progress(
            self,
            f"training {1 + self.n_confounders} copies per row on {X.shape[0]} rows "
            f"for {self.max_iter} epochs",
            level=2,
        )
        owner = self if self.verbose >= 2 else None
        return {"callbacks": [("loss_terms", LossTermHistory(owner))]}

    def _after_training(self, X, y):
        from sklearn_iclr26.causal._backdoor_adjusted_modules import TERMS

        history = self.net_.history
        self.loss_term_history_ = {
            term: [float(h[f"{term}_loss"]) for h in history] for term in TERMS
        }
        if self.n_iter_:
            log_progress(
                self,
                "done: "
                + ", ".join(
                    f"{term} loss {self.loss_term_history_[term][-1]:.4g}"
                    for term in TERMS
                ),
                level=2,
            )

    @property
    def loss_term_curves_(self):
        """Deprecated: use ``loss_term_history_`` (the same dict).

        Per-epoch records of a method are named ``*_history_`` across the
        package; this name is kept one release, with a ``FutureWarning``.

        Returns
        -------
        dict of str to list of float
            ``loss_term_history_``.
        """
        history = self.loss_term_history_  # AttributeError before fit
        warn_user(
            "loss_term_curves_ was renamed loss_term_history_ and will be "
            "removed in a future release.",
            FutureWarning,
        )
        return history

    # -- forward passes ------------------------------------------------------
    def _branch_outputs(self, X, mode):
        """Head outputs (logits or log-probabilities) of the asked branches.

        A list: ``[factual]``, ``[adjusted]`` or, for ``"mix"``, both.
        """
        mode = self.predict_mode if mode is None else mode
        if mode not in _BRANCHES:
            raise ValueError(
                f"mode must be one of {sorted(_BRANCHES)} or None; got {mode!r}."
            )
        if mode != "factual":
            self._check_adjusted_branch(
                f"mode={mode!r} needs the adjusted branch, which n_confounders=0 "
                "does not build."
            )
        out = self._forward(X, func=_BRANCHES[mode])
        if mode != "mix":
            return [out]
        n_outputs = out.shape[1] // 2
        return [out[:, :n_outputs], out[:, n_outputs:]]

    def confounder_weights(self, X):
        """Background-state weights ``a_i`` the confounder encoder gives each row.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Input data (the encoder reads the context columns).

        Returns
        -------
        weights : ndarray of shape (n_samples, n_confounders, embed_dim)
            Entries in (0, 1) (``weight_activation="sigmoid"``) or rows on the
            simplex over the embedding axis (``"softmax"``).
        """
        self._check_adjusted_branch(
            "n_confounders=0: the model has no confounder weights."
        )
        return self._forward(X, func=_weights)

    def copy_outputs(self, X):
        """Head outputs of every adjusted copy, before averaging.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Input data.

        Returns
        -------
        outputs : ndarray of shape (n_samples, n_confounders, n_outputs)
            Per copy: standardised predictions (regressor) or logits
            (classifier).
        """
        self._check_adjusted_branch(
            "n_confounders=0: the model has no adjusted copies."
        )
        return self._forward(X, func=_copies)

    def _check_adjusted_branch(self, message):
        check_is_fitted(self)
        if self.net_.module_.confounder_encoder is None:
            raise ValueError(message)
