"""Risk against cost of a risk-controlled rule, with the certified region."""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import numpy as np
from sklearn.utils.validation import check_is_fitted

from sklearn_iclr26.utils._plotting import finish_plot, start_plot
from sklearn_iclr26.utils._sklearn_compat import (
    _validate_style_kwargs,
    check_matplotlib_support,
)
from sklearn_iclr26.utils._validation import store_params

__all__ = ["RiskControlDisplay"]

_REQUIRED = ("parameter", "risk", "cost", "p_value", "certified")


def _check_curve(curve, chosen_index):
    """The curve's arrays, checked against the protocol."""
    if not isinstance(curve, dict):
        raise TypeError(
            f"risk_curve must be a dict with keys {list(_REQUIRED)}, got "
            f"{type(curve).__name__}."
        )
    missing = [key for key in _REQUIRED if key not in curve]
    if missing:
        raise ValueError(
            f"risk_curve lacks the keys {missing} of the protocol "
            f"({list(_REQUIRED)}, see RiskControlDisplay)."
        )
    arrays = {key: np.asarray(curve[key]).ravel() for key in _REQUIRED}
    n = arrays["parameter"].shape[0]
    if any(a.shape[0] != n for a in arrays.values()):
        raise ValueError(
            "risk_curve's arrays must have one entry per parameter; got lengths "
            f"{ {k: a.shape[0] for k, a in arrays.items()} }."
        )
    chosen = int(chosen_index)
    if not 0 <= chosen < n:
        raise ValueError(f"chosen_index={chosen_index} is outside [0, {n}).")
    arrays["certified"] = arrays["certified"].astype(bool)
    return arrays, chosen


