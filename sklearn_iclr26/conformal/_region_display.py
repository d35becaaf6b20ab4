"""Conformal regions of a regressor: intervals against a covariate, or 2-D
region boundaries of a few rows."""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

from numbers import Integral

import numpy as np
from sklearn.utils import check_consistent_length, column_or_1d
from sklearn.utils.validation import check_is_fitted

from sklearn_iclr26.conformal._coverage_display import _check_scalar_level
from sklearn_iclr26.utils._plotting import finish_plot, start_plot
from sklearn_iclr26.utils._sklearn_compat import (
    _num_samples,
    _safe_indexing,
    _validate_style_kwargs,
    check_matplotlib_support,
)
from sklearn_iclr26.utils._validation import store_params

__all__ = ["RegionDisplay"]


class RegionDisplay:
    """Conformal regions of a regressor, in one or two target dimensions.

    Two scopes, chosen by the number of targets:

    - **one target** (``d = 1``): the intervals of ``predict_interval`` as
      a band against one covariate, every row of ``X`` sorted by it, and the
      true targets as points (crosses where outside their interval);
    - **two targets** (``d = 2``): the region of each of a few rows of
      ``X`` as a closed curve in the target plane, with its true target as
      a cross. The curve is ``predict_region``'s boundary where the
      estimator has one (:class:`BonferroniBoxRegressor` corners,
      :class:`EllipsoidRegressor`, :class:`CVQRRegressor` with
      ``conformity_score="pb"``); otherwise (:class:`OTCPRegressor`, a union
      of Laguerre cells, and the HPD regions of :class:`CVQRRegressor`) the
      ``0.5`` level line of ``contains`` evaluated on a grid, whose
      resolution bounds the accuracy of the curve.

    More than two targets have no planar picture (use ``contains`` and
    ``region_log_volume``). Build it with :meth:`from_estimator` or
    :meth:`from_predictions` (intervals or boundaries already computed).

    Read more in the :ref:`User Guide <cqr>`.

    Parameters
    ----------
    y_true : ndarray of shape (n_rows,) or (n_rows, 2)
        True targets.
    lower, upper : ndarray of shape (n_rows,), default=None
        Interval bounds (one target).
    feature_values : ndarray of shape (n_rows,), default=None
        Covariate of every row (one target).
    boundaries : ndarray of shape (n_rows, n_points, 2), default=None
        Boundary points of every region (two targets).
    grid_x, grid_y : ndarray of shape (n_grid,), default=None
        Grid of the target plane on which ``inside`` was evaluated (two
        targets, regions without a boundary).
    inside : ndarray of shape (n_rows, n_grid, n_grid), default=None
        ``inside[i, a, b]``: whether ``(grid_x[a], grid_y[b])`` is in the
        region of row ``i``.
    rows : ndarray of shape (n_rows,), default=None
        Row indices shown in the legend (two targets); ``0, 1, ...`` if
        ``None``.
    feature_name : str, default=None
        The x-axis label (one target).
    target_names : list of str, default=None
        Names of the targets (axis labels).
    name : str, default=None
        Name of the estimator, used in the legend.

    Attributes
    ----------
    line_ : matplotlib PolyCollection or list of artists
        One target: the interval band. Two targets: one artist per row
        (a Line2D boundary, or a ContourSet for a grid).
    points_ : matplotlib PathCollection
        The true targets.
    ax_ : matplotlib Axes
        Axes of the plot.
    figure_ : matplotlib Figure
        Figure of the plot.

    See Also
    --------
    ConditionalCoverageDisplay : Coverage of classification sets per group.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import numpy as np
    >>> from sklearn_iclr26.conformal import BonferroniBoxRegressor, RegionDisplay
    >>> rng = np.random.RandomState(0)
    >>> X = rng.normal(size=(300, 2))
    >>> Y = X @ rng.normal(size=(2, 2)) + rng.normal(scale=0.3, size=(300, 2))
    >>> est = BonferroniBoxRegressor(random_state=0).fit(X, Y)
    >>> disp = RegionDisplay.from_estimator(est, X, Y, rows=[0, 1])
    >>> disp.boundaries.shape
    (2, 4, 2)
    """

    def __init__(
        self,
        *,
        y_true,
        lower=None,
        upper=None,
        feature_values=None,
        boundaries=None,
        grid_x=None,
        grid_y=None,
        inside=None,
        rows=None,
        feature_name=None,
        target_names=None,
        name=None,
    ):
        store_params(self, locals())

    def plot(self, *, ax=None, name=None, **kwargs):
        """Plot the band (one target) or the region curves (two targets).

        Parameters
        ----------
        ax : matplotlib Axes, default=None
            Axes to draw on; a new figure is created if ``None``.
        name : str, default=None
            Legend prefix; defaults to ``self.name``.
        **kwargs : dict
            Passed to ``ax.fill_between`` (one target) or ``ax.plot`` (two
            targets, boundaries).

        Returns
        -------
        display : RegionDisplay
            The display, with ``ax_``, ``figure_``, ``line_`` and
            ``points_`` set.
        """
        ax = start_plot(self, ax)
        name = self.name if name is None else name
        if self.lower is not None:
            self._plot_intervals(ax, name, kwargs)
        else:
            self._plot_regions(ax, name, kwargs)
        return finish_plot(self, ax)

    def _plot_intervals(self, ax, name, kwargs):
        x = np.asarray(self.feature_values, dtype=np.float64)
        y = np.asarray(self.y_true, dtype=np.float64)
        lower = np.asarray(self.lower, dtype=np.float64)
        upper = np.asarray(self.upper, dtype=np.float64)
        order = np.argsort(x, kind="stable")
        # an infinite bound (calibration set too small for the level) is
        # drawn to the edge of the picture
        finite = np.concatenate(
            [y, lower[np.isfinite(lower)], upper[np.isfinite(upper)]]
        )
        span = max(np.ptp(finite), 1e-12)
        low_edge, high_edge = finite.min() - 0.1 * span, finite.max() + 0.1 * span
        lower_drawn = np.clip(lower, low_edge, high_edge)
        upper_drawn = np.clip(upper, low_edge, high_edge)
        label = f"{name}: interval" if name else "interval"
        style = _validate_style_kwargs({"alpha": 0.3, "label": label}, kwargs)
        self.line_ = ax.fill_between(
            x[order], lower_drawn[order], upper_drawn[order], **style
        )
        outside = (y < lower) | (y > upper)
        colors = np.where(outside, "tab:red", "black")
        self.points_ = ax.scatter(
            x, y, c=colors, s=8, label=f"true target ({outside.mean():.0%} outside)"
        )
        ax.set_xlabel(self.feature_name if self.feature_name else "covariate")
        names = self.target_names
        ax.set_ylabel(names[0] if names else "target")

    def _plot_regions(self, ax, name, kwargs):
        y = np.asarray(self.y_true, dtype=np.float64)
        n_rows = y.shape[0]
        rows = np.arange(n_rows) if self.rows is None else np.asarray(self.rows)
        self.line_ = []
        for i in range(n_rows):
            color = f"C{i % 10}"
            label = f"{name}: row {rows[i]}" if name else f"row {rows[i]}"
            if self.boundaries is not None:
                curve = np.asarray(self.boundaries[i], dtype=np.float64)
                curve = np.vstack([curve, curve[:1]])  # close the curve
                style = _validate_style_kwargs({"color": color, "label": label}, kwargs)
                (artist,) = ax.plot(curve[:, 0], curve[:, 1], **style)
            else:
                artist = ax.contour(
                    self.grid_x,
                    self.grid_y,
                    np.asarray(self.inside[i], dtype=np.float64).T,
                    levels=[0.5],
                    colors=[color],
                )
                ax.plot([], [], color=color, label=label)  # legend entry
            self.line_.append(artist)
        self.points_ = ax.scatter(
            y[:, 0],
            y[:, 1],
            c=[f"C{i % 10}" for i in range(n_rows)],
            marker="x",
            label="true target",
        )
        names = self.target_names or ["y0", "y1"]
        ax.set_xlabel(names[0])
        ax.set_ylabel(names[1])

    @classmethod
    def from_estimator(
        cls,
        estimator,
        X,
        y,
        *,
        rows=None,
        feature=0,
        confidence_level=None,
        method="auto",
        grid_resolution=60,
        name=None,
        ax=None,
        **kwargs,
    ):
        """Regions of a fitted conformal regressor on ``X``.

        Parameters
        ----------
        estimator : fitted conformal regressor
            :class:`BonferroniBoxRegressor`, :class:`EllipsoidRegressor`,
            :class:`OTCPRegressor`, :class:`CVQRRegressor` or
            :class:`ConformalizedQuantileRegressor`, fitted on one or two
            targets.
        X : {array-like, DataFrame} of shape (n_samples, n_features)
            Covariates.
        y : array-like of shape (n_samples,) or (n_samples, 2)
            True targets.
        rows : array-like of int, default=None
            Rows of ``X`` to show; ``None`` means every row for one target
            and the first three for two targets.
        feature : int or str, default=0
            The covariate on the x-axis (one target): a column index or, for
            a DataFrame, a column name.
        confidence_level : float, default=None
            Level of the regions; ``None`` uses the estimator's.
        method : {"auto", "boundary", "grid"}, default="auto"
            Two targets: ``"boundary"`` draws ``predict_region``;
            ``"grid"`` the level line of ``contains`` on a
            ``grid_resolution`` x ``grid_resolution`` grid spanning the
            targets ``y`` widened by a quarter of their range on each side;
            ``"auto"`` the boundary where ``predict_region`` gives one (it
            raises ``ValueError`` for regions without a closed form) and the
            grid otherwise.
        grid_resolution : int, default=60
            Number of grid points per target axis (``method="grid"``).
        name : str, default=None
            Legend prefix; defaults to the estimator's class name.
        ax : matplotlib Axes, default=None
            Axes to draw on.
        **kwargs : dict
            Passed to :meth:`plot`.

        Returns
        -------
        display : RegionDisplay
            The display.
        """
        check_matplotlib_support(f"{cls.__name__}.from_estimator")
        check_is_fitted(estimator)
        _check_scalar_level(confidence_level)
        if method not in ("auto", "boundary", "grid"):
            raise ValueError(
                f"method must be 'auto', 'boundary' or 'grid', got {method!r}."
            )
        if not isinstance(grid_resolution, Integral) or grid_resolution < 3:
            raise ValueError(
                f"grid_resolution must be an integer >= 3, got {grid_resolution!r}."
            )
        d = estimator.n_outputs_
        name = type(estimator).__name__ if name is None else name
        y = np.asarray(y, dtype=np.float64)
        n = _num_samples(X)
        if d == 1:
            index = np.arange(n) if rows is None else np.asarray(rows)
            X_rows = _safe_indexing(X, index)
            values, feature_name = _feature_column(X_rows, feature)
            intervals = estimator.predict_interval(
                X_rows, confidence_level=confidence_level
            )
            return cls.from_predictions(
                y.reshape(n, -1)[index, 0],
                intervals,
                feature_values=values,
                feature_name=feature_name,
                name=name,
                ax=ax,
                **kwargs,
            )
        if d != 2:
            raise ValueError(
                f"RegionDisplay draws one or two targets; {type(estimator).__name__} "
                f"was fitted on {d}: use contains() and region_log_volume()."
            )
        index = np.arange(min(3, n)) if rows is None else np.asarray(rows)
        X_rows = _safe_indexing(X, index)
        y_rows = y[index]
        if method in ("auto", "boundary"):
            try:
                boundaries = estimator.predict_region(
                    X_rows, confidence_level=confidence_level
                )
            except ValueError:
                if method == "boundary":
                    raise
            else:
                disp = cls(y_true=y_rows, boundaries=boundaries, rows=index, name=name)
                return disp.plot(ax=ax, **kwargs)
        span = np.ptp(y, axis=0)
        span = np.where(span > 0, span, 1.0)
        low, high = y.min(axis=0) - 0.25 * span, y.max(axis=0) + 0.25 * span
        grid_x = np.linspace(low[0], high[0], grid_resolution)
        grid_y = np.linspace(low[1], high[1], grid_resolution)
        gx, gy = np.meshgrid(grid_x, grid_y, indexing="ij")
        points = np.column_stack([gx.ravel(), gy.ravel()])
        n_points = points.shape[0]
        inside = estimator.contains(
            _safe_indexing(X_rows, np.repeat(np.arange(len(index)), n_points)),
            np.tile(points, (len(index), 1)),
            confidence_level=confidence_level,
        ).reshape(len(index), grid_resolution, grid_resolution)
        disp = cls(
            y_true=y_rows,
            grid_x=grid_x,
            grid_y=grid_y,
            inside=inside,
            rows=index,
            name=name,
        )
        return disp.plot(ax=ax, **kwargs)

    @classmethod
    def from_predictions(
        cls,
        y_true,
        regions,
        *,
        feature_values=None,
        feature_name=None,
        target_names=None,
        name=None,
        ax=None,
        **kwargs,
    ):
        """Plot intervals or region boundaries already computed.

        Parameters
        ----------
        y_true : array-like of shape (n_samples,) or (n_samples, 2)
            True targets.
        regions : ndarray of shape (n_samples, 2), (n_samples, 2, 1) or \
                (n_samples, n_points, 2)
            Intervals (``predict_interval``, or ``predict_region`` of a
            one-target fit), or the boundaries of two-target regions
            (``predict_region``).
        feature_values : array-like of shape (n_samples,), default=None
            Covariate of every row (intervals); the row index if ``None``.
        feature_name : str, default=None
            The x-axis label (intervals).
        target_names : list of str, default=None
            Names of the targets (axis labels).
        name : str, default=None
            Legend prefix.
        ax : matplotlib Axes, default=None
            Axes to draw on.
        **kwargs : dict
            Passed to :meth:`plot`.

        Returns
        -------
        display : RegionDisplay
            The display.
        """
        check_matplotlib_support(f"{cls.__name__}.from_predictions")
        regions = np.asarray(regions, dtype=np.float64)
        y_true = np.asarray(y_true, dtype=np.float64)
        if regions.ndim == 3 and regions.shape[1:] == (2, 1):
            regions = regions[:, :, 0]
        if regions.ndim == 2 and regions.shape[1] == 2:
            y_true = column_or_1d(y_true)
            check_consistent_length(y_true, regions)
            if feature_values is None:
                feature_values = np.arange(y_true.shape[0], dtype=np.float64)
                feature_name = "sample index" if feature_name is None else feature_name
            feature_values = column_or_1d(np.asarray(feature_values, dtype=np.float64))
            check_consistent_length(y_true, feature_values)
            disp = cls(
                y_true=y_true,
                lower=regions[:, 0],
                upper=regions[:, 1],
                feature_values=feature_values,
                feature_name=feature_name,
                target_names=target_names,
                name=name,
            )
        elif regions.ndim == 3 and regions.shape[2] == 2:
            if y_true.ndim != 2 or y_true.shape[1] != 2:
                raise ValueError(
                    f"two-target regions need y_true of shape (n_samples, 2), got "
                    f"{y_true.shape}."
                )
            check_consistent_length(y_true, regions)
            disp = cls(
                y_true=y_true,
                boundaries=regions,
                target_names=target_names,
                name=name,
            )
        else:
            raise ValueError(
                "regions must be intervals of shape (n_samples, 2) or (n_samples, "
                "2, 1), or boundaries of shape (n_samples, n_points, 2); got shape "
                f"{regions.shape} (several levels: plot one level at a time)."
            )
        return disp.plot(ax=ax, **kwargs)


def _feature_column(X, feature):
    """Values and name of one covariate of ``X`` (array or DataFrame)."""
    if hasattr(X, "columns"):
        if isinstance(feature, str):
            return np.asarray(X[feature], dtype=np.float64), feature
        return np.asarray(X.iloc[:, feature], dtype=np.float64), str(X.columns[feature])
    if isinstance(feature, str):
        raise TypeError(
            f"feature={feature!r} names a column, but X has no column names "
            "(pass a DataFrame or an integer index)."
        )
    return np.asarray(X)[:, feature].astype(np.float64), f"x{feature}"
