"""Split-conformal classification machinery shared by the conformal classifiers."""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import math
import warnings
from abc import ABCMeta, abstractmethod
from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin, MetaEstimatorMixin, clone
from sklearn.frozen import FrozenEstimator
from sklearn.utils import column_or_1d, get_tags
from sklearn.utils.metadata_routing import (
    MetadataRouter,
    MethodMapping,
    process_routing,
)
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import (
    check_consistent_length,
    check_is_fitted,
    check_random_state,
)

from sklearn_iclr26.conformal._blockwise import (
    calibrate_classifier_blocks,
    predict_blocks,
)
from sklearn_iclr26.conformal._conformity_scores import conformal_quantile
from sklearn_iclr26.conformal._frozen import frozen_fitted
from sklearn_iclr26.conformal._noisy_calibration import (
    ConservativeDemixedCDF,
    DemixedCDF,
    demixing_weights,
    finite_sample_margin,
    is_identity,
    noise_transition_matrices,
)
from sklearn_iclr26.conformal._row_uniforms import row_uniforms
from sklearn_iclr26.conformal._shift_calibration import (
    SHIFT_CONSTRAINTS,
    ShiftClassifierMixin,
    _check_shift_params,
    _check_target,
)
from sklearn_iclr26.metrics._set_metrics import _label_indices
from sklearn_iclr26.utils._atomic import atomic_fit, scoped_params
from sklearn_iclr26.utils._batching import batch_slices
from sklearn_iclr26.utils._blockwise import is_dask_collection
from sklearn_iclr26.utils._random import seed_from_random_state, set_child_random_state
from sklearn_iclr26.utils._sklearn_compat import (
    HasMethods,
    Interval,
    StrOptions,
    _check_feature_names,
    _check_method_params,
    _check_n_features,
    _fit_context,
    _num_samples,
    _routing_enabled,
    _safe_indexing,
    align_sparse_interface,
)
from sklearn_iclr26.utils._split import split_indices
from sklearn_iclr26.utils._validation import (
    calibration_size_ok,
    check_at_least_two_classes,
    check_confidence_level,
    check_has_methods,
    check_probabilities,
)
from sklearn_iclr26.utils._verbose import log_progress
from sklearn_iclr26.utils._warnings import warn_user


