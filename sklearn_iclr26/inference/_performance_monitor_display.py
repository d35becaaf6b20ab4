"""Estimate, interval, threshold and alarms of a performance monitor over time."""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import numpy as np
from sklearn.utils.validation import check_is_fitted

from sklearn_iclr26.utils._plotting import finish_plot, start_plot
from sklearn_iclr26.utils._validation import store_params

__all__ = ["PerformanceMonitorDisplay"]


class PerformanceMonitorDisplay:
    """The history of a :class:`PerformanceMonitor`: estimate and interval.

    One point per :meth:`PerformanceMonitor.partial_fit` call, against the
    number of rows seen: the estimate of the metric over the rows so far,
    its interval (or confidence sequence), the alarm threshold and the
    batches that raised an alarm. Build it with :meth:`from_monitor` (the
    history of a monitor in use) or :meth:`from_estimator` (a stream replayed
    through a copy of a fitted monitor).

    Read more in the :ref:`User Guide <performance_monitor>`.

    Parameters
    ----------
    n_rows : array-like of shape (n_batches,)
        Rows seen after each batch.
    estimate : array-like of shape (n_batches,)
        Estimate after each batch (``NaN`` before a gold label).
    lower, upper : array-like of shape (n_batches,)
        Interval after each batch.
    threshold : float, default=None
        Alarm threshold (a horizontal line).
    alarm : array-like of bool of shape (n_batches,), default=None
        Whether each batch raised an alarm.
    metric : str, default="accuracy"
        Name of the metric (y-axis label).
    name : str, default=None
        Name of the monitor, used in the legend.

    Attributes
    ----------
    line_ : matplotlib Line2D
        The estimate.
    band_ : matplotlib PolyCollection
        The interval.
    alarms_ : matplotlib PathCollection or None
        The batches that raised an alarm.
    ax_ : matplotlib Axes
        Axes of the plot.
    figure_ : matplotlib Figure
        Figure of the plot.

    See Also
    --------
    PerformanceMonitor : The monitor whose history is plotted.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> from sklearn_iclr26.inference import PerformanceMonitorDisplay
    >>> disp = PerformanceMonitorDisplay(
    ...     n_rows=[100, 200, 300],
    ...     estimate=[0.9, 0.85, 0.7],
    ...     lower=[0.8, 0.78, 0.62],
    ...     upper=[1.0, 0.92, 0.78],
    ...     threshold=0.8,
    ...     alarm=[False, False, True],
    ... ).plot()
    """

    def __init__(
        self,
        *,
        n_rows,
        estimate,
        lower,
        upper,
        threshold=None,
        alarm=None,
        metric="accuracy",
        name=None,
    ):
        store_params(self, locals())

    def plot(self, *, ax=None, name=None, truth=None, **kwargs):
        """Plot the history.

        Parameters
        ----------
        ax : matplotlib Axes, default=None
            Axes to draw on; a new figure is created if ``None``.
        name : str, default=None
            Legend prefix; defaults to ``self.name``.
        truth : array-like of shape (n_batches,), default=None
            The true metric over the rows so far (known in a simulation),
            drawn as a dashed line.
        **kwargs : dict
            Passed to ``ax.plot`` for the estimate.

        Returns
        -------
        display : PerformanceMonitorDisplay
            The display, with ``ax_``, ``figure_``, ``line_`` and ``band_``
            set.
        """
        ax = start_plot(self, ax)
        name = self.name if name is None else name
        prefix = f"{name}: " if name else ""
        x = np.asarray(self.n_rows, dtype=float)
        lower = np.asarray(self.lower, dtype=float)
        upper = np.asarray(self.upper, dtype=float)
        finite = np.isfinite(lower) & np.isfinite(upper)
        self.band_ = ax.fill_between(
            x[finite],
            lower[finite],
            upper[finite],
            alpha=0.25,
            step="post",
            label=f"{prefix}interval",
        )
        line_kwargs = {"drawstyle": "steps-post", "label": f"{prefix}estimate"}
        line_kwargs.update(kwargs)
        (self.line_,) = ax.plot(x, np.asarray(self.estimate, float), **line_kwargs)
        if truth is not None:
            ax.plot(
                x,
                np.asarray(truth, dtype=float),
                linestyle="--",
                color="black",
                drawstyle="steps-post",
                label="true metric (rows so far)",
            )
        if self.threshold is not None:
            ax.axhline(self.threshold, color="red", linestyle=":", label="threshold")
        self.alarms_ = None
        if self.alarm is not None and np.any(self.alarm):
            hit = np.asarray(self.alarm, dtype=bool)
            self.alarms_ = ax.scatter(
                x[hit], upper[hit], marker="v", color="red", zorder=3, label="alarm"
            )
        ax.set_xlabel("rows seen")
        ax.set_ylabel(self.metric)
        return finish_plot(self, ax)

    @classmethod
    def from_monitor(cls, monitor, *, ax=None, name=None, truth=None, **kwargs):
        """Plot the history of a fitted :class:`PerformanceMonitor`.

        Parameters
        ----------
        monitor : PerformanceMonitor
            A monitor after one or more :meth:`~PerformanceMonitor.partial_fit`
            calls.
        ax : matplotlib Axes, default=None
            Axes to draw on; a new figure is created if ``None``.
        name : str, default=None
            Legend prefix.
        truth : array-like of shape (n_batches,), default=None
            The true metric over the rows so far, if known.
        **kwargs : dict
            Passed to ``ax.plot`` for the estimate.

        Returns
        -------
        display : PerformanceMonitorDisplay
            The plotted display.

        Examples
        --------
        >>> import matplotlib
        >>> matplotlib.use("Agg")
        >>> import numpy as np
        >>> from sklearn.frozen import FrozenEstimator
        >>> from sklearn.linear_model import LogisticRegression
        >>> from sklearn_iclr26.inference import (
        ...     PerformanceMonitor,
        ...     PerformanceMonitorDisplay,
        ... )
        >>> rng = np.random.RandomState(0)
        >>> X = rng.normal(size=(2000, 2))
        >>> y = (X[:, 0] > 0).astype(float)
        >>> model = FrozenEstimator(LogisticRegression().fit(X[:500], y[:500]))
        >>> monitor = PerformanceMonitor(model, threshold=0.8)
        >>> monitor = monitor.fit(X[500:1000], y[500:1000])
        >>> for start in range(1000, 2000, 250):
        ...     y_batch = y[start : start + 250].copy()
        ...     y_batch[10:] = np.nan
        ...     monitor = monitor.partial_fit(X[start : start + 250], y_batch)
        >>> disp = PerformanceMonitorDisplay.from_monitor(monitor)
        """
        check_is_fitted(monitor)
        history = monitor.history_
        return cls(
            n_rows=np.asarray(history["n_rows"]),
            estimate=np.asarray(history["estimate"]),
            lower=np.asarray(history["lower"]),
            upper=np.asarray(history["upper"]),
            threshold=monitor.threshold,
            alarm=np.asarray(history["alarm"], dtype=bool),
            metric=monitor.metric,
            name=name,
        ).plot(ax=ax, truth=truth, **kwargs)

    @classmethod
    def from_estimator(
        cls,
        estimator,
        X,
        y=None,
        *,
        n_batches=10,
        ax=None,
        name=None,
        **kwargs,
    ):
        """Replay a stream through a copy of a fitted monitor and plot it.

        ``X`` is cut into ``n_batches`` consecutive batches (rows in the given
        order) that are passed to :meth:`PerformanceMonitor.partial_fit` of a
        deep copy of ``estimator``: the monitor itself is left unchanged.
        When every row of the stream carries a gold label, the true metric
        over the rows so far is drawn as a dashed line.

        Parameters
        ----------
        estimator : PerformanceMonitor
            A fitted monitor (after :meth:`~PerformanceMonitor.fit`).
        X : {array-like, DataFrame}
            The stream, as the monitored estimator takes it.
        y : array-like of shape (n_samples,), default=None
            Gold labels of the stream, ``NaN`` where a row is not labelled.
        n_batches : int, default=10
            Number of consecutive batches the stream is cut into.
        ax : matplotlib Axes, default=None
            Axes to draw on; a new figure is created if ``None``.
        name : str, default=None
            Legend prefix.
        **kwargs : dict
            Passed to ``ax.plot`` for the estimate.

        Returns
        -------
        display : PerformanceMonitorDisplay
            The plotted display.

        Examples
        --------
        >>> import matplotlib
        >>> matplotlib.use("Agg")
        >>> import numpy as np
        >>> from sklearn.frozen import FrozenEstimator
        >>> from sklearn.linear_model import LogisticRegression
        >>> from sklearn_iclr26.inference import (
        ...     PerformanceMonitor,
        ...     PerformanceMonitorDisplay,
        ... )
        >>> rng = np.random.RandomState(0)
        >>> X = rng.normal(size=(2000, 2))
        >>> y = (X[:, 0] > 0).astype(float)
        >>> model = FrozenEstimator(LogisticRegression().fit(X[:500], y[:500]))
        >>> monitor = PerformanceMonitor(model, threshold=0.8)
        >>> monitor = monitor.fit(X[500:1000], y[500:1000])
        >>> disp = PerformanceMonitorDisplay.from_estimator(
        ...     monitor, X[1000:], y[1000:], n_batches=4
        ... )
        """
        import copy
        import itertools
        import numbers

        from sklearn_iclr26.utils._sklearn_compat import _num_samples, _safe_indexing

        check_is_fitted(estimator)
        if (
            not isinstance(n_batches, numbers.Integral)
            or isinstance(n_batches, bool)
            or n_batches < 1
        ):
            raise ValueError(f"n_batches must be an integer >= 1, got {n_batches!r}.")
        n = _num_samples(X)
        if n < n_batches:
            raise ValueError(
                f"The stream has {n} rows, fewer than n_batches={n_batches}."
            )
        monitor = copy.deepcopy(estimator)
        values, _ = monitor.row_values(X, y)
        truth = [] if np.isfinite(values).all() else None
        edges = np.linspace(0, n, n_batches + 1).astype(int)
        for start, stop in itertools.pairwise(edges):
            rows = np.arange(start, stop)
            monitor.partial_fit(
                _safe_indexing(X, rows),
                None if y is None else _safe_indexing(y, rows),
            )
            if truth is not None:
                truth.append(float(np.mean(values[:stop])))
        return cls.from_monitor(monitor, ax=ax, name=name, truth=truth, **kwargs)
