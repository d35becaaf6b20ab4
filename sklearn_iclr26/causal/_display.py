"""Estimated treatment effect against one covariate, with its intervals."""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import numpy as np
from sklearn.utils import check_consistent_length, column_or_1d
from sklearn.utils.validation import check_is_fitted

from sklearn_iclr26.causal._inference import deprecated_alpha
from sklearn_iclr26.utils._plotting import finish_plot, start_plot
from sklearn_iclr26.utils._sklearn_compat import (
    _validate_style_kwargs,
    check_matplotlib_support,
)
from sklearn_iclr26.utils._validation import store_params

__all__ = ["CATEDisplay"]


class CATEDisplay:
    """CATE against a covariate, with its bootstrap or conformal band.

    One point per row of ``X``, sorted by the covariate: the estimated effect
    ``effect(X)`` as a line and, when the estimator was fitted with
    ``n_bootstrap > 0``, the interval of :meth:`effect_interval` as a shaded
    band; for a :class:`ConformalITERegressor`, the band is the conformal
    interval of the individual effects (``predict_interval``). Build it with
    :meth:`from_estimator` (a fitted T-, X- or G-learner, or a
    :class:`ConformalITERegressor`) or :meth:`from_predictions` (effects
    already computed).

    Read more in the :ref:`User Guide <causal>`.

    Parameters
    ----------
    feature_values : ndarray of shape (n_samples,)
        Values of the covariate.
    effect : ndarray of shape (n_samples,)
        Estimated effects.
    lower, upper : ndarray of shape (n_samples,), default=None
        Interval bounds; no band when ``None``.
    feature_name : str, default=None
        The x-axis label.
    name : str, default=None
        Name of the estimator, used in the legend.

    Attributes
    ----------
    line_ : matplotlib Line2D
        The effect curve.
    band_ : matplotlib PolyCollection or None
        The interval band.
    ax_ : matplotlib Axes
        Axes of the plot.
    figure_ : matplotlib Figure
        Figure of the plot.

    See Also
    --------
    TLearnerRegressor.effect_interval : The intervals drawn.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import numpy as np
    >>> from sklearn.linear_model import LinearRegression
    >>> from sklearn_iclr26.causal import CATEDisplay, TLearnerRegressor
    >>> rng = np.random.RandomState(0)
    >>> X = rng.normal(size=(200, 2))
    >>> t = (rng.uniform(size=200) < 0.5).astype(int)
    >>> y = X[:, 0] + t * (1 + X[:, 1]) + rng.normal(scale=0.1, size=200)
    >>> est = TLearnerRegressor(LinearRegression(), n_bootstrap=20, random_state=0)
    >>> est = est.fit(X, y, treatment=t)
    >>> disp = CATEDisplay.from_estimator(est, X, feature=1)
    >>> disp.band_ is not None
    True
    """

    def __init__(
        self,
        *,
        feature_values,
        effect,
        lower=None,
        upper=None,
        feature_name=None,
        name=None,
    ):
        store_params(self, locals())

    def plot(self, *, ax=None, name=None, band_kwargs=None, **kwargs):
        """Plot the effect curve and its band.

        Parameters
        ----------
        ax : matplotlib Axes, default=None
            Axes to draw on; a new figure is created if ``None``.
        name : str, default=None
            Legend label; defaults to ``self.name``.
        band_kwargs : dict, default=None
            Passed to ``ax.fill_between`` for the band.
        **kwargs : dict
            Passed to ``ax.plot`` for the effect line.

        Returns
        -------
        display : CATEDisplay
            The display, with ``ax_``, ``figure_``, ``line_`` and ``band_``.
        """
        ax = start_plot(self, ax)
        name = self.name if name is None else name
        x = np.asarray(self.feature_values, dtype=np.float64)
        order = np.argsort(x, kind="stable")
        label = "estimated effect" if not name else f"{name}: estimated effect"
        line_kwargs = _validate_style_kwargs({"label": label}, kwargs)
        (self.line_,) = ax.plot(x[order], np.asarray(self.effect)[order], **line_kwargs)
        self.band_ = None
        if self.lower is not None and self.upper is not None:
            fill = {"alpha": 0.25, "color": self.line_.get_color(), "label": "interval"}
            fill = _validate_style_kwargs(fill, band_kwargs or {})
            if name and fill.get("label") == "interval":
                fill["label"] = f"{name}: interval"
            self.band_ = ax.fill_between(
                x[order],
                np.asarray(self.lower)[order],
                np.asarray(self.upper)[order],
                **fill,
            )
        ax.axhline(0.0, color="grey", linewidth=0.8, linestyle=":")
        ax.set_xlabel(self.feature_name if self.feature_name else "covariate")
        ax.set_ylabel("treatment effect")
        return finish_plot(self, ax)

    @classmethod
    @deprecated_alpha
    def from_estimator(
        cls,
        estimator,
        X,
        y=None,
        *,
        feature=0,
        confidence_level=0.95,
        name=None,
        ax=None,
        alpha=None,
        **kwargs,
    ):
        """Effects of a fitted CATE estimator on ``X`` against one covariate.

        Parameters
        ----------
        estimator : TLearnerRegressor, XLearnerRegressor, \
                GeodesicCATERegressor or ConformalITERegressor
            Fitted estimator. A CATE learner's band is its bootstrap interval
            of the average effect at ``x`` (it needs ``n_bootstrap > 0``; the
            causal forest's band is its own interval, with no refits); a
            :class:`ConformalITERegressor`'s band is its conformal interval
            of the *individual* effect (the first of its levels).
        X : {array-like, DataFrame} of shape (n_samples, n_features)
            Covariates, as ``estimator.effect`` takes them.
        y : None
            Ignored; present for the common signature of displays.
        feature : int or str, default=0
            The covariate on the x-axis: a column index of ``X`` or, for a
            DataFrame, a column name.
        confidence_level : float in (0, 1), default=0.95
            Level of the bootstrap band (a :class:`ConformalITERegressor`'s
            band has its own ``confidence_level``).
        name : str, default=None
            Legend prefix; defaults to the estimator's class name.
        ax : matplotlib Axes, default=None
            Axes to draw on.
        alpha : float in (0, 1), default=None
            Deprecated (removed in the next release): the band's miscoverage
            (econml's ``alpha``), ``1 - confidence_level``; a
            ``FutureWarning``.
        **kwargs : dict
            Passed to :meth:`plot`.

        Returns
        -------
        display : CATEDisplay
            The display.
        """
        check_matplotlib_support(f"{cls.__name__}.from_estimator")
        check_is_fitted(estimator)
        if hasattr(X, "columns"):
            if isinstance(feature, str):
                values, feature_name = X[feature], feature
            else:
                values, feature_name = X.iloc[:, feature], str(X.columns[feature])
        else:
            if isinstance(feature, str):
                raise ValueError(
                    f"feature={feature!r} names a column, but X has no column "
                    "names (pass a DataFrame or an integer index)."
                )
            values = np.asarray(X)[:, feature]
            feature_name = f"x{feature}"
        lower = upper = None
        if hasattr(estimator, "cate_estimator_"):
            # a ConformalITERegressor: the CATE and the conformal intervals of
            # the individual effects, at the estimator's own level
            effect = estimator.predict(X)
            interval = estimator.predict_interval(X)
            if interval.ndim == 3:
                interval = interval[..., 0]
            lower, upper = interval[:, 0], interval[:, 1]
        else:
            effect = estimator.effect(X)
            # the bootstrap refits, or intervals of the learner's own (the
            # causal forest's)
            if getattr(estimator, "bootstrap_estimators_", None) or getattr(
                estimator, "_has_own_effect_intervals", False
            ):
                lower, upper = estimator.effect_interval(
                    X, confidence_level=confidence_level
                )
        name = type(estimator).__name__ if name is None else name
        return cls.from_predictions(
            values,
            effect,
            lower=lower,
            upper=upper,
            feature_name=feature_name,
            name=name,
            ax=ax,
            **kwargs,
        )

    @classmethod
    def from_predictions(
        cls,
        feature_values,
        effect,
        *,
        lower=None,
        upper=None,
        feature_name=None,
        name=None,
        ax=None,
        **kwargs,
    ):
        """Plot effects already computed (e.g. econml's ``effect_interval``).

        Parameters
        ----------
        feature_values : array-like of shape (n_samples,)
            Values of the covariate.
        effect : array-like of shape (n_samples,)
            Estimated effects.
        lower, upper : array-like of shape (n_samples,), default=None
            Interval bounds; both or neither.
        feature_name : str, default=None
            The x-axis label.
        name : str, default=None
            Legend prefix.
        ax : matplotlib Axes, default=None
            Axes to draw on.
        **kwargs : dict
            Passed to :meth:`plot`.

        Returns
        -------
        display : CATEDisplay
            The display.
        """
        check_matplotlib_support(f"{cls.__name__}.from_predictions")
        x = column_or_1d(np.asarray(feature_values, dtype=np.float64))
        effect = column_or_1d(np.asarray(effect, dtype=np.float64))
        check_consistent_length(x, effect)
        if (lower is None) != (upper is None):
            raise ValueError("Pass both lower and upper, or neither.")
        if lower is not None:
            lower = column_or_1d(np.asarray(lower, dtype=np.float64))
            upper = column_or_1d(np.asarray(upper, dtype=np.float64))
            check_consistent_length(x, lower, upper)
        disp = cls(
            feature_values=x,
            effect=effect,
            lower=lower,
            upper=upper,
            feature_name=feature_name,
            name=name,
        )
        return disp.plot(ax=ax, **kwargs)
