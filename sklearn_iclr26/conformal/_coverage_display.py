"""Coverage per class or per bin against the target level, with error bars."""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

from numbers import Real

import numpy as np
from scipy.stats import beta
from sklearn.utils.validation import check_is_fitted

from sklearn_iclr26.metrics import conditional_coverage_score
from sklearn_iclr26.utils._plotting import finish_plot, start_plot
from sklearn_iclr26.utils._sklearn_compat import (
    _validate_style_kwargs,
    check_matplotlib_support,
)
from sklearn_iclr26.utils._validation import store_params

__all__ = ["ConditionalCoverageDisplay"]


def _clopper_pearson_interval(hits, n, *, level=0.95):
    """Exact (Clopper-Pearson) binomial interval of ``hits / n``.

    The bounds are the ``(1 - level) / 2`` quantile of
    ``Beta(hits, n - hits + 1)`` and the ``(1 + level) / 2`` quantile of
    ``Beta(hits + 1, n - hits)``, with ``0`` below ``hits = 0`` and ``1``
    above ``hits = n``: the interval covers the true proportion with
    probability at least ``level`` for every ``n`` (conservative, never
    below). ``nan`` where ``n = 0``.

    Parameters
    ----------
    hits : array-like of int
        Number of successes (covered samples).
    n : array-like of int
        Number of trials (samples), broadcast against ``hits``.
    level : float in (0, 1), default=0.95
        Confidence level of the interval.

    Returns
    -------
    lower, upper : ndarray of float
        Bounds of the interval.
    """
    if not 0.0 < level < 1.0:
        raise ValueError(f"binomial_level must be in (0, 1), got {level}.")
    hits = np.asarray(hits, dtype=np.float64)
    n = np.asarray(n, dtype=np.float64)
    tail = (1.0 - level) / 2.0
    with np.errstate(invalid="ignore", divide="ignore"):
        lower = np.where(hits > 0, beta.ppf(tail, hits, n - hits + 1), 0.0)
        upper = np.where(hits < n, beta.ppf(1.0 - tail, hits + 1, n - hits), 1.0)
    empty = n <= 0
    return np.where(empty, np.nan, lower), np.where(empty, np.nan, upper)


