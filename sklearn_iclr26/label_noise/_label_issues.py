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

# cleanlab 2.9's filter_by options (its default first), then the package's own
CLEANLAB_FILTERS = (
    "prune_by_noise_rate",
    "prune_by_class",
    "both",
    "confident_learning",
    "predicted_neq_given",
    "low_normalized_margin",
    "low_self_confidence",
)
FILTERS = (*CLEANLAB_FILTERS, "posterior")
RANKINGS = ("self_confidence", "normalized_margin", "mislabel_score")
# cleanlab's FLOATING_POINT_COMPARISON
_TOLERANCE = 1e-6
# rows of pred_probs must sum to 1 within this (float32 softmax outputs do)
_SUM_TOLERANCE = 1e-3


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
    if pred_probs.min() < -_TOLERANCE or pred_probs.max() > 1 + _TOLERANCE:
        raise ValueError(
            "pred_probs must be probabilities in [0, 1], got values in "
            f"[{pred_probs.min():.4g}, {pred_probs.max():.4g}]. Pass "
            "predict_proba outputs, not decision_function scores or logits."
        )
    sums = pred_probs.sum(axis=1)
    bad = np.abs(sums - 1.0) > _SUM_TOLERANCE
    if np.any(bad):
        raise ValueError(
            f"Each row of pred_probs must sum to 1 (within {_SUM_TOLERANCE:g}); "
            f"{int(bad.sum())} of {len(sums)} rows do not (row sums in "
            f"[{sums.min():.4g}, {sums.max():.4g}]). Pass predict_proba outputs "
            "with one column per class."
        )
    return labels, pred_probs


def confident_off_diagonal(labels, pred_probs, thresholds=None):
    """Rows counted off the diagonal of the confident joint (cleanlab's rule).

    Per-class thresholds ``t_k``, the mean ``pred_probs[i, k]`` over the rows
    labeled ``k``; a row confident in some class (``p_k >= t_k - 1e-6``) is
    assigned the most probable such class; it is off the diagonal when that
    class is not its label (``cleanlab.count.compute_confident_joint`` with
    ``return_indices_of_off_diagonals=True``). ``thresholds`` given (those of
    all the rows, for one block of them) are used as they are.
    """
    n, n_classes = pred_probs.shape
    if thresholds is None:
        rows = np.arange(n)
        counts = np.bincount(labels, minlength=n_classes)
        sums = np.bincount(
            labels, weights=pred_probs[rows, labels], minlength=n_classes
        )
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


def _round_preserving_sum(floats):
    """cleanlab's ``round_preserving_sum``: round, keep the (rounded) total."""
    floats = np.asarray(floats, dtype=float)
    ints = floats.round()
    orig_sum = np.sum(floats).round()
    int_sum = np.sum(ints).round()
    while abs(int_sum - orig_sum) > _TOLERANCE:
        diff = np.round(orig_sum - int_sum)
        increment = -1 if int(diff < 0.0) else 1
        changes = min(int(abs(diff)), len(floats))
        indices = np.argsort(floats - ints)[::-increment][:changes]
        for i in indices:
            ints[i] = ints[i] + increment
        int_sum = np.sum(ints).round()
    return ints.astype(int)


def _round_preserving_row_totals(matrix):
    return np.array([_round_preserving_sum(row) for row in matrix], dtype=int)


