"""ConNAS: hardware-constrained differentiable architecture search."""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

from numbers import Real

from sklearn_iclr26.nas._darts import BaseGradientNASSearch
from sklearn_iclr26.nas._rule import (
    DIRECTIONS,
    constraint_guided_gradient,
    cost_direction,
)
from sklearn_iclr26.utils._atomic import atomic_fit
from sklearn_iclr26.utils._sklearn_compat import Interval, StrOptions, _fit_context
from sklearn_iclr26.utils._torch import check_regression_fit
from sklearn_iclr26.utils._validation import store_params

__all__ = ["ConNASSearch"]


class ConNASSearch(BaseGradientNASSearch):
    """Hardware-constrained architecture search by constraint-guided gradients.

    A meta-estimator in the spirit of :class:`~sklearn.model_selection.GridSearchCV`:
    :meth:`fit` searches an architecture of ``search_space`` whose hardware
    cost stays within ``budget``, then refits the chosen network on all the
    data; ``predict``, ``predict_proba`` and ``score`` delegate to
    ``best_estimator_``.

    The search is first-order DARTS (a weight-sharing supernet whose edges
    mix their candidate operations with ``softmax`` (or ``gumbel``) weights of
    architecture logits (``arch_logits_``); the data are split into search-train and
    validation sets; weight steps on the former alternate with logit steps on
    the latter). The constraint is enforced ConNAS-style, with no penalty
    weight: whenever the architecture derived from the logits (argmax per
    edge) costs more than ``budget``, the logit gradient ``g`` is replaced by
    ``g + R ||g|| d / ||d||``, where ``d`` raises the logits of costly
    operations (``R = rescale_factor > 1``), so each step moves towards
    cheaper operations whatever the size of the task gradient. The cost is
    only evaluated on discrete architectures and never differentiated.

    Read more in the :ref:`User Guide <connas>`.

    Parameters
    ----------
    search_space : {"mlp", "cell"} or SearchSpace, default=None
        The space: ``None`` or ``"mlp"`` is :class:`MLPSearchSpace` (tabular
        data), ``"cell"`` is :class:`CellSearchSpace` (8x8 images), or any
        :class:`SearchSpace` instance, including your own subclasses.
    constraint : {"params", "flops", "latency"} or callable, default="params"
        Hardware cost: analytic parameter or FLOP counts, latency measured per
        operation on ``device`` (median of ``latency_repeats`` runs, cached in
        ``cost_table_``), or a callable ``architecture dict -> float`` that
        need not be differentiable.
    budget : float or None, default=None
        Maximum cost. ``None`` means unconstrained (plain DARTS).
    rescale_factor : float, default=1.5
        ``R`` of the rule; must exceed 1. Larger values reach the feasible set
        faster and help at tight budgets.
    direction : {"cost_rank", "selected", "expected_cost"}, default="cost_rank"
        Direction ``d`` of the modification, built from a per-edge cost table
        (the cost of the current architecture with one edge changed):
        standardised costs per edge, ``+1`` on the selected operation and
        ``-1/n`` on the cheaper ones, or the gradient of the expected cost (an
        ablation: the FBNet proxy).
    relaxation : {"softmax", "gumbel"}, default="softmax"
        Continuous relaxation of the choice on each edge.
    temperature : float, default=1.0
        Softmax / Gumbel-softmax temperature.
    arch_learning_rate : float, default=3e-2
        Adam learning rate of the architecture logits (the second learning
        rate of the bilevel search).
    arch_betas : tuple of float, default=(0.5, 0.999)
        Adam betas of the logits (DARTS).
    arch_alpha : float, default=1e-3
        L2 penalty of the logits (their Adam ``weight_decay``, DARTS).
    select : {"last_feasible", "best_val_feasible"}, default="last_feasible"
        The returned architecture: the last feasible derived architecture, or
        the feasible one with the lowest validation loss (weight-sharing
        supernet, one-hot weights). Never an infeasible one: if the search
        visited no feasible architecture, a warning is raised and the cheapest
        architecture found is returned.
    refit : bool, default=True
        Train the chosen architecture on all the data as ``best_estimator_``.
    final_estimator_params : dict or None, default=None
        Parameters of the refit network (``max_iter``, ``learning_rate_init``,
        ``alpha``, ``batch_size``, ``early_stopping``, ``callbacks``...),
        trained as :class:`~sklearn_iclr26.neural_network.TorchMLPClassifier`
        is. The search's own training parameters (``early_stopping``,
        ``warm_start``, ``callbacks``...) apply to the supernet only; the
        refit receives ``dtype``, ``device``, ``n_jobs`` and a seed.
    task : {"classification", "regression"}, default="classification"
        Kind of target.
    latency_repeats : int, default=20
        Timed runs per operation for ``constraint="latency"``.
    %(search_training_parameters)s

    Attributes
    ----------
    best_architecture_ : dict
        The chosen architecture, ``{edge name: operation}``.
    best_cost_ : float
        Its cost.
    budget_satisfied_ : bool
        Whether ``best_cost_ <= budget`` (always true unless the search found
        no feasible architecture, which also warns).
    best_estimator_ : estimator
        The chosen network refitted on all the data (if ``refit``).
    search_history_ : list of dict
        One record per logit step (and one for the final logits): ``step``,
        ``epoch``, ``architecture`` (derived), ``cost``, ``feasible``,
        ``val_loss`` (relaxed supernet, validation batch), ``modified``
        (whether the constraint rule changed the gradient).
    arch_logits_ : list of ndarray
        Final architecture logits, one array per edge.
    %(search_training_attributes)s
    cost_table_ : dict
        Cost look-up table: per cost term (e.g. ``("linear", 64, 32,
        "relu")``) the analytic cost or the measured median latency in
        seconds; for a callable constraint, per architecture.
    n_architectures_evaluated_ : int
        Number of distinct derived architectures visited.
    classes_ : ndarray of shape (n_classes,)
        Class labels (classification).
    n_features_in_ : int
        Number of features seen during fit.
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of features seen during fit. Defined only when `X` has feature
        names that are all strings.

    See Also
    --------
    PenaltyNASSearch : The same search with ``lambda * E[cost]`` added to the
        loss instead of the gradient rule.
    RandomNASSearch : Constrained random search (rejection sampling).
    ArchitectureFrontierDisplay : Accuracy against cost, with the budget.

    Notes
    -----
    The full paper was not available when this was written: the update is a
    reconstruction of ConNAS as a Constraint-Guided Gradient Descent (CGGD)
    rule on the architecture logits (see the user guide). Adam is applied to
    the modified gradient.

    References
    ----------
    .. [1] "Constraint-guided Hardware-aware NAS through Gradient
       Modification", ICLR 2026, https://openreview.net/forum?id=fcKMFIiNFQ
    .. [2] Q. Van Baelen and P. Karsmakers, "Constraint guided gradient
       descent: training with inequality constraints with applications in
       regression and semantic segmentation", Neurocomputing, 2023.
    .. [3] H. Liu, K. Simonyan and Y. Yang, "DARTS: Differentiable
       Architecture Search", ICLR 2019.

    Examples
    --------
    >>> from sklearn.datasets import load_wine
    >>> from sklearn.preprocessing import StandardScaler
    >>> from sklearn_iclr26.nas import ConNASSearch, MLPSearchSpace
    >>> X, y = load_wine(return_X_y=True)
    >>> X = StandardScaler().fit_transform(X)
    >>> search = ConNASSearch(
    ...     MLPSearchSpace(n_layers=2, widths=(0, 8, 32)),
    ...     budget=500,
    ...     max_iter=10,
    ...     random_state=0,
    ... ).fit(X, y)
    >>> search.budget_satisfied_, search.best_cost_ <= 500
    (True, True)
    """

    _parameter_constraints: dict = {
        **BaseGradientNASSearch._parameter_constraints,
        "rescale_factor": [Interval(Real, 1, None, closed="neither")],
        "direction": [StrOptions(set(DIRECTIONS))],
        "select": [StrOptions({"last_feasible", "best_val_feasible"})],
    }

    def __init__(
        self,
        search_space=None,
        *,
        constraint="params",
        budget=None,
        rescale_factor=1.5,
        direction="cost_rank",
        relaxation="softmax",
        temperature=1.0,
        arch_learning_rate=3e-2,
        arch_betas=(0.5, 0.999),
        arch_alpha=1e-3,
        select="last_feasible",
        refit=True,
        final_estimator_params=None,
        task="classification",
        latency_repeats=20,
        alpha=0.0,
        batch_size=64,
        learning_rate_init=1e-2,
        max_iter=20,
        early_stopping=False,
        validation_fraction=0.5,
        n_iter_no_change=10,
        tol=1e-4,
        warm_start=False,
        callbacks=None,
        dtype="float64",
        device="cpu",
        n_jobs=None,
        random_state=None,
        verbose=0,
    ):
        store_params(self, locals())

    def _modify_arch_gradient(self, grad, arch_idx, cost, probs):
        if self._feasible(cost):
            return grad, False
        d = cost_direction(
            self._costs.local_costs(arch_idx), arch_idx, self.direction, probs=probs
        )
        return constraint_guided_gradient(grad, d, self.rescale_factor), True

    @atomic_fit(check=check_regression_fit)
    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        """Search an architecture within the budget and refit it.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training data (flattened images for the cell space).
        y : array-like of shape (n_samples,)
            Target labels or values.

        Returns
        -------
        self : object
            Fitted search.
        """
        return self._fit(X, y)
