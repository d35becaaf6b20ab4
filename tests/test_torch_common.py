"""Contracts of every torch estimator, checked once over all of them.

Every public estimator that trains a torch module inherits
:class:`~sklearn_iclr26.utils._torch_estimator.BaseTorchEstimator`
(a static test below fails when a new one does not), so these contracts are
the base's, and each estimator is checked against them here instead of in
hand-written family tests:

* ``verbose=1`` prints ``[ClassName] epoch i/n`` lines (the public class name);
* ``len(loss_curve_) == n_iter_`` and the curve is finite;
* ``early_stopping=True`` stops after ``n_iter_no_change`` epochs without
  improvement and keeps the best epoch's weights;
* ``callbacks=`` reaches the skorch net and the parameter is not modified;
* ``warm_start=True`` continues training (curves accumulate);
* a fixed ``random_state`` gives bit-identical fits.
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import ast
import re
from pathlib import Path

import numpy as np
import pytest
from sklearn.base import clone, is_classifier, is_regressor
from skorch.callbacks import Callback

import sklearn_iclr26
from sklearn_iclr26.utils._test_common import yield_test_instances
from sklearn_iclr26.utils._torch_estimator import BaseTorchEstimator
from sklearn_iclr26.utils.discovery import all_estimators

PACKAGE = Path(sklearn_iclr26.__file__).parent

TORCH_ESTIMATORS = {
    type(e).__name__: e
    for e in yield_test_instances()
    if isinstance(e, BaseTorchEstimator)
}
IDS = sorted(TORCH_ESTIMATORS)


def _data(estimator, n=80, seed=0):
    """Small data each torch estimator fits with ``fit(X, y)``."""
    custom = getattr(estimator, "_common_test_data", None)
    if custom is not None:  # estimators whose fit needs another input layout
        return custom(n=n, seed=seed)
    rng = np.random.RandomState(seed)
    X = rng.normal(size=(n, 4))
    if is_classifier(estimator):
        return X, (X[:, 0] + 0.3 * rng.normal(size=n) > 0).astype(int)
    if is_regressor(estimator):
        return X, X[:, 0] + 0.5 * X[:, 1] + 0.1 * rng.normal(size=n)
    return np.abs(X), None  # transformers (masses, codes)


def _instance(name, **params):
    estimator = clone(TORCH_ESTIMATORS[name])
    custom = getattr(estimator, "_common_test_params", None)
    if custom is not None:  # e.g. a hub of torch modules to compose
        estimator.set_params(**custom())
    estimator.set_params(random_state=0, **params)
    return estimator


def _fit(estimator, X, y):
    return estimator.fit(X) if y is None else estimator.fit(X, y)


def _outputs(estimator, X):
    for method in ("predict_proba", "predict", "transform"):
        if hasattr(estimator, method):
            return np.asarray(getattr(estimator, method)(X), dtype=np.float64)
    raise AssertionError(f"{type(estimator).__name__} has no output method")


class CountEpochs(Callback):
    """Counts the epochs it sees (module level, so the fitted net pickles)."""

    def initialize(self):
        self.epochs_seen_ = 0
        return self

    def on_epoch_end(self, net, **kwargs):
        self.epochs_seen_ += 1


def test_the_registry_holds_the_torch_estimators():
    # the MLPs are the base's worked example; the list grows as families port
    assert {"TorchMLPClassifier", "TorchMLPRegressor"} <= set(TORCH_ESTIMATORS)


@pytest.mark.parametrize("name", IDS)
def test_verbose_lines_start_with_the_public_class_name(name, capsys):
    estimator = _instance(name, max_iter=3, verbose=1)
    X, y = _data(estimator)
    _fit(estimator, X, y)
    lines = [line for line in capsys.readouterr().out.splitlines() if line.strip()]
    assert lines, f"{name} printed nothing with verbose=1"
    bad = [line for line in lines if not line.startswith(f"[{name}] ")]
    assert not bad, f"{name}: lines without the class name: {bad[:3]}"
    epochs = [line for line in lines if re.search(r"epoch \d+/\d+", line)]
    assert epochs, f"{name}: no 'epoch i/n' line"


@pytest.mark.parametrize("name", IDS)
def test_loss_curve_has_one_finite_value_per_epoch(name):
    estimator = _instance(name, max_iter=4)
    X, y = _data(estimator)
    _fit(estimator, X, y)
    assert len(estimator.loss_curve_) == estimator.n_iter_ >= 1
    assert np.isfinite(estimator.loss_curve_).all()
    assert estimator.validation_loss_curve_ is None
    assert estimator.best_iter_ == estimator.n_iter_


@pytest.mark.parametrize("name", IDS)
def test_early_stopping_stops_and_keeps_the_best_epoch(name):
    # a tolerance no epoch can beat: the first epoch stays the best, training
    # stops n_iter_no_change epochs later, and the kept weights are the first
    # epoch's (the same as one epoch of training on the same split)
    stopped = _instance(
        name, max_iter=50, early_stopping=True, n_iter_no_change=2, tol=1e12
    )
    X, y = _data(stopped)
    _fit(stopped, X, y)
    assert stopped.n_iter_ == 3
    assert stopped.best_iter_ == 1
    assert len(stopped.validation_loss_curve_) == 3
    assert np.isfinite(stopped.validation_loss_curve_).all()
    one_epoch = _instance(name, max_iter=1, early_stopping=True)
    _fit(one_epoch, X, y)
    np.testing.assert_array_equal(_outputs(stopped, X), _outputs(one_epoch, X))


@pytest.mark.parametrize("name", IDS)
def test_early_stopping_runs_to_max_iter_while_improving(name):
    estimator = _instance(
        name, max_iter=4, early_stopping=True, n_iter_no_change=10, tol=0.0
    )
    X, y = _data(estimator)
    _fit(estimator, X, y)
    assert estimator.n_iter_ == 4
    curve = np.asarray(estimator.validation_loss_curve_)
    assert estimator.best_iter_ == int(np.argmin(curve)) + 1


@pytest.mark.parametrize("name", IDS)
def test_callbacks_reach_the_net_and_the_parameter_is_not_modified(name):
    counter = CountEpochs()
    estimator = _instance(name, max_iter=3, callbacks=[("count", counter)])
    X, y = _data(estimator)
    _fit(estimator, X, y)
    fitted = dict(estimator.net_.callbacks_)["count"]
    assert fitted.epochs_seen_ == estimator.n_iter_ == 3
    assert fitted is not counter and not hasattr(counter, "epochs_seen_")


@pytest.mark.parametrize("name", IDS)
def test_warm_start_continues_training(name):
    estimator = _instance(name, max_iter=2, warm_start=True)
    X, y = _data(estimator)
    _fit(estimator, X, y)
    first = list(estimator.loss_curve_)
    # the refit's callbacks (and progress) replace the first fit's
    estimator.set_params(callbacks=[("count", CountEpochs())])
    _fit(estimator, X, y)
    assert estimator.n_iter_ == 4
    assert estimator.loss_curve_[:2] == first
    assert dict(estimator.net_.callbacks_)["count"].epochs_seen_ == 2
    cold = _instance(name, max_iter=2, warm_start=False)
    _fit(cold, X, y)
    _fit(cold, X, y)
    assert cold.n_iter_ == 2


@pytest.mark.parametrize("name", IDS)
def test_fixed_random_state_is_bit_identical(name):
    first, second = _instance(name, max_iter=3), _instance(name, max_iter=3)
    X, y = _data(first)
    _fit(first, X, y)
    _fit(second, X, y)
    np.testing.assert_array_equal(_outputs(first, X), _outputs(second, X))
    assert first.loss_curve_ == second.loss_curve_


# ------------------------------------------------------------------- static

# where a skorch net may be built and trained: the engine, and the base that
# every torch estimator inherits
_TRAINERS = {"utils/_torch.py", "utils/_torch_estimator.py"}


def _calls(path, names):
    tree = ast.parse(path.read_text())
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            func = node.func
            name = getattr(func, "id", None) or getattr(func, "attr", None)
            if name in names:
                found.append(node.lineno)
    return found


def test_only_the_base_calls_the_training_engine():
    offenders = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        if rel in _TRAINERS:
            continue
        lines = _calls(path, {"train_module"})
        if lines:
            offenders[rel] = lines
    assert not offenders, (
        "these modules train a torch module without the torch base: inherit "
        "sklearn_iclr26.utils._torch_estimator.BaseTorchEstimator and "
        f"let its _train call the engine: {offenders}"
    )


def _imports_torch_training(cls):
    """Whether the class's module (or a base's in the package) builds a net."""
    for klass in cls.__mro__:
        module = getattr(klass, "__module__", "")
        if not module.startswith("sklearn_iclr26"):
            continue
        source = Path(__import__(module, fromlist=["_"]).__file__).read_text()
        if re.search(r"\bnet_\b|train_module|forward_module", source):
            return True
    return False


def test_every_torch_estimator_inherits_the_base():
    missing = [
        name
        for name, cls in all_estimators()
        if _imports_torch_training(cls) and not issubclass(cls, BaseTorchEstimator)
    ]
    assert not missing, (
        f"torch estimators not on BaseTorchEstimator: {missing}; see the torch "
        "estimator section of doc/developers.rst"
    )