def cleanlab_confident_joint(labels, pred_probs):
    """cleanlab's calibrated integer confident joint ``C[given, true]``.

    ``cleanlab.count.compute_confident_joint(labels, pred_probs,
    calibrate=True)``: per-class thresholds (the mean self-confidence of each
    class, 2 for a class without rows, floored at 2e-6), the count matrix with
    its diagonal floored at 1, each row rescaled to its class count, the whole
    to ``n``, then rounded preserving row totals.
    """
    n_classes = pred_probs.shape[1]
    present = np.bincount(labels, minlength=n_classes) > 0
    thresholds = np.array(
        [
            np.mean(pred_probs[:, k][labels == k]) if present[k] else 2.0
            for k in range(n_classes)
        ]
    )
    thresholds = np.clip(thresholds, 2 * _TOLERANCE, None)
    confident = pred_probs >= thresholds - _TOLERANCE
    n_confident = confident.sum(axis=1)
    guess = np.where(
        n_confident > 1, pred_probs.argmax(axis=1), confident.argmax(axis=1)
    )
    keep = n_confident > 0
    C = np.zeros((n_classes, n_classes), dtype=np.int64)
    np.add.at(C, (labels[keep], guess[keep]), 1)
    np.fill_diagonal(C, np.maximum(np.diag(C), 1))
    counts = np.bincount(labels, minlength=n_classes).astype(float)
    calibrated = (C.T / np.clip(C.sum(axis=1), 1e-100, None) * counts).T
    calibrated = calibrated / np.clip(calibrated.sum(), 1e-100, None) * counts.sum()
    return _round_preserving_row_totals(calibrated)


def _prune_count_matrix(confident_joint, min_examples=1):
    """cleanlab's ``_keep_at_least_n_per_class`` (``frac_noise=1``)."""
    matrix = confident_joint.T
    diagonal = np.diagonal(matrix)
    new_diagonal = np.maximum(diagonal, min_examples)
    diff_per_col = new_diagonal - diagonal
    per_col = np.maximum(np.count_nonzero(matrix, axis=0) - 1.0, 1.0)
    new = matrix - diff_per_col / per_col
    new[new < 0] = 0
    np.fill_diagonal(new, new_diagonal)
    # cleanlab's _reduce_prune_counts at frac_noise=1 truncates to int
    new = new.astype(int)
    return _round_preserving_row_totals(new).astype(int)


def _prune_mask(labels, pred_probs, how):
    """cleanlab's ``prune_by_class`` / ``prune_by_noise_rate`` masks."""
    n_classes = pred_probs.shape[1]
    prune = _prune_count_matrix(cleanlab_confident_joint(labels, pred_probs))
    mask = np.zeros(len(labels), dtype=bool)
    for k in range(n_classes):
        rows = labels == k
        class_probs = pred_probs[rows]
        n_rows = class_probs.shape[0]
        class_mask = np.zeros(n_rows, dtype=bool)
        if n_rows <= 1:  # cleanlab's min_examples_per_class=1: nothing pruned
            continue
        column = prune[:, k]
        if how == "prune_by_class":
            n_issues = n_rows - column[k]
            if n_issues >= 1:
                order = np.argsort(class_probs[:, k])
                class_mask[order[:n_issues]] = True
        else:
            for j in range(n_classes):
                if j != k and column[j] > 0:
                    margin = class_probs[:, j] - class_probs[:, k]
                    order = np.argsort(-margin)
                    class_mask[order[: column[j]]] = True
        mask[rows] = class_mask
    return mask


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


def top_fraction(scores, rate):
    """Mask of the ``round(rate * n)`` highest scores (ties in row order)."""
    n_flag = round(float(rate) * len(scores))
    mask = np.zeros(len(scores), dtype=bool)
    mask[np.argsort(-scores, kind="stable")[:n_flag]] = True
    return mask


