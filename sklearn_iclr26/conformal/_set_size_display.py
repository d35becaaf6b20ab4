"""Distribution of the sizes of conformal prediction sets."""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import numpy as np
from sklearn.utils.validation import check_is_fitted

from sklearn_iclr26.conformal._coverage_display import _check_scalar_level
from sklearn_iclr26.metrics._set_metrics import _check_sets, _set_sizes
from sklearn_iclr26.utils._plotting import finish_plot, start_plot
from sklearn_iclr26.utils._sklearn_compat import (
    _validate_style_kwargs,
    check_matplotlib_support,
)
from sklearn_iclr26.utils._validation import store_params

__all__ = ["SetSizeDisplay"]


class SetSizeDisplay:
    """Histogram of the prediction-set sizes, one bar per size.

    The count (or fraction, ``normalize=True``) of the sets holding ``0, 1,
    ..., n_classes`` labels. Singletons are the decisive sets, larger ones
    need a human; :class:`SOCOPClassifier` moves mass to size one at a small
    cost in mean size. Several displays share an ``ax`` side by side through
    the ``width`` and ``offset`` of :meth:`plot`. Build it with
    :meth:`from_estimator` (a fitted conformal classifier and data) or
    :meth:`from_predictions` (sets already computed).

    Read more in the :ref:`User Guide <socop>`.

    Parameters
    ----------
    set_sizes : ndarray of shape (n_classes + 1,)
        The sizes ``0, 1, ..., n_classes``.
    counts : ndarray of shape (n_classes + 1,)
        Number of sets of each size.
    name : str, default=None
        Name of the estimator, used in the legend.

    Attributes
    ----------
    line_ : matplotlib BarContainer
        The bars.
    ax_ : matplotlib Axes
        Axes of the plot.
    figure_ : matplotlib Figure
        Figure of the plot.

    See Also
    --------
    ConditionalCoverageDisplay : Coverage per class or bin.
    sklearn_iclr26.metrics.mean_set_size : The mean of this distribution.
    sklearn_iclr26.metrics.singleton_rate : The fraction at size one.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import numpy as np
    >>> from sklearn_iclr26.conformal import SetSizeDisplay
    >>> sets = np.array(
    ...     [[True, False, False], [True, True, False], [True, False, True]]
    ... )
    >>> disp = SetSizeDisplay.from_predictions(sets)
    >>> disp.counts.tolist()
    [0, 1, 2, 0]
    """

    def __init__(self, *, set_sizes, counts, name=None):
        store_params(self, locals())

    def plot(
        self, *, ax=None, name=None, normalize=False, width=0.8, offset=0.0, **kwargs
    ):
        """Plot the bars.

        Parameters
        ----------
        ax : matplotlib Axes, default=None
            Axes to draw on; a new figure is created if ``None``.
        name : str, default=None
            Legend label; defaults to ``self.name``.
        normalize : bool, default=False
            Plot fractions of the sets rather than counts.
        width : float, default=0.8
            Width of each bar.
        offset : float, default=0.0
            Shift of the bars along the x-axis (e.g. ``-0.2`` and ``0.2``
            with ``width=0.4`` for two displays side by side).
        **kwargs : dict
            Passed to ``ax.bar``.

        Returns
        -------
        display : SetSizeDisplay
            The display, with ``ax_``, ``figure_`` and ``line_`` set.
        """
        ax = start_plot(self, ax)
        name = self.name if name is None else name
        counts = np.asarray(self.counts, dtype=np.float64)
        heights = counts / max(counts.sum(), 1.0) if normalize else counts
        sizes = np.asarray(self.set_sizes)
        style = _validate_style_kwargs({"label": name if name else "sets"}, kwargs)
        self.line_ = ax.bar(sizes + offset, heights, width=width, **style)
        ax.set_xticks(sizes)
        ax.set_xlabel("prediction set size")
        ax.set_ylabel("fraction of sets" if normalize else "number of sets")
        return finish_plot(self, ax)

    @classmethod
    def from_estimator(
        cls,
        estimator,
        X,
        y=None,
        *,
        bins=None,
        confidence_level=None,
        name=None,
        ax=None,
        **kwargs,
    ):
        """Set sizes of a fitted conformal classifier on ``X``.

        Parameters
        ----------
        estimator : SOCOPClassifier or SplitConformalClassifier
            Fitted conformal classifier (anything with ``predict_set``).
        X : array-like of shape (n_samples, n_features)
            Inputs.
        y : None
            Ignored; present for the common signature of displays.
        bins : array-like of shape (n_samples,), default=None
            Mondrian bins, passed to ``predict_set`` (``conditional="bins"``).
        confidence_level : float, default=None
            Level of the sets; ``None`` uses the estimator's.
        name : str, default=None
            Legend label; defaults to the estimator's class name.
        ax : matplotlib Axes, default=None
            Axes to draw on.
        **kwargs : dict
            Passed to :meth:`plot`.

        Returns
        -------
        display : SetSizeDisplay
            The display.
        """
        check_matplotlib_support(f"{cls.__name__}.from_estimator")
        check_is_fitted(estimator)
        _check_scalar_level(confidence_level)
        sets = estimator.predict_set(
            X, confidence_level=confidence_level, output="sparse", bins=bins
        )
        name = type(estimator).__name__ if name is None else name
        return cls.from_predictions(sets, name=name, ax=ax, **kwargs)

    @classmethod
    def from_predictions(cls, sets, *, name=None, ax=None, **kwargs):
        """Set sizes of sets already computed.

        Parameters
        ----------
        sets : {array-like, sparse matrix} of bool, shape (n_samples, n_classes)
            Prediction sets (e.g. ``predict_set(X)``, dense or sparse).
        name : str, default=None
            Legend label.
        ax : matplotlib Axes, default=None
            Axes to draw on.
        **kwargs : dict
            Passed to :meth:`plot`.

        Returns
        -------
        display : SetSizeDisplay
            The display.
        """
        check_matplotlib_support(f"{cls.__name__}.from_predictions")
        if not hasattr(sets, "indptr") and np.ndim(sets) == 3:
            raise ValueError(
                "sets of shape (n_samples, n_classes, n_levels) hold several "
                "levels: plot one level at a time (sets[..., l])."
            )
        sets = _check_sets(sets)
        n_classes = sets.shape[1]
        counts = np.bincount(_set_sizes(sets), minlength=n_classes + 1)
        disp = cls(set_sizes=np.arange(n_classes + 1), counts=counts, name=name)
        return disp.plot(ax=ax, **kwargs)