class RiskControlDisplay:
    """Risk against cost of a risk-controlled decision rule.

    One point per parameter of the calibrated grid: the empirical risk on
    the calibration rows (y-axis) against its cost (x-axis: the acceptance
    rate of a selective classifier, the expected fee of a deferral policy),
    the **certified** parameters marked, the **chosen** one starred, and the
    target risk as a horizontal line. With test rows, the risk of every
    parameter on them is drawn too (dashed), to see the certificate hold.

    **Protocol** (read by :meth:`from_estimator`). A fitted estimator
    exposes

    * ``risk_curve_``: a dict with the arrays (one entry per parameter, in
      the testing order) ``"parameter"`` (the grid), ``"risk"`` (empirical
      risk on the calibration rows; NaN where undefined), ``"cost"``,
      ``"p_value"`` (NaN where the method has none, e.g. conformal risk
      control) and ``"certified"`` (bool), and optionally the labels
      ``"cost_name"`` (x-axis, e.g. ``"acceptance rate"`` or ``"expected
      fee"``), ``"risk_name"`` and ``"parameter_name"``;
    * ``chosen_index_``: the int index of the rule in use;
    * ``target_risk``: the level (a parameter);
    * optionally a method ``risk_curve(X, y)`` returning a dict with
      ``"risk"`` and ``"cost"`` of the same parameters on ``(X, y)``.

    :class:`~sklearn_iclr26.risk_control.SelectiveClassifier` and
    :class:`~sklearn_iclr26.deferral.RiskControlledDeferrer` follow it.

    Parameters
    ----------
    parameter : ndarray of shape (n_params,)
        The grid; NaN marks a rule outside it (drawn apart from the curve).
    risk : ndarray of shape (n_params,)
        Empirical calibration risk of each parameter.
    cost : ndarray of shape (n_params,)
        Cost (acceptance rate, expected fee) of each parameter.
    certified : ndarray of bool of shape (n_params,)
        Whether each parameter is certified.
    chosen_index : int
        Index of the chosen parameter.
    p_value : ndarray of shape (n_params,), default=None
        The p-value of each parameter (not drawn; kept for inspection).
    target_risk : float, default=None
        Drawn as a horizontal line.
    test_risk : ndarray of shape (n_params,), default=None
        Risk of each parameter on test rows.
    test_cost : ndarray of shape (n_params,), default=None
        Cost of each parameter on test rows.
    cost_name : str, default="cost"
        Label of the x-axis.
    risk_name : str, default="risk"
        Label of the y-axis.
    name : str, default=None
        Name of the estimator, used in the legend.

    Attributes
    ----------
    line_ : matplotlib Line2D
        The calibration curve.
    certified_line_ : matplotlib Line2D or None
        The certified points.
    other_rules_line_ : matplotlib Line2D or None
        Rules outside the grid (a NaN ``parameter``, e.g. a deferrer's
        fallback "always ask expert j"), drawn as crosses off the curve.
    chosen_line_ : matplotlib Line2D
        The chosen point.
    test_line_ : matplotlib Line2D or None
        The test curve.
    ax_ : matplotlib Axes
        Axes of the plot.
    figure_ : matplotlib Figure
        Figure of the plot.

    See Also
    --------
    sklearn_iclr26.metrics.learn_then_test : The certification.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import numpy as np
    >>> from sklearn_iclr26.metrics import RiskControlDisplay
    >>> disp = RiskControlDisplay(
    ...     parameter=np.array([0.9, 0.8, 0.7]), risk=np.array([0.01, 0.04, 0.12]),
    ...     cost=np.array([0.5, 0.7, 0.9]), certified=np.array([True, True, False]),
    ...     chosen_index=1, target_risk=0.05, cost_name="acceptance rate",
    ... ).plot()
    """

    def __init__(
        self,
        *,
        parameter,
        risk,
        cost,
        certified,
        chosen_index,
        p_value=None,
        target_risk=None,
        test_risk=None,
        test_cost=None,
        cost_name="cost",
        risk_name="risk",
        name=None,
    ):
        store_params(self, locals())

    def plot(self, *, ax=None, name=None, **kwargs):
        """Plot the curve, the certified points and the chosen one.

        Parameters
        ----------
        ax : matplotlib Axes, default=None
            Axes to draw on; a new figure is created if ``None``.
        name : str, default=None
            Legend prefix; defaults to ``self.name``.
        **kwargs : dict
            Passed to ``ax.plot`` for the calibration curve.

        Returns
        -------
        display : RiskControlDisplay
            The display, with ``ax_``, ``figure_`` and the lines set.
        """
        ax = start_plot(self, ax)
        name = self.name if name is None else name
        prefix = f"{name}: " if name else ""
        cost = np.asarray(self.cost, dtype=np.float64)
        risk = np.asarray(self.risk, dtype=np.float64)
        certified = np.asarray(self.certified, dtype=bool)
        # rules outside the grid (a NaN parameter, e.g. a deferrer's fallback
        # "always ask expert j") are points of their own, not on the curve
        grid = ~np.isnan(np.asarray(self.parameter, dtype=np.float64))
        order = np.flatnonzero(grid)[np.argsort(cost[grid], kind="stable")]
        line_kwargs = _validate_style_kwargs(
            {"marker": ".", "color": "C0", "label": f"{prefix}calibration risk"},
            kwargs,
        )
        (self.line_,) = ax.plot(cost[order], risk[order], **line_kwargs)
        self.other_rules_line_ = None
        if not grid.all():
            (self.other_rules_line_,) = ax.plot(
                cost[~grid],
                risk[~grid],
                linestyle="none",
                marker="x",
                color="k",
                label=f"{prefix}rules outside the grid",
            )
        self.certified_line_ = None
        if certified.any():
            (self.certified_line_,) = ax.plot(
                cost[certified],
                risk[certified],
                linestyle="none",
                marker="o",
                markerfacecolor="none",
                color="C2",
                label=f"{prefix}certified",
            )
        self.test_line_ = None
        if self.test_risk is not None:
            test_cost = cost if self.test_cost is None else np.asarray(self.test_cost)
            test_order = np.flatnonzero(grid)[
                np.argsort(test_cost[grid], kind="stable")
            ]
            (self.test_line_,) = ax.plot(
                test_cost[test_order],
                np.asarray(self.test_risk, dtype=np.float64)[test_order],
                linestyle="--",
                color="C1",
                label=f"{prefix}test risk",
            )
        chosen = int(self.chosen_index)
        (self.chosen_line_,) = ax.plot(
            [cost[chosen]],
            [np.nan_to_num(risk[chosen])],
            linestyle="none",
            marker="*",
            markersize=14,
            color="C3",
            label=f"{prefix}chosen",
        )
        if self.target_risk is not None:
            ax.axhline(
                float(self.target_risk),
                color="grey",
                linestyle=":",
                label=f"target risk {float(self.target_risk):g}",
            )
        ax.set_xlabel(self.cost_name)
        ax.set_ylabel(self.risk_name)
        return finish_plot(self, ax)

    @classmethod
    def from_estimator(cls, estimator, X=None, y=None, *, name=None, ax=None, **kwargs):
        """Plot the fitted curve of a risk-controlled estimator.

        Reads ``risk_curve_``, ``chosen_index_`` and ``target_risk`` (the
        protocol of the class docstring); with ``X`` and ``y``, also the
        risk of every parameter on those rows, through the estimator's
        ``risk_curve(X, y)``.

        Parameters
        ----------
        estimator : fitted estimator
            One following the protocol (e.g. ``SelectiveClassifier``).
        X : array-like of shape (n_samples, n_features), default=None
            Test rows (with ``y``), never the calibration rows.
        y : array-like of shape (n_samples,), default=None
            Their labels.
        name : str, default=None
            Legend prefix; defaults to the estimator's class name.
        ax : matplotlib Axes, default=None
            Axes to draw on.
        **kwargs : dict
            Passed to :meth:`plot`.

        Returns
        -------
        display : RiskControlDisplay
            The display.
        """
        check_matplotlib_support(f"{cls.__name__}.from_estimator")
        check_is_fitted(estimator)
        if not hasattr(estimator, "risk_curve_") or not hasattr(
            estimator, "chosen_index_"
        ):
            raise TypeError(
                f"{type(estimator).__name__} does not follow the protocol of "
                "RiskControlDisplay: it needs the fitted attributes risk_curve_ "
                "and chosen_index_."
            )
        test = None
        if X is not None and y is not None:
            if not hasattr(estimator, "risk_curve"):
                raise TypeError(
                    f"{type(estimator).__name__} has no risk_curve(X, y) method: "
                    "call from_estimator without X and y."
                )
            test = estimator.risk_curve(X, y)
        name = type(estimator).__name__ if name is None else name
        return cls.from_risk_curve(
            estimator.risk_curve_,
            estimator.chosen_index_,
            target_risk=getattr(estimator, "target_risk", None),
            test_curve=test,
            name=name,
            ax=ax,
            **kwargs,
        )

    @classmethod
    def from_risk_curve(
        cls,
        risk_curve,
        chosen_index,
        *,
        target_risk=None,
        test_curve=None,
        name=None,
        ax=None,
        **kwargs,
    ):
        """Plot a curve given as the protocol's dict (no estimator needed).

        Parameters
        ----------
        risk_curve : dict
            With ``"parameter"``, ``"risk"``, ``"cost"``, ``"p_value"`` and
            ``"certified"`` (see the class docstring).
        chosen_index : int
            Index of the chosen parameter.
        target_risk : float, default=None
            Drawn as a horizontal line.
        test_curve : dict, default=None
            ``"risk"`` and ``"cost"`` of the same parameters on test rows.
        name : str, default=None
            Legend prefix.
        ax : matplotlib Axes, default=None
            Axes to draw on.
        **kwargs : dict
            Passed to :meth:`plot`.

        Returns
        -------
        display : RiskControlDisplay
            The display.

        Examples
        --------
        >>> import matplotlib
        >>> matplotlib.use("Agg")
        >>> from sklearn.datasets import load_breast_cancer
        >>> from sklearn_iclr26.metrics import RiskControlDisplay
        >>> from sklearn_iclr26.risk_control import SelectiveClassifier
        >>> X, y = load_breast_cancer(return_X_y=True)
        >>> clf = SelectiveClassifier(target_risk=0.05, random_state=0).fit(X, y)
        >>> disp = RiskControlDisplay.from_risk_curve(
        ...     clf.risk_curve_, clf.chosen_index_, target_risk=0.05, name="LR")
        >>> disp.line_.get_label()
        'LR: calibration risk'
        """
        check_matplotlib_support(f"{cls.__name__}.from_risk_curve")
        arrays, chosen = _check_curve(risk_curve, chosen_index)
        test_risk = test_cost = None
        if test_curve is not None:
            test_risk = np.asarray(test_curve["risk"], dtype=np.float64)
            test_cost = np.asarray(test_curve["cost"], dtype=np.float64)
        disp = cls(
            parameter=arrays["parameter"],
            risk=arrays["risk"].astype(np.float64),
            cost=arrays["cost"].astype(np.float64),
            certified=arrays["certified"],
            chosen_index=chosen,
            p_value=arrays["p_value"],
            target_risk=target_risk,
            test_risk=test_risk,
            test_cost=test_cost,
            cost_name=risk_curve.get("cost_name", "cost"),
            risk_name=risk_curve.get("risk_name", "risk"),
            name=name,
        )
        return disp.plot(ax=ax, **kwargs)
