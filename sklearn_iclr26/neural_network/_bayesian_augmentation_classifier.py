"""OPTIMA-style Bayesian data augmentation: the classifier."""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

from sklearn_iclr26.neural_network._bayesian_augmentation import (
    BaseBayesianAugmentation,
)
from sklearn_iclr26.utils._torch_estimator import TorchClassifierMixin

__all__ = ["BayesianAugmentationClassifier"]


class BayesianAugmentationClassifier(TorchClassifierMixin, BaseBayesianAugmentation):
    """MLP classifier whose data augmentation is learned by an ELBO.

    A tabular version of OPTIMA (Matymov et al., ICLR 2026): the parameters of
    the augmentation are given a Gaussian variational posterior and a
    Gaussian prior, and learned jointly with the network's weights by
    maximising ``E_q[log p(y | augmented x)] - KL(q || p) / n_samples``
    (reparameterised samples, ``n_aug_samples`` copies per row). The network
    predicts on clean inputs by default. Fixed-strength augmentation, no
    augmentation and an Augerino-style baseline are settings of the same
    class (see ``learn_augmentation``, ``augmenter="none"`` and
    ``strength_reward``).

    Parameters
    ----------
    %(augmentation_parameters)s
    %(training_parameters)s

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        Class labels seen during fit.
    %(augmentation_attributes)s

    See Also
    --------
    BayesianAugmentationRegressor : The regression counterpart.
    TorchMLPClassifier : The same network without augmentation.

    Notes
    -----
    ``predict_proba`` is the softmax of the network on clean inputs, or of
    the mean logits over augmentations with ``aug_at_predict=True``.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from sklearn_iclr26.neural_network import BayesianAugmentationClassifier
    >>> X, y = load_iris(return_X_y=True)
    >>> clf = BayesianAugmentationClassifier(max_iter=50, random_state=0).fit(X, y)
    >>> clf.predict_proba(X[:2]).shape
    (2, 3)
    >>> sorted(clf.augmentation_posterior_)
    ['mean', 'prior_mean', 'prior_scale', 'std', 'strength']
    """
