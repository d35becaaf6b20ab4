"""Ctrl-C during ``fit`` reaches the caller and leaves no half-fitted model.

The one fit-atomicity policy (``sklearn_iclr26/utils/_atomic.py``) is checked
for every public estimator in ``tests/test_common_contracts.py`` (a real
SIGINT at the first, middle and last call of a first fit and of a refit).
Here, what that common test does not reach:

* configurations beyond the test instances (a hub of torch MLPs, conformal
  meta-estimators over torch models), interrupted inside the training loop
  by a real SIGINT from a global optimizer step pre-hook;
* a second Ctrl-C during the restore, warm starts, a Ctrl-C that
  scikit-learn's MLP swallows, and one during the first ``import torch``;
* early stops (skorch's ``EarlyStopping``, the package's own in CVQR and in
  the CSG callback) still end training normally.
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import functools
import inspect
import os
import pickle
import signal
import sys
import warnings

import numpy as np
import pytest
from sklearn.base import BaseEstimator, clone, is_classifier, is_regressor
from sklearn.exceptions import NotFittedError
from sklearn.neural_network import MLPRegressor
from sklearn.utils.validation import check_is_fitted
from torch.optim.optimizer import register_optimizer_step_pre_hook

from sklearn_iclr26.utils._atomic import atomic_fit

METHODS = ("predict", "predict_proba", "decision_function", "transform")


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

    from sklearn_iclr26.utils._mlp_modules import MLPModule
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


# ------------------------------------------------ the policy's own guarantees
class _Failing(BaseEstimator):
    """Sets two attributes, then raises ``error`` (unless ``None``)."""

    def __init__(self, error=None, warm_start=False):
        self.error = error
        self.warm_start = warm_start

    @atomic_fit
    def fit(self, X, y=None):
        self.coef_ = np.asarray(X, dtype=float).sum(axis=0) + getattr(
            self, "coef_", 0.0
        )
        self._private_state = object()
        if self.error is not None:
            raise self.error
        self.n_features_in_ = np.shape(X)[1]
        return self


def _line_of(function, text):
    lines, start = inspect.getsourcelines(function)
    return start + next(i for i, line in enumerate(lines) if text in line)


def _signal_at_line(line):
    """Trace the policy's frame; deliver SIGINT (the installed handler called
    with that frame, as a signal arriving there) just before ``line`` runs."""
    from sklearn_iclr26.utils import _atomic

    sent = []

    def local(frame, event, arg):
        if event == "line" and frame.f_lineno == line and not sent:
            sent.append(frame.f_lineno)
            signal.getsignal(signal.SIGINT)(signal.SIGINT, frame)
        return local

    def tracer(frame, event, arg):
        if frame.f_code is _atomic._run.__code__:
            return local
        return None

    return tracer, sent


@pytest.mark.parametrize("error", [KeyboardInterrupt(), ValueError("bad")])
def test_a_second_ctrl_c_during_the_restore_cannot_interrupt_it(error, sigint):
    from sklearn_iclr26.utils import _atomic

    est = _Failing().fit(np.ones((3, 2)))
    before = dict(vars(est))
    est.set_params(error=error)
    before["error"] = error
    tracer, sent = _signal_at_line(_line_of(_atomic._run, "self.__dict__ = previous"))
    sys.settrace(tracer)
    try:
        with pytest.raises(KeyboardInterrupt):
            est.fit(np.ones((3, 4)))
    finally:
        sys.settrace(None)
    assert sent
    assert vars(est) == before
    # and a fresh fit stays unfitted
    fresh = _Failing(error=error)
    sys.settrace(tracer)
    sent.clear()
    try:
        with pytest.raises(KeyboardInterrupt):
            fresh.fit(np.ones((3, 4)))
    finally:
        sys.settrace(None)
    assert sent
    assert vars(fresh) == {"error": error, "warm_start": False}


def test_a_ctrl_c_during_the_commit_rolls_the_fit_back(sigint):
    from sklearn_iclr26.utils import _atomic

    est = _Failing().fit(np.ones((3, 2)))
    before = dict(vars(est))
    tracer, sent = _signal_at_line(_line_of(_atomic._run, "work[_RECORD] = "))
    sys.settrace(tracer)
    try:
        with pytest.raises(KeyboardInterrupt):
            est.fit(np.ones((3, 4)))
    finally:
        sys.settrace(None)
    assert sent
    assert vars(est) == before


def test_a_refit_starts_from_the_configuration_and_a_warm_one_continues():
    est = _Failing().fit(np.ones((3, 2)))
    est.extra_ = 1.0  # an attribute of the fitted state the next fit does not set
    est.fit(np.ones((3, 2)))
    np.testing.assert_array_equal(est.coef_, [3.0, 3.0])  # not 6: a fresh start
    warm = _Failing(warm_start=True).fit(np.ones((3, 2)))
    warm.fit(np.ones((3, 2)))
    np.testing.assert_array_equal(warm.coef_, [6.0, 6.0])
    assert not hasattr(_Failing().fit(np.ones((3, 2))), "extra_")


def test_interrupted_warm_start_refit_keeps_the_previous_fit_and_can_continue(sigint):
    from sklearn_iclr26.neural_network import TorchMLPRegressor

    X, y = _data(TorchMLPRegressor(), 0)
    make = functools.partial(
        TorchMLPRegressor, (8,), max_iter=4, warm_start=True, random_state=0
    )
    reference = make().fit(X, y).fit(X, y)
    est = make().fit(X, y)
    before = pickle.dumps(est)
    expected = est.predict(X)
    sigint.update(steps=0, at=2, sent=0)
    with pytest.raises(KeyboardInterrupt):
        est.fit(X, y)
    sigint.update(at=None)
    assert pickle.dumps(est) == before
    np.testing.assert_array_equal(est.predict(X), expected)
    # the next warm fit continues from the previous fit, as without the interrupt
    est.fit(X, y)
    assert est.n_iter_ == reference.n_iter_ == 8
    np.testing.assert_array_equal(est.predict(X), reference.predict(X))


# ------------------------------------- scikit-learn's MLP swallows a Ctrl-C
class _InterruptedMLP(MLPRegressor):
    """scikit-learn's MLP, Ctrl-C'ed at its 3rd epoch when ``armed``."""

    armed = True

    def _update_no_improvement_count(self, *args, **kwargs):
        if type(self).armed and self.n_iter_ == 3:
            raise KeyboardInterrupt
        return super()._update_no_improvement_count(*args, **kwargs)


@pytest.mark.parametrize("name", ["box", "ellipsoid"])
def test_ctrl_c_inside_a_scikit_learn_mlp_child_reaches_the_caller(name):
    # scikit-learn catches KeyboardInterrupt in its training loop and warns
    # "Training interrupted by user."; the wrapper must not calibrate the
    # half-trained child
    from sklearn_iclr26.conformal import BonferroniBoxRegressor, EllipsoidRegressor

    cls = {"box": BonferroniBoxRegressor, "ellipsoid": EllipsoidRegressor}[name]
    rng = np.random.RandomState(0)
    X = rng.normal(size=(120, 3))
    Y = X[:, :2] + 0.1 * rng.normal(size=(120, 2))
    child = _InterruptedMLP(hidden_layer_sizes=(8,), max_iter=20, random_state=0)
    fresh = cls(child, random_state=0)
    with pytest.raises(KeyboardInterrupt):
        fresh.fit(X, Y)
    with pytest.raises(NotFittedError):
        check_is_fitted(fresh)
    _InterruptedMLP.armed = False
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fitted = cls(child, random_state=0).fit(X, Y)
    finally:
        _InterruptedMLP.armed = True
    before = pickle.dumps(fitted)
    with pytest.raises(KeyboardInterrupt):
        fitted.fit(X[:100], Y[:100])
    assert pickle.dumps(fitted) == before


# ------------------------------------------ Ctrl-C during the first torch import
_FIRST_IMPORT = """
import importlib.abc, os, signal, sys, time
import numpy as np
signal.signal(signal.SIGINT, signal.default_int_handler)
import sklearn_iclr26
from sklearn_iclr26.neural_network import TorchMLPRegressor
assert "torch" not in sys.modules, "import sklearn_iclr26 imported torch"


