"""Meta-PCN's shared part: :class:`BaseMetaPCN` (predictive-coding networks).

The training parameters, the engine call and the fitted training record are
the torch base's (:mod:`sklearn_iclr26.utils._torch_estimator`);
Meta-PCN adds the predictive-coding parameters, the module
(``_pcn_modules.PCNModule``) and its net
(``_predictive_coding_net.PredictiveCodingNet``, whose ``train_step`` runs
the inference and the local weight step).
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

from numbers import Integral, Real

import numpy as np

from sklearn_iclr26.utils._sklearn_compat import Interval, StrOptions
from sklearn_iclr26.utils._torch_estimator import BaseTorchEstimator
from sklearn_iclr26.utils._torch_mlp import _ACTIVATIONS
from sklearn_iclr26.utils._validation import check_hidden_layer_sizes, store_params
from sklearn_iclr26.utils._warnings import warn_user

_PARAMETERS_DOC = """hidden_layer_sizes : array-like of int, default=(64, 64)
    Width of each hidden (free, inferred) layer; at least one.
activation : {"relu", "tanh", "gelu"}, default="gelu"
    Non-linearity applied to hidden activities before they predict the
    layer above.
n_inference_steps : int, default=7
    Inference steps ``T`` on the activities per batch (at least 1). With
    the paper's meta-PE at step 1 and no momentum, ``T`` equal to the
    number of hidden layers gives backprop's deltas exactly (more steps
    leave them unchanged); ``fit`` warns when ``T`` is below it.
inference_learning_rate : float, default=1.0
    Step size of the activity updates. 1.0 suits the paper's meta-PE
    (its inference is linear); vanilla PCN and ``"gauss_newton"`` need a
    small step (about 0.1: at 1.0 they collapse, see the user guide).
inference_momentum : float, default=0.0
    Momentum of the activity updates (reset each batch); 0.3 is PCX's
    setting for vanilla PCN.
meta_pe : bool or {"paper", "gauss_newton"}, default=True
    Inference rule. ``True`` (= ``"paper"``): Meta-PCN's meta-prediction
    error as the paper's summary defines it: predictions frozen at the
    feed-forward pass, each hidden layer's error ``d_l = z_l - c_l``
    descends ``1/2 ||d_l - phi'(x_l^(0)) * (d_{l+1} W_{l+1})||^2`` with
    the error of the layer above held fixed (a stop-gradient target),
    and the weights learn at the feed-forward inputs. ``False``: vanilla
    PCN inference on the energy ``F``, learning at the inferred
    activities. ``"gauss_newton"``: this package's earlier
    reconstruction, inference on ``F + meta_pe_weight * 1/2 sum_l
    ||dF/dx_l||^2`` at the current activities (the slope held constant),
    learning at the inferred activities; kept for comparison, it needs
    about 3 x depth inference steps (see the user guide).
meta_pe_weight : float, default=0.1
    Weight of the meta-loss of ``meta_pe="gauss_newton"`` (the paper's
    meta-PE has no weight; unused otherwise).
weight_norm : bool, default=True
    After every weight step (and at initialisation) rescale each weight
    matrix to the ``norm_target``.
norm_gain : float, default=1.0
    Gain ``g`` of the weight normalisation.
norm_target : {"fan_in", "spectral"}, default="fan_in"
    ``"fan_in"``: ``fan_in * Var(W_l) = g ** 2`` exactly (spectral norm
    about ``2 g`` for square layers). ``"spectral"``: the paper's ``W_l
    <- g W_l / ((sqrt(m) + sqrt(n)) std(W_l))`` for an ``m x n`` matrix
    (spectral norm about ``g``); on the MLPs measured here it shrinks
    the signal to chance-level accuracy at depth 8 (see the user guide).
weight_clip : float or None, default=None
    Element-wise clipping ``|W_l| <= weight_clip`` after every step.
spectral_clip : float or None, default=None
    Rescale every weight matrix whose spectral norm exceeds
    ``spectral_clip`` down to it after every step (applied after the
    normalisation, which it can then break)."""

_ATTRIBUTES_DOC = """n_features_in_ : int
    Number of features seen during fit.
feature_names_in_ : ndarray of shape (`n_features_in_`,)
    Names of features seen during fit. Defined only when `X` has feature
    names that are all strings.
layer_energy_history_ : ndarray of shape (n_iter_, n_layers)
    Per epoch, the mean energy of each layer (hidden layers
    ``1/2 ||eps_l||^2``, then the output layer) at the end of inference:
    the prediction-error-imbalance diagnostic. ``loss_curve_`` is the
    mean total energy ``F`` per epoch (its row sums).
weight_spectral_norms_ : ndarray of shape (n_iter_, n_layers)
    Spectral norm of each weight matrix at the end of each epoch.
n_diverged_batches_ : int
    Batches whose inference diverged (activities reset; see the
    warning).