def _default_classifier():
    """A scaled logistic regression: converges on raw numeric features."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    return make_pipeline(StandardScaler(), LogisticRegression(max_iter=1000))


def _fill_empty(sets, proba):
    """Add the most probable label to every empty set, in place."""
    empty = ~sets.any(axis=1)
    if empty.any():
        rows = np.flatnonzero(empty)
        sets[rows, np.argmax(proba[rows], axis=1)] = True
    return sets


def _levels(confidence_level):
    """``(levels, multi)``: the checked level(s) and whether a sequence came.

    ``None`` stays ``None`` (the fitted level) in ``levels``.
    """
    if confidence_level is None:
        return [None], False
    if isinstance(confidence_level, (str, bytes)):
        check_confidence_level(confidence_level)
    if np.ndim(confidence_level) == 0:
        return [check_confidence_level(confidence_level)], False
    values = list(np.asarray(confidence_level, dtype=object).ravel())
    if len(values) == 0:
        raise ValueError("confidence_level is an empty sequence.")
    return [check_confidence_level(v) for v in values], True


def _p_values(sorted_scores, scores, tau=None):
    """Conformal p-values of ``scores`` against one sorted calibration set.

    Unsmoothed: ``(1 + #{i : s_i >= s}) / (n + 1)``; smoothed with the
    uniform draws ``tau``: ``(#{i : s_i > s} + tau (#{i : s_i = s} + 1)) /
    (n + 1)``.
    """
    n = sorted_scores.shape[0]
    at_least = n - np.searchsorted(sorted_scores, scores, side="left")
    if tau is None:
        return (at_least + 1.0) / (n + 1.0)
    above = n - np.searchsorted(sorted_scores, scores, side="right")
    return (above + tau * (at_least - above + 1.0)) / (n + 1.0)


def _csr_from_batches(indices, counts, n_samples, n_classes):
    indptr = np.zeros(n_samples + 1, dtype=np.int64)
    if counts:
        np.cumsum(np.concatenate(counts), out=indptr[1:])
    col = np.concatenate(indices) if indices else np.zeros(0, dtype=np.int32)
    if indptr[-1] < 2**31 - 1:
        indptr = indptr.astype(np.int32)
    data = np.ones(col.shape[0], dtype=bool)
    sets = sp.csr_array((data, col, indptr), shape=(n_samples, n_classes))
    # csr_matrix or csr_array, as scikit-learn's sparse_interface says
    return align_sparse_interface(sets)


def _check_output(output):
    if output not in ("dense", "sparse"):
        raise ValueError(f'output must be "dense" or "sparse", got {output!r}.')


def _indexable(X):
    """``X`` in a form whose rows safe indexing can take, converted only if not.

    DataFrames, ndarrays, lists and CSR/CSC matrices pass untouched; other
    sparse formats become CSR, other array-likes ndarrays.
    """
    if sp.issparse(X):
        return X if X.format in ("csr", "csc") else X.tocsr()
    if not hasattr(X, "__getitem__"):
        return np.asarray(X)
    return X


def _reraise_overflow(exc, X, estimator):
    """Name overflow when the inner estimator reports NaN/inf that X lacks.

    A finite but huge ``X`` (e.g. 1e300) overflows inside the inner
    estimator (a ``StandardScaler``'s variance), whose own check then reports
    "Input X contains NaN" about its intermediate result. Raises a clearer
    error in that case; returns (the caller re-raises ``exc``) otherwise.
    """
    message = str(exc)
    if "NaN" not in message and "infinity" not in message:
        return
    try:
        values = X.to_numpy() if hasattr(X, "to_numpy") else X
        values = values.data if sp.issparse(values) else np.asarray(values)
        if values.dtype.kind not in "biuf" or not np.all(np.isfinite(values)):
            return
        largest = float(np.max(np.abs(values), initial=0.0))
    except (TypeError, ValueError):
        return
    raise ValueError(
        f"X is finite, but the inner estimator ({type(estimator).__name__}) "
        f"reported {message!r}: its arithmetic overflowed float64 on values "
        f"as large as {largest:.3g} (a scaler's variance, a product). Rescale "
        "the features (e.g. a log transform, or sklearn.preprocessing."
        "RobustScaler / QuantileTransformer first in the pipeline) or drop the "
        "extreme rows."
    ) from exc


def _check_2d(X, estimator):
    """The one input check a meta-estimator makes itself: 2-D rows."""
    shape = getattr(X, "shape", None)
    if shape is not None and len(shape) != 2:
        raise ValueError(
            f"Expected a 2D array for X, got {len(shape)}D of shape {shape} in "
            f"{type(estimator).__name__}. Reshape your data either using "
            "array.reshape(-1, 1) if your data has a single feature or "
            "array.reshape(1, -1) if it contains a single sample."
        )


#: numpydoc text of the ``conditional`` and label-noise parameters and of the
#: calibration attributes, shared by split conformal and SOCOP
CONDITIONAL_DOC = """conditional : {None, "class", "bins"}, default=None
    Mondrian (group-conditional) calibration. ``None``: one threshold,
    marginal coverage ``P(Y in C(X)) >= confidence_level``. ``"class"``:
    one threshold per class, from the calibration rows of that class, and
    label ``classes_[j]`` enters a set when its score is at most
    ``threshold_[j]``: coverage given the true class, ``P(Y in C(X) | Y =
    y) >= confidence_level`` for every ``y``. ``"bins"``: one threshold
    per bin of the ``bins`` metadata (any labels, e.g. a group column,
    passed as ``fit(X, y, bins=...)`` and ``predict_set(X, bins=...)``;
    with metadata routing, ``set_fit_request(bins=True)``): coverage given
    the bin. A class or bin too small for the level warns and gets the
    trivial answer (that class always in the set; every label for that
    bin), never an error; a bin unseen at calibration raises at predict."""
LABEL_NOISE_DOC = """\
label_noise : None, float or array-like of shape (n_classes, n_classes) \
        or (n_matrices, n_classes, n_classes), default=None
    The noise model of the **calibration** labels, as data (known or
    estimated elsewhere, e.g. ``ClassConditionalNoiseCorrector(...).fit(X,
    y).transition_matrix_`` on held-out rows). ``None``: the labels are
    taken as clean. A float ``rate``: symmetric noise, each label flipped
    with probability ``rate`` to a uniformly random other class. A matrix
    ``T`` with ``T[i, j] = P(observed classes_[j] | true classes_[i])``
    (rows summing to 1, invertible): class-conditional noise. A stack of
    ``B`` such matrices, shape ``(B, n_classes, n_classes)``: plausible
    values of an **estimated** ``T``, e.g. its bootstrap replicates
    ``ClassConditionalNoiseCorrector(...).fit(X,
    y).transition_matrix_samples()``; each gives its threshold(s) and the
    largest is used, per class with ``conditional="class"`` (the sets are
    the union of the matrices' sets; ``label_noise_thresholds_`` keeps
    each one's). ``B`` equal matrices give that matrix's sets bit for bit.
    Not combined with ``shift``. The
    threshold is then computed from the **de-mixed** calibration CDF
    ``F(t) = (1/n) sum_i sum_k W[y~_i, k] 1{s(X_i, k) <= t}``, ``W =
    T^{-1}``, an unbiased estimate of the clean-label score CDF (Sesia,
    Wang and Tong, 2023, the label-noise correction ``F_hat + Delta_hat``
    of their adaptive calibration; marginal form for ``conditional=None``
    and ``"bins"``, label-conditional form for ``"class"``, whose sample
    size is the estimated clean class count ``sum_i W[y~_i, k]``). It
    assumes the noisy label independent of ``X`` given the true label,
    and ``T`` right. It targets coverage of the **clean** labels,
    ``P(Y in C(X)) >= confidence_level``, asymptotically (the weighted
    CDF converges to the clean one as the calibration set grows): the
    paper's finite-sample margin ``delta``, which makes the bound hold in
    finite samples at the cost of (at digits' scale) trivial sets, is
    applied only with ``label_noise_correction="finite_sample"``.
    ``label_noise=0`` or the identity matrix gives the plain
    estimator, bit for bit. Works with every score
    (the correction never looks inside it); ``predict_p`` gives the
    p-values of the de-mixed CDF (``smoothed=True`` is not defined).
    A wrong ``T`` moves the coverage: a single estimated matrix carries
    its error into the threshold unnoticed (the classifier cannot tell it
    from a known one). Measured on ``hpc_data`` (4 classes, 6-51 %, 20 %
    noise, 1,083 calibration rows, 100 splits, level 0.9): the documented
    recipe's ``T_hat`` (off by 0.24 in its largest entry) gave clean
    coverage 0.868 (22 % of splits below 0.85); its 20 bootstrap
    replicates as ``(B, K, K)`` gave 0.898 with sets of 1.54 labels, the
    true ``T``'s 0.899 / 1.54. Not a guarantee: the replicates carry the
    estimate's sampling spread, not its bias, and on KEEL marketing (9
    classes) they gave 0.883 where the point estimate gave 0.873 and the
    true ``T`` 0.900 (see the user guide).
label_noise_correction : {"auto", "plugin", "finite_sample"}, \
        default="auto"
    With ``label_noise``: ``"plugin"`` thresholds the de-mixed CDF by the
    split-conformal rule (asymptotic guarantee, reduces to the plain
    estimator for no noise; centred, but more dispersed than plain split
    conformal: with 178 calibration rows, 4 classes and 20 % noise, 13 %
    of calibrations covered below 0.85 at 0.9, against 3.4 % for clean
    labels); ``"finite_sample"`` by ``F(t) >= confidence_level + delta``.
    Marginally (and per bin) ``delta`` is the paper's margin, a
    Kolmogorov-Smirnov constant plus a term in ``|T^{-1}|`` over the
    square root of the smallest noisy class count (see
    ``finite_sample_margin`` in ``conformal/_noisy_calibration.py``), for
    the finite-sample bound: conservative, with 450 calibration rows, 10
    classes and 20 % symmetric noise it is 0.20 and the sets hold every
    label (a warning says so); without noise it is ``delta = c_n``, not
    the plain estimator. Per class (``conditional="class"``) ``delta_k =
    sum_l |V[k, l]| c_{n_l}``, from class ``k``'s own row of ``V =
    M^{-1}`` and each noisy class's own count: the expected deviation
    of class ``k``'s de-mixed CDF, which makes its expected clean
    coverage at least the level. ``"auto"``: ``"finite_sample"`` for
    ``conditional="class"`` with a noise model other than the identity
    (the per-class plug-in under-covers rare classes: a 6 % class at
    0.88 on average, 30 % of calibrations below 0.85; ``"plugin"``
    there warns where a class's ``delta_k`` exceeds 0.05), ``"plugin"``
    otherwise. With a margin, ``predict_p`` is ``1 + delta - F(s-)`` (clipped),
    the p-value that reproduces the sets."""
CV_DOC = """cv : None, int or cross-validation splitter, default=None
    ``None``: split conformal (``calibration_size`` of the rows
    calibrate). An int ``K`` (a shuffled ``StratifiedKFold`` seeded by
    ``random_state``) or a splitter whose test folds partition the rows:
    cross-conformal prediction (Vovk, 2015). One clone of ``estimator``
    is fitted per fold and scores its held-out rows, so every row is a
    calibration row (``n_calibration_samples_`` is ``n_samples``);
    ``estimator_``, fitted on every row, serves :meth:`predict` and
    :meth:`predict_proba`. Not combined with ``label_noise``,
    ``conditional``, ``shift``, a ``FrozenEstimator`` or
    :meth:`calibrate` (``ValueError`` / ``TypeError``): those stay split
    conformal.
agg_scores : {"crossval", "mean"}, default="crossval"
    How the fold models score a test row (only with ``cv``), as MAPIE's
    ``CrossConformalClassifier.predict_set(agg_scores=...)``.
    ``"crossval"``: Vovk's cross-conformal p-value ``p(x, y) = (1 + #{i :
    s_i >= S_k(i)(x, y)}) / (n + 1)``, each row's out-of-fold score
    ``s_i`` compared with the test score ``S_k(i)`` of the model of its
    own fold ``k(i)``, and the set ``{y : p(x, y) > 1 - confidence_level}``
    (Romano, Sesia and Candès 2020, Algorithm 2). Its coverage is at least
    ``1 - 2 alpha`` (``alpha = 1 - confidence_level``) minus a term that
    vanishes as the folds grow (Barber et al., 2021; Vovk 2015's bound for
    ``K`` folds); in practice it is about ``1 - alpha`` (see the user
    guide's measurements). ``"mean"``: the fold models' probabilities are
    averaged and compared with the split-conformal quantile of the
    out-of-fold scores (``threshold_``), MAPIE's default; a heuristic with
    no finite-sample guarantee, usually close to ``1 - alpha``. MAPIE's
    ``"crossval"`` rule for LAC includes a label when ``#{i : s_i >=
    S_k(i)(x, y)} >= alpha (n - 1)``, at most one count stricter than
    Vovk's ``> alpha (n + 1) - 1``: the sets are equal where the two
    roundings agree (e.g. ``n = 100`` or ``300`` at 0.9). With either,
    :meth:`conformity_scores` gives the scores of the fold models' mean
    probabilities and ``threshold_`` the split-conformal quantile of the
    out-of-fold scores (what ``"mean"`` compares them with)."""
ATTRIBUTES_DOC = """threshold_ : float or ndarray of shape (n_classes,) or (n_bins,)
    The conformal threshold at ``confidence_level``; ``inf`` when the
    calibration set is too small for it (then every set is the full label
    set, after a warning). With ``conditional="class"`` one per class,
    indexed like ``classes_``; with ``conditional="bins"`` one per bin,
    indexed like ``bins_`` (``inf`` for a class or bin too small).
label_noise_matrix_ : ndarray of shape (n_classes, n_classes) or None
    The transition matrix ``label_noise`` stands for (``None`` without
    it; the entrywise mean of several matrices). ``calibration_scores_``
    and ``calibration_bin_scores_`` stay the scores of the observed
    (noisy) labels.
label_noise_thresholds_ : ndarray of shape (n_matrices,) or \
        (n_matrices, n_groups), or None
    With ``label_noise`` of shape ``(n_matrices, n_classes, n_classes)``:
    the threshold each matrix gives at ``confidence_level`` (one column
    per class or bin with ``conditional``); ``threshold_`` is their
    maximum (per column), and their range is the spread the matrices'
    uncertainty puts on it (logged with ``verbose``). ``None`` otherwise.
bins_ : ndarray of shape (n_bins,)
    The sorted bins seen at calibration (``conditional="bins"`` only).
calibration_scores_ : ndarray of shape (`n_calibration_samples_`,)
    Sorted scores of the true labels of all the calibration points.
calibration_bin_scores_ : list of ndarray
    With ``conditional``: the sorted calibration scores of each class
    (indexed like ``classes_``) or bin (like ``bins_``).
n_calibration_per_bin_ : ndarray of shape (n_classes,) or (n_bins,)
    With ``conditional``: the number of calibration points of each class
    or bin.
n_calibration_samples_ : int
    Number of calibration points.
estimators_ : list of classifiers
    With ``cv``: the fold models, in the splitter's order.
oof_scores_ : ndarray of shape (n_samples,)
    With ``cv``: the out-of-fold score of every row's true label, in row
    order.
fold_of_ : ndarray of shape (n_samples,)
    With ``cv``: the fold holding each row out.
n_features_in_ : int
    Number of features seen during fit.
feature_names_in_ : ndarray of shape (`n_features_in_`,)
    Names of features seen during fit. Defined only when `X` has feature
    names that are all strings."""


class BaseConformalClassifier(
    ShiftClassifierMixin,
    MetaEstimatorMixin,
    ClassifierMixin,
    BaseEstimator,
    metaclass=ABCMeta,
):
    """Split-conformal prediction sets around any probabilistic classifier.

    Subclasses define the conformity score through the abstract hook
    ``_score_matrix`` and may tune score hyperparameters on a tuning split
    (``_needs_tuning``, ``_tuning_fraction`` and ``_tune``) or compute sets
    without the score matrix (``_sets``). ``fit`` splits the data into a
    training part (omitted when the estimator is a
    :class:`~sklearn.frozen.FrozenEstimator`), an optional tuning part and a
    calibration part. ``X`` reaches the inner estimator untouched (rows are
    indexed with scikit-learn's safe indexing), so a ``Pipeline`` with a
    name-based ``ColumnTransformer`` on a raw DataFrame can sit inside.

    Mondrian (``conditional="class"`` or ``"bins"``): the calibration rows
    are grouped (by true label, or by the ``bins`` metadata given to ``fit``)
    and each group gets its own threshold from its own scores, with the
    small-calibration policy applied per group.
    """

    _parameter_constraints: dict = {
        "estimator": [HasMethods(["fit", "predict_proba"]), None],
        "confidence_level": [Interval(Real, 0, 1, closed="neither")],
        "calibration_size": [Interval(Real, 0, 1, closed="neither")],
        "allow_empty": ["boolean"],
        "conditional": [StrOptions({"class", "bins"}), None],
        "label_noise": [Interval(Real, 0, 1, closed="left"), "array-like", None],
        "label_noise_correction": [StrOptions({"auto", "plugin", "finite_sample"})],
        **SHIFT_CONSTRAINTS,
        "cv": [
            None,
            Interval(Integral, 2, None, closed="left"),
            HasMethods(["split", "get_n_splits"]),
        ],
        "agg_scores": [StrOptions({"crossval", "mean"})],
        "verbose": ["verbose"],
        "random_state": ["random_state"],
    }

    # -- hooks -------------------------------------------------------------------
    @abstractmethod
    def _score_matrix(self, proba, uniforms=None):
        """Scores of every label, shape of ``proba``.

        ``uniforms`` (shape (n_samples, 1)) are the row-aligned uniform draws
        of randomized scores (``None`` for the others, see
        ``_is_randomized``).
        """

    def _is_randomized(self):
        """Whether ``_score_matrix`` uses uniform draws."""
        return False

    def _needs_tuning(self):
        return False

    def _tuning_fraction(self):
        return 0.0

    def _tune(self, proba, y_index, rng):
        """Choose score hyperparameters on the tuning split (default: none)."""

    def _sets(self, proba, threshold, uniforms=None):
        """Prediction sets ``scores <= threshold`` (subclasses may shortcut)."""
        return self._score_matrix(proba, uniforms) <= threshold

    def _row_bytes(self):
        """Working bytes per row of one prediction batch.

        The inner ``predict_proba`` output, one float working copy and the
        boolean set row, with room for the inner model's own work.
        """
        return 8 * 4 * len(self.classes_) + 64

    # -- estimator plumbing ------------------------------------------------------
    def _get_estimator(self):
        if self.estimator is not None:
            return self.estimator
        default = _default_classifier()
        config = getattr(self, "_sklearn_output_config", None)
        if config and "transform" in config:
            default.set_output(transform=config["transform"])
        return default

    def get_metadata_routing(self):
        """Route ``fit`` metadata (e.g. ``sample_weight``) to the estimator.

        Returns
        -------
        routing : MetadataRouter
            The routing information.
        """
        return (
            MetadataRouter(owner=self)
            .add_self_request(self)
            .add(
                estimator=self._get_estimator(),
                method_mapping=MethodMapping().add(caller="fit", callee="fit"),
            )
        )

    def _check_fit_y(self, X, y):
        """Validate what ``fit`` reads itself: the labels and the row count."""
        if y is None:
            raise ValueError(
                f"{type(self).__name__} requires y to be passed, but the target y "
                "is None."
            )
        _check_2d(X, self)
        y = column_or_1d(y, warn=True)
        check_consistent_length(X, y)
        check_classification_targets(y)
        check_at_least_two_classes(self, y)
        return y

    @atomic_fit
    def _fit_conformal(self, X, y, bins=None, X_target=None, **fit_params):
        """Fit and calibrate; all or nothing (the family's ``fit``)."""
        self._fit_work(X, y, fit_params, bins, X_target=X_target)
        return self

    def _init_fit_state(self):
        """Fitted attributes a subclass sets before the split (default: none)."""

    @atomic_fit
    @_fit_context(prefer_skip_nested_validation=False)
    def calibrate(self, X, y, bins=None, X_target=None):
        """Calibrate a model fitted elsewhere on every row of ``(X, y)``.

        ``estimator`` (already fitted) is used as it is, as
        ``fit(X, y)`` with ``estimator=FrozenEstimator(estimator)`` would
        (MAPIE's ``conformalize``): nothing is refit, and every row is
        calibration data (with SOCOP's ``lam="auto"``, tuning and
        calibration data in the ratio of ``tuning_size`` to
        ``calibration_size``). The rows must not have been used to train the
        model. Like ``fit``, it changes nothing if it fails.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Calibration data, in the form the estimator takes.
        y : array-like of shape (n_samples,)
            Labels.
        bins : array-like of shape (n_samples,), default=None
            Mondrian bin of every row; required with ``conditional="bins"``
            and rejected otherwise.
        X_target : array-like of shape (n_target, n_features), default=None
            Unlabeled rows of the target population (see ``shift``).

        Returns
        -------
        self : object
            The calibrated estimator.
        """
        frozen = frozen_fitted(self.estimator, self)
        self._check_calibrate_params()
        scoped_params(self, estimator=frozen)
        self._fit_work(X, y, {}, bins, X_target=X_target)
        return self

    def _check_calibrate_params(self):
        """Checks ``fit`` makes before ``_fit_conformal`` (default: none)."""

    def _check_bins_arg(self, bins, n_samples, where):
        """``bins`` as a 1-D array of ``n_samples`` (``None`` where unused)."""
        if self.conditional != "bins":
            if bins is not None:
                raise ValueError(
                    f"{type(self).__name__}.{where} got bins, which only "
                    f'conditional="bins" uses (conditional={self.conditional!r}).'
                    ' Set conditional="bins" or drop bins.'
                )
            return None
        if bins is None:
            raise ValueError(
                f'{type(self).__name__} with conditional="bins" needs the Mondrian '
                f"bin of every row: call {where}(X, ..., bins=...)."
            )
        bins = column_or_1d(bins)
        if bins.shape[0] != n_samples:
            raise ValueError(
                f"bins has {bins.shape[0]} entries for {n_samples} samples in {where}."
            )
        if bins.dtype.kind == "f" and np.isnan(bins).any():
            raise ValueError("bins contains NaN.")
        return bins

    def _fit_work(self, X, y, fit_params, bins=None, X_target=None):
        if is_dask_collection(X):  # scores per block on the workers
            return calibrate_classifier_blocks(self, X, y, fit_params, bins, X_target)
        self._init_fit_state()
        _check_shift_params(self)
        estimator = self._get_estimator()
        check_has_methods(estimator, ["predict_proba"])
        X = _indexable(X)
        y = self._check_fit_y(X, y)
        bins = self._check_bins_arg(bins, _num_samples(X), "fit")
        # recorded without converting X: the inner estimator sees it untouched
        _check_feature_names(self, X, reset=True)
        _check_n_features(self, X, reset=True)
        X_target = _check_target(self, X, X_target)
        prefit = isinstance(estimator, FrozenEstimator)
        if prefit and fit_params:
            raise TypeError(
                f"{type(self).__name__}.fit got {sorted(fit_params)}, which "
                "nothing would use: the estimator is a FrozenEstimator, never "
                "refit, and the calibration does not take per-sample "
                "parameters. Remove them (or fit the model with them before "
                "freezing it)."
            )
        if _routing_enabled():
            fit_params = process_routing(self, "fit", **fit_params).estimator.fit
        level = float(self.confidence_level)
        if self.shift is not None and _is_matrix_samples(self.label_noise):
            raise ValueError(
                "label_noise as plausible transition matrices (a 3-D array) is "
                "not combined with shift: pass one matrix (e.g. their mean)."
            )

        rng = check_random_state(self.random_state)
        self._seed = seed_from_random_state(rng)
        if self._cross():
            self._check_cross(prefit, bins, X_target)
            self._fit_cross(X, y, fit_params, estimator, rng, level)
            return
        tuning = self._tuning_fraction() if self._needs_tuning() else 0.0
        calibration = float(self.calibration_size)
        n_samples = _num_samples(X)
        if prefit:
            fractions = [tuning / (tuning + calibration)] if tuning else []
        else:
            if tuning + calibration >= 1:
                raise ValueError(
                    f"calibration_size + tuning_size must be < 1 so that some data "
                    f"is left for training, got {calibration} + {tuning}."
                )
            fractions = [1 - tuning - calibration] + ([tuning] if tuning else [])
        parts = split_indices(n_samples, fractions, y=y, random_state=rng)
        if prefit:
            self.estimator_ = estimator
        else:
            train = parts.pop(0)
            n_labels = np.unique(y).shape[0]
            if train.shape[0] < 2 * n_labels:
                warn_user(
                    f"The training part has {train.shape[0]} samples for "
                    f"{n_labels} classes (calibration_size={calibration}"
                    + (f", tuning_size={tuning}" if tuning else "")
                    + "): too few to fit the estimator well. Use more data or a "
                    "smaller calibration_size."
                )
            params = _check_method_params(X, params=fit_params, indices=train)
            log_progress(
                self,
                f"fitting {type(estimator).__name__} on {train.shape[0]} samples",
            )
            self.estimator_ = set_child_random_state(clone(estimator), rng)
            X_train = _safe_indexing(X, train)
            try:
                self.estimator_.fit(X_train, y[train], **params)
            except ValueError as exc:
                _reraise_overflow(exc, X_train, estimator)
                raise
        self.classes_ = np.asarray(self.estimator_.classes_)
        tune_index = parts[0] if tuning else None
        cal_index = parts[-1]

        for name, index in (("tuning", tune_index), ("calibration", cal_index)):
            if index is None:
                continue
            unseen = np.unique(y[index][~np.isin(y[index], self.classes_)])
            if unseen.size:
                raise ValueError(
                    f"The {name} data contains labels {unseen.tolist()} that the "
                    f"estimator never saw in training (its classes are "
                    f"{self.classes_.tolist()}). Every label must be known to the "
                    "model: use more data, a stratified split, or fit the "
                    "estimator on all labels."
                )

        if tune_index is not None:
            log_progress(self, f"tuning on {tune_index.shape[0]} samples")
            proba_tune = self._predict_proba_checked(_safe_indexing(X, tune_index))
            self._tune(proba_tune, self._label_index(y[tune_index]), rng)

        T, samples = noise_transition_matrices(self.label_noise, self.classes_.shape[0])
        self.label_noise_matrix_ = T
        self._noise_samples = samples
        self.label_noise_thresholds_ = None
        if T is None:
            cal_scores = self._true_label_scores(
                _safe_indexing(X, cal_index), y[cal_index]
            )
        else:
            cal_matrix = self._calibration_score_matrix(_safe_indexing(X, cal_index))
            cal_y = self._label_index(y[cal_index])
            cal_scores = cal_matrix[np.arange(cal_y.shape[0]), cal_y]
        self.calibration_scores_ = np.sort(cal_scores)
        self.n_calibration_samples_ = int(cal_scores.shape[0])
        self._fit_shift(
            X,
            y,
            cal_index,
            X_target,
            cal_scores,
            None if T is None else cal_matrix,
            T,
            level,
        )
        if T is not None:
            self._fit_demixed(cal_matrix, cal_y, T, bins, cal_index)
        if self.shift is not None:
            self.threshold_ = self._shift_threshold(level)
            shown = np.array2string(np.asarray(self.threshold_), precision=4)
        elif T is not None and self.conditional is None:
            self.threshold_ = self._demixed_thresholds(level)
            shown = f"{self.threshold_:.6g}"
            self._log_noise_spread()
        elif self.conditional is None:
            if calibration_size_ok(self.n_calibration_samples_, level):
                self.threshold_ = conformal_quantile(cal_scores, level)
            else:
                self.threshold_ = np.inf
            shown = f"{self.threshold_:.6g}"
        else:
            if self.conditional == "class":
                groups = self._label_index(y[cal_index])
                n_groups = self.classes_.shape[0]
            else:
                self.bins_, groups = np.unique(bins[cal_index], return_inverse=True)
                n_groups = self.bins_.shape[0]
            order = np.lexsort((cal_scores, groups))
            counts = np.bincount(groups, minlength=n_groups)
            ends = np.cumsum(counts)
            sorted_scores = cal_scores[order]
            self.calibration_bin_scores_ = [
                sorted_scores[end - count : end] for count, end in zip(counts, ends)
            ]
            self.n_calibration_per_bin_ = counts.astype(np.int64)
            self.threshold_ = (
                self._group_thresholds(level)
                if T is None
                else self._demixed_thresholds(level)
            )
            shown = np.array2string(self.threshold_, precision=4, threshold=6)
            if T is not None:
                self._log_noise_spread()
        log_progress(
            self,
            f"calibrated on {self.n_calibration_samples_} samples: "
            f"threshold_={shown} at confidence_level={level}",
        )

    # -- cross-conformal -----------------------------------------------------
    def _cross(self):
        """Whether ``cv`` asks for cross-conformal calibration."""
        return getattr(self, "cv", None) is not None

    def _crossval(self):
        return self._cross() and self.agg_scores == "crossval"

    def _check_cross(self, prefit, bins, X_target):
        """Raise for the options ``cv`` does not combine with."""
        name = f"{type(self).__name__}(cv={self.cv!r})"
        if prefit:
            raise TypeError(
                f"{name} refits the estimator on every fold, and a "
                "FrozenEstimator (or calibrate) is never refit: use cv=None "
                "with a fitted model."
            )
        unsupported = [
            (self.label_noise is not None, "label_noise"),
            (self.conditional is not None, "conditional"),
            (self.shift is not None or X_target is not None, "shift / X_target"),
            (
                self._needs_tuning(),
                (
                    'a tuned score (SOCOP\'s lam="auto", RAPS\'s "auto"), '
                    "which needs a tuning split"
                ),
            ),
        ]
        for bad, what in unsupported:
            if bad:
                raise ValueError(
                    f"{name} does not combine with {what}: cross-conformal "
                    "calibration is implemented for marginal coverage with "
                    "clean labels and a fixed score. Use cv=None (split "
                    "conformal) for that option"
                    + (", or numeric score parameters." if "tuned" in what else ".")
                )

    def _fold_proba(self, estimator, X):
        """``estimator``'s probabilities with columns aligned to ``classes_``.

        A fold whose training rows miss a class gives that class probability
        0 (MAPIE's rule).
        """
        proba = check_probabilities(
            estimator.predict_proba(X), name="estimator.predict_proba(X)"
        )
        fold_classes = np.asarray(estimator.classes_)
        if fold_classes.shape[0] == self.classes_.shape[0]:
            return proba
        full = np.zeros((proba.shape[0], self.classes_.shape[0]))
        full[:, np.searchsorted(self.classes_, fold_classes)] = proba
        return full

    def _fit_cross(self, X, y, fit_params, estimator, rng, level):
        """Cross-conformal: fold models, out-of-fold scores, a full model."""
        from sklearn.model_selection import StratifiedKFold

        n_samples = _num_samples(X)
        cv = self.cv
        if isinstance(cv, Integral):
            seed = int(rng.randint(np.iinfo(np.int32).max))
            cv = StratifiedKFold(n_splits=cv, shuffle=True, random_state=seed)
        folds = list(cv.split(X, y))
        fold_of = np.full(n_samples, -1, dtype=np.intp)
        for k, (_, test) in enumerate(folds):
            if np.any(fold_of[test] >= 0):
                raise ValueError(
                    "cv must hold out every row exactly once (a partition, e.g. "
                    "KFold or StratifiedKFold); a row is held out twice."
                )
            fold_of[test] = k
        if np.any(fold_of < 0):
            raise ValueError(
                "cv must hold out every row exactly once (a partition, e.g. KFold "
                f"or StratifiedKFold); {int(np.sum(fold_of < 0))} rows are never "
                "held out."
            )
        log_progress(
            self, f"fitting {type(estimator).__name__} on all {n_samples} samples"
        )
        self.estimator_ = set_child_random_state(clone(estimator), rng)
        try:
            self.estimator_.fit(X, y, **fit_params)
        except ValueError as exc:
            _reraise_overflow(exc, X, estimator)
            raise
        self.classes_ = np.asarray(self.estimator_.classes_)
        y_index = self._label_index(y)
        scores = np.empty(n_samples)
        self.estimators_ = []
        log_progress(self, f"cross-conformal on {len(folds)} folds")
        for train, test in folds:
            member = set_child_random_state(clone(estimator), rng)
            params = _check_method_params(X, params=fit_params, indices=train)
            member.fit(_safe_indexing(X, train), y[train], **params)
            X_test = _safe_indexing(X, test)
            proba = self._fold_proba(member, X_test)
            u = self._uniforms(X_test, calibration=True)
            matrix = self._score_matrix(proba, u)
            scores[test] = matrix[np.arange(test.shape[0]), y_index[test]]
            self.estimators_.append(member)
        self.label_noise_matrix_ = None
        self.label_noise_thresholds_ = None
        self._set_cross_scores(scores, fold_of)
        if calibration_size_ok(n_samples, level):
            self.threshold_ = conformal_quantile(scores, level)
        else:
            self.threshold_ = np.inf
        log_progress(
            self,
            f"calibrated on {n_samples} out-of-fold samples: threshold_="
            f"{self.threshold_:.6g} at confidence_level={level}",
        )

    def _set_cross_scores(self, scores, fold_of):
        """Store the out-of-fold scores (row order) and their fold sorts."""
        self.oof_scores_ = np.asarray(scores, dtype=np.float64)
        self.fold_of_ = np.asarray(fold_of, dtype=np.intp)
        self.calibration_scores_ = np.sort(self.oof_scores_)
        self.n_calibration_samples_ = int(self.oof_scores_.shape[0])
        self._fold_scores = [
            np.sort(self.oof_scores_[self.fold_of_ == k])
            for k in range(len(self.estimators_))
        ]

    def _crossval_counts(self, X):
        """``(#{i: s_i < S_k(i)(x, y)}, #{i: s_i <= S_k(i)(x, y)})`` per cell.

        ``S_k`` is fold ``k``'s score matrix of the rows ``X``; ``s_i`` the
        out-of-fold score of training row ``i``, ``k(i)`` its fold.
        """
        u = self._uniforms(X)
        less = leq = None
        for member, fold in zip(self.estimators_, self._fold_scores):
            S = self._score_matrix(self._fold_proba(member, X), u)
            lo = np.searchsorted(fold, S, side="left")
            hi = np.searchsorted(fold, S, side="right")
            less = lo if less is None else less + lo
            leq = hi if leq is None else leq + hi
        return less, leq

    def _crossval_sets(self, less, level):
        """Vovk's cross-conformal set: ``#{i: s_i < S_k(i)(x, y)} < r``.

        ``r = ceil((n + 1) level)``, equivalently the cross-conformal
        p-value ``(1 + #{i: s_i >= S_k(i)(x, y)}) / (n + 1) > 1 - level``.
        """
        n = self.n_calibration_samples_
        rank = math.ceil((n + 1) * level - 1e-12)
        sets = less < rank
        if not self.allow_empty:
            empty = ~sets.any(axis=1)
            if empty.any():
                rows = np.flatnonzero(empty)
                sets[rows, np.argmin(less[rows], axis=1)] = True
        return sets

    def _noise_correction(self, T):
        """The correction ``label_noise_correction`` resolves to.

        ``"auto"``: ``"finite_sample"`` for ``conditional="class"`` under a
        noise model other than the identity (the per-class plug-in is
        asymptotic only, and under-covers rare classes), ``"plugin"``
        otherwise.
        """
        if self.label_noise_correction != "auto":
            return self.label_noise_correction
        if self.conditional == "class" and not is_identity(T):
            return "finite_sample"
        return "plugin"

    def _fit_demixed(self, cal_matrix, cal_y, T, bins, cal_index):
        """The de-mixed calibration CDF(s) under the noise model ``T``.

        With plausible matrices (``label_noise`` of shape ``(B, K, K)``) one
        CDF per matrix and group, combined per group by
        ``ConservativeDemixedCDF`` (the largest threshold).
        """
        samples = getattr(self, "_noise_samples", None)
        if samples is None:
            self._demixed = self._demixed_cdfs(cal_matrix, cal_y, T, bins, cal_index)
            return
        finite = self._noise_correction(T) == "finite_sample"
        if self.conditional == "class" and not finite and not is_identity(T):
            self._warn_per_class_plugin(T, cal_y)
        per_matrix = [
            self._demixed_cdfs(cal_matrix, cal_y, S, bins, cal_index, warn=False)
            for S in samples
        ]
        self._demixed = [
            ConservativeDemixedCDF([cdfs[g] for cdfs in per_matrix])
            for g in range(len(per_matrix[0]))
        ]

    def _demixed_cdfs(self, cal_matrix, cal_y, T, bins, cal_index, warn=True):
        """One de-mixed CDF per group (one in all marginally) under ``T``."""
        weights = demixing_weights(T)[cal_y]
        finite = self._noise_correction(T) == "finite_sample"
        if warn and self.conditional == "class" and not finite and not is_identity(T):
            self._warn_per_class_plugin(T, cal_y)

        def margin(rows, label=None):
            return finite_sample_margin(T, cal_y[rows], label) if finite else None

        every = np.arange(cal_y.shape[0])
        if self.conditional is None:
            return [DemixedCDF(cal_matrix, weights, margin=margin(every))]
        if self.conditional == "class":
            return [
                DemixedCDF(cal_matrix, weights, label=k, margin=margin(every, k))
                for k in range(T.shape[0])
            ]
        _, groups = np.unique(bins[cal_index], return_inverse=True)
        out = []
        for g in range(groups.max() + 1):
            rows = np.flatnonzero(groups == g)
            out.append(DemixedCDF(cal_matrix[rows], weights[rows], margin=margin(rows)))
        return out

    def _log_noise_spread(self):
        """``label_noise_thresholds_`` and, with ``verbose``, their spread."""
        samples = getattr(self, "_noise_samples", None)
        if samples is None:
            return
        level = float(self.confidence_level)
        with warnings.catch_warnings():
            # the combined threshold has already raised these
            warnings.simplefilter("ignore")
            per = np.column_stack(
                [cdf.member_thresholds(level) for cdf in self._demixed]
            )
        self.label_noise_thresholds_ = per[:, 0] if self.conditional is None else per
        sd = float(np.max(samples.std(axis=0)))
        low, high = np.min(per, axis=0), np.max(per, axis=0)
        log_progress(
            self,
            f"label_noise: {samples.shape[0]} plausible matrices (largest entry "
            f"sd {sd:.3g}); thresholds per matrix from "
            f"{np.array2string(np.asarray(low), precision=4, threshold=6)} to "
            f"{np.array2string(np.asarray(high), precision=4, threshold=6)}, the "
            "largest used",
        )

    def _warn_per_class_plugin(self, T, cal_y):
        """Warn where the per-class plug-in threshold is unreliable."""
        deviation = np.array(
            [finite_sample_margin(T, cal_y, k) for k in range(T.shape[0])]
        )
        loose = np.flatnonzero(deviation > 0.05)
        if loose.size == 0:
            return
        shown = ", ".join(
            f"{self.classes_[k]!r}: {deviation[k]:.3g}" for k in loose[:10]
        )
        warn_user(
            'label_noise_correction="plugin" with conditional="class": the '
            "de-mixed calibration CDF of some classes has an expected deviation "
            f"above 0.05 ({shown}), so their plug-in thresholds can leave the "
            "clean coverage of those classes well under confidence_level (on "
            "a 6 % class with 20 % symmetric noise and 1,000 calibration rows: "
            "0.88 on average, 30 % of calibrations below 0.85). The default "
            'label_noise_correction="auto" uses "finite_sample" here, which '
            "adds that deviation to the level (expected coverage of every "
            "class at least the level)."
        )

    def _demixed_thresholds(self, level):
        """Threshold(s) of the de-mixed CDF(s): a float, or one per group."""
        if self.conditional is None:
            return self._demixed[0].threshold(level)
        kind = "class" if self.conditional == "class" else "bin"
        names = self._group_names()
        out = np.empty(len(self._demixed))
        for g, cdf in enumerate(self._demixed):
            name = names[g].item() if hasattr(names[g], "item") else names[g]
            out[g] = cdf.threshold(
                level, what=f"calibration ({kind} {name!r}, estimated clean count)"
            )
        return out

    def _group_p_values(self, g, scores, tau=None, fill=False):
        """p-values of ``scores`` against group ``g``'s calibration.

        ``fill``: for ordering the labels of an empty set only, where the
        finite-sample margin's level shift is left out.
        """
        if self.label_noise_matrix_ is not None:
            cdf = self._demixed[g]
            return cdf._p_values(scores) if fill else cdf.p_values(scores)
        cal = (
            self.calibration_scores_
            if self.conditional is None
            else self.calibration_bin_scores_[g]
        )
        return _p_values(cal, scores, tau)

    def _group_names(self):
        return self.classes_ if self.conditional == "class" else self.bins_

    def _group_thresholds(self, level):
        """One threshold per class or bin, the small-set policy per group."""
        kind = "class" if self.conditional == "class" else "bin"
        names = self._group_names()
        out = np.empty(len(self.calibration_bin_scores_))
        for g, scores in enumerate(self.calibration_bin_scores_):
            name = names[g].item() if hasattr(names[g], "item") else names[g]
            if calibration_size_ok(
                scores.shape[0], level, what=f"calibration ({kind} {name!r})"
            ):
                out[g] = conformal_quantile(scores, level)
            else:
                out[g] = np.inf
        return out

    def _label_index(self, y):
        return _label_indices(y, self.classes_.shape[0], self.classes_)

    def _calibration_randomized(self):
        """Whether the calibration scores use uniform draws."""
        return self._is_randomized()

    def _uniforms(self, X, calibration=False):
        """Row-aligned uniform draws of randomized scores (or ``None``).

        Each row's draw is keyed by the fitted seed and the row's content
        (``row_uniforms``), not by its position: the sets do not depend on
        how the rows are batched or ordered, and predicting one row per call
        does not reuse one draw for every row. Calibration and test rows get
        draws from the same function, so their scores stay exchangeable.
        """
        randomized = (
            self._calibration_randomized() if calibration else self._is_randomized()
        )
        if not randomized:
            return None
        return row_uniforms(X, self._seed)

    def _calibration_score_matrix(self, X):
        """Every label's score on the calibration rows, by row batches."""
        n_samples = _num_samples(X)
        out = np.empty((n_samples, self.classes_.shape[0]))
        for rows in batch_slices(n_samples, self._row_bytes()):
            X_batch = X if rows == slice(0, n_samples) else _batch(X, rows)
            proba = self._predict_proba_checked(X_batch)
            u = self._uniforms(X_batch, calibration=True)
            out[rows] = self._score_matrix(proba, u)
        return out

    def _true_label_scores(self, X, y):
        """Score of the true label of every row, computed by row batches."""
        n_samples = _num_samples(X)
        y_index = self._label_index(y)
        out = np.empty(n_samples)
        for rows in batch_slices(n_samples, self._row_bytes()):
            X_batch = X if rows == slice(0, n_samples) else _batch(X, rows)
            proba = self._predict_proba_checked(X_batch)
            u = self._uniforms(X_batch, calibration=True)
            scores = self._score_matrix(proba, u)
            out[rows] = scores[np.arange(proba.shape[0]), y_index[rows]]
        return out

    def _predict_proba_checked(self, X):
        if self._cross() and getattr(self, "estimators_", None):
            # the probabilities the sets use: the mean of the fold models
            # (MAPIE's agg_scores="mean"; predict and predict_proba use the
            # model fitted on every row)
            return np.mean([self._fold_proba(m, X) for m in self.estimators_], axis=0)
        proba = check_probabilities(
            self.estimator_.predict_proba(X), name="estimator.predict_proba(X)"
        )
        if proba.shape[1] != self.classes_.shape[0]:
            raise ValueError(
                f"predict_proba returned {proba.shape[1]} columns for "
                f"{self.classes_.shape[0]} classes."
            )
        return proba

    def _check_X(self, X):
        """Check the feature count and names without converting ``X``.

        Returns ``X`` in indexable form and its number of rows.
        """
        check_is_fitted(self)
        X = _indexable(X)
        _check_2d(X, self)
        _check_feature_names(self, X, reset=False)
        _check_n_features(self, X, reset=False)
        return X, _num_samples(X)

    def _threshold(self, confidence_level):
        """Threshold(s) at a per-call level (the fitted ones for ``None``).

        A float, or with ``conditional`` one per class or bin.
        """
        if confidence_level is None:
            return self.threshold_
        level = check_confidence_level(confidence_level)
        if self.shift is not None:
            return self._shift_threshold(level)
        if self.label_noise_matrix_ is not None:
            return self._demixed_thresholds(level)
        if self.conditional is not None:
            return self._group_thresholds(level)
        if not calibration_size_ok(self.n_calibration_samples_, level):
            return np.inf
        return conformal_quantile(self.calibration_scores_, level)

    def _row_groups(self, bins, n_samples, where):
        """Index into ``bins_`` of every row's bin (``None`` unless "bins")."""
        bins = self._check_bins_arg(bins, n_samples, where)
        if bins is None:
            return None
        try:
            pos = np.searchsorted(self.bins_, bins)
        except TypeError as exc:
            raise ValueError(
                f"bins (dtype {bins.dtype}) cannot be compared with the bins seen "
                f"at calibration (dtype {self.bins_.dtype})."
            ) from exc
        pos = np.clip(pos, 0, self.bins_.shape[0] - 1)
        unseen = self.bins_[pos] != bins
        if unseen.any():
            raise ValueError(
                f"bins contains {np.unique(bins[unseen]).tolist()[:10]}, never seen "
                f"at calibration (the calibrated bins are "
                f"{self.bins_.tolist()[:20]}): a bin has no threshold without "
                "calibration rows. Calibrate with rows of every bin, or merge "
                "the rare bins."
            )
        return pos

    def _fill_empty(self, sets, proba, uniforms):
        """Fill empty sets, in place, so that the sets stay nested in level.

        The top label (the smallest score of the row) for one threshold per
        row; with ``conditional="class"``, the label of largest p-value, the
        one the class thresholds admit first as the level rises.
        """
        if self.conditional != "class":
            return _fill_empty(sets, proba)
        rows = np.flatnonzero(~sets.any(axis=1))
        if rows.size:
            u = None if uniforms is None else uniforms[rows]
            scores = self._score_matrix(proba[rows], u)
            p = np.column_stack(
                [
                    self._group_p_values(j, scores[:, j], fill=True)
                    for j in range(len(self.calibration_bin_scores_))
                ]
            )
            sets[rows, np.argmax(p, axis=1)] = True
        return sets

    def _sets_at(self, proba, threshold, groups, uniforms, scores=None):
        """Sets of one batch at one level's threshold(s).

        ``groups``: the rows' bin indices (``conditional="bins"``);
        ``scores``: the batch's score matrix when already computed.
        """
        if self.conditional is None:
            if scores is None:
                return self._sets(proba, threshold, uniforms)
            return scores <= threshold
        if self.conditional == "class":
            if scores is None:
                return self._sets(proba, threshold[None, :], uniforms)
            return scores <= threshold[None, :]
        if scores is not None:
            return scores <= threshold[groups][:, None]
        sets = np.empty(proba.shape, dtype=bool)
        for g in np.unique(groups):
            rows = np.flatnonzero(groups == g)
            u = None if uniforms is None else uniforms[rows]
            sets[rows] = self._sets(proba[rows], threshold[g], u)
        return sets

    def _map_batches(self, X, func, dtype=None):
        """``func(X_batch, rows)`` over row batches, into one dense output.

        ``X`` is checked already (see ``_check_X``).
        """
        n_samples = _num_samples(X)
        out = None
        for rows in batch_slices(n_samples, self._row_bytes()):
            X_batch = X if rows == slice(0, n_samples) else _batch(X, rows)
            result = np.asarray(func(X_batch, rows))
            if out is None:
                shape = (n_samples, *result.shape[1:])
                out = np.empty(shape, dtype=result.dtype if dtype is None else dtype)
            out[rows] = result
        if out is None:  # no rows: let the estimator answer (or raise)
            out = np.asarray(func(X, slice(0, 0)))
        return out

    def set_output(self, *, transform=None):
        """Set the output container of the inner estimator's transform steps.

        A classifier has no ``transform`` of its own (scikit-learn's
        classifiers have no ``set_output``); here the call is forwarded to
        the inner estimator, so that a ``Pipeline`` inside hands, e.g.,
        pandas DataFrames with its feature names from its preprocessing to
        its final model (``estimator.set_output(transform="pandas")`` does
        the same). It changes ``estimator`` in place (as ``Pipeline``'s
        ``set_output`` changes its steps), the fitted ``estimator_`` too,
        and the default pipeline built when ``estimator=None``. An inner
        estimator without ``set_output`` has nothing to set: ``ValueError``.

        Parameters
        ----------
        transform : {"default", "pandas", "polars"}, default=None
            Output container of the inner transform steps; ``None`` leaves
            the configuration unchanged.

        Returns
        -------
        self : object
            The estimator.
        """
        if transform is None:
            return self
        targets = [self._get_estimator()]
        if hasattr(self, "estimator_"):
            targets.append(self.estimator_)
        for target in targets:
            inner = target.estimator if isinstance(target, FrozenEstimator) else target
            if not hasattr(inner, "set_output"):
                raise ValueError(
                    f"{type(self).__name__}.set_output has nothing to set: its "
                    f"estimator ({type(inner).__name__}) has no set_output. "
                    "set_output sets the output of transform steps; put the "
                    "preprocessing in a Pipeline as the estimator."
                )
            inner.set_output(transform=transform)
        if self.estimator is None:
            self._sklearn_output_config = {"transform": transform}
        return self

    # -- public prediction API ---------------------------------------------------
    def predict(self, X):
        """Point predictions of the underlying classifier.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Input data, in the form the estimator takes (a DataFrame for a
            pipeline that selects columns by name).

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
            Predicted labels.
        """
        if is_dask_collection(X):
            return predict_blocks(self, "predict", X)
        X, _ = self._check_X(X)
        return self._map_batches(
            X, lambda Xb, rows: self.estimator_.predict(Xb), self.classes_.dtype
        )

    def predict_proba(self, X):
        """Class probabilities of the underlying classifier.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Input data.

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
            Columns follow ``classes_``.
        """
        if is_dask_collection(X):
            return predict_blocks(self, "predict_proba", X)
        X, _ = self._check_X(X)
        return self._map_batches(
            X, lambda Xb, rows: self.estimator_.predict_proba(Xb), np.float64
        )

    def conformity_scores(self, X):
        """Conformity score of every label for every sample.

        A label enters the prediction set when its score is at most
        ``threshold_``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Input data.

        Returns
        -------
        scores : ndarray of shape (n_samples, n_classes)
            Scores; columns follow ``classes_``.
        """
        if is_dask_collection(X):
            return predict_blocks(self, "conformity_scores", X)
        X, _ = self._check_X(X)

        def scores(Xb, rows):
            u = self._uniforms(Xb)
            return self._score_matrix(self._predict_proba_checked(Xb), u)

        return self._map_batches(X, scores, np.float64)

    def predict_set(self, X, confidence_level=None, output="dense", bins=None):
        """Conformal prediction sets.

        With exchangeable data, ``P(y in set) >= confidence_level``
        (marginally; with ``conditional="class"`` given each true class, with
        ``conditional="bins"`` given each bin). Rows are processed in batches
        sized by scikit-learn's ``working_memory``, so that only the output
        and one batch of probabilities are in memory at once.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Input data.
        confidence_level : float or sequence of float, default=None
            Target coverage; ``None`` uses the fitted ``confidence_level``
            (and ``threshold_``). Another value recomputes the threshold(s)
            from the calibration scores (score hyperparameters tuned at fit
            are kept); a calibration set (or class, or bin) too small for it
            warns and gives sets holding every label (that class). A
            sequence of ``L`` levels gives one set per level, along a
            trailing axis: the scores are computed once per batch and
            compared with each level's threshold, and since a higher level
            never has a lower threshold the sets are nested (a set at a
            higher level contains the set at a lower one).
        output : {"dense", "sparse"}, default="dense"
            ``"dense"``: a boolean ndarray; ``"sparse"``: a CSR
            ``scipy.sparse`` container of bool (one row per sample), which
            takes memory in proportion to the total set size rather than to
            ``n_samples * n_classes`` (a list of them, one per level, for a
            sequence of levels): a ``csr_matrix``, or a ``csr_array`` under
            ``sklearn.set_config(sparse_interface="sparray")``, as
            scikit-learn's own sparse outputs.
        bins : array-like of shape (n_samples,), default=None
            Mondrian bin of every row; required with ``conditional="bins"``
            (every bin must have been seen at calibration: ``ValueError``
            otherwise) and rejected otherwise.

        Returns
        -------
        sets : ndarray or CSR sparse matrix/array of bool, shape (n_samples, n_classes)
            ``sets[i, j]`` tells whether ``classes_[j]`` is in the set of
            sample ``i``. For a sequence of levels: an ndarray of shape
            ``(n_samples, n_classes, L)``, or a list of ``L`` CSR containers.
        """
        _check_output(output)
        if is_dask_collection(X):  # lazy: the in-memory sets of each block
            return predict_blocks(
                self,
                "predict_set",
                X,
                confidence_level=confidence_level,
                output=output,
                bins=bins,
            )
        X, n_samples = self._check_X(X)
        levels, multi = _levels(confidence_level)
        groups = self._row_groups(bins, n_samples, "predict_set")
        thresholds = [self._threshold(level) for level in levels]

        def sets_of(Xb, rows):
            if self._crossval():
                less = self._crossval_counts(Xb)[0]
                out = [
                    self._crossval_sets(
                        less, self.confidence_level if level is None else level
                    )
                    for level in levels
                ]
                return np.stack(out, axis=-1) if multi else out[0]
            proba = self._predict_proba_checked(Xb)
            u = self._uniforms(Xb)
            g = None if groups is None else groups[rows]
            scores = self._score_matrix(proba, u) if multi else None
            out = []
            batch_thresholds = (
                thresholds if self.shift is None else self._row_thresholds(levels, Xb)
            )
            for threshold in batch_thresholds:
                sets = self._sets_at(proba, threshold, g, u, scores)
                if not self.allow_empty:
                    self._fill_empty(sets, proba, u)
                out.append(sets)
            return np.stack(out, axis=-1) if multi else out[0]

        if output == "dense":
            return self._map_batches(X, sets_of, bool)
        n_classes = self.classes_.shape[0]
        n_levels = len(thresholds)
        indices = [[] for _ in range(n_levels)]
        counts = [[] for _ in range(n_levels)]
        for rows in batch_slices(n_samples, self._row_bytes()):
            X_batch = X if rows == slice(0, n_samples) else _batch(X, rows)
            sets = sets_of(X_batch, rows)
            if not multi:
                sets = sets[..., None]
            for level in range(n_levels):
                row_index, col_index = np.nonzero(sets[..., level])
                counts[level].append(
                    np.bincount(row_index, minlength=rows.stop - rows.start)
                )
                indices[level].append(
                    col_index.astype(np.int32 if n_classes < 2**31 else np.intp)
                )
            del sets
        csr = [
            _csr_from_batches(indices[level], counts[level], n_samples, n_classes)
            for level in range(n_levels)
        ]
        return csr if multi else csr[0]

    def predict_p(self, X, bins=None, smoothed=False, random_state=None):
        """Conformal p-value of every label for every sample.

        The p-value of label ``y`` at ``x`` is ``(1 + #{i : s_i >= s(x, y)})
        / (n + 1)`` over the ``n`` calibration scores ``s_i`` (of the label's
        class with ``conditional="class"``, of the row's bin with
        ``conditional="bins"``). These unsmoothed p-values reproduce the set
        rule exactly: ``classes_[j]`` is in ``predict_set(X,
        confidence_level=level)`` iff ``p[i, j] > 1 - level``, the product
        ``(n + 1) (1 - level)`` taken to the integer it is within ``1e-12``
        of (so that ``n = 99`` at level 0.9 compares with the exact 0.1, not
        floating point's 0.0999...), plus the top label of a set that would
        be empty when ``allow_empty=False``. They are valid: ``P(p(X, Y) <=
        t) <= t``. With ``cv`` and ``agg_scores="crossval"`` they are Vovk's
        cross-conformal p-values ``(1 + #{i : s_i >= S_k(i)(x, y)}) / (n +
        1)`` over the out-of-fold scores, which reproduce the cross-conformal
        sets the same way (valid up to the cross-conformal factor 2, see
        ``cv``).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Input data.
        bins : array-like of shape (n_samples,), default=None
            Mondrian bin of every row, as in :meth:`predict_set`.
        smoothed : bool, default=False
            Smoothed p-values ``(#{s_i > s} + tau (#{s_i = s} + 1)) / (n +
            1)``, one uniform ``tau`` per sample: exactly uniform under
            exchangeability (``P(p <= t) = t``), but **randomised**: two calls
            with different ``random_state`` give different p-values, and
            they do not reproduce the sets.
        random_state : int, RandomState instance or None, default=None
            The draws of ``tau`` (``smoothed=True`` only); ``None`` uses
            numpy's global generator.

        Returns
        -------
        p_values : ndarray of shape (n_samples, n_classes)
            Columns follow ``classes_``.
        """
        if is_dask_collection(X):
            return predict_blocks(self, "predict_p", X, bins=bins, smoothed=smoothed)
        X, n_samples = self._check_X(X)
        if smoothed and self.shift is not None:
            raise ValueError(
                "predict_p(smoothed=True) is not defined with shift: use "
                "smoothed=False (the weighted p-values, which reproduce the sets)."
            )
        if smoothed and self.label_noise_matrix_ is not None:
            raise ValueError(
                "predict_p(smoothed=True) is not defined with label_noise: the "
                "de-mixed calibration CDF has signed weights, so the smoothed "
                "p-value's tie rule has no counterpart. Use smoothed=False."
            )
        groups = self._row_groups(bins, n_samples, "predict_p")
        tau = (
            check_random_state(random_state).uniform(size=(n_samples, 1))
            if smoothed
            else None
        )

        def p_of(Xb, rows):
            if self._crossval():
                less, leq = self._crossval_counts(Xb)
                n = self.n_calibration_samples_
                if tau is None:
                    return (n - less + 1.0) / (n + 1.0)
                t = tau[rows]
                return (n - leq + t * (leq - less + 1.0)) / (n + 1.0)
            proba = self._predict_proba_checked(Xb)
            u = self._uniforms(Xb)
            scores = self._score_matrix(proba, u)
            t = None if tau is None else tau[rows]
            if self.shift is not None:
                return self._shift_p_values(scores, Xb)
            if self.conditional is None:
                return self._group_p_values(0, scores, t)
            out = np.empty_like(scores)
            if self.conditional == "class":
                for j in range(len(self.calibration_bin_scores_)):
                    out[:, j] = self._group_p_values(
                        j, scores[:, j], None if t is None else t[:, 0]
                    )
                return out
            g = groups[rows]
            for b in np.unique(g):
                idx = np.flatnonzero(g == b)
                out[idx] = self._group_p_values(
                    b, scores[idx], None if t is None else t[idx]
                )
            return out

        return self._map_batches(X, p_of, np.float64)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        sub = get_tags(self._get_estimator())
        tags.input_tags.allow_nan = sub.input_tags.allow_nan
        tags.input_tags.sparse = sub.input_tags.sparse
        return tags


def _is_matrix_samples(label_noise):
    """Whether ``label_noise`` is a 3-D array (plausible matrices)."""
    if label_noise is None or isinstance(label_noise, Real):
        return False
    return np.ndim(label_noise) == 3


def _batch(X, rows):
    # a slice: a view of an ndarray, not a copy of the batch
    return _safe_indexing(X, rows)
