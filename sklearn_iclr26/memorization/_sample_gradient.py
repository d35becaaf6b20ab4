"""Memorization and mislabel scores from cumulative sample gradients (CSG)."""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import copy
from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, _fit_context
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted, validate_data

from sklearn_iclr26.memorization._common import NetView, hidden_sizes, softmax
from sklearn_iclr26.memorization._cumulative_sample_gradient import (
    CumulativeSampleGradient,
)
from sklearn_iclr26.utils._torch import fit_or_restore, forward_module, train_module
from sklearn_iclr26.utils._validation import (
    N_JOBS_CONSTRAINT,
    validate_classifier_fit_data,
)
from sklearn_iclr26.utils._verbose import log_progress
from sklearn_iclr26.utils._warnings import warn_user

__all__ = ["SampleGradientMemorization"]

_RANKINGS = ("mislabel_score", "csg", "sgal", "csl")


class SampleGradientMemorization(ClassifierMixin, BaseEstimator):
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
    weight_decay : float, default=5e-4
        L2 weight decay of the optimizer. The weight-norm peak needs it:
        without it the norm of a separable cross-entropy fit keeps growing and
        no peak is found (a warning says so and all epochs are used).
    max_iter : int, default=100
        Maximum number of epochs.
    batch_size : int or None, default=None
        Mini-batch size, clipped to ``n_samples``; ``None`` means full batch.
    patience : int, default=3
        Epochs the weight norm must stay below its running maximum to confirm
        the peak.
    final_model : {"stopped", "full"}, default="stopped"
        Network used by :meth:`predict`: the one restored at the weight-norm
        peak (the paper's early stop, cheap, but it costs accuracy: 0.749 ->
        0.631 in the paper's ResNet-18/CIFAR-100 example) or the one trained
        for all ``max_iter`` epochs. The scores come from the run up to the
        peak in both cases; CSL covers all epochs run.
    proxy : {"csg", "sgal", "csl"}, default="csg"
        Score exposed as ``memorization_scores_``.
    label_issue_fraction : float in (0, 1) or None, default=None
        Fraction of training rows flagged in ``label_issues_`` (the largest
        ``mislabel_scores_``). ``None`` flags as many rows as the network
        restored at the peak misclassifies (an estimate of the number of wrong
        labels from a model that has not yet memorized them).
    dtype : {"float64", "float32"}, default="float64"
        Precision of the torch module.
    device : str, default="cpu"
        torch device.
    n_jobs : int or None, default=None
        torch threads; ``None`` means 1.
    random_state : int, RandomState instance or None, default=None
        Seeds weight initialisation and shuffling; a fixed value gives
        bit-identical scores.
    verbose : int, default=0
        If positive, print the loss per epoch and a summary.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        Class labels.
    n_features_in_ : int
        Number of features seen during fit.
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of features seen during fit, if all strings.
    csg_scores_ : ndarray of shape (n_samples,)
        Cumulative squared input-gradient norm up to the stopping epoch.
    sgal_scores_ : ndarray of shape (n_samples,)
        Cumulative sample loss up to the stopping epoch (SGAL).
    csl_scores_ : ndarray of shape (n_samples,)
        Cumulative sample loss over all epochs run (CSL).
    memorization_scores_ : ndarray of shape (n_samples,)
        The ``proxy`` score.
    mislabel_scores_ : ndarray of shape (n_samples,)
        CSG (larger = more likely mislabeled), the paper's mislabel detector.
    label_issues_ : ndarray of bool, shape (n_samples,)
        Training rows flagged as likely mislabeled.
    weight_norm_history_ : ndarray of shape (n_iter_ + 1,)
        Weight norm at initialisation and after every epoch.
    mean_input_grad_history_ : ndarray of shape (n_iter_,)
        Mean squared input-gradient norm per epoch.
    stop_epoch_ : int
        Epoch (1-based) of the weight-norm peak, or the last epoch when no
        peak was found.
    peak_found_ : bool
        Whether a weight-norm peak was found.
    n_iter_ : int
        Number of epochs run.
    net_ : skorch.NeuralNet
        The fitted net used by :meth:`predict`.

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
        "hidden_layer_sizes": ["array-like"],
        "activation": [StrOptions({"relu", "tanh", "gelu"})],
        "optimizer": [StrOptions({"sgd", "adam"})],
        "learning_rate_init": [Interval(Real, 0, None, closed="neither")],
        "weight_decay": [Interval(Real, 0, None, closed="left")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "batch_size": [Interval(Integral, 1, None, closed="left"), None],
        "patience": [Interval(Integral, 1, None, closed="left")],
        "final_model": [StrOptions({"stopped", "full"})],
        "proxy": [StrOptions({"csg", "sgal", "csl"})],
        "label_issue_fraction": [Interval(Real, 0, 1, closed="neither"), None],
        "dtype": [StrOptions({"float64", "float32"})],
        "device": [str],
        "n_jobs": N_JOBS_CONSTRAINT,
        "random_state": ["random_state"],
        "verbose": ["verbose"],
    }

    def __init__(
        self,
        hidden_layer_sizes=(64,),
        *,
        activation="relu",
        optimizer="sgd",
        learning_rate_init=0.05,
        weight_decay=5e-4,
        max_iter=100,
        batch_size=None,
        patience=3,
        final_model="stopped",
        proxy="csg",
        label_issue_fraction=None,
        dtype="float64",
        device="cpu",
        n_jobs=None,
        random_state=None,
        verbose=0,
    ):
        self.hidden_layer_sizes = hidden_layer_sizes
        self.activation = activation
        self.optimizer = optimizer
        self.learning_rate_init = learning_rate_init
        self.weight_decay = weight_decay
        self.max_iter = max_iter
        self.batch_size = batch_size
        self.patience = patience
        self.final_model = final_model
        self.proxy = proxy
        self.label_issue_fraction = label_issue_fraction
        self.dtype = dtype
        self.device = device
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.verbose = verbose

    @fit_or_restore
    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, sample_weight=None):
        """Train the network and compute the scores of the training rows.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training data (scale it: input gradients depend on the scale).
        y : array-like of shape (n_samples,)
            Observed (possibly noisy) labels.
        sample_weight : array-like of shape (n_samples,), default=None
            Per-row loss weights; rows of zero weight get zero CSG.

        Returns
        -------
        self : object
            Fitted estimator.
        """
        from sklearn_iclr26.memorization._modules import (
            MLPNet,
            PerSampleCrossEntropy,
            SGDMomentum,
        )

        X, _, y_enc, sample_weight = validate_classifier_fit_data(
            self, X, y, sample_weight, dtype=[np.float64, np.float32]
        )
        hidden = hidden_sizes(self.hidden_layer_sizes)
        n = X.shape[0]
        callback = CumulativeSampleGradient(
            patience=self.patience, stop_at_peak=self.final_model == "stopped"
        )
        net = train_module(
            MLPNet,
            X,
            y_enc,
            criterion=PerSampleCrossEntropy,
            module_params={
                "n_features": X.shape[1],
                "n_outputs": len(self.classes_),
                "hidden_layer_sizes": hidden,
                "activation": self.activation,
            },
            sample_weight=sample_weight,
            aux={"sample_id": np.arange(n, dtype=np.int64)},
            max_epochs=self.max_iter,
            batch_size=self.batch_size,
            learning_rate=self.learning_rate_init,
            optimizer=SGDMomentum if self.optimizer == "sgd" else "adam",
            weight_decay=self.weight_decay,
            dtype=self.dtype,
            device=self.device,
            random_state=self.random_state,
            n_jobs=self.n_jobs,
            verbose=self.verbose,
            callbacks=[callback],
        )
        self.net_ = net
        self.n_iter_ = len(callback.mean_input_grad_history_)
        self.peak_found_ = callback.peak_epoch_ is not None
        if self.peak_found_:
            self.stop_epoch_ = int(callback.peak_epoch_)
        else:
            self.stop_epoch_ = self.n_iter_
            warn_user(
                f"No weight-norm peak was found within max_iter={self.max_iter} "
                f"epochs (weight_decay={self.weight_decay}): the scores sum over "
                "all epochs and the model of the last epoch is used. Increase "
                "max_iter or weight_decay."
            )
        self.csg_scores_ = callback.csg_at_peak_
        self.sgal_scores_ = callback.csl_at_peak_
        self.csl_scores_ = callback.csl_
        self.weight_norm_history_ = np.asarray(callback.weight_norm_history_)
        self.mean_input_grad_history_ = np.asarray(callback.mean_input_grad_history_)
        self.memorization_scores_ = {
            "csg": self.csg_scores_,
            "sgal": self.sgal_scores_,
            "csl": self.csl_scores_,
        }[self.proxy]
        self.mislabel_scores_ = self.csg_scores_

        if self.label_issue_fraction is None:
            state = callback.peak_state_dict()
            if state is None or self.final_model == "stopped":
                score_net = net
            else:
                module = copy.deepcopy(net.module_)
                module.load_state_dict(state)
                score_net = NetView(module, net.device)
            logits = forward_module(score_net, X, dtype=self.dtype, n_jobs=self.n_jobs)
            n_issues = int(np.sum(np.argmax(logits, axis=1) != y_enc))
        else:
            n_issues = round(self.label_issue_fraction * n)
        mask = np.zeros(n, dtype=bool)
        if n_issues > 0:
            order = np.argsort(-self.mislabel_scores_, kind="stable")
            mask[order[:n_issues]] = True
        self.label_issues_ = mask
        log_progress(
            self,
            f"weight-norm peak at epoch {self.stop_epoch_} of {self.n_iter_} run; "
            f"{n_issues} label issues flagged",
        )
        return self

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

    def _logits(self, X):
        check_is_fitted(self)
        X = validate_data(self, X, reset=False, dtype=[np.float64, np.float32])
        return forward_module(self.net_, X, dtype=self.dtype, n_jobs=self.n_jobs)

    def _representation(self, X):
        """Last hidden layer of the fitted network (for the memorization probe)."""
        check_is_fitted(self)
        X = validate_data(self, X, reset=False, dtype=[np.float64, np.float32])
        return forward_module(
            self.net_,
            X,
            dtype=self.dtype,
            n_jobs=self.n_jobs,
            func=lambda module, xb, **aux: module.representation(xb),
        )

    def predict_proba(self, X):
        """Class probabilities of the final model.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Input data.

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
            Columns follow ``classes_``.
        """
        return softmax(self._logits(X))

    def predict(self, X):
        """Predicted class labels of the final model.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Input data.

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
            The most probable class.
        """
        logits = self._logits(X)
        return self.classes_[np.argmax(logits, axis=1)]

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.non_deterministic = False
        return tags
