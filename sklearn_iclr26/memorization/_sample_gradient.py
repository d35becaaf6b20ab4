"""Memorization and mislabel scores from cumulative sample gradients (CSG)."""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import copy
from numbers import Integral, Real

import numpy as np
from scipy.special import softmax

from sklearn_iclr26.memorization._common import NetView, confident_disagreement_count
from sklearn_iclr26.utils._sklearn_compat import Interval, StrOptions
from sklearn_iclr26.utils._torch import forward_module
from sklearn_iclr26.utils._torch_estimator import (
    BaseTorchEstimator,
    TorchClassifierMixin,
)
from sklearn_iclr26.utils._validation import check_hidden_layer_sizes, store_params
from sklearn_iclr26.utils._verbose import log_progress
from sklearn_iclr26.utils._warnings import warn_user

__all__ = ["SampleGradientMemorization"]

_RANKINGS = ("mislabel_score", "csg", "sgal", "csl")


class SampleGradientMemorization(TorchClassifierMixin, BaseTorchEstimator):
    """Memorization and mislabel scores from cumulative sample gradients.

    Trains an MLP while accumulating, for every training row, the squared norm
    of the loss gradient with respect to its input (**CSG**, Ravikumar et al.,
    "Memorization Through the Lens of Sample Gradients", ICLR 2026), summed
    over epochs up to the **peak of the weight norm**: with weight decay the
    norm rises while the network fits and falls afterwards, and the paper stops
    there, with no validation set. It also keeps the cumulative sample loss up
    to that peak (**SGAL**) and over the whole run (**CSL**). Rows with large
    CSG are hard to learn: memorized, atypical or mislabeled. The gradients
    come from the training step's own backward pass (the callback
    :class:`CumulativeSampleGradient`), so the scores cost one truncated
    training run.

    Read more in the :ref:`User Guide <memorization>`.

    Parameters
    ----------
    hidden_layer_sizes : array-like of int, default=(64,)
        Width of each hidden layer.
    activation : {"relu", "tanh", "gelu"}, default="relu"
        Hidden-layer non-linearity.
    optimizer : {"sgd", "adam"}, default="sgd"
        SGD with momentum 0.9 (the setting of the paper's theory) or Adam (its
        main experiments).
    learning_rate_init : float, default=0.05
        Learning rate.
    alpha : float, default=5e-4
        L2 penalty (the optimizer's weight decay). The weight-norm peak needs
        it: without it the norm of a separable cross-entropy fit keeps growing
        and no peak is found (a warning says so and all epochs are used).
    max_iter : int, default=100
        Maximum number of epochs.
    n_iter_no_change : int, default=3
        Epochs the weight norm must stay below its running maximum to confirm
        the peak (the method's own stopping rule, no validation set); also the
        patience of ``early_stopping``.
    min_peak_iter : int, default=5
        First epoch that can be the weight-norm peak (a warm-up): earlier
        epochs never stop training or bound the scores. With mini-batch SGD
        the norm can dip right after epoch 1, and a rule starting there stops
        before the network has fit anything (mislabel AUROC 0.76-0.89 instead
        of about 0.95 in the audit's breast-cancer runs). ``1`` is the
        unguarded rule.
    final_model : {"stopped", "full"}, default="stopped"
        Network used by :meth:`predict`: the one restored at the weight-norm
        peak (the paper's early stop, cheap, but it costs accuracy: 0.749 ->
        0.631 in the paper's ResNet-18/CIFAR-100 example) or the one trained
        for all ``max_iter`` epochs. The scores come from the run up to the
        peak in both cases; CSL covers all epochs run. Ignored with
        ``early_stopping=True``: the validation stop then ends training and
        keeps the best validation epoch (``best_iter_``); the peak, if
        reached before, still bounds the scores.
    score_type : {"csg", "sgal", "csl"}, default="csg"
        Score exposed as ``memorization_scores_``.
    label_issue_fraction : float in (0, 1) or None, default=None
        Fraction of training rows flagged in ``label_issues_`` (the largest
        ``mislabel_scores_``). ``None`` flags as many rows as the network
        restored at the peak (the last-epoch one when no peak is found)
        confidently assigns to another class than their label (cleanlab's
        confident-learning count on its probabilities: per-class thresholds
        at the mean probability of the class, so a row it is merely unsure
        about is not counted): an estimate of the number of wrong labels from
        a model that has not yet memorized them. It used to count every
        misclassified row, which flagged 46-48 % of a hard 3-class table
        (36 % now; see the user guide).
    random_state : int, RandomState instance or None, default=None
        Seeds weight initialisation and shuffling; a fixed value gives
        bit-identical scores.
    verbose : int, default=0
        If positive, print the loss per epoch and a summary.
    %(training_parameters)s

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        Class labels.
    n_features_in_ : int
        Number of features seen during fit.
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of features seen during fit, if all strings.
    csg_scores_ : ndarray of shape (n_samples,)
        Cumulative squared input-gradient norm up to the peak epoch (0 for
        rows held out by ``early_stopping``).
    sgal_scores_ : ndarray of shape (n_samples,)
        Cumulative sample loss up to the peak epoch (SGAL).
    csl_scores_ : ndarray of shape (n_samples,)
        Cumulative sample loss over all epochs run (CSL).
    memorization_scores_ : ndarray of shape (n_samples,)
        The ``score_type`` score.
    mislabel_scores_ : ndarray of shape (n_samples,)
        CSG (larger = more likely mislabeled), the paper's mislabel detector.
    label_issues_ : ndarray of bool, shape (n_samples,)
        Training rows flagged as likely mislabeled.
    weight_norm_history_ : ndarray of shape (n_iter_ + 1,)
        Weight norm at initialisation and after every epoch.
    mean_input_grad_history_ : ndarray of shape (n_iter_,)
        Mean squared input-gradient norm per epoch.
    peak_iter_ : int
        Epoch (1-based) of the weight-norm peak, the last epoch the scores
        sum over; the last epoch when no peak was found. With
        ``final_model="stopped"`` it is also ``best_iter_``.
    peak_found_ : bool
        Whether a weight-norm peak was found.
    %(training_attributes)s

    See Also
    --------
    CumulativeSampleGradient : The skorch callback doing the accumulation.
    RLPHeadClassifier : Memorization through random-label heads.
    cleanlab.classification.CleanLearning : Label issues from out-of-fold
        probabilities.

    Examples
    --------
    >>> from sklearn.datasets import load_breast_cancer
    >>> from sklearn.preprocessing import StandardScaler
    >>> from sklearn_iclr26.datasets import make_label_noise
    >>> from sklearn_iclr26.memorization import SampleGradientMemorization
    >>> X, y = load_breast_cancer(return_X_y=True)
    >>> X = StandardScaler().fit_transform(X)
    >>> y_noisy, flipped = make_label_noise(y, kind="symmetric", rate=0.2,
    ...                                     random_state=0)
    >>> est = SampleGradientMemorization(random_state=0).fit(X, y_noisy)
    >>> est.mislabel_scores_.shape
    (569,)
    """

    _parameter_constraints: dict = {
        **BaseTorchEstimator._parameter_constraints,
        "hidden_layer_sizes": ["array-like"],
        "activation": [StrOptions({"relu", "tanh", "gelu"})],
        "optimizer": [StrOptions({"sgd", "adam"})],
        "final_model": [StrOptions({"stopped", "full"})],
        "score_type": [StrOptions({"csg", "sgal", "csl"})],
        "label_issue_fraction": [Interval(Real, 0, 1, closed="neither"), None],
        "min_peak_iter": [Interval(Integral, 1, None, closed="left")],
    }

    #: the scores are those of the cross-entropy fit
    _accepts_criterion = False

    def __init__(
        self,
        hidden_layer_sizes=(64,),
        *,
        activation="relu",
        optimizer="sgd",
        min_peak_iter=5,
        final_model="stopped",
        score_type="csg",
        label_issue_fraction=None,
        alpha=5e-4,
        batch_size=None,
        learning_rate_init=0.05,
        max_iter=100,
        early_stopping=False,
        validation_fraction=0.1,
        n_iter_no_change=3,
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

    def _module_spec(self, X, n_outputs, sample_weight=None):
        from sklearn_iclr26.memorization._modules import MLPNet

        return MLPNet, {
            "n_features": X.shape[1],
            "n_outputs": n_outputs,
            "hidden_layer_sizes": check_hidden_layer_sizes(
                self.hidden_layer_sizes, allow_empty=False
            ),
            "activation": self.activation,
        }

    def _criterion_spec(self, n_outputs):
        from sklearn_iclr26.memorization._modules import PerSampleCrossEntropy

        return PerSampleCrossEntropy, None

    def _training_options(self, X, y):
        from sklearn_iclr26.memorization._cumulative_sample_gradient import (
            CumulativeSampleGradient,
        )
        from sklearn_iclr26.memorization._modules import SGDMomentum

        # with early_stopping the validation stop ends training and picks the
        # weights; the weight-norm peak then only bounds the scores
        callback = CumulativeSampleGradient(
            patience=self.n_iter_no_change,
            min_epoch=self.min_peak_iter,
            stop_at_peak=self.final_model == "stopped" and not self.early_stopping,
        )
        return {
            "aux": {"sample_id": np.arange(X.shape[0], dtype=np.int64)},
            "optimizer": SGDMomentum if self.optimizer == "sgd" else "adam",
            "callbacks": [("cumulative_sample_gradient", callback)],
        }

    def _after_training(self, X, y):
        callback = dict(self.net_.callbacks_)["cumulative_sample_gradient"]
        n = X.shape[0]
        self.peak_found_ = callback.peak_epoch_ is not None
        if self.peak_found_:
            self.peak_iter_ = int(callback.peak_epoch_)
            if callback._stopped:  # this run stopped there and restored them
                self.best_iter_ = self.peak_iter_
        else:
            self.peak_iter_ = self.n_iter_
            flags = (
                "label_issues_ holds the rows the last-epoch network confidently "
                "assigns to another class: label errors and the rows it has not "
                "learned yet alike (on a 3-class table where it reached 0.57 clean "
                "accuracy, 36 % of the rows at precision 0.27 for 20 % flips). Rank "
                "by mislabel_scores_ and set label_issue_fraction to your noise "
                "rate if you know it."
                if self.label_issue_fraction is None
                else "label_issues_ holds the label_issue_fraction highest scores."
            )
            warn_user(
                f"No weight-norm peak was found in the {self.n_iter_} epochs run "
                f"(max_iter={self.max_iter}, alpha={self.alpha}): the scores sum "
                "over all epochs and the model of the last epoch is used. On tabular "
                "data the norm often keeps rising (no peak in 100-300 epochs, SGD or "
                "Adam, alpha 5e-4 or 5e-3, on keel vehicle and contraceptive). " + flags
            )

        def full(scores):  # rows held out by early_stopping score 0
            return np.pad(scores, (0, n - len(scores)))

        self.csg_scores_ = full(callback.csg_at_peak_)
        self.sgal_scores_ = full(callback.csl_at_peak_)
        self.csl_scores_ = full(callback.csl_)
        self.weight_norm_history_ = np.asarray(callback.weight_norm_history_)
        self.mean_input_grad_history_ = np.asarray(callback.mean_input_grad_history_)
        self.memorization_scores_ = {
            "csg": self.csg_scores_,
            "sgal": self.sgal_scores_,
            "csl": self.csl_scores_,
        }[self.score_type]
        self.mislabel_scores_ = self.csg_scores_

        if self.label_issue_fraction is None:
            state = callback.peak_state_dict()
            score_net = self.net_
            if state is not None and self.final_model != "stopped":
                module = copy.deepcopy(self.net_.module_)
                module.load_state_dict(state)
                score_net = NetView(module, self.net_.device)
            logits = forward_module(score_net, X, dtype=self.dtype, n_jobs=self.n_jobs)
            proba = softmax(np.asarray(logits, dtype=np.float64), axis=1)
            n_issues = confident_disagreement_count(y, proba)
        else:
            n_issues = round(self.label_issue_fraction * n)
        mask = np.zeros(n, dtype=bool)
        if n_issues > 0:
            order = np.argsort(-self.mislabel_scores_, kind="stable")
            mask[order[:n_issues]] = True
        self.label_issues_ = mask
        log_progress(
            self,
            f"weight-norm peak at epoch {self.peak_iter_} of {self.n_iter_} run; "
            f"{n_issues} label issues flagged",
        )

    def find_label_issues(
        self, X, y, sample_weight=None, *, return_indices_ranked_by=None
    ):
        """Fit on ``(X, y)`` and return the likely mislabeled rows.

        Mirrors ``cleanlab.classification.CleanLearning.find_label_issues``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training data.
        y : array-like of shape (n_samples,)
            Observed labels.
        sample_weight : array-like of shape (n_samples,), default=None
            Per-row loss weights.
        return_indices_ranked_by : {"mislabel_score", "csg", "sgal", "csl"} \
                or None, default=None
            ``None`` returns the boolean mask ``label_issues_``; otherwise the
            indices of the flagged rows, most suspicious first by that score.

        Returns
        -------
        issues : ndarray of bool of shape (n_samples,) or ndarray of int
            The mask or the ranked indices.
        """
        if return_indices_ranked_by is not None and return_indices_ranked_by not in (
            _RANKINGS
        ):
            raise ValueError(
                f"return_indices_ranked_by must be None or one of {_RANKINGS}, got "
                f"{return_indices_ranked_by!r}."
            )
        self.fit(X, y, sample_weight=sample_weight)
        if return_indices_ranked_by is None:
            return self.label_issues_.copy()
        scores = {
            "mislabel_score": self.mislabel_scores_,
            "csg": self.csg_scores_,
            "sgal": self.sgal_scores_,
            "csl": self.csl_scores_,
        }[return_indices_ranked_by]
        idx = np.flatnonzero(self.label_issues_)
        return idx[np.argsort(-scores[idx], kind="stable")]

    def _representation(self, X):
        """Last hidden layer of the fitted network (for the memorization probe)."""
        return self._forward(
            X, func=lambda module, xb, **aux: module.representation(xb)
        )
