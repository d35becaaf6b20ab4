"""Conformity scores as objects (MAPIE's pattern), pluggable into the classifier.

Each class holds one score's parameters, its score matrix, its set rule and,
where it has one, its tuning step; ``SplitConformalClassifier`` accepts an
instance as ``conformity_score`` (strings are still accepted and keep their
results). A user's score subclasses :class:`BaseClassificationScore` and
defines ``score_matrix`` (the small score classes share one module, as
scikit-learn's kernels do).
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import inspect
from numbers import Integral, Real

import numpy as np

from sklearn_iclr26.conformal._conformity_scores import (
    _cumulative_mass,
    _label_ranks,
    _lac_sets,
    _raps_with_uniforms,
    _socop_sets,
    margin_scores,
    socop_scores,
    socop_sets,
)
from sklearn_iclr26.utils._sklearn_compat import (
    Interval,
    StrOptions,
    validate_parameter_constraints,
)

__all__ = [
    "APSScore",
    "BaseClassificationScore",
    "LACScore",
    "MarginScore",
    "RAPSScore",
    "SOCOPScore",
    "TopKScore",
]


def _same(a, b):
    try:
        return bool(a == b) and type(a) is type(b)
    except (TypeError, ValueError):
        return a is b


class BaseClassificationScore:
    """Base class of the conformity scores of conformal classifiers.

    A subclass defines :meth:`score_matrix` (lower means more conforming: a
    label enters the set when its score is at most the conformal threshold)
    and may override :meth:`sets` (a faster or tie-aware set rule),
    ``randomized`` / ``calibration_randomized`` (whether the score takes
    the row-aligned uniform draws) and :meth:`needs_tuning` / :meth:`tune`
    (a score hyperparameter chosen on a tuning split disjoint from
    calibration, as SOCOP's ``lam``). Parameters are constructor arguments,
    so the score clones, prints and tunes in ``GridSearchCV``
    (``conformity_score__lam``).

    See Also
    --------
    SplitConformalClassifier : Takes a score object as ``conformity_score``.
    conformity_scores : The scores by name, as functions.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.datasets import load_iris
    >>> from sklearn_iclr26.conformal import (
    ...     BaseClassificationScore, SplitConformalClassifier)
    >>> class SquaredScore(BaseClassificationScore):
    ...     def score_matrix(self, proba, uniforms=None):
    ...         return 1.0 - proba**2
    >>> X, y = load_iris(return_X_y=True)
    >>> clf = SplitConformalClassifier(
    ...     conformity_score=SquaredScore(), random_state=0).fit(X, y)
    >>> clf.predict_set(X[:2]).sum(axis=1)
    array([1, 1])
    """

    _parameter_constraints: dict = {}

    # -- parameters, as scikit-learn's (not an estimator: nothing to fit) --
    @classmethod
    def _get_param_names(cls):
        init = cls.__init__
        if init is object.__init__:
            return []
        params = inspect.signature(init).parameters.values()
        return sorted(
            p.name
            for p in params
            if p.name != "self" and p.kind not in (p.VAR_KEYWORD, p.VAR_POSITIONAL)
        )

    def get_params(self, deep=True):
        """Parameters of the score (``clone`` and ``GridSearchCV`` use them).

        Parameters
        ----------
        deep : bool, default=True
            Unused (a score holds no estimator).

        Returns
        -------
        params : dict
            Parameter names mapped to their values.
        """
        return {name: getattr(self, name) for name in self._get_param_names()}

    def set_params(self, **params):
        """Set parameters of the score.

        Parameters
        ----------
        **params : dict
            Score parameters.

        Returns
        -------
        self : object
            The score.
        """
        valid = self._get_param_names()
        for name, value in params.items():
            if name not in valid:
                raise ValueError(
                    f"Invalid parameter {name!r} for {type(self).__name__}; "
                    f"valid parameters: {valid}."
                )
            setattr(self, name, value)
        return self

    def __repr__(self):
        defaults = {
            p.name: p.default
            for p in inspect.signature(type(self).__init__).parameters.values()
            if p.default is not p.empty
        }
        shown = [
            f"{name}={value!r}"
            for name, value in self.get_params().items()
            if name not in defaults or not _same(value, defaults[name])
        ]
        return f"{type(self).__name__}({', '.join(shown)})"

    def _validate_params(self):
        """Check the parameters against ``_parameter_constraints``."""
        validate_parameter_constraints(
            self._parameter_constraints,
            self.get_params(),
            caller_name=type(self).__name__,
        )

    #: whether the sets use the row-aligned uniform draws
    randomized = False
    #: whether the calibration scores use them
    calibration_randomized = False

    def score_matrix(self, proba, uniforms=None):
        """Score of every label, shape of ``proba``.

        Parameters
        ----------
        proba : ndarray of shape (n_samples, n_classes)
            Validated class probabilities.
        uniforms : ndarray of shape (n_samples, 1), default=None
            Row-aligned uniform draws (randomized scores only).

        Returns
        -------
        scores : ndarray of shape (n_samples, n_classes)
            The scores.
        """
        raise NotImplementedError(
            f"{type(self).__name__} must define score_matrix(proba, uniforms=None)."
        )

    def sets(self, proba, threshold, uniforms=None):
        """Prediction sets ``score_matrix(proba) <= threshold``.

        Parameters
        ----------
        proba : ndarray of shape (n_samples, n_classes)
            Validated class probabilities.
        threshold : float or ndarray
            The threshold, or one per column (broadcast against the scores).
        uniforms : ndarray of shape (n_samples, 1), default=None
            Row-aligned uniform draws (randomized scores only).

        Returns
        -------
        sets : ndarray of bool, shape (n_samples, n_classes)
            Membership of every label.
        """
        return self.score_matrix(proba, uniforms) <= threshold

    def needs_tuning(self):
        """Whether :meth:`tune` must run on a tuning split before calibration.

        Returns
        -------
        needs : bool
            ``False`` unless a hyperparameter is ``"auto"``.
        """
        return False

    def tuning_fraction(self):
        """Fraction of the rows the tuning split takes.

        Returns
        -------
        fraction : float
            ``tuning_size`` where the score has one, else 0.2.
        """
        return float(getattr(self, "tuning_size", 0.2))

    def tune(self, proba, y_index, *, confidence_level, allow_empty, rng):
        """Choose the score's hyperparameters on the tuning rows (in place).

        Parameters
        ----------
        proba : ndarray of shape (n_samples, n_classes)
            Tuning rows' probabilities.
        y_index : ndarray of shape (n_samples,)
            Their labels as column indices.
        confidence_level : float
            The classifier's level.
        allow_empty : bool
            The classifier's ``allow_empty``.
        rng : RandomState
            The fit's random stream.

        Returns
        -------
        self : object
            The tuned score.
        """
        return self


class LACScore(BaseClassificationScore):
    """LAC score ``1 - p(y | x)`` (string ``"lac"``).

    The least ambiguous set-valued classifier's score (Sadinle, Lei and
    Wasserman, 2019): the sets are the labels whose probability is at least
    ``1 - threshold``, the smallest sets on average for marginal coverage.

    See Also
    --------
    SplitConformalClassifier : Takes a score object as ``conformity_score``.
    lac_scores : The same score as a function.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_iclr26.conformal import LACScore
    >>> LACScore().score_matrix(np.array([[0.7, 0.3]]))
    array([[0.3, 0.7]])
    """

    def score_matrix(self, proba, uniforms=None):
        """The LAC scores.

        Parameters
        ----------
        proba : ndarray of shape (n_samples, n_classes)
            Validated class probabilities.
        uniforms : None
            Unused.

        Returns
        -------
        scores : ndarray of shape (n_samples, n_classes)
            ``1 - proba``.
        """
        return 1.0 - proba

    def sets(self, proba, threshold, uniforms=None):
        """LAC sets, one comparison per cell (see :func:`lac_sets`).

        Parameters
        ----------
        proba : ndarray of shape (n_samples, n_classes)
            Validated class probabilities.
        threshold : float or ndarray
            The threshold(s).
        uniforms : None
            Unused.

        Returns
        -------
        sets : ndarray of bool, shape (n_samples, n_classes)
            Membership of every label.
        """
        if np.ndim(threshold) == 0:
            return _lac_sets(proba, threshold)
        return super().sets(proba, threshold, uniforms)


class APSScore(BaseClassificationScore):
    """APS score: the sorted mass up to the label (string ``"aps"``).

    Calibrates on the randomized score (MAPIE's rule); ``randomized=False``
    sets run to and including the label at which the mass crosses the
    threshold (MAPIE's ``include_last_label=True``).

    Parameters
    ----------
    randomized : bool, default=False
        Randomized sets (one uniform draw per row).

    Attributes
    ----------
    calibration_randomized : bool
        ``True``: the calibration scores take the row-aligned draws.

    See Also
    --------
    SplitConformalClassifier : Takes a score object as ``conformity_score``.
    aps_scores : The same score as a function.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_iclr26.conformal import APSScore
    >>> APSScore().score_matrix(np.array([[0.5, 0.2, 0.3]]))
    array([[0. , 0.8, 0.5]])
    """

    _parameter_constraints: dict = {"randomized": ["boolean"]}
    calibration_randomized = True

    def __init__(self, randomized=False):
        self.randomized = randomized

    def score_matrix(self, proba, uniforms=None):
        """The (randomized) APS scores; no draws means ``u = 1``.

        Parameters
        ----------
        proba : ndarray of shape (n_samples, n_classes)
            Validated class probabilities.
        uniforms : ndarray of shape (n_samples, 1), default=None
            Row-aligned uniform draws; ``None``: the mass ranked strictly
            before the label.

        Returns
        -------
        scores : ndarray of shape (n_samples, n_classes)
            The scores.
        """
        return _cumulative_mass(proba, 1.0 if uniforms is None else uniforms)[0]


class RAPSScore(APSScore):
    """RAPS score: APS plus ``lam_reg * max(0, rank - k_reg)`` (string ``"raps"``).

    Parameters
    ----------
    lam_reg : float or "auto", default=0.01
        Weight of the rank penalty; ``"auto"`` tunes it (see
        ``SplitConformalClassifier``'s ``score_params``).
    k_reg : int or "auto", default=1
        Ranks up to ``k_reg`` are not penalised; ``"auto"`` tunes it.
    randomized : bool, default=False
        Randomized sets.
    tuning_size : float, default=0.2
        Fraction of the rows that tunes an ``"auto"`` parameter.

    Attributes
    ----------
    lam_reg_ : float
        The tuned ``lam_reg`` (after :meth:`tune`, with ``"auto"``).
    k_reg_ : int
        The tuned ``k_reg`` (after :meth:`tune`, with ``"auto"``).

    See Also
    --------
    SplitConformalClassifier : Takes a score object as ``conformity_score``.
    raps_scores : The same score as a function.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_iclr26.conformal import RAPSScore
    >>> RAPSScore(lam_reg=0.1).score_matrix(np.array([[0.5, 0.2, 0.3]]))
    array([[0. , 1. , 0.6]])
    """

    _parameter_constraints: dict = {
        "lam_reg": [StrOptions({"auto"}), Interval(Real, 0, None, closed="left")],
        "k_reg": [StrOptions({"auto"}), Interval(Integral, 0, None, closed="left")],
        "randomized": ["boolean"],
        "tuning_size": [Interval(Real, 0, 1, closed="neither")],
    }

    def __init__(self, lam_reg=0.01, k_reg=1, randomized=False, tuning_size=0.2):
        self.lam_reg = lam_reg
        self.k_reg = k_reg
        self.randomized = randomized
        self.tuning_size = tuning_size

    def _values(self):
        lam = getattr(self, "lam_reg_", self.lam_reg)
        k = getattr(self, "k_reg_", self.k_reg)
        return (0.01 if lam == "auto" else lam), (1 if k == "auto" else k)

    def score_matrix(self, proba, uniforms=None):
        """The RAPS scores at the (tuned) ``lam_reg_`` and ``k_reg_``.

        Parameters
        ----------
        proba : ndarray of shape (n_samples, n_classes)
            Validated class probabilities.
        uniforms : ndarray of shape (n_samples, 1), default=None
            Row-aligned uniform draws; ``None``: ``u = 1``.

        Returns
        -------
        scores : ndarray of shape (n_samples, n_classes)
            The scores.
        """
        lam, k = self._values()
        return _raps_with_uniforms(
            proba, lam, k, uniforms=1.0 if uniforms is None else uniforms
        )

    def needs_tuning(self):
        """Whether ``lam_reg`` or ``k_reg`` is ``"auto"``.

        Returns
        -------
        needs : bool
            Whether :meth:`tune` runs.
        """
        return self.lam_reg == "auto" or self.k_reg == "auto"

    def tune(self, proba, y_index, *, confidence_level, allow_empty, rng):
        """``k_reg_`` and ``lam_reg_`` as MAPIE's RAPS (Angelopoulos et al.).

        Parameters
        ----------
        proba : ndarray of shape (n_samples, n_classes)
            Tuning rows' probabilities.
        y_index : ndarray of shape (n_samples,)
            Their labels as column indices.
        confidence_level : float
            The classifier's level.
        allow_empty : bool
            Unused (the tuning sets always hold the top label).
        rng : RandomState
            Unused.

        Returns
        -------
        self : object
            The tuned score.
        """
        from sklearn_iclr26.conformal._split_classifier import _tune_raps

        self.lam_reg_, self.k_reg_ = _tune_raps(
            proba, y_index, confidence_level, self.lam_reg, self.k_reg
        )
        return self


class MarginScore(BaseClassificationScore):
    """Margin score ``max_{y' != y} p(y' | x) - p(y | x)`` (string ``"margin"``).

    Known to favour singletons over a small average size (Aleksandrova and
    Chertov, 2021): a label enters when it is within ``threshold`` of its
    best competitor.

    See Also
    --------
    SplitConformalClassifier : Takes a score object as ``conformity_score``.
    margin_scores : The same score as a function.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_iclr26.conformal import MarginScore
    >>> MarginScore().score_matrix(np.array([[0.5, 0.2, 0.3]]))
    array([[-0.2,  0.3,  0.2]])
    """

    def score_matrix(self, proba, uniforms=None):
        """The margin scores.

        Parameters
        ----------
        proba : ndarray of shape (n_samples, n_classes)
            Validated class probabilities.
        uniforms : None
            Unused.

        Returns
        -------
        scores : ndarray of shape (n_samples, n_classes)
            The scores.
        """
        return margin_scores(proba)


class TopKScore(BaseClassificationScore):
    """Top-k score: the label's 0-based rank (string ``"top_k"``, MAPIE's).

    Every set holds the ``k + 1`` most probable labels, ``k`` the conformal
    quantile of the true labels' ranks: non-adaptive sets of one size, the
    baseline of RAPS (Angelopoulos et al., 2021).

    See Also
    --------
    SplitConformalClassifier : Takes a score object as ``conformity_score``.
    top_k_scores : The same score as a function.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_iclr26.conformal import TopKScore
    >>> TopKScore().score_matrix(np.array([[0.5, 0.2, 0.3]]))
    array([[0., 2., 1.]])
    """

    def score_matrix(self, proba, uniforms=None):
        """The ranks.

        Parameters
        ----------
        proba : ndarray of shape (n_samples, n_classes)
            Validated class probabilities.
        uniforms : None
            Unused.

        Returns
        -------
        scores : ndarray of shape (n_samples, n_classes)
            Ranks as floats.
        """
        return _label_ranks(proba)


class SOCOPScore(BaseClassificationScore):
    """SOCOP's singleton-optimized score, ``lam`` fixed or tuned.

    The score of :class:`SOCOPClassifier` as an object: with it,
    ``SplitConformalClassifier(conformity_score=SOCOPScore(lam=...))`` gives
    ``SOCOPClassifier(lam=...)``'s sets (``lam="auto"``: the same tuning,
    on ``tuning_size`` of the rows, and the same sets for the same
    ``random_state``).

    Parameters
    ----------
    lam : "auto" or float >= 0, default="auto"
        Weight of the expected set size; ``"auto"`` tunes it.
    k0 : int, default=1
        Penalise sets with more than ``k0`` labels.
    lam_grid : array-like of float, default=None
        Candidates for ``lam="auto"``.
    lam_criterion : {"knee", "sscv"}, default="knee"
        How ``lam="auto"`` chooses.
    tuning_size : float, default=0.2
        Fraction of the rows that tunes ``lam="auto"``.

    Attributes
    ----------
    lam_ : float
        The tuned ``lam`` (after :meth:`tune`, with ``"auto"``).
    lam_path_ : dict or None
        The tuning curve, as ``SOCOPClassifier.lam_path_``.

    See Also
    --------
    SplitConformalClassifier : Takes a score object as ``conformity_score``.
    SOCOPClassifier : The estimator with this score built in.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_iclr26.conformal import SOCOPScore
    >>> SOCOPScore(lam=0.5).score_matrix(np.array([[0.7, 0.3]])).round(3)
    array([[0.714, 5.   ]])
    """

    _parameter_constraints: dict = {
        "lam": [StrOptions({"auto"}), Interval(Real, 0, None, closed="left")],
        "k0": [Interval(Integral, 1, None, closed="left")],
        "lam_grid": ["array-like", None],
        "lam_criterion": [StrOptions({"knee", "sscv"})],
        "tuning_size": [Interval(Real, 0, 1, closed="neither")],
    }

    def __init__(
        self, lam="auto", k0=1, lam_grid=None, lam_criterion="knee", tuning_size=0.2
    ):
        self.lam = lam
        self.k0 = k0
        self.lam_grid = lam_grid
        self.lam_criterion = lam_criterion
        self.tuning_size = tuning_size

    def _lam(self):
        return float(getattr(self, "lam_", self.lam if self.lam != "auto" else 0.1))

    def score_matrix(self, proba, uniforms=None):
        """The SOCOP scores at the (tuned) ``lam_``.

        Parameters
        ----------
        proba : ndarray of shape (n_samples, n_classes)
            Validated class probabilities.
        uniforms : None
            Unused.

        Returns
        -------
        scores : ndarray of shape (n_samples, n_classes)
            The scores.
        """
        return socop_scores(proba, lam=self._lam(), k0=self.k0)

    def sets(self, proba, threshold, uniforms=None):
        """SOCOP sets without the score matrix where possible.

        Parameters
        ----------
        proba : ndarray of shape (n_samples, n_classes)
            Validated class probabilities.
        threshold : float or ndarray
            The threshold(s).
        uniforms : None
            Unused.

        Returns
        -------
        sets : ndarray of bool, shape (n_samples, n_classes)
            Membership of every label.
        """
        if np.ndim(threshold) == 0 and self.k0 == 1:
            return _socop_sets(proba, self._lam(), float(threshold))
        if np.ndim(threshold) == 0:
            return socop_sets(proba, lam=self._lam(), quantile=threshold, k0=self.k0)
        return super().sets(proba, threshold, uniforms)

    def needs_tuning(self):
        """Whether ``lam`` is ``"auto"``.

        Returns
        -------
        needs : bool
            Whether :meth:`tune` runs.
        """
        return isinstance(self.lam, str)

    def tune(self, proba, y_index, *, confidence_level, allow_empty, rng):
        """Choose ``lam_`` as :class:`SOCOPClassifier` does (``lam_path_`` too).

        Parameters
        ----------
        proba : ndarray of shape (n_samples, n_classes)
            Tuning rows' probabilities.
        y_index : ndarray of shape (n_samples,)
            Their labels as column indices.
        confidence_level : float
            The classifier's level.
        allow_empty : bool
            The classifier's ``allow_empty``.
        rng : RandomState
            The fit's random stream (the tuning's two halves).

        Returns
        -------
        self : object
            The tuned score.
        """
        from sklearn_iclr26.conformal._socop import _tune_lam

        self.lam_, self.lam_path_ = _tune_lam(
            proba,
            y_index,
            rng,
            confidence_level=confidence_level,
            allow_empty=allow_empty,
            k0=self.k0,
            lam_grid=self.lam_grid,
            lam_criterion=self.lam_criterion,
        )
        return self
