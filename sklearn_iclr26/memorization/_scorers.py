"""Scorers of the memorization family (see ``metrics/_scorers.py``)."""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import numpy as np

from sklearn_iclr26.metrics._scorers import MethodScorer


def random_label_accuracy(estimator, X, y=None, sample_weight=None):
    """Random-label accuracy of a linear probe on a fitted net's last hidden layer.

    How much the representation the fitted network gives to ``X`` lets a
    logistic-regression head fit random binary labels (mean over 5 fixed
    draws). Lower means less memorization capacity. ``y`` is not used.
    """
    from sklearn_iclr26.memorization._random_label_probe import RandomLabelProbe

    Z = estimator._representation(X)
    probe = RandomLabelProbe(n_label_sets=5, random_state=0).fit(np.asarray(Z))
    return probe.accuracy_


SCORERS = {
    "neg_random_label_accuracy": MethodScorer(
        random_label_accuracy, sign=-1, name="neg_random_label_accuracy"
    ),
}