class SigintDuringTorchImport(importlib.abc.MetaPathFinder):
    # a real SIGINT at torch's 20th submodule import, torch half initialised
    seen = 0
    sent = False

    def find_spec(self, name, path, target=None):
        torch = sys.modules.get("torch")
        initializing = getattr(getattr(torch, "__spec__", None), "_initializing", 0)
        if name.startswith("torch.") and initializing and not self.sent:
            type(self).seen += 1
            if self.seen == 20:
                type(self).sent = True
                os.kill(os.getpid(), signal.SIGINT)
        return None


sys.meta_path.insert(0, SigintDuringTorchImport())
X = np.random.RandomState(0).normal(size=(30, 2))
est = TorchMLPRegressor((4,), max_iter=3, random_state=0)
try:
    est.fit(X, X[:, 0])
    time.sleep(2)  # a deferred interrupt lands by now
    print("not interrupted")
except KeyboardInterrupt:
    print("interrupted")
assert SigintDuringTorchImport.sent
assert not hasattr(est, "net_") or est.n_iter_ == 3
print("fitted", est.fit(X, X[:, 0]).n_iter_)
"""


def test_ctrl_c_during_the_first_torch_import_leaves_a_working_process():
    import subprocess
    from pathlib import Path

    import sklearn_iclr26

    root = str(Path(sklearn_iclr26.__file__).parents[1])
    env = dict(os.environ, PYTHONPATH=root)
    done = subprocess.run(
        [sys.executable, "-c", _FIRST_IMPORT],
        check=False,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    lines = done.stdout.split()
    assert "interrupted" in lines, done.stdout
    assert "fitted" in lines, done.stdout


def test_an_interrupted_add_task_leaves_the_hub_as_it_was():
    """``ModuleHub.add_task`` is all or nothing: a Ctrl-C (or an error) while
    the new module trains leaves the registry and the shared seed as they
    were, so the retried call builds exactly what an uninterrupted one does."""
    from sklearn_iclr26.ensemble import ModuleHub
    from sklearn_iclr26.neural_network import TorchMLPRegressor

    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(40, 3)), rng.normal(size=40)
    template = TorchMLPRegressor(hidden_layer_sizes=(4,), max_iter=3)
    hub = ModuleHub(template, random_state=0)
    hub.add_task("a", X, y)
    before = (dict(hub.modules), dict(vars(hub)))

    class _Interrupting(TorchMLPRegressor):
        def fit(self, X, y, **kw):
            raise KeyboardInterrupt

    hub.estimator = _Interrupting(hidden_layer_sizes=(4,), max_iter=3)
    with pytest.raises(KeyboardInterrupt):
        hub.add_task("b", X, y)
    assert hub.modules == before[0] and "b" not in hub
    assert set(vars(hub)) == set(before[1])

    fresh = ModuleHub(template, random_state=0)
    with pytest.raises(ValueError):
        fresh.add_task("a", X, np.full(40, np.nan))
    # the failed first call did not draw the shared seed
    assert not hasattr(fresh, "init_seed_") and len(fresh) == 0
    fresh.add_task("a", X, y)
    np.testing.assert_array_equal(fresh["a"].predict(X), hub["a"].predict(X))
