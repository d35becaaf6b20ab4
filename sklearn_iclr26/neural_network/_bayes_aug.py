"""OPTIMA-style Bayesian data augmentation: augmentation learned by an ELBO."""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, _fit_context
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted, validate_data

from sklearn_iclr26.neural_network._base import _ACTIVATIONS
from sklearn_iclr26.utils._columns import check_disjoint, resolve_columns
from sklearn_iclr26.utils._random import seed_from_random_state
from sklearn_iclr26.utils._torch import fit_or_restore, forward_module, train_module
from sklearn_iclr26.utils._validation import (
    N_JOBS_CONSTRAINT,
    validate_classifier_fit_data,
)

__all__ = ["BayesianAugmentationClassifier"]

_AUGMENTERS = ("none", "gaussian", "mixup", "dropout")
_DEFAULT_STRENGTH = {"none": 0.0, "gaussian": 0.1, "mixup": 0.2, "dropout": 0.1}


def _softmax(logits):
    logits = logits - logits.max(axis=1, keepdims=True)
    proba = np.exp(logits)
    return proba / proba.sum(axis=1, keepdims=True)


class BaseBayesianAugmentation(BaseEstimator):
    """Hyperparameters and training of the Bayesian-augmentation networks."""

    _parameter_constraints: dict = {
        "hidden_layer_sizes": ["array-like"],
        "activation": [StrOptions(set(_ACTIVATIONS))],
        "augmenter": [StrOptions(set(_AUGMENTERS))],
        "init_strength": [Interval(Real, 0, None, closed="left"), None],
        "prior_scale": [Interval(Real, 0, None, closed="neither")],
        "q_init_std": [Interval(Real, 0, None, closed="left")],
        "kl_weight": [Interval(Real, 0, None, closed="left")],
        "kl_scale": [StrOptions({"n_samples", "batch"})],
        "likelihood": [StrOptions({"avg_loglik", "avg_func"})],
        "n_aug_samples": [Interval(Integral, 1, None, closed="left")],
        "aug_at_predict": ["boolean"],
        "learn_augmentation": ["boolean"],
        "augmenter_lr_ratio": [Interval(Real, 0, None, closed="neither")],
        "strength_reward": [Interval(Real, 0, None, closed="left")],
        "categorical_blocks": [list, tuple, None],
        "init_swap_proba": [Interval(Real, 0, 1, closed="left")],
        "swap_temperature": [Interval(Real, 0, None, closed="neither")],
        "alpha": [Interval(Real, 0, None, closed="left")],
        "batch_size": [Interval(Integral, 1, None, closed="left"), None],
        "learning_rate_init": [Interval(Real, 0, None, closed="neither")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "dtype": [StrOptions({"float64", "float32"})],
        "device": [str],
        "n_jobs": N_JOBS_CONSTRAINT,
        "random_state": ["random_state"],
        "verbose": ["verbose"],
    }

    def __init__(
        self,
        hidden_layer_sizes=(32,),
        *,
        activation="relu",
        augmenter="gaussian",
        init_strength=None,
        prior_scale=2.0,
        q_init_std=0.1,
        kl_weight=1.0,
        kl_scale="n_samples",
        likelihood="avg_loglik",
        n_aug_samples=1,
        aug_at_predict=False,
        learn_augmentation=True,
        augmenter_lr_ratio=10.0,
        strength_reward=0.0,
        categorical_blocks=None,
        init_swap_proba=0.1,
        swap_temperature=0.5,
        alpha=0.0,
        batch_size=None,
        learning_rate_init=1e-2,
        max_iter=200,
        dtype="float64",
        device="cpu",
        n_jobs=None,
        random_state=None,
        verbose=0,
    ):
        self.hidden_layer_sizes = hidden_layer_sizes
        self.activation = activation
        self.augmenter = augmenter
        self.init_strength = init_strength
        self.prior_scale = prior_scale
        self.q_init_std = q_init_std
        self.kl_weight = kl_weight
        self.kl_scale = kl_scale
        self.likelihood = likelihood
        self.n_aug_samples = n_aug_samples
        self.aug_at_predict = aug_at_predict
        self.learn_augmentation = learn_augmentation
        self.augmenter_lr_ratio = augmenter_lr_ratio
        self.strength_reward = strength_reward
        self.categorical_blocks = categorical_blocks
        self.init_swap_proba = init_swap_proba
        self.swap_temperature = swap_temperature
        self.alpha = alpha
        self.batch_size = batch_size
        self.learning_rate_init = learning_rate_init
        self.max_iter = max_iter
        self.dtype = dtype
        self.device = device
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.verbose = verbose

    _classification = True

    def _strength0(self):
        s = _DEFAULT_STRENGTH[self.augmenter]
        if self.init_strength is not None:
            s = float(self.init_strength)
        if self.augmenter == "dropout" and not 0 < s < 1 and not self._fixed():
            raise ValueError(
                f"init_strength of the dropout augmenter is a rate in (0, 1), got {s}."
            )
        if self.augmenter in ("gaussian", "mixup") and s <= 0 and not self._fixed():
            raise ValueError(
                "init_strength must be positive for a learned augmenter (its "
                "unconstrained parameter is softplus^-1(init_strength)); use "
                "learn_augmentation=False, q_init_std=0 for a fixed strength of "
                f"0, got {s}."
            )
        return s

    def _fixed(self):
        return not self.learn_augmentation and self.q_init_std == 0

    def _check_settings(self):
        if self.augmenter == "none" and not self.categorical_blocks:
            return
        if self.q_init_std == 0 and self.kl_weight > 0 and not self._fixed():
            raise ValueError(
                "q_init_std=0 makes the augmentation parameter a point estimate, "
                "whose KL to the Gaussian prior is infinite: set kl_weight=0 "
                "(e.g. the Augerino-style baseline) or q_init_std > 0."
            )
        if self.aug_at_predict and self.augmenter == "mixup":
            raise ValueError(
                "aug_at_predict=True is not defined for the mixup augmenter "
                "(mixing needs a second training row); use 'gaussian' or "
                "'dropout'."
            )

    def _resolve_blocks(self, X, sample_weight):
        """Column indices and category frequencies of the one-hot blocks.

        Blocks are lists of column positions or, when ``X`` had string
        feature names at fit, of feature names (resolved by
        :func:`~sklearn_iclr26.utils._columns.resolve_columns`); they must be
        disjoint, hold at least two columns and be one-hot in ``X`` (0/1, one
        1 per row).
        """
        if not self.categorical_blocks:
            return [], []
        n_features = X.shape[1]
        blocks, resolved = [], {}
        for b, block in enumerate(self.categorical_blocks):
            if isinstance(block, str) or not hasattr(block, "__len__"):
                raise ValueError(
                    "categorical_blocks must be a list of blocks, each a list of "
                    f"column indices or feature names; block {b} is {block!r}."
                )
            if len(block) < 2:
                raise ValueError(
                    f"Each categorical block needs at least 2 columns; block {b} "
                    f"has {len(block)}."
                )
            what = f"categorical block {b}"
            cols = resolve_columns(block, self, n_features, what)
            resolved[what] = cols
            check_disjoint(resolved)  # before the one-hot check: the clearer error
            sub = X[:, cols]
            if not np.all((sub == 0) | (sub == 1)) or not np.all(sub.sum(1) == 1):
                raise ValueError(
                    f"categorical block {b} (columns {cols}) is not one-hot in X: "
                    "every value must be 0 or 1 with exactly one 1 per row (e.g. "
                    "OneHotEncoder(drop=None) output, without scaling)."
                )
            blocks.append(cols)
        frequencies = [
            np.average(X[:, cols], axis=0, weights=sample_weight).tolist()
            for cols in blocks
        ]
        return blocks, frequencies

    def _train(self, X, y, n_outputs, sample_weight):
        import torch

        from sklearn_iclr26.neural_network._bayes_aug_modules import (
            AugmentedLoss,
            AugmentedMLPModule,
        )
        from sklearn_iclr26.utils._skorch_net import EpochProgress

        self._check_settings()
        strength = self._strength0()
        # C order: a DataFrame's (F-ordered) values give the same statistics
        # to the last bit as the equivalent array
        X = np.ascontiguousarray(X)
        blocks, frequencies = self._resolve_blocks(X, sample_weight)
        swap_p0 = float(self.init_swap_proba)
        if blocks and not self._fixed() and swap_p0 <= 0:
            raise ValueError(
                "init_swap_proba must be in (0, 1) for learned swap noise (its "
                "unconstrained parameter is logit(init_swap_proba)); use "
                "learn_augmentation=False, q_init_std=0 for no swaps, got "
                f"{swap_p0}."
            )
        self.categorical_blocks_ = [np.asarray(c, dtype=np.intp) for c in blocks]
        hidden = tuple(int(h) for h in np.atleast_1d(self.hidden_layer_sizes))
        if any(h < 1 for h in hidden):
            raise ValueError(
                f"hidden_layer_sizes must be positive, got {self.hidden_layer_sizes}."
            )
        scale = X.std(axis=0)
        scale = np.where(scale > 0, scale, 1.0)
        module_params = {
            "n_features": X.shape[1],
            "n_outputs": n_outputs,
            "hidden_layer_sizes": hidden,
            "activation": self.activation,
            "augmenter": self.augmenter,
            "init_strength": strength,
            "q_init_std": float(self.q_init_std),
            "learn_augmentation": bool(self.learn_augmentation),
            "prior_scale": float(self.prior_scale),
            "n_aug_samples": int(self.n_aug_samples),
            "feature_scale": torch.as_tensor(scale),
            "categorical_blocks": blocks,
            "category_frequencies": frequencies,
            "init_swap_proba": swap_p0,
            "swap_temperature": float(self.swap_temperature),
        }
        criterion_params = {
            "classification": self._classification,
            "likelihood": self.likelihood,
            "n_aug_samples": int(self.n_aug_samples),
            "kl_weight": float(self.kl_weight),
            "kl_scale": self.kl_scale,
            "n_train": X.shape[0],
            "strength_reward": float(self.strength_reward),
        }
        callbacks = []
        if self.verbose:
            callbacks.append(("progress", EpochProgress(self, self.max_iter)))
        self.net_ = train_module(
            AugmentedMLPModule,
            X,
            y,
            criterion=AugmentedLoss,
            criterion_params=criterion_params,
            module_params=module_params,
            sample_weight=sample_weight,
            max_epochs=self.max_iter,
            batch_size=self.batch_size,
            learning_rate=self.learning_rate_init,
            weight_decay=self.alpha,
            optimizer_param_groups=[
                (
                    "augmenter.*",
                    {
                        "lr": self.augmenter_lr_ratio * self.learning_rate_init,
                        "weight_decay": 0.0,
                    },
                )
            ],
            dtype=self.dtype,
            device=self.device,
            random_state=self.random_state,
            n_jobs=self.n_jobs,
            callbacks=callbacks,
        )
        self.n_iter_ = len(self.net_.history)
        self.loss_curve_ = np.array(
            [
                np.average(
                    [b["train_loss"] for b in epoch["batches"]],
                    weights=[b["train_batch_size"] for b in epoch["batches"]],
                )
                for epoch in self.net_.history
            ]
        )
        self.elbo_history_ = -self.loss_curve_
        aug = self.net_.module_.augmenter
        with torch.no_grad():
            posterior = {"strength": aug.strength().cpu().numpy().astype(float)}
            if aug.q_mean is not None:
                posterior["mean"] = aug.q_mean.cpu().numpy().astype(float)
                posterior["std"] = (
                    aug.q_log_std.exp().cpu().numpy().astype(float)
                    if aug.q_log_std is not None
                    else np.zeros_like(posterior["mean"])
                )
                posterior["prior_mean"] = aug.prior_mean.cpu().numpy().astype(float)
                posterior["prior_scale"] = float(self.prior_scale)
            swap = self.net_.module_.swap
            if swap is not None:
                posterior["swap_proba"] = swap.proba().cpu().numpy().astype(float)
                if swap.q_mean is not None:
                    posterior["swap_mean"] = swap.q_mean.cpu().numpy().astype(float)
                    posterior["swap_std"] = (
                        swap.q_log_std.exp().cpu().numpy().astype(float)
                        if swap.q_log_std is not None
                        else np.zeros_like(posterior["swap_mean"])
                    )
                    posterior["swap_prior_mean"] = (
                        swap.prior_mean.cpu().numpy().astype(float)
                    )
        self.augmentation_posterior_ = posterior
        return self

    def _raw_decision(self, X):
        check_is_fitted(self)
        X = validate_data(self, X, reset=False, dtype=[np.float64, np.float32])
        module = self.net_.module_
        if not self.aug_at_predict or (
            self.augmenter == "none" and module.swap is None
        ):
            return forward_module(self.net_, X, dtype=self.dtype, n_jobs=self.n_jobs)
        # augmentations drawn up front (seeded), batched with X: the result
        # does not depend on the row batching
        rng = np.random.RandomState(seed_from_random_state(self.random_state))
        k = int(self.n_aug_samples)
        n_aug = X.shape[1] if module.continuous is None else len(module.continuous)
        dim = n_aug if self.augmenter == "gaussian" else 1
        eps_rho = rng.standard_normal((X.shape[0], k, dim))
        if self.augmenter == "gaussian":
            noise = rng.standard_normal((X.shape[0], k, n_aug))
        else:
            noise = rng.uniform(size=(X.shape[0], k, n_aug))
        aux = {"eps_rho": eps_rho, "noise": noise}
        if module.swap is not None:
            aux["eps_swap"] = rng.standard_normal((X.shape[0], k, module.swap.n_blocks))
            aux["uniform"] = rng.uniform(size=(X.shape[0], k, len(module.swap.columns)))
        classification = self._classification

        def func(module, xb, eps_rho, noise, eps_swap=None, uniform=None):
            return module.predict_augmented(
                xb, eps_rho, noise, eps_swap, uniform, classification
            )

        return forward_module(
            self.net_,
            X,
            aux=aux,
            dtype=self.dtype,
            n_jobs=self.n_jobs,
            func=func,
        )

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.non_deterministic = False
        return tags


_PARAMETERS_DOC = """hidden_layer_sizes : array-like of int, default=(32,)
        Width of each hidden layer of the MLP.
    activation : {"relu", "tanh", "gelu"}, default="relu"
        Hidden-layer non-linearity.
    augmenter : {"gaussian", "mixup", "dropout", "none"}, default="gaussian"
        Augmentation whose strength is learned: additive Gaussian noise with
        one scale per feature (in units of the feature's training std),
        mixup with a learned Beta concentration, or feature dropout with a
        learned rate (relaxed Bernoulli masks); ``"none"`` trains the plain
        MLP.
    init_strength : float or None, default=None
        Initial strength, also the centre of the prior: noise scale
        (default 0.1), mixup concentration (0.2) or dropout rate (0.1).
    prior_scale : float, default=2.0
        Std of the Gaussian prior on the unconstrained parameter ``rho``
        (``strength = softplus(rho)``, or ``sigmoid(rho)`` for dropout).
    q_init_std : float, default=0.1
        Initial std of the Gaussian posterior ``q(rho)``; 0 makes ``rho`` a
        point estimate (then ``kl_weight`` must be 0).
    kl_weight : float, default=1.0
        Weight of ``KL(q || p)`` in the objective; 0 drops the prior.
    kl_scale : {"n_samples", "batch"}, default="n_samples"
        The KL is divided by the number of training rows (a per-example
        ELBO) or by the batch size (the authors' ImageNet script, which
        weights the prior ``n_samples / batch_size`` times more).
    likelihood : {"avg_loglik", "avg_func"}, default="avg_loglik"
        Data term over the ``n_aug_samples`` copies: the mean of the
        log-likelihoods (a Jensen bound), or the log of the mean likelihood.
    n_aug_samples : int, default=1
        Augmented copies of each row per step (and at predict time with
        ``aug_at_predict``).
    aug_at_predict : bool, default=False
        Average the predictions over ``n_aug_samples`` augmentations drawn
        from the posterior (seeded by ``random_state``); by default the
        network predicts on clean inputs.
    learn_augmentation : bool, default=True
        Learn the augmentation's posterior; with ``False`` and
        ``q_init_std=0`` the augmentation has the fixed strength
        ``init_strength`` (fixed-augmentation baseline).
    augmenter_lr_ratio : float, default=10.0
        Learning rate of the augmenter's parameters relative to
        ``learning_rate_init`` (their own optimizer group, without weight
        decay).
    strength_reward : float, default=0.0
        Augerino's regulariser: subtracts ``strength_reward *
        ||strength||`` from the objective (Augerino-style baseline:
        ``kl_weight=0, q_init_std=0, strength_reward=0.01,
        aug_at_predict=True, n_aug_samples=4``).
    categorical_blocks : list of list of int or str, default=None
        One-hot column blocks that get relaxed categorical swap noise, each
        a list of column positions or, when ``X`` is a DataFrame with string
        column names, of feature names (e.g. the ``get_feature_names_out``
        of a ``OneHotEncoder``). Blocks must be disjoint, have at least two
        columns and be one-hot in the training ``X`` (0/1, exactly one 1 per
        row); otherwise ``fit`` raises a ``ValueError`` (a ``TypeError``
        for entries that are neither positions nor names). Per block, a swap
        probability ``p_b = sigmoid(rho_b)`` is learned with the same
        Gaussian posterior and prior as the other augmentation parameters
        (``q_init_std``, ``prior_scale``, ``learn_augmentation``); each
        row's block is redrawn from ``(1 - p_b) x_b + p_b pi_b`` (keep its
        category, or swap in one drawn from the training frequencies
        ``pi_b``) by Gumbel-softmax at ``swap_temperature``, a relaxed
        one-hot through which the data term differentiates ``p_b``. The
        ``"gaussian"`` and ``"dropout"`` augmenters then act on the other
        columns only; with ``augmenter="none"`` only the swaps are learned.
        Off at predict time unless ``aug_at_predict=True``. ``None`` (or an
        empty list): no swap noise.
    init_swap_proba : float, default=0.1
        Initial swap probability of every block, also the centre of its
        prior (``logit(init_swap_proba)``); must be in (0, 1) unless the
        augmentation is fixed (``learn_augmentation=False, q_init_std=0``).
    swap_temperature : float, default=0.5
        Gumbel-softmax temperature of the swapped blocks: small values give
        nearly one-hot draws (and higher-variance gradients), large values
        smooth them toward the mixture's probabilities.
    alpha : float, default=0.0
        L2 penalty (Adam ``weight_decay``) of the network's weights (the
        point-mass posterior of the weights); the augmenter has none.
    batch_size : int or None, default=None
        Mini-batch size, clipped to ``n_samples``; ``None`` means full batch.
    learning_rate_init : float, default=1e-2
        Adam learning rate of the network.
    max_iter : int, default=200
        Number of epochs.
    dtype : {"float64", "float32"}, default="float64"
        Precision of the torch module.
    device : str, default="cpu"
        torch device, e.g. ``"cuda"``.
    n_jobs : int or None, default=None
        torch threads; ``None`` means 1, ``-1`` all cores; 0 is rejected.
    random_state : int, RandomState instance or None, default=None
        Seeds initialisation, shuffling and augmentation draws; a fixed
        value gives bit-identical results.
    verbose : int, default=0
        If positive, print the training objective after each epoch."""

_ATTRIBUTES_DOC = """n_features_in_ : int
        Number of features seen during fit.
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of features seen during fit. Defined only when `X` has feature
        names that are all strings.
    n_iter_ : int
        Number of epochs run.
    augmentation_posterior_ : dict
        ``"strength"``: the strength at the posterior mean (per feature for
        the Gaussian augmenter); for a learned augmenter also ``"mean"`` and
        ``"std"`` of ``q(rho)``, ``"prior_mean"`` and ``"prior_scale"``
        (with ``categorical_blocks``, the strength of the non-categorical
        columns only). With ``categorical_blocks`` also ``"swap_proba"``,
        the swap probability of each block at the posterior mean, and, when
        learned, ``"swap_mean"``, ``"swap_std"`` and ``"swap_prior_mean"``
        of ``q(rho_b)`` (logit scale).
    categorical_blocks_ : list of ndarray of int
        Column positions of each one-hot block (empty without
        ``categorical_blocks``).
    loss_curve_ : ndarray of shape (n_iter_,)
        Mean training objective per epoch (negative ELBO per sample).
    elbo_history_ : ndarray of shape (n_iter_,)
        ``-loss_curve_``: the per-sample ELBO estimate per epoch (with
        ``kl_weight=1``, ``kl_scale="n_samples"``; up to the Gaussian
        constant for the regressor).
    net_ : skorch.NeuralNet
        The fitted skorch net; ``net_.module_.augmenter`` and
        ``net_.module_.mlp`` are its parts."""


class BayesianAugmentationClassifier(ClassifierMixin, BaseBayesianAugmentation):
    __doc__ = f"""MLP classifier whose data augmentation is learned by an ELBO.

    A tabular version of OPTIMA (Matymov et al., ICLR 2026): the parameters of
    the augmentation are given a Gaussian variational posterior and a
    Gaussian prior, and learned jointly with the network's weights by
    maximising ``E_q[log p(y | augmented x)] - KL(q || p) / n_samples``
    (reparameterised samples, ``n_aug_samples`` copies per row). The network
    predicts on clean inputs by default. Fixed-strength augmentation, no
    augmentation and an Augerino-style baseline are settings of the same
    class (see ``learn_augmentation``, ``augmenter="none"`` and
    ``strength_reward``).

    Parameters
    ----------
    {_PARAMETERS_DOC}

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        Class labels seen during fit.
    {_ATTRIBUTES_DOC}

    See Also
    --------
    BayesianAugmentationRegressor : The regression counterpart.
    TorchMLPClassifier : The same network without augmentation.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from sklearn_iclr26.neural_network import BayesianAugmentationClassifier
    >>> X, y = load_iris(return_X_y=True)
    >>> clf = BayesianAugmentationClassifier(max_iter=50, random_state=0).fit(X, y)
    >>> clf.predict_proba(X[:2]).shape
    (2, 3)
    >>> sorted(clf.augmentation_posterior_)
    ['mean', 'prior_mean', 'prior_scale', 'std', 'strength']
    """

    _classification = True

    @fit_or_restore
    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, sample_weight=None):
        """Fit the network and the augmentation posterior.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training data (finite).
        y : array-like of shape (n_samples,)
            Target labels.
        sample_weight : array-like of shape (n_samples,), default=None
            Per-sample weights of the data term.

        Returns
        -------
        self : object
            Fitted estimator.
        """
        X, _, y_encoded, sample_weight = validate_classifier_fit_data(
            self, X, y, sample_weight, dtype=[np.float64, np.float32]
        )
        return self._train(X, y_encoded, len(self.classes_), sample_weight)

    def predict_proba(self, X):
        """Class probabilities.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Input data.

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
            Softmax of the network on clean inputs (or the mean over
            augmentations with ``aug_at_predict=True``).
        """
        return _softmax(self._raw_decision(X))

    def predict(self, X):
        """Predicted class labels.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Input data.

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
            The most probable class.
        """
        logits = self._raw_decision(X)  # NotFittedError before classes_ is read
        return self.classes_[np.argmax(logits, axis=1)]
