"""Meta-PCN classifier: deep predictive coding with meta-prediction errors."""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

from sklearn_iclr26.neural_network._meta_pcn import BaseMetaPCN
from sklearn_iclr26.utils._sklearn_compat import StrOptions
from sklearn_iclr26.utils._torch_estimator import TorchClassifierMixin
from sklearn_iclr26.utils._validation import store_params

__all__ = ["MetaPCNClassifier"]


class MetaPCNClassifier(TorchClassifierMixin, BaseMetaPCN):
    """Deep predictive-coding classifier with meta-prediction errors.

    A discriminative predictive-coding network (PCN): the input is clamped to
    the bottom layer and the label to the top one; in each mini-batch the
    hidden activities first run ``n_inference_steps`` inference steps, then
    every weight matrix takes a local step (its own layer's error times its
    own input) through Adam. Prediction is the feed-forward pass.

    Meta-PCN (Ha et al., ICLR 2026) adds two fixes for deep PCNs, each behind
    a switch, so that vanilla PCN, PCN + weight normalisation and full
    Meta-PCN (the defaults) are the same class: the meta-prediction error
    (``meta_pe=True``: predictions frozen at the feed-forward pass, each
    layer chasing the error projected down from the layer above, learning at
    the feed-forward inputs) and a weight normalisation after every step
    (with optional element-wise and spectral clipping). The definitions
    follow the paper's summary (the PDF was not available). At the defaults
    (step 1, no momentum) with ``n_inference_steps`` at least the number of
    hidden layers the local weight gradient is backprop's exactly, so the
    fit equals backprop with the same normalisation (see the user guide).

    Parameters
    ----------
    %(meta_pcn_parameters)s
    output_energy : {"ce", "se"}, default="ce"
        Energy of the output layer: cross-entropy of the logits, or squared
        error to the one-hot labels.
    %(training_parameters)s

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        Class labels seen during fit.
    %(meta_pcn_attributes)s

    See Also
    --------
    MetaPCNRegressor : The regression counterpart.
    TorchMLPClassifier : The same network trained by backpropagation.

    Notes
    -----
    ``sample_weight`` weights the weight updates (the weighted mean energy);
    inference is per sample. With ``early_stopping=True`` the validation loss
    is the energy of the feed-forward prediction (the output energy).

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from sklearn.preprocessing import StandardScaler
    >>> from sklearn.pipeline import make_pipeline
    >>> from sklearn_iclr26.neural_network import MetaPCNClassifier
    >>> X, y = load_iris(return_X_y=True)
    >>> clf = make_pipeline(StandardScaler(), MetaPCNClassifier(
    ...     hidden_layer_sizes=(16, 16), max_iter=20, random_state=0)).fit(X, y)
    >>> clf.predict_proba(X[:2]).shape
    (2, 3)
    """

    _parameter_constraints: dict = {
        **BaseMetaPCN._parameter_constraints,
        "output_energy": [StrOptions({"ce", "se"})],
    }

    # the explicit signature is what scikit-learn's get_params reads
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
        output_energy="ce",
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

    def _output_energy(self):
        return self.output_energy
