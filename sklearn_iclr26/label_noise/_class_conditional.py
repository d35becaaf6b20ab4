"""Class-conditional label-noise correction (backward / forward, Patrini et al.)."""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

from numbers import Integral, Real

import numpy as np
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted

from sklearn_iclr26.label_noise._backends import ForwardLossSpec
from sklearn_iclr26.label_noise._base import BaseNoiseCorrector
from sklearn_iclr26.label_noise._common import out_of_fold_proba
from sklearn_iclr26.label_noise._label_issues import issues_and_scores
from sklearn_iclr26.label_noise._transition import (
    confident_joint_transition_matrix,
    estimate_transition_matrix,
    implied_flip_rate,
    shrink_to_diagonally_dominant,
)
from sklearn_iclr26.utils._sklearn_compat import HasMethods, Interval, StrOptions
from sklearn_iclr26.utils._validation import store_params
from sklearn_iclr26.utils._verbose import log_progress
from sklearn_iclr26.utils._warnings import warn_user

__all__ = ["ClassConditionalNoiseCorrector"]


class ClassConditionalNoiseCorrector(BaseNoiseCorrector):
    """Train a classifier on noisy labels with class-conditional loss correction.

    The class-conditional noise model (CCN): a label of class ``i`` is flipped
    to ``j`` with a probability ``T[i, j]`` that does not depend on ``x``. The
    transition matrix ``T`` is given or estimated from out-of-fold noisy
    probabilities: by default with cleanlab's confident joint (Northcutt et
    al. 2021), or with anchor points (Patrini et al. 2017); it is mixed with
    the identity, with a warning, if a class would be flipped more often than
    kept. A warning also flags an estimate that looks implausible: near the
    identity while the out-of-fold predictions disagree with many labels, or
    ill-conditioned for backward correction. Then

    - ``method="backward"``: the loss is ``sum_y inv(T)[y~, y] l(h, y)`` (its
      expectation over the noise is the clean loss), applied to any classifier
      whose ``fit`` takes ``sample_weight`` (routed as
      ``<final step>__sample_weight`` through a ``Pipeline``) by stacking one
      copy of ``X`` per class with the (signed) weights ``inv(T)[y~, y]``, as
      ``bqlearn.unbiased.LossCorrection`` does;
    - ``method="forward"``: the loss is ``-log (T^T p(x))[y~]``, the
      log-likelihood of the noisy label. Needs a ``TorchMLPClassifier`` (as
      its criterion) or a ``LGBMClassifier`` (as a custom objective).

    It is the baseline of :class:`InstanceNoiseCorrector`: the same wrapper,
    a different noise model.

    On a dask cluster, with ``estimator=lightgbm.DaskLGBMClassifier(...)``,
    ``fit`` takes a dask array or DataFrame ``X`` and a row-aligned dask array
    or Series ``y`` (and ``sample_weight``, if any) and never gathers ``X``
    to the driver: the fold models and
    the forward-corrected model are trained on the cluster (each row's fold
    drawn from ``random_state`` and its block's index), the confident joint
    is counted block by block on the workers (only per-class sums and the
    ``K x K`` counts come back), ``estimator_`` is the fitted booster as a
    local ``LGBMClassifier`` and ``label_issues_`` and ``mislabel_scores_``
    are lazy dask arrays. ``method="backward"``,
    ``transition_estimate="anchor"`` and a ``Pipeline`` around the dask model
    are refused there (see the scaling guide).

    Read more in the :ref:`User Guide <label_noise>`.

    Parameters
    ----------
    estimator : estimator object, default=None
        The classifier, or a ``Pipeline`` ending in one (the correction applies
        to its final step; the steps before it see ``X`` untouched). ``None``
        means ``make_pipeline(StandardScaler(),
        LogisticRegression(max_iter=1000))``.
    method : {"auto", "backward", "forward"}, default="auto"
        The correction. ``"auto"``: ``"forward"`` for a ``LGBMClassifier``
        (or a Pipeline ending in one), ``"backward"`` otherwise. Backward
        correction stacks rows with negative weights, which boosted trees fit
        badly: with LightGBM and 20 % symmetric flips it was 27 points below
        plain LightGBM on keel ``vehicle`` (4 classes; 8.5 with the true
        ``T``) and 4-7 below on ``german``, where forward correction was
        within 2 points of plain LightGBM (see the user guide).
    transition_matrix : array-like of shape (n_classes, n_classes) or None, \
            default=None
        Known ``T`` (rows sum to 1, ordered as ``classes_``); ``None`` estimates
        it.
    transition_estimate : {"confident_joint", "anchor"}, \
            default="confident_joint"
        How ``T`` is estimated when ``transition_matrix`` is ``None``.
        ``"confident_joint"``: cleanlab's calibrated confident joint (per-class
        thresholds at the mean self-confidence; see
        the user guide), which does
        not need calibrated probabilities. ``"anchor"``: row ``i`` of ``T`` is
        the noisy probability vector of the row whose probability of ``i`` is
        at the ``anchor_quantile`` (Patrini et al.); it assumes calibrated
        probabilities and reads near the identity with boosted trees (a
        LightGBM under 20 % flips gave ``[[0.99, 0.01], [0.01, 0.99]]``).
    anchor_quantile : float, default=0.97
        Quantile defining the anchor point of each class
        (``transition_estimate="anchor"`` only).
    cv : int, default=3
        Folds of the out-of-fold probabilities used to estimate ``T`` (fewer
        when a class is too small; in-sample probabilities below 2 folds).
    random_state : int, RandomState instance or None, default=None
        Seeds the fold split and every ``random_state`` parameter of the
        estimator left at ``None`` (nested ones too).
    verbose : int, default=0
        Print progress when positive: the transition matrix estimate and the
        corrected fit (with every tenth of the boosting rounds or epochs in
        forward mode).

    Attributes
    ----------
    estimator_ : estimator object
        The fitted classifier (or Pipeline); with a ``DaskLGBMClassifier``,
        its fitted booster as a local ``LGBMClassifier`` (``to_local()``).
    classes_ : ndarray of shape (n_classes,)
        Class labels.
    method_ : {"backward", "forward"}
        The correction used (``method`` with ``"auto"`` resolved).
    transition_matrix_ : ndarray of shape (n_classes, n_classes)
        The transition matrix used, ``T[i, j] = P(Y~ = j | Y = i)``.
    oof_disagreement_ : float
        Fraction of training labels that the out-of-fold predictions contradict
        (``nan`` when ``transition_matrix`` is given): an upper bound on the
        flip rate that a good classifier would see, for comparison with the
        flip rate ``T`` implies.
    mislabel_scores_ : ndarray of shape (n_samples,)
        ``1 - p``, with ``p`` the out-of-fold probability of the observed
        label (cleanlab's self-confidence, reversed): larger = more likely
        mislabeled. A lazy dask array after a fit on dask collections (each
        block's out-of-fold probabilities recomputed on the workers at
        ``compute``), as is ``label_issues_``.
    label_issues_ : ndarray of bool of shape (n_samples,)
        Training rows flagged as likely mislabeled: those counted off the
        diagonal of the confident joint of the out-of-fold probabilities
        (cleanlab's ``filter_by="confident_learning"``, the rule of
        :func:`find_label_issues`). The out-of-fold probabilities are
        computed also when ``transition_matrix`` is given (``cv`` more fits).
    init_score_ : float or ndarray of shape (n_classes,)
        Raw-score offset (LightGBM forward mode: the logit of the label mean,
        or the log class priors for multi-class targets), else 0.
    n_features_in_ : int
        Number of features seen during fit.
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of features seen during fit. Defined only when `X` has feature
        names that are all strings.

    See Also
    --------
    InstanceNoiseCorrector : Correction for instance-dependent flip rates.

    References
    ----------
    .. [1] G. Patrini, A. Rozza, A. Menon, R. Nock and L. Qu, "Making Deep Neural
       Networks Robust to Label Noise: a Loss Correction Approach", CVPR 2017.
    .. [2] N. Natarajan, I. Dhillon, P. Ravikumar and A. Tewari, "Learning with
       Noisy Labels", NeurIPS 2013.

    Examples
    --------
    >>> from sklearn.datasets import make_classification
    >>> from sklearn_iclr26.datasets import make_label_noise
    >>> from sklearn_iclr26.label_noise import ClassConditionalNoiseCorrector
    >>> X, y = make_classification(n_samples=300, random_state=0)
    >>> y_noisy, _ = make_label_noise(y, kind="symmetric", rate=0.2, random_state=0)
    >>> clf = ClassConditionalNoiseCorrector(random_state=0).fit(X, y_noisy)
    >>> clf.transition_matrix_.shape
    (2, 2)
    """

    _parameter_constraints: dict = {
        "estimator": [HasMethods(["fit", "predict_proba"]), None],
        "method": [StrOptions({"auto", "backward", "forward"})],
        "transition_matrix": ["array-like", None],
        "transition_estimate": [StrOptions({"confident_joint", "anchor"})],
        "anchor_quantile": [Interval(Real, 0, 1, closed="right")],
        "cv": [Interval(Integral, 2, None, closed="left")],
        "random_state": ["random_state"],
        "verbose": ["verbose"],
    }

    def __init__(
        self,
        estimator=None,
        *,
        method="auto",
        transition_matrix=None,
        transition_estimate="confident_joint",
        anchor_quantile=0.97,
        cv=3,
        random_state=None,
        verbose=0,
    ):
        store_params(self, locals())

    def _default_estimator(self):
        from sklearn.linear_model import LogisticRegression
        from sklearn.pipeline import make_pipeline
        from sklearn.preprocessing import StandardScaler

        # max_iter=1000: the default 100 stops short on many classes (a
        # ConvergenceWarning on a 32-class table) and on the stacked rows
        return make_pipeline(StandardScaler(), LogisticRegression(max_iter=1000))

    def _out_of_fold_proba(self, backend, X, y, sample_weight, rng):
        return out_of_fold_proba(backend, X, y, sample_weight, self.cv, rng)

    def _given_transition(self, n_classes):
        T = np.asarray(self.transition_matrix, dtype=np.float64)
        if T.shape != (n_classes, n_classes):
            raise ValueError(
                f"transition_matrix must have shape ({n_classes}, {n_classes}), "
                f"got {T.shape}."
            )
        if np.any(T < 0) or not np.allclose(T.sum(axis=1), 1.0):
            raise ValueError(
                "transition_matrix must be non-negative with rows summing to 1."
            )
        return T

    def _transition_matrix(self, backend, X, y, sample_weight, n_classes, rng):
        self.oof_disagreement_ = float("nan")
        if self.transition_matrix is not None:
            return self._given_transition(n_classes)
        proba, n_splits = self._out_of_fold_proba(backend, X, y, sample_weight, rng)
        self._oof = proba
        if self.transition_estimate == "anchor":
            T = estimate_transition_matrix(proba, self.anchor_quantile)
        else:
            T = confident_joint_transition_matrix(proba, y, sample_weight)
        disagreement = float(
            np.average(proba.argmax(axis=1) != y, weights=sample_weight)
        )
        self.oof_disagreement_ = disagreement
        return self._review_transition(
            T,
            disagreement,
            implied_flip_rate(T, y, sample_weight),
            np.bincount(y, minlength=n_classes),
            n_splits,
        )

    def _review_transition(self, T, disagreement, implied, class_counts, n_splits):
        """Warnings on an estimated ``T``, and its shrinkage (also block-wise)."""
        if disagreement >= 0.1 and implied < disagreement / 3:
            warn_user(
                f"The estimated transition matrix flips {implied:.1%} of the labels "
                f"while the out-of-fold predictions contradict {disagreement:.1%} of "
                "them: the estimate is near the identity and the correction will "
                "do little. Either the labels are clean and the estimator is weak, "
                "or the estimate missed the noise (the anchor-point estimate does "
                "with uncalibrated probabilities such as boosted trees'; try "
                "transition_estimate='confident_joint' or pass transition_matrix)."
            )
        flip = 1.0 - np.diag(T)
        T, weight = shrink_to_diagonally_dominant(T)
        if weight > 0:
            worst = np.flatnonzero(flip > 0.45 - 1e-12)
            rates = ", ".join(
                f"class {np.asarray(self.classes_[k]).item()!r}: {flip[k]:.2f}"
                for k in worst
            )
            prior = class_counts / class_counts.sum()
            warn_user(
                f"The estimated flip rate of {rates} is near or above 1/2 (a "
                "class flipped about as often as kept), implausible for most label "
                "noise. The "
                f"{self.transition_estimate!r} estimate"
                + (
                    " (equal to cleanlab's confident joint) "
                    if self.transition_estimate == "confident_joint"
                    else " "
                )
                + "counts the out-of-fold model's own confusions as flips, which "
                "inflates the rate of a class the model separates poorly, most "
                f"often a rare one (class shares {np.round(prior, 3).tolist()}). "
                f"T was mixed with the identity (weight {weight:.3g}) so that every "
                "class keeps at least 55 % of its labels. Pass transition_matrix "
                "if the flip rates are known, and compare with the plain model "
                "on held-out data."
            )
        log_progress(
            self,
            f"transition matrix estimated from {n_splits}-fold out-of-fold "
            f"probabilities; diagonal {np.round(np.diag(T), 3).tolist()}",
        )
        return T

    def _fit_corrected(self, backend, X, y_enc, sample_weight, rng):
        n_classes = len(self.classes_)
        method = self.method
        if method == "auto":
            method = "forward" if backend.name == "lightgbm" else "backward"
        self.method_ = method
        if method == "forward":
            if not backend.supports_loss:
                raise ValueError(
                    "method='forward' needs a TorchMLPClassifier or a "
                    f"LGBMClassifier, got {backend.what}; use method='backward' for "
                    "other classifiers."
                )
        elif not backend.supports_weights:
            raise ValueError(
                f"{backend.what} does not accept sample_weight in fit, which "
                "method='backward' needs."
            )
        self._oof = None
        T = self._transition_matrix(backend, X, y_enc, sample_weight, n_classes, rng)
        self.transition_matrix_ = T
        if self._oof is None:  # T given: the label issues still need them
            self._oof, _ = self._out_of_fold_proba(
                backend, X, y_enc, sample_weight, rng
            )
        proba = np.asarray(self._oof, dtype=np.float64)
        self.label_issues_, self.mislabel_scores_ = issues_and_scores(
            y_enc, proba, "confident_learning"
        )
        self._issue_proba, self._issue_labels = proba, y_enc
        self._issue_weight = sample_weight
        del self._oof
        self.init_score_ = 0.0
        if method == "backward":
            if abs(np.linalg.det(T)) < 1e-8:
                raise ValueError(
                    "The transition matrix is singular; backward correction "
                    "needs an invertible T (flip rates summing to less than 1)."
                )
            T_inv = np.linalg.inv(T)
            condition = float(np.linalg.cond(T))
            if condition > 20:
                warn_user(
                    f"The transition matrix is ill-conditioned (condition number "
                    f"{condition:.3g}): backward correction weights the rows by "
                    f"inv(T), with entries up to {np.abs(T_inv).max():.3g} in "
                    "absolute value, so the corrected fit has a large variance and "
                    "may be worse than plain training. Consider method='forward'."
                )
            n = len(y_enc)
            base = np.ones(n) if sample_weight is None else sample_weight
            weights = [base * T_inv[y_enc, c] for c in range(n_classes)]
            scale = base.sum() / max(
                float(sum(np.abs(w).sum() for w in weights)), 1e-300
            )
            labels = [np.full(n, c) for c in range(n_classes)]
            self.estimator_ = backend.fit_stacked(
                X, labels, [w * scale for w in weights]
            )
        else:
            self.estimator_, self.init_score_ = backend.fit_loss(
                X,
                y_enc,
                sample_weight,
                ForwardLossSpec(T),
                n_classes=n_classes,
                owner=self,
            )
        log_progress(self, f"{method} correction fitted ({backend.name} backend)")

    def _fit_blocks(self, estimator, X, y, sample_weight, rng):
        from sklearn_iclr26.label_noise._dask import fit_class_conditional_blocks

        fit_class_conditional_blocks(self, estimator, X, y, sample_weight, rng)

    def transition_matrix_samples(self, n_samples=20, random_state=None):
        """Bootstrap replicates of the estimated transition matrix.

        The training rows are resampled with replacement and ``T`` is
        estimated again from the stored out-of-fold probabilities of the
        resampled rows, by the same rule as ``transition_matrix_``
        (``transition_estimate``, then the mix with the identity that keeps
        every class at least 55 % kept, without its warning). Nothing is
        refit, so it is cheap. It carries the sampling error of the
        counting, not that of the out-of-fold model, nor the estimator's
        bias (the confident joint counts the model's own confusions as
        flips): the replicates scatter around the point estimate, not
        around the true ``T``. With ``transition_matrix`` given, every
        replicate is that matrix.

        Pass them as ``label_noise=`` to a conformal classifier
        (``SplitConformalClassifier``, ``SOCOPClassifier``), which then
        thresholds at the most conservative of them: the largest of ``B``
        thresholds, about their ``1 - 1/(B + 1)`` bootstrap quantile. On
        ``hpc_data``, KEEL satimage and KEEL marketing (20 % noise, level
        0.9, 100 splits) the point estimate covered 0.868 / 0.890 / 0.873
        marginally, 20 replicates 0.898 / 0.898 / 0.883 (the true ``T``:
        0.899 / 0.905 / 0.900), at the true ``T``'s set size or below: not
        a guarantee, the estimate's bias stays (see the conformal user
        guide).

        Parameters
        ----------
        n_samples : int, default=20
            Number of replicates. More is more conservative as
            ``label_noise`` (100: 0.906 / 0.902 / 0.886 above, sets up to
            3 % larger).
        random_state : int, RandomState instance or None, default=None
            Seeds the resampling.

        Returns
        -------
        samples : ndarray of shape (n_samples, n_classes, n_classes)
            The replicates, each with rows summing to 1, classes ordered as
            ``classes_``.

        Examples
        --------
        >>> from sklearn.datasets import make_classification
        >>> from sklearn_iclr26.datasets import make_label_noise
        >>> from sklearn_iclr26.label_noise import ClassConditionalNoiseCorrector
        >>> X, y = make_classification(n_samples=300, random_state=0)
        >>> y_noisy, _ = make_label_noise(y, kind="symmetric", rate=0.2, random_state=0)
        >>> clf = ClassConditionalNoiseCorrector(random_state=0).fit(X, y_noisy)
        >>> clf.transition_matrix_samples(n_samples=20, random_state=0).shape
        (20, 2, 2)
        """
        check_is_fitted(self)
        if (
            not isinstance(n_samples, Integral)
            or isinstance(n_samples, bool)
            or n_samples < 1
        ):
            raise ValueError(
                f"n_samples must be a positive integer, got {n_samples!r}."
            )
        T = self.transition_matrix_
        if self.transition_matrix is not None:
            return np.repeat(T[None], n_samples, axis=0)
        if getattr(self, "_issue_proba", None) is None:  # fitted block-wise on dask
            raise ValueError(
                "transition_matrix_samples resamples the training rows' "
                "out-of-fold probabilities, which a fit on dask collections "
                "keeps on the cluster; fit in memory (on a subsample) to draw "
                "replicates."
            )
        proba, y = self._issue_proba, self._issue_labels
        weight = getattr(self, "_issue_weight", None)
        rng = check_random_state(random_state)
        n = y.shape[0]
        out = np.empty((n_samples, *T.shape))
        for b in range(n_samples):
            rows = rng.randint(0, n, size=n)
            w = None if weight is None else np.asarray(weight)[rows]
            if self.transition_estimate == "anchor":
                T_b = estimate_transition_matrix(proba[rows], self.anchor_quantile)
            else:
                T_b = confident_joint_transition_matrix(proba[rows], y[rows], w)
            out[b] = shrink_to_diagonally_dominant(T_b)[0]
        return out

    def _predict_proba_rows(self, X):
        return self._backend.predict_proba(self.estimator_, X, self.init_score_)
