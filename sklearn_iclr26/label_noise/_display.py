"""Ranking plot of the rows flagged as likely mislabeled."""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import numpy as np
from sklearn.utils import column_or_1d
from sklearn.utils.validation import check_is_fitted

from sklearn_iclr26.label_noise._label_issues import (
    FILTERS,
    check_labels_pred_probs,
    issues_and_scores,
)
from sklearn_iclr26.utils._plotting import finish_plot, start_plot
from sklearn_iclr26.utils._sklearn_compat import (
    _validate_style_kwargs,
    check_matplotlib_support,
)
from sklearn_iclr26.utils._validation import store_params

__all__ = ["LabelIssuesDisplay"]


class LabelIssuesDisplay:
    """Mislabel scores of the rows, ranked by severity, with the flagged ones marked.

    The rows are sorted by decreasing mislabel score (the x-axis is the rank);
    the flagged rows are drawn as markers on the curve, and a vertical line
    marks how many were flagged. When the truly flipped rows are known (an
    injected-noise experiment, ``flipped``), they are marked as crosses, so
    the precision of the top of the ranking can be read off. Build it with
    :meth:`from_estimator` (a fitted noise corrector, or any fitted
    classifier, and data) or :meth:`from_predictions` (labels and
    out-of-fold probabilities).

    Read more in the :ref:`User Guide <label_noise>`.

    Parameters
    ----------
    mislabel_scores : ndarray of shape (n_samples,)
        Larger = more likely mislabeled.
    label_issues : ndarray of bool of shape (n_samples,)
        The flagged rows.
    flipped : ndarray of bool of shape (n_samples,), default=None
        The rows known to be mislabeled, if any.
    name : str, default=None
        Name of the estimator or rule, used in the legend.

    Attributes
    ----------
    ranked_indices_ : ndarray of int of shape (n_samples,)
        Rows by decreasing mislabel score (ties in row order).
    line_ : matplotlib Line2D
        The ranked mislabel scores.
    issues_line_ : matplotlib Line2D
        Markers on the flagged rows.
    cut_line_ : matplotlib Line2D or None
        Vertical line after the last flagged rank (``None`` if nothing is
        flagged).
    flipped_line_ : matplotlib Line2D or None
        Markers on the known flipped rows (``None`` without ``flipped``).
    ax_ : matplotlib Axes
        Axes of the plot.
    figure_ : matplotlib Figure
        Figure of the plot.

    See Also
    --------
    find_label_issues : The flagged rows and their ranking.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import numpy as np
    >>> from sklearn_iclr26.label_noise import LabelIssuesDisplay
    >>> labels = np.array([0, 0, 1, 1, 1])
    >>> pred_probs = np.array(
    ...     [[0.9, 0.1], [0.2, 0.8], [0.1, 0.9], [0.3, 0.7], [0.2, 0.8]]
    ... )
    >>> disp = LabelIssuesDisplay.from_predictions(labels, pred_probs)
    >>> disp.ranked_indices_[:1]
    array([1])
    """

    def __init__(self, *, mislabel_scores, label_issues, flipped=None, name=None):
        store_params(self, locals())

    def plot(self, *, ax=None, name=None, **kwargs):
        """Plot the ranked mislabel scores.

        Parameters
        ----------
        ax : matplotlib Axes, default=None
            Axes to draw on; a new figure is created if ``None``.
        name : str, default=None
            Legend label of the curve; defaults to ``self.name``.
        **kwargs : dict
            Passed to ``ax.plot`` for the curve.

        Returns
        -------
        display : LabelIssuesDisplay
            The display, with ``ax_``, ``figure_`` and ``line_`` set.
        """
        ax = start_plot(self, ax)
        name = self.name if name is None else name
        scores = np.asarray(self.mislabel_scores, dtype=np.float64)
        issues = np.asarray(self.label_issues, dtype=bool)
        order = np.argsort(-scores, kind="stable")
        self.ranked_indices_ = order
        ranks = np.arange(1, len(scores) + 1)
        ranked = scores[order]
        n_flagged = int(issues.sum())
        label = f"{name} ({n_flagged} flagged)" if name else f"{n_flagged} flagged"
        line_kwargs = _validate_style_kwargs({"label": label}, kwargs)
        (self.line_,) = ax.plot(ranks, ranked, **line_kwargs)
        flagged = issues[order]
        (self.issues_line_,) = ax.plot(
            ranks[flagged],
            ranked[flagged],
            linestyle="",
            marker="o",
            markersize=3,
            color=self.line_.get_color(),
            label="flagged",
        )
        self.flipped_line_ = None
        if self.flipped is not None:
            flipped = np.asarray(self.flipped, dtype=bool)[order]
            (self.flipped_line_,) = ax.plot(
                ranks[flipped],
                ranked[flipped],
                linestyle="",
                marker="x",
                markersize=4,
                color="black",
                label=f"known flipped ({int(flipped.sum())})",
            )
        self.cut_line_ = None
        if n_flagged:
            # the flagged rows are not always the top ranks (confident learning
            # uses per-class thresholds): the cut is after the last flagged rank
            last = int(ranks[flagged].max())
            self.cut_line_ = ax.axvline(last + 0.5, color="grey", linestyle=":")
        ax.set_xlabel("rank (most suspicious first)")
        ax.set_ylabel("mislabel score")
        return finish_plot(self, ax)

    @classmethod
    def from_estimator(
        cls,
        estimator,
        X,
        y,
        *,
        filter_by=None,
        noise_rate=None,
        flipped=None,
        name=None,
        ax=None,
        **kwargs,
    ):
        """Flag the rows of ``(X, y)`` with a fitted classifier and plot the ranking.

        The probabilities are ``estimator.predict_proba(X)``; pass held-out
        rows, or the training rows for a noise corrector (whose fitted flip
        rate sets the default rule). For out-of-fold probabilities use
        :meth:`from_predictions`.

        Parameters
        ----------
        estimator : estimator object
            Fitted classifier with ``predict_proba`` and ``classes_``.
        X : {array-like, sparse matrix, DataFrame} of shape (n_samples, n_features)
            Input data.
        y : array-like of shape (n_samples,)
            Observed labels (values of ``estimator.classes_``).
        filter_by : {"confident_learning", "predicted_neq_given", \
                "posterior"} or None, default=None
            The rule (see :func:`find_label_issues`). ``None`` means
            ``"posterior"`` at the fitted ``noise_rate_`` for an
            :class:`InstanceNoiseCorrector`, ``"confident_learning"``
            otherwise.
        noise_rate : float in (0, 1) or None, default=None
            Flip rate of the ``"posterior"`` rule; ``None`` means the
            estimator's ``noise_rate_`` if it has one, else the confident-joint
            estimate.
        flipped : array-like of bool of shape (n_samples,), default=None
            The rows known to be mislabeled, if any.
        name : str, default=None
            Legend label; defaults to the estimator's class name.
        ax : matplotlib Axes, default=None
            Axes to draw on.
        **kwargs : dict
            Passed to :meth:`plot`.

        Returns
        -------
        display : LabelIssuesDisplay
            The display.
        """
        check_matplotlib_support(f"{cls.__name__}.from_estimator")
        check_is_fitted(estimator)
        classes = np.asarray(estimator.classes_)
        y = column_or_1d(y)
        codes = np.searchsorted(classes, y)
        codes = np.clip(codes, 0, len(classes) - 1)
        if not np.all(classes[codes] == y):
            unknown = np.setdiff1d(y, classes)
            raise ValueError(
                f"y has labels the estimator was not fitted on: {unknown[:5]}."
            )
        if filter_by is None:
            filter_by = (
                "posterior" if hasattr(estimator, "rho_") else "confident_learning"
            )
        if noise_rate is None and filter_by == "posterior":
            noise_rate = getattr(estimator, "noise_rate_", None)
        name = type(estimator).__name__ if name is None else name
        return cls.from_predictions(
            codes,
            estimator.predict_proba(X),
            filter_by=filter_by,
            noise_rate=noise_rate,
            flipped=flipped,
            name=name,
            ax=ax,
            **kwargs,
        )

    @classmethod
    def from_predictions(
        cls,
        labels,
        pred_probs,
        *,
        filter_by="confident_learning",
        noise_rate=None,
        flipped=None,
        name=None,
        ax=None,
        **kwargs,
    ):
        """Flag the rows from (out-of-fold) probabilities and plot the ranking.

        Parameters
        ----------
        labels : array-like of shape (n_samples,)
            Observed labels, integer codes ``0, ..., n_classes - 1``.
        pred_probs : array-like of shape (n_samples, n_classes)
            Predicted probabilities, out of fold.
        filter_by : {"confident_learning", "predicted_neq_given", \
                "posterior"}, default="confident_learning"
            The rule (see :func:`find_label_issues`).
        noise_rate : float in (0, 1) or None, default=None
            Flip rate of the ``"posterior"`` rule (``None``: the
            confident-joint estimate).
        flipped : array-like of bool of shape (n_samples,), default=None
            The rows known to be mislabeled, if any.
        name : str, default=None
            Legend label.
        ax : matplotlib Axes, default=None
            Axes to draw on.
        **kwargs : dict
            Passed to :meth:`plot`.

        Returns
        -------
        display : LabelIssuesDisplay
            The display.
        """
        check_matplotlib_support(f"{cls.__name__}.from_predictions")
        if filter_by not in FILTERS:
            raise ValueError(f"filter_by must be one of {FILTERS}, got {filter_by!r}.")
        if noise_rate is not None and not 0 < noise_rate < 1:
            raise ValueError(f"noise_rate must lie in (0, 1), got {noise_rate!r}.")
        labels, pred_probs = check_labels_pred_probs(labels, pred_probs)
        if flipped is not None:
            flipped = column_or_1d(flipped).astype(bool)
            if len(flipped) != len(labels):
                raise ValueError(
                    f"flipped has {len(flipped)} rows, labels {len(labels)}."
                )
        mask, scores = issues_and_scores(labels, pred_probs, filter_by, noise_rate)
        display = cls(
            mislabel_scores=scores, label_issues=mask, flipped=flipped, name=name
        )
        return display.plot(ax=ax, **kwargs)