%(training_attributes)s"""


class BaseMetaPCN(BaseTorchEstimator):
    """Predictive-coding parameters, module and net of the Meta-PCN estimators."""

    #: shared docstring texts, filled by the torch base before its own
    _doc_texts = {
        "meta_pcn_parameters": _PARAMETERS_DOC,
        "meta_pcn_attributes": _ATTRIBUTES_DOC,
    }

    _parameter_constraints: dict = {
        **BaseTorchEstimator._parameter_constraints,
        "hidden_layer_sizes": ["array-like"],
        "activation": [StrOptions(set(_ACTIVATIONS))],
        "n_inference_steps": [Interval(Integral, 1, None, closed="left")],
        "inference_learning_rate": [Interval(Real, 0, None, closed="neither")],
        "inference_momentum": [Interval(Real, 0, 1, closed="left")],
        "meta_pe": ["boolean", StrOptions({"paper", "gauss_newton"})],
        "meta_pe_weight": [Interval(Real, 0, None, closed="left")],
        "weight_norm": ["boolean"],
        "norm_gain": [Interval(Real, 0, None, closed="neither")],
        "norm_target": [StrOptions({"fan_in", "spectral"})],
        "weight_clip": [Interval(Real, 0, None, closed="neither"), None],
        "spectral_clip": [Interval(Real, 0, None, closed="neither"), None],
    }

    # the energies are the method: no other criterion replaces them
    _accepts_criterion = False

    def __init__(
        self,
        hidden_layer_sizes=(64, 64),
        *,
        activation="gelu",
        n_inference_steps=7,
        inference_learning_rate=1.0,
        inference_momentum=0.0,
        meta_pe=True,
        meta_pe_weight=0.1,
        weight_norm=True,
        norm_gain=1.0,
        norm_target="fan_in",
        weight_clip=None,
        spectral_clip=None,
        alpha=0.0,
        batch_size=64,
        learning_rate_init=1e-2,
        max_iter=20,
        early_stopping=False,
        validation_fraction=0.1,
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

    def _meta_pe_rule(self):
        """``meta_pe`` as the module's rule: None, "paper" or "gauss_newton"."""
        if self.meta_pe is True:
            return "paper"
        return self.meta_pe or None

    def _output_energy(self):
        """Energy of the output layer: squared error (the classifier chooses)."""
        return "se"

    def _module_spec(self, X, n_outputs, sample_weight=None):
        from sklearn_iclr26.neural_network._pcn_modules import PCNModule

        return PCNModule, {
            "n_features": X.shape[1],
            "n_outputs": n_outputs,
            # a predictive-coding network needs a hidden layer to infer
            "hidden_layer_sizes": check_hidden_layer_sizes(
                self.hidden_layer_sizes, allow_empty=False
            ),
            "activation": self.activation,
            "output_energy": self._output_energy(),
            "meta_pe": self._meta_pe_rule(),
            "meta_pe_weight": float(self.meta_pe_weight),
            "weight_norm": bool(self.weight_norm),
            "norm_gain": float(self.norm_gain),
            "norm_target": self.norm_target,
            "weight_clip": None
            if self.weight_clip is None
            else float(self.weight_clip),
            "spectral_clip": (
                None if self.spectral_clip is None else float(self.spectral_clip)
            ),
        }

    def _criterion_spec(self, n_outputs):
        # the energies are the module's; skorch's criterion slot is unused
        import torch

        return torch.nn.Identity, {}

    def _training_options(self, X, y):
        from sklearn_iclr26.neural_network._predictive_coding_net import (
            PredictiveCodingNet,
            WeightSpectralNorms,
        )

        depth = len(check_hidden_layer_sizes(self.hidden_layer_sizes))
        rule = self._meta_pe_rule()
        if rule == "paper" and self.n_inference_steps < depth:
            # each inference step carries the error down one layer (exactly,
            # at step 1 without momentum): the lowest layers get none
            warn_user(
                f"{type(self).__name__}: meta_pe={self.meta_pe!r} with "
                f"n_inference_steps={self.n_inference_steps} for {depth} hidden "
                "layers; the error moves down one layer per inference step, so "
                f"the lowest {depth - self.n_inference_steps} hidden layer(s) "
                "receive no error and do not learn. Use n_inference_steps >= "
                f"{depth}.",
                UserWarning,
            )
        if rule == "gauss_newton" and self.n_inference_steps < 3 * depth:
            # Measured in benchmarks/meta_pcn_update_alignment.py: the meta term
            # carries the output error down two layers per inference step with
            # the sign opposite to backprop, so before the plain error has
            # settled the lower layers' local updates point against the
            # gradient (depth 8: wrong-signed layers at 7 and 15 steps, all
            # aligned at 30).
            warn_user(
                f"{type(self).__name__}: meta_pe='gauss_newton' with "
                f"n_inference_steps={self.n_inference_steps} for {depth} hidden "
                "layers; with fewer than about 3 x depth = "
                f"{3 * depth} steps the meta-prediction error reaches the lower "
                "layers before the prediction error does and their updates "
                "point against the loss gradient (see the user guide). Raise "
                "n_inference_steps.",
                UserWarning,
            )
        return {
            "callbacks": [("weight_spectral_norms", WeightSpectralNorms())],
            "net_class": PredictiveCodingNet,
            "net_params": {
                "n_inference_steps": int(self.n_inference_steps),
                "inference_learning_rate": float(self.inference_learning_rate),
                "inference_momentum": float(self.inference_momentum),
            },
        }

    def _after_training(self, X, y):
        history = self.net_.history
        layer_energies, diverged, n_batches = [], 0, 0
        for epoch in history:
            # the training batches (validation batches record no energies)
            batches = [b for b in epoch["batches"] if "layer_energies" in b]
            sizes = np.array([b["train_batch_size"] for b in batches], dtype=float)
            energies = np.array([b["layer_energies"] for b in batches], dtype=float)
            layer_energies.append(sizes @ energies / sizes.sum())
            diverged += sum(int(b["pc_diverged"]) for b in batches)
            n_batches += len(batches)
        self.layer_energy_history_ = np.array(layer_energies)
        self.weight_spectral_norms_ = np.array(history[:, "weight_spectral_norms"])
        self.n_diverged_batches_ = int(diverged)
        if diverged:
            warn_user(
                f"{type(self).__name__}: predictive-coding energies diverged "
                f"(non-finite) in {diverged} of "
                f"{n_batches} batches; for those "
                "batches the activities were reset to the feed-forward pass "
                "(and the weight step skipped when its gradient was not "
                "finite). Lower inference_learning_rate, or keep "
                "weight_norm=True.",
                RuntimeWarning,
            )
