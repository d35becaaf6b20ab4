"""The tabular attention estimators' shared part: :class:`BaseTabularAttention`.

Attention over feature groups in front of an MLP head (the practical CCO
model). The training parameters, the engine call, ``fit``, ``predict`` and
the forward pass are the torch base's
(:mod:`sklearn_iclr26.utils._torch_estimator`); this base adds the
feature groups, the module and the attention weights.
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

from numbers import Integral

import numpy as np
from scipy.special import softmax

from sklearn_iclr26.utils._columns import check_disjoint, resolve_columns
from sklearn_iclr26.utils._sklearn_compat import Interval
from sklearn_iclr26.utils._torch import forward_module
from sklearn_iclr26.utils._torch_estimator import BaseTorchEstimator
from sklearn_iclr26.utils._validation import check_hidden_layer_sizes, store_params
from sklearn_iclr26.utils._warnings import warn_user

__all__ = ["BaseTabularAttention"]

#: attention logits farther apart than this saturate the softmax in float64
SATURATION = 30.0

#: numpydoc entries of the method's own parameters (both tasks)
PARAMETERS_DOC = """feature_groups : list of column lists, dict or None, default=None
    The tokens: a list of groups (columns as DataFrame names or indices),
    or ``{name: columns}``. Groups may differ in width and must not
    overlap; columns in no group are not used. ``None`` makes every
    column its own token (per-feature tokens).
embed_dim : int, default=16
    Width of the group embeddings (the tokens), the keys and the query.
hidden_layer_sizes : array-like of int, default=(32,)
    Hidden layers (ReLU) of the head; empty for a linear head."""

#: numpydoc entries of the method's own fitted attributes (both tasks)
ATTRIBUTES_DOC = """n_features_in_ : int
    Number of features seen during fit.
feature_names_in_ : ndarray of shape (`n_features_in_`,)
    Names of features seen during fit. Defined only when `X` has feature
    names that are all strings.
group_names_ : ndarray of object
    Name of each group (dict keys, column names, or positions).
groups_ : list of ndarray of int
    Column indices of each group."""


def _attention_logits(module, xb, **aux):
    return module.attention_logits(xb)


class BaseTabularAttention(BaseTorchEstimator):
    """Feature groups, module and attention weights shared by both tasks."""

    #: shared docstring texts, filled by the torch base before its own
    _doc_texts = {
        "attention_parameters": PARAMETERS_DOC,
        "attention_attributes": ATTRIBUTES_DOC,
    }

    _parameter_constraints: dict = {
        **BaseTorchEstimator._parameter_constraints,
        "feature_groups": ["array-like", dict, None],
        "embed_dim": [Interval(Integral, 1, None, closed="left")],
        "hidden_layer_sizes": ["array-like"],
    }

    def __init__(
        self,
        feature_groups=None,
        *,
        embed_dim=16,
        hidden_layer_sizes=(32,),
        alpha=0.0,
        batch_size=256,
        learning_rate_init=1e-2,
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

    def _resolve_groups(self, n_features):
        spec = self.feature_groups
        if spec is None:
            names = getattr(self, "feature_names_in_", None)
            labels = list(names) if names is not None else list(range(n_features))
            return labels, [[j] for j in range(n_features)]
        if isinstance(spec, dict):
            labels, columns = list(spec), list(spec.values())
        else:
            columns = list(spec)
            labels = list(range(len(columns)))
        if len(columns) < 1:
            raise ValueError("feature_groups must list at least one group.")
        resolved = {
            str(label): resolve_columns(c, self, n_features, f"group {label}")
            for label, c in zip(labels, columns)
        }
        check_disjoint(resolved)
        return labels, list(resolved.values())

    def _module_spec(self, X, n_outputs, sample_weight=None):
        from sklearn_iclr26.causal._tabular_attention_modules import (
            GroupAttentionNet,
        )

        hidden = check_hidden_layer_sizes(self.hidden_layer_sizes)
        labels, groups = self._resolve_groups(X.shape[1])
        self.group_names_ = np.asarray(labels, dtype=object)
        self.groups_ = [np.asarray(g, dtype=np.int64) for g in groups]
        return GroupAttentionNet, {
            "groups": tuple(tuple(g) for g in groups),
            "n_outputs": n_outputs,
            "embed_dim": self.embed_dim,
            "hidden_layer_sizes": hidden,
        }

    def _after_training(self, X, y):
        # X is validated already (a second validation would warn about
        # feature names on DataFrame input)
        logits = forward_module(
            self.net_, X, dtype=self.dtype, n_jobs=self.n_jobs, func=_attention_logits
        )
        spread = float(np.max(logits.max(axis=1) - logits.min(axis=1)))
        if spread > SATURATION:
            warn_user(
                "The attention gate saturates numerically: attention logits differ "
                f"by up to {spread:.1f} (> {SATURATION:g}) between groups on the "
                "training rows, so some attention weights are 0 or 1 to machine "
                "precision."
            )

    def attention_weights(self, X):
        """Attention weight of each feature group, per row.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Input data.

        Returns
        -------
        weights : ndarray of shape (n_samples, n_groups)
            Rows sum to 1; columns follow ``group_names_``.
        """
        return softmax(self._forward(X, func=_attention_logits), axis=1)