class ConditionalCoverageDisplay:
    """Coverage of conformal sets in each class or bin, against the target.

    One point per group (true class, or Mondrian bin): the fraction of its
    samples whose true label is in the set, as
    :func:`~sklearn_iclr26.metrics.conditional_coverage_score` computes it,
    with an exact (Clopper-Pearson) binomial interval at ``binomial_level``
    as error bar, and the target ``confidence_level`` as a horizontal line.
    A group whose interval lies wholly below the line is under-covered
    beyond sampling noise; a marginal method may show one while its overall
    coverage is on target (``conditional="class"`` or ``"bins"`` then
    calibrates one threshold per group). Build it with
    :meth:`from_estimator` (a fitted conformal classifier and test data) or
    :meth:`from_predictions` (sets already computed).

    Read more in the :ref:`User Guide <socop>`.

    Parameters
    ----------
    groups : ndarray of shape (n_groups,)
        Labels of the groups (classes or bins), the x-axis ticks.
    coverage : ndarray of shape (n_groups,)
        Empirical coverage of each group (``nan`` for an empty group).
    n_samples : ndarray of shape (n_groups,)
        Number of samples of each group.
    lower, upper : ndarray of shape (n_groups,)
        Bounds of the binomial interval of each coverage.
    confidence_level : float, default=None
        The target level, drawn as a horizontal line; none if ``None``.
    group_name : str, default="class"
        What the groups are (the x-axis label).
    name : str, default=None
        Name of the estimator, used in the legend.

    Attributes
    ----------
    line_ : matplotlib Line2D
        The coverage points.
    errorbar_ : matplotlib ErrorbarContainer
        Points and error bars.
    target_line_ : matplotlib Line2D or None
        The target level.
    ax_ : matplotlib Axes
        Axes of the plot.
    figure_ : matplotlib Figure
        Figure of the plot.

    See Also
    --------
    sklearn_iclr26.metrics.conditional_coverage_score : The values plotted.
    SetSizeDisplay : Distribution of the set sizes.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> from sklearn.datasets import load_iris
    >>> from sklearn.model_selection import train_test_split
    >>> from sklearn_iclr26.conformal import (
    ...     ConditionalCoverageDisplay, SplitConformalClassifier)
    >>> X, y = load_iris(return_X_y=True)
    >>> X_fit, X_test, y_fit, y_test = train_test_split(X, y, random_state=0)
    >>> clf = SplitConformalClassifier(confidence_level=0.9, random_state=0)
    >>> clf = clf.fit(X_fit, y_fit)
    >>> disp = ConditionalCoverageDisplay.from_estimator(clf, X_test, y_test)
    >>> disp.n_samples.tolist()
    [13, 16, 9]
    """

    def __init__(
        self,
        *,
        groups,
        coverage,
        n_samples,
        lower,
        upper,
        confidence_level=None,
        group_name="class",
        name=None,
    ):
        store_params(self, locals())

    def plot(self, *, ax=None, name=None, target_kwargs=None, **kwargs):
        """Plot the coverage of each group with its error bar.

        Parameters
        ----------
        ax : matplotlib Axes, default=None
            Axes to draw on; a new figure is created if ``None``.
        name : str, default=None
            Legend label; defaults to ``self.name``.
        target_kwargs : dict, default=None
            Passed to ``ax.axhline`` for the target line.
        **kwargs : dict
            Passed to ``ax.errorbar`` for the points and bars.

        Returns
        -------
        display : ConditionalCoverageDisplay
            The display, with ``ax_``, ``figure_``, ``line_``, ``errorbar_``
            and ``target_line_`` set.
        """
        ax = start_plot(self, ax)
        name = self.name if name is None else name
        coverage = np.asarray(self.coverage, dtype=np.float64)
        x = np.arange(coverage.shape[0])
        yerr = np.vstack(
            [
                coverage - np.asarray(self.lower, dtype=np.float64),
                np.asarray(self.upper, dtype=np.float64) - coverage,
            ]
        )
        label = "coverage" if not name else f"{name}"
        style = _validate_style_kwargs(
            {"fmt": "o", "capsize": 3, "label": label}, kwargs
        )
        self.errorbar_ = ax.errorbar(x, coverage, yerr=yerr, **style)
        self.line_ = self.errorbar_.lines[0]
        self.target_line_ = None
        if self.confidence_level is not None:
            target = _validate_style_kwargs(
                {
                    "color": "grey",
                    "linestyle": "--",
                    "linewidth": 1.0,
                    "label": f"target {self.confidence_level:g}",
                },
                target_kwargs or {},
            )
            self.target_line_ = ax.axhline(self.confidence_level, **target)
        ax.set_xticks(x)
        ax.set_xticklabels([str(g) for g in self.groups])
        ax.set_xlabel(self.group_name)
        ax.set_ylabel("coverage")
        return finish_plot(self, ax, "lower right")

    @classmethod
    def from_estimator(
        cls,
        estimator,
        X,
        y,
        *,
        bins=None,
        confidence_level=None,
        binomial_level=0.95,
        name=None,
        ax=None,
        **kwargs,
    ):
        """Coverage per class or bin of a fitted conformal classifier.

        Parameters
        ----------
        estimator : SOCOPClassifier or SplitConformalClassifier
            Fitted conformal classifier (anything with ``predict_set`` and
            ``classes_``).
        X : array-like of shape (n_samples, n_features)
            Test inputs.
        y : array-like of shape (n_samples,)
            True labels.
        bins : array-like of shape (n_samples,), default=None
            Group of every test row; ``None`` groups by true class. With an
            estimator fitted with ``conditional="bins"`` the bins are also
            passed to ``predict_set``.
        confidence_level : float, default=None
            Level of the sets (and the target line); ``None`` uses the
            estimator's ``confidence_level``.
        binomial_level : float in (0, 1), default=0.95
            Confidence level of the Clopper-Pearson error bars.
        name : str, default=None
            Legend label; defaults to the estimator's class name.
        ax : matplotlib Axes, default=None
            Axes to draw on.
        **kwargs : dict
            Passed to :meth:`plot`.

        Returns
        -------
        display : ConditionalCoverageDisplay
            The display.
        """
        check_matplotlib_support(f"{cls.__name__}.from_estimator")
        check_is_fitted(estimator)
        _check_scalar_level(confidence_level)
        predict_bins = (
            bins if getattr(estimator, "conditional", None) == "bins" else None
        )
        sets = estimator.predict_set(
            X, confidence_level=confidence_level, bins=predict_bins
        )
        level = (
            estimator.confidence_level if confidence_level is None else confidence_level
        )
        name = type(estimator).__name__ if name is None else name
        return cls.from_predictions(
            y,
            sets,
            bins=bins,
            classes=estimator.classes_,
            confidence_level=level,
            binomial_level=binomial_level,
            name=name,
            ax=ax,
            **kwargs,
        )

    @classmethod
    def from_predictions(
        cls,
        y_true,
        sets,
        *,
        confidence_level,
        bins=None,
        classes=None,
        binomial_level=0.95,
        name=None,
        ax=None,
        **kwargs,
    ):
        """Coverage per class or bin of sets already computed.

        Parameters
        ----------
        y_true : array-like of shape (n_samples,)
            True labels.
        sets : {array-like, sparse matrix} of bool, shape (n_samples, n_classes)
            Prediction sets (e.g. ``predict_set(X)``), column ``j`` for
            ``classes[j]``.
        confidence_level : float or None
            The target level of the sets, drawn as a line (``None``: no
            line).
        bins : array-like of shape (n_samples,), default=None
            Group of every sample; ``None`` groups by true class.
        classes : array-like of shape (n_classes,), default=None
            Labels of the set columns, as in
            :func:`~sklearn_iclr26.metrics.coverage_score`.
        binomial_level : float in (0, 1), default=0.95
            Confidence level of the Clopper-Pearson error bars.
        name : str, default=None
            Legend label.
        ax : matplotlib Axes, default=None
            Axes to draw on.
        **kwargs : dict
            Passed to :meth:`plot`.

        Returns
        -------
        display : ConditionalCoverageDisplay
            The display.
        """
        check_matplotlib_support(f"{cls.__name__}.from_predictions")
        _check_scalar_level(confidence_level)
        if np.ndim(sets) == 3:
            raise ValueError(
                "sets of shape (n_samples, n_classes, n_levels) hold several "
                "levels: plot one level at a time (sets[..., l])."
            )
        result = conditional_coverage_score(y_true, sets, bins=bins, classes=classes)
        hits = np.round(np.nan_to_num(result.coverage) * result.n_samples)
        lower, upper = _clopper_pearson_interval(
            hits, result.n_samples, level=binomial_level
        )
        disp = cls(
            groups=result.groups,
            coverage=result.coverage,
            n_samples=result.n_samples,
            lower=lower,
            upper=upper,
            confidence_level=confidence_level,
            group_name="class" if bins is None else "bin",
            name=name,
        )
        return disp.plot(ax=ax, **kwargs)


def _check_scalar_level(confidence_level):
    if confidence_level is None:
        return
    if np.ndim(confidence_level) != 0 or not isinstance(
        confidence_level, (Real, np.floating)
    ):
        raise ValueError(
            f"confidence_level must be one float, got {confidence_level!r}: the "
            "display plots one level (one display per level)."
        )
    if not 0.0 < confidence_level < 1.0:
        raise ValueError(f"confidence_level must be in (0, 1), got {confidence_level}.")
