"""Regressor with one attention gate over feature groups (the practical CCO model)."""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

from sklearn_iclr26.causal._tabular_attention import BaseTabularAttention
from sklearn_iclr26.utils._torch_estimator import TorchRegressorMixin

__all__ = ["TabularAttentionRegressor"]


class TabularAttentionRegressor(TorchRegressorMixin, BaseTabularAttention):
    """Regressor with one attention gate over feature groups.

    The regression counterpart of :class:`TabularAttentionClassifier`; the
    squared error is minimised on standardised targets. Multi-output ``y``
    of shape (n_samples, n_outputs) is supported: the outputs share the
    attention gate and the head's hidden layers.

    Read more in the :ref:`User Guide <cco>`.

    Parameters
    ----------
    %(attention_parameters)s
    %(training_parameters)s

    Attributes
    ----------
    %(attention_attributes)s
    %(training_attributes)s

    See Also
    --------
    TabularAttentionClassifier : The classification counterpart.

    Examples
    --------
    >>> from sklearn_iclr26.causal import TabularAttentionRegressor
    >>> from sklearn_iclr26.datasets import make_causal_chain
    >>> X, y = make_causal_chain(n_samples=300, n_features=3, random_state=0)
    >>> reg = TabularAttentionRegressor(
    ...     feature_groups=[[0, 1, 2], [3, 4, 5]], max_iter=30, random_state=0
    ... ).fit(X, y)
    >>> reg.attention_weights(X[:2]).shape
    (2, 2)
    """
