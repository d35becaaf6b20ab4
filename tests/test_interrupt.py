"""Ctrl-C during ``fit`` reaches the caller and leaves no half-fitted model.

skorch ends its training loop on any ``KeyboardInterrupt`` and returns
normally, so a user's Ctrl-C used to look like convergence. Every estimator
that steps a torch optimizer is interrupted here by a real SIGINT
(``signal.raise_signal`` from a global optimizer step pre-hook, with
``signal.default_int_handler`` installed, as in an interactive session):

* a fresh fit raises ``KeyboardInterrupt`` and leaves the estimator unfitted;
* an interrupted refit raises ``KeyboardInterrupt`` and leaves the previous
  fit in place: the same attributes and identical outputs.

Early stops (skorch's ``EarlyStopping``, and the package's own in CVQR and
in the CSG callback) still end training normally.
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import inspect
import signal
import warnings

import numpy as np
import pytest
from sklearn.base import clone, is_classifier, is_regressor
from sklearn.exceptions import NotFittedError
from sklearn.utils.validation import check_is_fitted
from torch.optim.optimizer import register_optimizer_step_pre_hook

from sklearn_iclr26.utils._test_common import yield_test_instances

METHODS = ("predict", "predict_proba", "decision_function", "transform")


def _uses_torch(estimator):
    # the torch estimators and the meta-estimators with a torch child all
    # have a ``device`` parameter; whether one trains a torch module is seen
    # by counting optimizer steps in a clean fit
    return any(
        key == "device" or key.endswith("__device")
        for key in estimator.get_params(deep=True)
    )


ESTIMATORS = [e for e in yield_test_instances() if _uses_torch(e)]


def _id(estimator):
    return type(estimator).__name__


def _data(estimator, seed):
    rng = np.random.RandomState(seed)
    X = rng.normal(size=(60, 3))
    if is_classifier(estimator):
        return X, (X[:, 0] + 0.3 * rng.normal(size=60) > 0).astype(int)
    return X, X[:, 0] + 0.1 * rng.normal(size=60)


@pytest.fixture
def sigint():
    """``signal.default_int_handler`` on SIGINT (shells may start Python with
    SIGINT ignored), and a global optimizer step pre-hook that counts steps
    and sends SIGINT at step ``state["at"]``."""
    state = {"steps": 0, "at": None, "sent": 0}

    def hook(optimizer, args, kwargs):
        state["steps"] += 1
        if state["at"] is not None and state["steps"] == state["at"]:
            state["sent"] += 1
            signal.raise_signal(signal.SIGINT)

    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    handle = register_optimizer_step_pre_hook(hook)
    try:
        yield state
    finally:
        handle.remove()
        signal.signal(signal.SIGINT, previous)


def _outputs(estimator, X, y):
    out = {}
    for name in METHODS:
        method = getattr(estimator, name, None)
        if method is None or (
            name == "transform"
            and (is_classifier(estimator) or is_regressor(estimator))
        ):
            continue
        params = list(inspect.signature(method).parameters)
        out[name] = method(X, y) if params[1:2] == ["y"] else method(X)
    return out


def _fit(estimator, X, y):
    try:
        return estimator.fit(X, y)
    except ValueError as exc:  # estimators needing another input
        pytest.skip(f"fit(X, y) is not enough: {exc}")


@pytest.mark.parametrize("estimator", ESTIMATORS, ids=_id)
def test_ctrl_c_during_fit_propagates_and_leaves_no_half_fit(estimator, sigint):
    _check_ctrl_c(estimator, sigint)


@pytest.mark.parametrize("kind", ["regressor", "classifier"])
def test_ctrl_c_adaptive_composition_with_torch_hub(kind, sigint):
    # the common-check instances compose stateless scikit-learn modules (no
    # torch training); a hub of torch MLPs makes fit fine-tune a merged net
    from sklearn_iclr26.ensemble import (
        AdaptiveCompositionClassifier,
        AdaptiveCompositionRegressor,
        ModuleHub,
    )
    from sklearn_iclr26.neural_network import TorchMLPRegressor

    X = np.random.RandomState(0).normal(size=(60, 3))
    hub = ModuleHub(TorchMLPRegressor((8,), max_iter=10), random_state=0)
    hub.add_task("a", X, X[:, 0]).add_task("b", X, X[:, 1])
    cls = {
        "regressor": AdaptiveCompositionRegressor,
        "classifier": AdaptiveCompositionClassifier,
    }[kind]
    sigint.update(steps=0)
    _check_ctrl_c(cls(hub, max_iter=10, random_state=0), sigint)


def _conformal_over_torch():
    from sklearn_iclr26.conformal import (
        BonferroniBoxRegressor,
        EllipsoidRegressor,
        OTCPRegressor,
        SOCOPClassifier,
        SplitConformalClassifier,
    )
    from sklearn_iclr26.neural_network import TorchMLPClassifier, TorchMLPRegressor

    clf = TorchMLPClassifier((8,), max_iter=10, random_state=0)
    reg = TorchMLPRegressor((8,), max_iter=10, random_state=0)
    return [
        SOCOPClassifier(clf, random_state=0),
        SplitConformalClassifier(clf, random_state=0),
        BonferroniBoxRegressor(reg, random_state=0),
        EllipsoidRegressor(reg, random_state=0),
        OTCPRegressor(reg, random_state=0),
    ]


@pytest.mark.parametrize("estimator", _conformal_over_torch(), ids=_id)
def test_ctrl_c_conformal_meta_estimator_over_a_torch_model(estimator, sigint):
    # a real SIGINT inside the inner model's training loop: the conformal
    # meta-estimator's fit raises it and keeps its previous fit (threshold and
    # inner model of the same fit)
    _check_ctrl_c(estimator, sigint)


def _check_ctrl_c(estimator, sigint):
    X, y = _data(estimator, 0)
    X_b, y_b = _data(estimator, 1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _fit(clone(estimator), X, y)
        n_steps = sigint["steps"]
        if n_steps == 0:
            pytest.skip("this instance steps no torch optimizer")
        at = max(1, n_steps // 2)

        # fresh fit: the interrupt reaches the caller, the estimator is unfitted
        fresh = clone(estimator)
        keys_unfitted = set(vars(fresh))
        sigint.update(steps=0, at=at)
        with pytest.raises(KeyboardInterrupt):
            fresh.fit(X, y)
        assert sigint["sent"] == 1
        assert set(vars(fresh)) == keys_unfitted
        with pytest.raises(NotFittedError):
            check_is_fitted(fresh)

        # refit: the previous fit is kept, attributes and outputs unchanged
        sigint.update(steps=0, at=None)
        fitted = _fit(clone(estimator), X, y)
        keys_fitted = set(vars(fitted))
        expected = _outputs(fitted, X, y)
        sigint.update(steps=0, at=at, sent=0)
        with pytest.raises(KeyboardInterrupt):
            fitted.fit(X_b, y_b)
        assert sigint["sent"] == 1
        sigint.update(at=None)
        assert set(vars(fitted)) == keys_fitted
        after = _outputs(fitted, X, y)
    assert after.keys() == expected.keys()
    for name, value in expected.items():
        np.testing.assert_array_equal(after[name], value, err_msg=name)


def test_early_stopping_callback_still_ends_training_normally(sigint):
    from skorch.callbacks import EarlyStopping
    from torch import nn

    from sklearn_iclr26.neural_network._modules import MLPModule
    from sklearn_iclr26.utils._torch import train_module

    rng = np.random.RandomState(0)
    X = rng.normal(size=(40, 3))
    y = X[:, :1] + 0.1 * rng.normal(size=(40, 1))
    # an improvement threshold no epoch can meet: stops after `patience` epochs
    stop = EarlyStopping(monitor="train_loss", patience=2, threshold=1e9)
    net = train_module(
        MLPModule,
        X,
        y,
        criterion=nn.MSELoss,
        criterion_params={"reduction": "none"},
        module_params={"n_features": 3, "n_outputs": 1},
        max_epochs=50,
        random_state=0,
        callbacks=[stop],
    )
    assert 1 < len(net.history) < 50
    assert sigint["sent"] == 0


def test_package_early_stops_end_training_normally(sigint):
    from sklearn_iclr26.conformal import CVQRRegressor
    from sklearn_iclr26.memorization import SampleGradientMemorization

    rng = np.random.RandomState(0)
    X = rng.normal(size=(200, 3))
    Y = np.c_[X[:, 0], X[:, 1]] + 0.1 * rng.normal(size=(200, 2))
    # a tolerance no epoch can meet: stops `n_iter_no_change` epochs after
    # the warm-up (100 held-out rows, above the 50 early stopping needs)
    cvqr = CVQRRegressor(
        max_iter=200,
        validation_fraction=0.5,
        n_iter_no_change=2,
        tol=1e9,
        batch_size=None,
        random_state=0,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cvqr.fit(X, Y)
    assert cvqr.n_iter_ < 200
    y = (X[:, 0] > 0).astype(int)
    sgm = SampleGradientMemorization(
        max_iter=200, n_iter_no_change=1, alpha=1e-2, random_state=0
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sgm.fit(X, y)
    assert sgm.peak_found_
    assert sgm.n_iter_ < 200
    assert sigint["sent"] == 0


@pytest.mark.parametrize("handler", [signal.default_int_handler, signal.SIG_IGN])
def test_fit_restores_the_callers_sigint_handler(handler):
    from sklearn_iclr26.neural_network import TorchMLPRegressor

    X = np.random.RandomState(0).normal(size=(30, 2))
    previous = signal.signal(signal.SIGINT, handler)
    try:
        TorchMLPRegressor((4,), max_iter=3, random_state=0).fit(X, X[:, 0])
        assert signal.getsignal(signal.SIGINT) is handler
    finally:
        signal.signal(signal.SIGINT, previous)
