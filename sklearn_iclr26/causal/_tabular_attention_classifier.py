"""Classifier with one attention gate over feature groups (the practical CCO model)."""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

from sklearn_iclr26.causal._tabular_attention import BaseTabularAttention
from sklearn_iclr26.utils._torch_estimator import TorchClassifierMixin

__all__ = ["TabularAttentionClassifier"]


class TabularAttentionClassifier(TorchClassifierMixin, BaseTabularAttention):
    """Classifier with one attention gate over feature groups.

    The practical, tabular version of the two-key attention model of the CCO
    paper ("Strong Correlations Induce Cause Only Predictions in Transformer
    Training", ICLR 2026): each feature group becomes a token, a learned
    query attends over the tokens, and an MLP head reads the attended token.
    Trained with Adam on cross-entropy. ``attention_weights(X)`` shows which
    groups the model relies on; whether gradient descent crowds out a
    spurious group depends on the data (see the user guide).

    Read more in the :ref:`User Guide <cco>`.

    Parameters
    ----------
    %(attention_parameters)s
    %(training_parameters)s

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        Class labels seen during fit.
    %(attention_attributes)s
    %(training_attributes)s

    See Also
    --------
    TwoKeyAttentionRegressor : The paper's exact model and Algorithm 1.
    TabularAttentionRegressor : The regression counterpart.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from sklearn_iclr26.causal import TabularAttentionClassifier
    >>> X, y = load_iris(return_X_y=True)
    >>> clf = TabularAttentionClassifier(
    ...     feature_groups=[[0, 1], [2, 3]], max_iter=50, random_state=0
    ... ).fit(X, y)
    >>> clf.attention_weights(X[:2]).shape
    (2, 2)
    """
