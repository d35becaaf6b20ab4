"""K-fold cross-validation stratified on the treatment."""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

from numbers import Integral

import numpy as np
from sklearn.model_selection import StratifiedKFold

from sklearn_iclr26.utils._sklearn_compat import _BaseKFold

__all__ = ["TreatmentStratifiedKFold"]


class TreatmentStratifiedKFold(_BaseKFold):
    """K-fold splitter that keeps both treatment arms in every fold.

    Stratifies on the binary ``treatment``, so each training and test fold has
    the arms in about their overall proportion. ``split`` requests
    ``treatment`` through metadata routing by default, so ``GridSearchCV(...,
    cv=TreatmentStratifiedKFold()).fit(X, y, treatment=t)`` routes it (with
    ``sklearn.set_config(enable_metadata_routing=True)``).

    Parameters
    ----------
    n_splits : int, default=5
        Number of folds (at least 2).
    shuffle : bool, default=False
        Shuffle each arm before splitting.
    random_state : int, RandomState instance or None, default=None
        Seeds the shuffle.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_iclr26.causal import TreatmentStratifiedKFold
    >>> X, t = np.zeros((10, 1)), np.array([0] * 6 + [1] * 4)
    >>> cv = TreatmentStratifiedKFold(n_splits=2)
    >>> [int(t[test].sum()) for _, test in cv.split(X, treatment=t)]
    [2, 2]
    """

    __metadata_request__split = {"treatment": True}

    def __init__(self, n_splits=5, *, shuffle=False, random_state=None):
        if not isinstance(n_splits, Integral):
            raise TypeError(f"n_splits must be an integer, got {n_splits!r}.")
        super().__init__(n_splits=n_splits, shuffle=shuffle, random_state=random_state)

    def split(self, X, y=None, groups=None, treatment=None):
        """Generate train/test indices stratified on ``treatment``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Data (only its length is used).
        y : array-like, default=None
            Ignored.
        groups : array-like, default=None
            Ignored.
        treatment : array-like of shape (n_samples,)
            Binary treatment; required.

        Yields
        ------
        train, test : ndarray
            Indices.
        """
        if treatment is None:
            raise ValueError(
                "TreatmentStratifiedKFold.split needs `treatment` (routed as "
                "metadata, or passed directly)."
            )
        treatment = np.asarray(treatment)
        inner = StratifiedKFold(
            self.n_splits, shuffle=self.shuffle, random_state=self.random_state
        )
        yield from inner.split(X, treatment)

    def get_n_splits(self, X=None, y=None, groups=None, treatment=None):
        """Number of splits, ``n_splits``.

        Parameters
        ----------
        X, y, groups, treatment : object
            Ignored.

        Returns
        -------
        n_splits : int
        """
        return self.n_splits

    def _iter_test_indices(self, X=None, y=None, groups=None):  # pragma: no cover
        raise NotImplementedError
