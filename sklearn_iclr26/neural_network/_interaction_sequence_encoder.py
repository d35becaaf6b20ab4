"""The sequence encoder of interaction logs for CTR models.

It turns any log of the shape of
:func:`~sklearn_iclr26.datasets.load_movielens_interactions` (user, item,
timestamp, label) into the block layout that
:class:`~sklearn_iclr26.neural_network.DiffusionInterestFusionClassifier`
reads by column name (``long_<j>``, ``session<k>_<j>``, ``candidate``,
``dense_*``).
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils.validation import check_is_fitted

from sklearn_iclr26.utils._atomic import atomic_fit
from sklearn_iclr26.utils._sklearn_compat import Interval, StrOptions, _fit_context
from sklearn_iclr26.utils._validation import store_params

__all__ = ["InteractionSequenceEncoder"]

_DENSE_NAMES = (
    "dense_log_history",
    "dense_user_ctr",
    "dense_has_history",
    "dense_log_recency",
    "dense_item_log_count",
    "dense_item_ctr",
)


class InteractionSequenceEncoder(TransformerMixin, BaseEstimator):
    """Turn an interaction log into padded history, session and candidate blocks.

    ``fit(X, y)`` stores the log ``X`` (a DataFrame with user, item and
    timestamp columns) with its click labels ``y``. ``transform(X)`` gives,
    for every row (user ``u``, candidate item ``i``, time ``t``), what was
    known strictly before ``t`` in the fitted log:

    * ``session<k>_<j>`` (``k = 1, ..., n_sessions``, oldest first): the items
      of ``u``'s ``n_sessions`` most recent sessions before ``t`` (a new
      session starts after a gap longer than ``session_gap``), the last
      ``session_length`` items of each;
    * ``long_<j>``: the last ``max_history`` items of ``u`` before those
      sessions (long-term history);
    * ``candidate``: the item id of the row;
    * ``dense_*``: history size, smoothed past click rate of the user, time
      since the user's last interaction, past interaction count and smoothed
      click rate of the candidate item (all from earlier rows only), then the
      ``dense_columns`` passed through.

    Item ids are codes: ``0`` padding, ``1`` unknown (an item absent from the
    fitted log, or seen fewer than ``min_item_count`` times), ``2, ...`` the
    known items. A row never sees its own label or any interaction at or
    after its own time (ties at the same timestamp are excluded), so
    ``fit_transform(X, y)`` is leakage-free; ``y`` reaches a model only as its
    target. Rows of a transformed test log see the fitted (training) log
    only, not earlier test rows.

    Parameters
    ----------
    max_history : int, default=50
        Width of the long-term block.
    n_sessions : int, default=3
        Number of short-term session blocks.
    session_length : int, default=10
        Width of each session block.
    session_gap : float, default=1800.0
        A gap longer than this (in timestamp units) starts a new session.
    user_column, item_column, time_column : str, default="user", "item", \
            "timestamp"
        Column names of the log.
    dense_columns : list of str or None, default=None
        Numeric columns passed through as dense features.
    min_item_count : int, default=1
        Items seen fewer times in the fitted log map to the unknown code.
    handle_unknown : {"ignore", "error"}, default="ignore"
        Unknown candidate items at transform: code ``1``, or an error.

    Attributes
    ----------
    items_ : ndarray
        Known items; item ``items_[c - 2]`` has code ``c``.
    n_items_ : int
        Number of codes (``len(items_) + 2``).
    n_features_in_ : int
        Number of columns of the fitted log.
    feature_names_in_ : ndarray of str
        Columns of the fitted log.

    See Also
    --------
    sklearn_iclr26.neural_network.DiffusionInterestFusionClassifier : Reads
        these blocks by name.
    load_movielens_interactions : A real log of this shape.

    Examples
    --------
    >>> import pandas as pd
    >>> from sklearn_iclr26.neural_network import InteractionSequenceEncoder
    >>> log = pd.DataFrame({"user": [1, 1, 1, 2], "item": [10, 11, 12, 10],
    ...                     "timestamp": [0, 5, 9000, 3]})
    >>> enc = InteractionSequenceEncoder(max_history=2, n_sessions=1,
    ...                                  session_length=2)
    >>> Xt = enc.fit_transform(log, [1, 0, 1, 1])
    >>> list(enc.get_feature_names_out()[:5])
    ['long_0', 'long_1', 'session1_0', 'session1_1', 'candidate']
    >>> Xt[2, :5]  # row 3 sees items 10, 11 (one earlier session)
    array([0., 0., 2., 3., 4.])
    """

    _parameter_constraints: dict = {
        "max_history": [Interval(Integral, 1, None, closed="left")],
        "n_sessions": [Interval(Integral, 1, None, closed="left")],
        "session_length": [Interval(Integral, 1, None, closed="left")],
        "session_gap": [Interval(Real, 0, None, closed="left")],
        "user_column": [str],
        "item_column": [str],
        "time_column": [str],
        "dense_columns": [list, None],
        "min_item_count": [Interval(Integral, 1, None, closed="left")],
        "handle_unknown": [StrOptions({"ignore", "error"})],
    }

    def __init__(
        self,
        *,
        max_history=50,
        n_sessions=3,
        session_length=10,
        session_gap=1800.0,
        user_column="user",
        item_column="item",
        time_column="timestamp",
        dense_columns=None,
        min_item_count=1,
        handle_unknown="ignore",
    ):
        store_params(self, locals())

    # ------------------------------------------------------------ inputs

    def _read(self, X, reset):
        cols = [self.user_column, self.item_column, self.time_column]
        cols += list(self.dense_columns or [])
        if not hasattr(X, "columns"):
            raise ValueError(
                "InteractionSequenceEncoder needs an interaction table: a DataFrame "
                f"with columns {cols} (user, item, timestamp), got "
                f"{type(X).__name__}."
            )
        missing = [c for c in cols if c not in X.columns]
        if missing:
            raise ValueError(
                f"The interaction table lacks the column(s) {missing}; it has "
                f"{list(X.columns)}."
            )
        if reset:
            self.feature_names_in_ = np.asarray(list(X.columns), dtype=object)
            self.n_features_in_ = len(self.feature_names_in_)
        users = X[self.user_column].to_numpy()
        items = X[self.item_column].to_numpy()
        times = np.asarray(X[self.time_column].to_numpy(), dtype=np.float64)
        if not np.all(np.isfinite(times)):
            raise ValueError(f"Column {self.time_column!r} has missing values.")
        dense = (
            np.asarray(X[list(self.dense_columns)].to_numpy(), dtype=np.float64)
            if self.dense_columns
            else np.empty((len(X), 0))
        )
        # within each user, rows must be in time order
        order = np.argsort(users, kind="stable")
        u_sorted, t_sorted = users[order], times[order]
        same_user = u_sorted[1:] == u_sorted[:-1]
        back = np.flatnonzero(same_user & (t_sorted[1:] < t_sorted[:-1]))
        if len(back):
            row = int(order[back[0] + 1])
            raise ValueError(
                f"Timestamps out of order: row {row} (user {users[row]!r}) is "
                "earlier than the previous row of the same user. Sort the log by "
                f"({self.user_column!r}, {self.time_column!r}) first."
            )
        return users, items, times, dense

    # --------------------------------------------------------------- fit

    @atomic_fit
    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        """Store the log, its labels and the item codes.

        Parameters
        ----------
        X : DataFrame of shape (n_interactions, n_columns)
            Interaction log with the user, item and timestamp columns, sorted
            by time within each user.
        y : array-like of shape (n_interactions,)
            Binary labels (clicks) of the interactions.

        Returns
        -------
        self : object
            Fitted encoder.
        """
        users, items, times, _ = self._read(X, reset=True)
        y = np.asarray(y)
        if y.shape != (len(users),):
            raise ValueError(
                f"y must have one label per interaction, shape ({len(users)},); got "
                f"{y.shape}."
            )
        labels = np.unique(y)
        if not np.isin(labels, [0, 1]).all():
            raise ValueError(f"y must be binary 0/1 clicks; got labels {labels[:5]}.")
        y = y.astype(np.float64)
        known, counts = np.unique(items, return_counts=True)
        self.items_ = known[counts >= self.min_item_count]
        self.n_items_ = len(self.items_) + 2
        codes = self._codes(items, fitting=True)
        # per-user log, sorted by time
        order = np.lexsort((times, users))
        self._log = {}
        u_sorted = users[order]
        bounds = np.flatnonzero(u_sorted[1:] != u_sorted[:-1]) + 1
        for idx in np.split(order, bounds):
            if len(idx) == 0:
                continue
            t = times[idx]
            session = np.concatenate([[0], np.cumsum(np.diff(t) > self.session_gap)])
            starts = np.flatnonzero(np.diff(np.concatenate([[-1], session])))
            self._log[users[idx[0]]] = (
                t,
                codes[idx],
                np.concatenate([[0.0], np.cumsum(y[idx])]),
                session,
                starts,
            )
        # per-item times and cumulative clicks
        self._item_log = {}
        order = np.lexsort((times, codes))
        c_sorted = codes[order]
        bounds = np.flatnonzero(c_sorted[1:] != c_sorted[:-1]) + 1
        for idx in np.split(order, bounds):
            if len(idx) and codes[idx[0]] > 1:
                self._item_log[codes[idx[0]]] = (
                    times[idx],
                    np.concatenate([[0.0], np.cumsum(y[idx])]),
                )
        return self

    def _codes(self, items, fitting=False):
        pos = np.searchsorted(self.items_, items)
        pos_c = np.clip(pos, 0, max(len(self.items_) - 1, 0))
        found = (
            (self.items_[pos_c] == items)
            if len(self.items_)
            else np.zeros(len(items), bool)
        )
        if not fitting and self.handle_unknown == "error" and not found.all():
            bad = items[~found][:5]
            raise ValueError(
                f"{int((~found).sum())} item(s) unknown to the fitted log, e.g. "
                f"{list(bad)}; set handle_unknown='ignore' to map them to code 1."
            )
        return np.where(found, pos_c + 2, 1).astype(np.int64)

    # --------------------------------------------------------- transform

    def transform(self, X):
        """Encode each row from the fitted log strictly before its time.

        Parameters
        ----------
        X : DataFrame of shape (n_rows, n_columns)
            Rows to encode (user, candidate item, timestamp), sorted by time
            within each user.

        Returns
        -------
        Xt : ndarray of shape (n_rows, n_features_out)
            Columns as :meth:`get_feature_names_out` (item codes as floats).
        """
        check_is_fitted(self)
        users, items, times, dense_in = self._read(X, reset=False)
        L, K, S = self.max_history, self.n_sessions, self.session_length
        n = len(users)
        long_block = np.zeros((n, L))
        ses_block = np.zeros((n, K, S))
        dense = np.zeros((n, len(_DENSE_NAMES)))
        cand = self._codes(items)
        for r in range(n):
            entry = self._log.get(users[r])
            n_hist, clicks, recency = 0, 0.0, 0.0
            if entry is not None:
                t, codes, cum_y, session, starts = entry
                m = int(np.searchsorted(t, times[r], side="left"))
                if m > 0:
                    n_hist, clicks = m, cum_y[m]
                    recency = np.log1p(max(times[r] - t[m - 1], 0.0))
                    last = session[m - 1]
                    first = max(last - K + 1, 0)
                    for k, s in enumerate(range(first, last + 1)):
                        lo = starts[s]
                        hi = starts[s + 1] if s + 1 < len(starts) else len(t)
                        hi = min(hi, m)
                        seq = codes[max(lo, hi - S) : hi]
                        ses_block[r, K - (last - s) - 1, : len(seq)] = seq
                    hi = starts[first]
                    seq = codes[max(0, hi - L) : hi]
                    long_block[r, : len(seq)] = seq
            dense[r, 0] = np.log1p(n_hist)
            dense[r, 1] = (clicks + 1.0) / (n_hist + 2.0)
            dense[r, 2] = float(n_hist > 0)
            dense[r, 3] = recency
            item_entry = self._item_log.get(cand[r])
            i_n, i_clicks = 0, 0.0
            if item_entry is not None:
                i_n = int(np.searchsorted(item_entry[0], times[r], side="left"))
                i_clicks = item_entry[1][i_n]
            dense[r, 4] = np.log1p(i_n)
            dense[r, 5] = (i_clicks + 1.0) / (i_n + 2.0)
        return np.hstack(
            [long_block, ses_block.reshape(n, K * S), cand[:, None], dense, dense_in]
        )

    def fit_transform(self, X, y):
        """Fit on the log and encode it (each row sees only earlier rows).

        Parameters
        ----------
        X : DataFrame of shape (n_interactions, n_columns)
            Interaction log.
        y : array-like of shape (n_interactions,)
            Binary labels.

        Returns
        -------
        Xt : ndarray of shape (n_interactions, n_features_out)
            Encoded rows.
        """
        return self.fit(X, y).transform(X)

    def get_feature_names_out(self, input_features=None):
        """Get the names of the output blocks.

        Parameters
        ----------
        input_features : array-like of str or None, default=None
            Ignored.

        Returns
        -------
        names : ndarray of str
            ``long_<j>``, ``session<k>_<j>``, ``candidate``, ``dense_*``.
        """
        check_is_fitted(self)
        names = [f"long_{j}" for j in range(self.max_history)]
        names += [
            f"session{k}_{j}"
            for k in range(1, self.n_sessions + 1)
            for j in range(self.session_length)
        ]
        names += ["candidate", *_DENSE_NAMES]
        names += [f"dense_{c}" for c in (self.dense_columns or [])]
        return np.asarray(names, dtype=object)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        # the input is an interaction table (named user/item/timestamp columns),
        # not a feature matrix: scikit-learn's data checks do not apply
        # (tests/test_ifusion.py runs the API checks on logs)
        tags.input_tags.two_d_array = False
        tags.target_tags.required = True
        return tags
