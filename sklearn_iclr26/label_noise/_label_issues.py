"""Label issues from out-of-fold probabilities, as cleanlab returns them."""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

from numbers import Real

import numpy as np
from scipy.special import expit
from sklearn.utils import check_array, column_or_1d
from sklearn.utils.validation import check_consistent_length

from sklearn_iclr26.label_noise._transition import (
    confident_joint_transition_matrix,
    implied_flip_rate,
)
from sklearn_iclr26.utils._sklearn_compat import Interval, StrOptions, validate_params

__all__ = ["find_label_issues"]

FILTERS = ("confident_learning", "predicted_neq_given", "posterior")
RANKINGS = ("self_confidence", "normalized_margin", "mislabel_score")
# cleanlab's FLOATING_POINT_COMPARISON
_TOLERANCE = 1e-6


def check_labels_pred_probs(labels, pred_probs):
    """Validate integer ``labels`` in ``[0, K)`` and ``pred_probs`` of shape (n, K)."""
    pred_probs = check_array(pred_probs, dtype=np.float64)
    labels = column_or_1d(labels)
    check_consistent_length(labels, pred_probs)
    n_classes = pred_probs.shape[1]
    if n_classes < 2:
        raise ValueError(
            f"pred_probs must have at least 2 columns (classes), got {n_classes}."
        )
    if labels.dtype.kind not in "iub":
        if labels.dtype.kind == "f" and np.all(labels == np.round(labels)):
            labels = labels.astype(np.int64)
        else:
            raise ValueError(
                "labels must be integer class codes 0, ..., n_classes - 1 (the "
                f"columns of pred_probs), got dtype {labels.dtype}. Encode them "
                "with sklearn.preprocessing.LabelEncoder."
            )
    labels = labels.astype(np.int64)
    if labels.min() < 0 or labels.max() >= n_classes:
        raise ValueError(
            f"labels must lie in [0, {n_classes - 1}] (one code per column of "
            f"pred_probs), got values in [{labels.min()}, {labels.max()}]."
        )
    if pred_probs.min() < 0:
        raise ValueError("pred_probs must be non-negative.")
    return labels, pred_probs


def confident_off_diagonal(labels, pred_probs):
    """Rows counted off the diagonal of the confident joint (cleanlab's rule).

    Per-class thresholds ``t_k``, the mean ``pred_probs[i, k]`` over the rows
    labeled ``k``; a row confident in some class (``p_k >= t_k - 1e-6``) is
    assigned the most probable such class; it is off the diagonal when that
    class is not its label (``cleanlab.count.compute_confident_joint`` with
    ``return_indices_of_off_diagonals=True``).
    """
    n, n_classes = pred_probs.shape
    rows = np.arange(n)
    counts = np.bincount(labels, minlength=n_classes)
    sums = np.bincount(labels, weights=pred_probs[rows, labels], minlength=n_classes)
    with np.errstate(invalid="ignore", divide="ignore"):
        thresholds = sums / counts
    confident = pred_probs >= thresholds - _TOLERANCE
    n_confident = confident.sum(axis=1)
    guess = np.where(
        n_confident > 1, pred_probs.argmax(axis=1), confident.argmax(axis=1)
    )
    return (n_confident > 0) & (guess != labels)


def prediction_close_to_label(labels, pred_probs):
    """Rows whose label is (within 1e-6 of) the most probable class.

    cleanlab removes them from every flagged set but the ``low_*`` ones.
    """
    bumped = pred_probs.copy()
    bumped[np.arange(len(labels)), labels] += _TOLERANCE
    return bumped.argmax(axis=1) == labels


def quality_scores(labels, pred_probs, method):
    """cleanlab's label quality (``cleanlab.rank``): lower = more suspicious."""
    rows = np.arange(len(labels))
    self_confidence = pred_probs[rows, labels]
    if method == "self_confidence":
        return self_confidence
    others = pred_probs.copy()
    others[rows, labels] = -np.inf
    return (self_confidence - others.max(axis=1) + 1) / 2


def mislabel_posterior(log_odds_wrong, rate):
    """Posterior flip probability ``P(F = 1 | x, y~)`` under the flip rate ``rate``.

    ``log_odds_wrong`` is ``log((1 - p) / p)`` with ``p`` the model's
    probability of the observed label; the result is ``expit(logit(rate) +
    log_odds_wrong)`` = ``r (1 - p) / (r (1 - p) + (1 - r) p)``, strictly
    increasing in ``1 - p``. ``rate`` is clipped to [1e-12, 1 - 1e-12] so
    that the ranking survives an underflowed rate.
    """
    rate = min(max(float(rate), 1e-12), 1.0 - 1e-12)
    return expit(np.log(rate) - np.log1p(-rate) + np.asarray(log_odds_wrong))


def posterior_from_proba(labels, pred_probs, rate):
    """:func:`mislabel_posterior` of the normalized probability of each label."""
    rows = np.arange(len(labels))
    p = pred_probs[rows, labels] / np.maximum(pred_probs.sum(axis=1), 1e-300)
    p = np.clip(p, 1e-300, 1.0 - 1e-16)
    return mislabel_posterior(np.log1p(-p) - np.log(p), rate)


def cleanlab_flip_rate(labels, pred_probs):
    """Fraction of labels the calibrated confident joint says are flipped."""
    T = confident_joint_transition_matrix(pred_probs, labels)
    return implied_flip_rate(T, labels)


