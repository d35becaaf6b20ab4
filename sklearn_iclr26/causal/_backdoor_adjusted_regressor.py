"""Regressor with backdoor adjustment over learned background states (Prism)."""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

from sklearn_iclr26.causal._backdoor_adjusted import BaseBackdoorAdjusted
from sklearn_iclr26.utils._sklearn_compat import StrOptions
from sklearn_iclr26.utils._torch_estimator import TorchRegressorMixin
from sklearn_iclr26.utils._validation import store_params

__all__ = ["BackdoorAdjustedRegressor"]


class BackdoorAdjustedRegressor(TorchRegressorMixin, BaseBackdoorAdjusted):
    """Regressor with backdoor adjustment over learned background states.

    A tabular port of Prism (Yang et al., "Extending Sequence Length is Not
    All You Need: Effective Integration of Multimodal Signals for Gene
    Expression Prediction", ICLR 2026). The primary and the context feature
    groups are embedded separately; a confounder encoder maps the context
    columns of each row to ``n_confounders`` weight vectors ``a_i`` (learned
    surrogates of an unobserved background state ``C``). The factual copy is
    ``z_0 = e_p + e_c``, the adjusted copies ``z_i = e_p + e_c * a_i``; all
    run through one backbone and head. Training minimises
    ``L1 + adjusted_weight * L2 + uniformity_weight * L3``: Huber losses of
    the factual and the adjusted (averaged) outputs on standardised targets,
    and a uniformity loss that spreads the ``a_i`` apart. By default
    ``predict`` uses the factual copy (as the official code does): the
    adjusted branch acts as a training-time regulariser. Whether it helps is
    data-dependent; see the user guide.

    Read more in the :ref:`User Guide <prism>`.

    Parameters
    ----------
    %(backdoor_parameters)s
    loss : {"huber", "squared_error"}, default="huber"
        Per-output loss of both branches, on standardised targets (Huber with
        threshold 1, as the official ``SmoothL1``).
    %(training_parameters)s

    Attributes
    ----------
    %(backdoor_attributes)s
    %(training_attributes)s

    See Also
    --------
    BackdoorAdjustedClassifier : The classification counterpart.

    Examples
    --------
    >>> from sklearn_iclr26.causal import BackdoorAdjustedRegressor
    >>> from sklearn_iclr26.datasets import make_background_confounding
    >>> X, y = make_background_confounding(n_samples=300, random_state=0)
    >>> reg = BackdoorAdjustedRegressor(
    ...     feature_groups={"context": [5, 6, 7, 8, 9]}, max_iter=20, random_state=0
    ... ).fit(X, y)
    >>> reg.predict(X[:3]).shape
    (3,)
    >>> reg.confounder_weights(X[:3]).shape
    (3, 2, 16)
    """

    _parameter_constraints: dict = {
        **BaseBackdoorAdjusted._parameter_constraints,
        "loss": [StrOptions({"huber", "squared_error"})],
    }

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
        loss="huber",
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
        # scikit-learn reads the parameters from this signature (the base's
        # plus ``loss``); each is stored as given
        store_params(self, locals())

    def predict(self, X, mode=None):
        """Predicted targets.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Input data.
        mode : {"factual", "adjusted", "mix"} or None, default=None
            Branch to use; ``None`` means ``predict_mode``.

        Returns
        -------
        y_pred : ndarray of shape (n_samples,) or (n_samples, n_outputs)
            Predictions in the units of ``y``.
        """
        outputs = self._branch_outputs(X, mode)
        out = outputs[0] if len(outputs) == 1 else 0.5 * (outputs[0] + outputs[1])
        return self._unstandardize(out)