def issues_and_scores(labels, pred_probs, filter_by, noise_rate=None):
    """``(mask, mislabel_scores)`` of validated inputs under ``filter_by``.

    ``mislabel_scores`` is larger for more suspicious rows: the posterior flip
    probability for ``"posterior"``, ``1 - self_confidence`` otherwise. The
    cleanlab filters return the mask of ``cleanlab.filter.find_label_issues``
    with that ``filter_by`` (at its defaults).
    """
    if filter_by == "posterior":
        rate = (
            cleanlab_flip_rate(labels, pred_probs) if noise_rate is None else noise_rate
        )
        scores = posterior_from_proba(labels, pred_probs, rate)
        return top_fraction(scores, rate), scores
    scores = 1.0 - quality_scores(labels, pred_probs, "self_confidence")
    if filter_by in ("low_self_confidence", "low_normalized_margin"):
        # cleanlab: the num_label_issues (off-diagonal count) lowest scores
        n_issues = int(
            np.sum(
                confident_off_diagonal(labels, pred_probs)
                & ~prediction_close_to_label(labels, pred_probs)
            )
        )
        quality = quality_scores(labels, pred_probs, filter_by[4:])
        mask = np.zeros(len(labels), dtype=bool)
        mask[np.argsort(quality)[:n_issues]] = True
        return mask, scores
    if filter_by == "confident_learning":
        mask = confident_off_diagonal(labels, pred_probs)
    elif filter_by == "predicted_neq_given":
        mask = pred_probs.argmax(axis=1) != labels
    elif filter_by == "both":
        mask = _prune_mask(labels, pred_probs, "prune_by_class") & _prune_mask(
            labels, pred_probs, "prune_by_noise_rate"
        )
    else:  # prune_by_noise_rate, prune_by_class
        mask = _prune_mask(labels, pred_probs, filter_by)
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
    filter_by="prune_by_noise_rate",
    noise_rate=None,
    return_indices_ranked_by=None,
):
    """Find the likely mislabeled rows from out-of-fold predicted probabilities.

    The everyday route of ``cleanlab.filter.find_label_issues``: ``pred_probs``
    come from any classifier, out of fold (e.g. ``cross_val_predict(clf, X, y,
    method="predict_proba")``). The default and the filters named as in
    cleanlab 2.9 return cleanlab's mask on the same ``pred_probs`` (at
    cleanlab's defaults for its other arguments):

    - ``"prune_by_noise_rate"`` (cleanlab's default): for each pair of a
      given class ``k`` and another class ``j``, the rows labeled ``k`` with
      the largest margin ``p_j - p_k``, as many as the calibrated confident
      joint counts in ``(k, j)``.
    - ``"prune_by_class"``: in each class, the rows with the lowest
      probability of their label, as many as the confident joint counts off
      the diagonal of that class. ``"both"``: rows flagged by both.
    - ``"confident_learning"``, the rule of
      :class:`ClassConditionalNoiseCorrector` (whose transition matrix is
      estimated from the same confident joint): the rows counted off the
      diagonal of the confident joint, i.e. confidently predicted as another
      class than their label.
    - ``"predicted_neq_given"``: the rows whose most probable class is not
      their label.
    - ``"low_self_confidence"`` / ``"low_normalized_margin"``: the rows with
      the lowest label quality score of that name, as many as
      ``"confident_learning"`` flags.
    - ``"posterior"`` (not in cleanlab), the rule of
      :class:`InstanceNoiseCorrector`: the ``round(r * n)`` rows with the
      largest posterior flip probability ``r (1 - p) / (r (1 - p) + (1 - r)
      p)`` (``p`` the probability of the label, ``r`` the flip rate; ties in
      row order), as many as the estimated number of flips. (Flagging the
      rows with a posterior above 1/2, ``p < r``, flagged far fewer: recall
      0.04-0.38 on 32 classes.)

    As cleanlab does, all but the ``"low_*"`` and ``"posterior"`` rules leave
    out the rows whose label is within 1e-6 of the most probable class.

    Read more in the :ref:`User Guide <label_noise>`.

    Parameters
    ----------
    labels : array-like of shape (n_samples,)
        Observed labels, integer codes ``0, ..., n_classes - 1`` (the columns
        of ``pred_probs``; encode other labels with
        :class:`~sklearn.preprocessing.LabelEncoder`).
    pred_probs : array-like of shape (n_samples, n_classes)
        Out-of-fold predicted probabilities of each class: values in [0, 1],
        each row summing to 1 (within 1e-3), else a ``ValueError``.
    filter_by : {"prune_by_noise_rate", "prune_by_class", "both", \
            "confident_learning", "predicted_neq_given", \
            "low_normalized_margin", "low_self_confidence", "posterior"}, \
            default="prune_by_noise_rate"
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