def issues_and_scores(labels, pred_probs, filter_by, noise_rate=None):
    """``(mask, mislabel_scores)`` of validated inputs under ``filter_by``.

    ``mislabel_scores`` is larger for more suspicious rows: the posterior flip
    probability for ``"posterior"``, ``1 - self_confidence`` otherwise.
    """
    if filter_by == "posterior":
        rate = (
            cleanlab_flip_rate(labels, pred_probs) if noise_rate is None else noise_rate
        )
        scores = posterior_from_proba(labels, pred_probs, rate)
        return scores > 0.5, scores
    scores = 1.0 - quality_scores(labels, pred_probs, "self_confidence")
    if filter_by == "confident_learning":
        mask = confident_off_diagonal(labels, pred_probs)
    else:  # predicted_neq_given
        mask = pred_probs.argmax(axis=1) != labels
    mask &= ~prediction_close_to_label(labels, pred_probs)
    return mask, scores


def rank_issues(mask, labels, pred_probs, mislabel_scores, rank_by):
    """Indices of the flagged rows, most suspicious first (as cleanlab orders)."""
    idx = np.flatnonzero(mask)
    if rank_by == "mislabel_score":
        return idx[np.argsort(-mislabel_scores[idx], kind="stable")]
    quality = quality_scores(labels, pred_probs, rank_by)
    # cleanlab's order_label_issues: np.argsort of the flagged rows' quality
    return idx[np.argsort(quality[mask])]


@validate_params(
    {
        "labels": ["array-like"],
        "pred_probs": ["array-like"],
        "filter_by": [StrOptions(set(FILTERS))],
        "noise_rate": [Interval(Real, 0, 1, closed="neither"), None],
        "return_indices_ranked_by": [StrOptions(set(RANKINGS)), None],
    },
    prefer_skip_nested_validation=True,
)
def find_label_issues(
    labels,
    pred_probs,
    *,
    filter_by="confident_learning",
    noise_rate=None,
    return_indices_ranked_by=None,
):
    """Find the likely mislabeled rows from out-of-fold predicted probabilities.

    The everyday route of ``cleanlab.filter.find_label_issues``: ``pred_probs``
    come from any classifier, out of fold (e.g. ``cross_val_predict(clf, X, y,
    method="predict_proba")``), and the rule is that of one of the package's
    noise correctors:

    - ``"confident_learning"``, the rule of
      :class:`ClassConditionalNoiseCorrector` (whose transition matrix is
      estimated from the same confident joint): the rows counted off the
      diagonal of the confident joint, i.e. confidently predicted as another
      class than their label. Equal to cleanlab's
      ``filter_by="confident_learning"`` on the same ``pred_probs``.
    - ``"predicted_neq_given"``: the rows whose most probable class is not
      their label. Equal to cleanlab's option of that name.
    - ``"posterior"``, the rule of :class:`InstanceNoiseCorrector`: the rows
      whose posterior flip probability ``r (1 - p) / (r (1 - p) + (1 - r) p)``
      exceeds 1/2 (``p`` the probability of the label, ``r`` the flip rate),
      i.e. ``p < r``: the rows more likely flipped than not.

    As cleanlab does, the first two leave out the rows whose label is within
    1e-6 of the most probable class.

    Read more in the :ref:`User Guide <label_noise>`.

    Parameters
    ----------
    labels : array-like of shape (n_samples,)
        Observed labels, integer codes ``0, ..., n_classes - 1`` (the columns
        of ``pred_probs``; encode other labels with
        :class:`~sklearn.preprocessing.LabelEncoder`).
    pred_probs : array-like of shape (n_samples, n_classes)
        Out-of-fold predicted probabilities of each class.
    filter_by : {"confident_learning", "predicted_neq_given", "posterior"}, \
            default="confident_learning"
        The rule that flags a row (see above).
    noise_rate : float in (0, 1) or None, default=None
        Prior flip rate ``r`` of the ``"posterior"`` rule. ``None`` uses the
        fraction of flipped labels implied by the calibrated confident joint
        (cleanlab's estimate of the noise rate). Unused by the other rules.
    return_indices_ranked_by : {"self_confidence", "normalized_margin", \
            "mislabel_score"} or None, default=None
        ``None`` returns a boolean mask. Otherwise the indices of the flagged
        rows, most suspicious first, by cleanlab's label quality score of
        that name (ascending, as ``cleanlab.rank.order_label_issues`` sorts)
        or by the mislabel score (descending): the posterior flip probability
        for ``"posterior"``, ``1 - self_confidence`` otherwise.

    Returns
    -------
    label_issues : ndarray of bool of shape (n_samples,) or ndarray of int
        The mask of the flagged rows, or their ranked indices.

    See Also
    --------
    InstanceNoiseCorrector.find_label_issues : Fit NDX and flag by its posterior.
    ClassConditionalNoiseCorrector.find_label_issues : Fit and flag by the
        confident joint of its out-of-fold probabilities.
    LabelIssuesDisplay : Plot the ranking of the flagged rows.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_iclr26.label_noise import find_label_issues
    >>> labels = np.array([0, 0, 1, 1, 1])
    >>> pred_probs = np.array(
    ...     [[0.9, 0.1], [0.2, 0.8], [0.1, 0.9], [0.3, 0.7], [0.2, 0.8]]
    ... )
    >>> find_label_issues(labels, pred_probs)
    array([False,  True, False, False, False])
    >>> find_label_issues(
    ...     labels, pred_probs, return_indices_ranked_by="self_confidence"
    ... )
    array([1])
    """
    labels, pred_probs = check_labels_pred_probs(labels, pred_probs)
    mask, scores = issues_and_scores(labels, pred_probs, filter_by, noise_rate)
    if return_indices_ranked_by is None:
        return mask
    return rank_issues(mask, labels, pred_probs, scores, return_indices_ranked_by)
