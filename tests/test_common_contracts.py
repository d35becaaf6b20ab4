"""Contracts every public estimator keeps, checked once for all of them.

* A pickle round trip of a fitted estimator gives bit-identical outputs from
  every prediction method it has, and the same numeric fitted attributes
  (scikit-learn's ``check_estimators_pickle`` only asks ``allclose`` of four
  methods, and none of ours such as ``predict_set``).
* A ``skops.io`` round trip (when skops is installed) gives the same outputs,
  and the file asks to trust only the package's own classes (plus the inner
  estimators' types, listed in ``SKOPS_INNER_TYPES``): no torch, skorch or
  builtins type, so a file naming any other type is refused.
* ``clone`` gives an unfitted copy, and refitting it with the same
  ``random_state`` gives bit-identical outputs.
* ``GridSearchCV`` over one declared parameter: each candidate's score is what
  ``cross_val_score`` of that candidate gives on the same folds, the winner is
  the best of them, the refitted winner is that candidate fitted on all the
  data, and the parameter changes the fitted outputs.

The instances are those of ``tests/test_common.py`` (the subpackages'
``_test_instances.py``), the data is small and the same as scikit-learn's
pickle check uses (``SPECIAL_DATA`` for the two estimators whose ``fit``
needs inputs of their own), so this file stays fast.
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import os
import pickle
import signal
import sys
import warnings

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.datasets import make_blobs
from sklearn.linear_model import LinearRegression
from sklearn.metrics.pairwise import rbf_kernel
from sklearn.model_selection import GridSearchCV, KFold, cross_val_score

import sklearn_iclr26
from sklearn_iclr26.utils._sklearn_compat import (
    _enforce_estimator_tags_X,
    _enforce_estimator_tags_y,
)
from sklearn_iclr26.utils._test_common import _registries
from sklearn_iclr26.utils.discovery import all_estimators

# the first test instance of each public name (an alias such as GLearner is
# checked under its own name, as in tests/test_common.py)
_FIRST = {
    name: clone(cls(**_registries()[0].get(name, [{}])[0]))
    for name, cls in all_estimators()
}
NAMES = list(_FIRST)

# methods that take X alone; every one an estimator has is compared
X_METHODS = (
    "predict",
    "predict_proba",
    "predict_log_proba",
    "decision_function",
    "transform",
    "predict_set",
    "predict_allocation",
    "predict_outcomes",
    "region_log_volume",
    "score_samples",
)


def _reconstruction_score(estimator, X, y=None):
    return -np.mean((X - estimator.inverse_transform(estimator.transform(X))) ** 2)


# one parameter per estimator whose family test searched over it (a third
# entry is the scoring, where the estimator has no score method)
GRID = {
    "AdaptiveCompositionRegressor": ("temperature", [0.2, 2.0]),
    "BackdoorAdjustedRegressor": ("n_confounders", [1, 2]),
    "BayesianAugmentationClassifier": ("kl_weight", [0.0, 1.0]),
    "CVQRRegressor": ("hidden_layer_sizes", [(4,), (8,)]),
    # the searched architecture is the same on this small data: the
    # parameter of the refitted network is what the grid can change
    "ConNASSearch": (
        "final_estimator_params",
        [
            {"max_iter": 50, "learning_rate_init": 0.05},
            {"max_iter": 10, "learning_rate_init": 0.05},
        ],
    ),
    "DiffusionInterestFusionClassifier": ("fusion", ["concat", "diffusion"]),
    "GeodesicCATERegressor": ("n_steps", [0, 1]),
    "InstanceNoiseCorrector": ("beta", [1.0, 4.0]),
    "MetaPCNClassifier": ("meta_pe", [False, True]),
    "SOCOPClassifier": ("confidence_level", [0.95, 0.9]),
    "SparseAutoencoder": ("n_nonzero_coefs", [1, 2], _reconstruction_score),
    "TopKDeferrer": ("regime", ["two-stage", "one-stage"]),
    "TorchMLPClassifier": ("hidden_layer_sizes", [(8,), (16, 8)]),
    "TwoKeyAttentionRegressor": ("init_scale", [0.1, 0.2]),
}


def _interaction_log(n_samples):
    import pandas as pd

    rng = np.random.RandomState(0)
    log = pd.DataFrame(
        {
            "user": rng.randint(0, 5, n_samples),
            "item": rng.randint(0, 8, n_samples),
            "timestamp": np.arange(n_samples) * 600,
        }
    )
    return log, rng.randint(0, 2, n_samples)


def _verifier_records(n_samples):
    # 2-D layout: one row per problem, one column per sample
    rng = np.random.RandomState(0)
    accepted = rng.randint(0, 2, (n_samples, 5))
    return accepted, accepted * rng.randint(0, 2, (n_samples, 5))


# the estimators whose fit needs inputs of their own (utils/_exemptions.py)
SPECIAL_DATA = {
    "InteractionSequenceEncoder": _interaction_log,
    "ResamplingUtilityEstimator": _verifier_records,
}


def _data(estimator, n_samples=60):
    """scikit-learn's pickle-check data, shaped by the estimator's tags."""
    name = type(estimator).__name__
    if name in SPECIAL_DATA:
        return SPECIAL_DATA[name](n_samples)
    X, y = make_blobs(
        n_samples=n_samples,
        centers=[[0, 0, 0], [1, 1, 1]],
        random_state=0,
        n_features=2,
        cluster_std=0.3,
    )
    X = _enforce_estimator_tags_X(estimator, X, kernel=rbf_kernel)
    y = _enforce_estimator_tags_y(estimator, y)
    return X, y


def _fit(estimator, X, y, random_state=0):
    est = clone(estimator)
    if "random_state" in est.get_params():
        est.set_params(random_state=random_state)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return est.fit(X, y)


def _outputs(estimator, X):
    """Every X-only prediction method's output, and the numeric fitted attributes."""
    out = {
        f"attribute {key}": value
        for key, value in vars(estimator).items()
        if key.endswith("_")
        and not key.startswith("_")
        and isinstance(value, (np.ndarray, float, int, np.number))
    }
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for method in X_METHODS:
            if hasattr(estimator, method):
                out[method] = getattr(estimator, method)(X)
    return out


def _assert_same(a, b):
    assert a.keys() == b.keys()
    for method in a:
        np.testing.assert_array_equal(a[method], b[method], err_msg=method)


def test_grid_names_are_public_estimators():
    assert set(GRID) <= set(_FIRST)


@pytest.mark.parametrize("name", NAMES)
def test_pickle_round_trip_is_bit_identical(name):
    estimator = _FIRST[name]
    X, y = _data(estimator)
    fitted = _fit(estimator, X, y)
    expected = _outputs(fitted, X)
    assert expected, "no prediction method and no numeric fitted attribute"
    restored = pickle.loads(pickle.dumps(fitted))
    _assert_same(_outputs(restored, X), expected)


# the types, other than the package's own, that skops asks to trust for the
# estimators whose default inner models are not the package's (LightGBM's
# booster and its parameter dict, a scipy sparse graph); nothing of torch,
# skorch or builtins: the networks are saved as arrays
# (sklearn_iclr26/utils/_persistence.py)
_LIGHTGBM = {"collections.OrderedDict", "lightgbm.basic.Booster"}
SKOPS_INNER_TYPES = {
    "ConformalizedQuantileRegressor": _LIGHTGBM | {"lightgbm.sklearn.LGBMRegressor"},
    # the default residual_estimator="auto" is a random forest
    "CVQRRegressor": {"sklearn.tree._tree.Tree"},
    "GeodesicCATERegressor": {"scipy.sparse._csr.csr_matrix"},
    "InstanceNoiseCorrector": _LIGHTGBM | {"lightgbm.sklearn.LGBMClassifier"},
}

# estimators skops cannot load (pickle works: the pickle round trip above)
SKOPS_UNSUPPORTED = {
    "CausalForestRegressor": (
        "its forest is econml's generalized random forest, whose Cython tree "
        "(econml.tree._tree.Tree) skops cannot rebuild (it has a loader for "
        "scikit-learn's tree only)"
    ),
}


@pytest.mark.parametrize("name", NAMES)
def test_skops_round_trip_is_bit_identical(name):
    sio = pytest.importorskip("skops.io")
    if name in SKOPS_UNSUPPORTED:
        pytest.skip(SKOPS_UNSUPPORTED[name])
    estimator = _FIRST[name]
    X, y = _data(estimator)
    fitted = _fit(estimator, X, y)
    expected = _outputs(fitted, X)
    data = sio.dumps(fitted)
    untrusted = sio.get_untrusted_types(data=data)
    foreign = {t for t in untrusted if not t.startswith("sklearn_iclr26.")}
    assert foreign == SKOPS_INNER_TYPES.get(name, set())
    # the estimator's own class, and nothing loads without trusting it
    assert f"{type(fitted).__module__}.{type(fitted).__qualname__}" in untrusted
    with pytest.raises(sio.exceptions.UntrustedTypesFoundException):
        sio.loads(data)
    restored = sio.loads(data, trusted=untrusted)
    _assert_same(_outputs(restored, X), expected)
    # saving the loaded estimator again gives the same types
    assert sio.get_untrusted_types(data=sio.dumps(restored)) == untrusted


@pytest.mark.parametrize("name", NAMES)
def test_clone_is_unfitted_and_refits_bit_identically(name):
    # and, for the first instances, the global-RNG contract below: the two
    # fits and every method leave the caller's global RNGs alone
    estimator = _FIRST[name]
    X, y = _data(estimator)
    before = _seed_global_rngs()
    fitted = _fit(estimator, X, y)
    copy = clone(fitted)
    fitted_attrs = [k for k in vars(copy) if k.endswith("_") and not k.startswith("_")]
    assert not fitted_attrs, fitted_attrs
    assert copy.get_params().keys() == fitted.get_params().keys()
    _assert_same(_all_outputs(_fit(copy, X, y), X, y), _all_outputs(fitted, X, y))
    _assert_same_states(before, _global_rng_states())


@pytest.mark.parametrize("name", sorted(GRID))
def test_grid_search_over_one_declared_parameter(name):
    estimator = _FIRST[name]
    param, values, *scoring = GRID[name]
    scoring = scoring[0] if scoring else None
    X, y = _data(estimator)
    if "random_state" in estimator.get_params():
        estimator = clone(estimator).set_params(random_state=0)
    cv = KFold(2, shuffle=True, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        search = GridSearchCV(estimator, {param: values}, cv=cv, scoring=scoring)
        search.fit(X, y)
        by_hand = [
            cross_val_score(
                clone(estimator).set_params(**{param: v}), X, y, cv=cv, scoring=scoring
            )
            for v in values
        ]
    # each candidate was scored as itself, on the same folds
    scores = search.cv_results_["mean_test_score"]
    np.testing.assert_allclose(scores, [s.mean() for s in by_hand], rtol=1e-12)
    assert [p[param] for p in search.cv_results_["params"]] == values
    # the winner is the best candidate, refitted on all the data
    best = values[int(np.argmin(search.cv_results_["rank_test_score"]))]
    assert search.best_params_ == {param: best}
    assert search.best_estimator_.get_params()[param] == best
    refit = _fit(clone(estimator).set_params(**{param: best}), X, y)
    _assert_same(_outputs(search.best_estimator_, X), _outputs(refit, X))
    # the parameter reaches the fitted model: the two candidates differ
    a, b = (_fit(clone(estimator).set_params(**{param: v}), X, y) for v in values)
    out_a, out_b = _outputs(a, X), _outputs(b, X)
    assert any(
        not np.array_equal(np.asarray(out_a[m]), np.asarray(out_b[m])) for m in out_a
    ), f"{param}={values} changes none of {sorted(out_a)}"


# a fresh interpreter loads each file with the types it names trusted and
# writes every output _outputs compares
_FRESH_PROCESS = """
import pickle, sys, warnings
import numpy as np
import skops.io as sio
warnings.simplefilter("ignore")
folder, names, methods = sys.argv[1], sys.argv[2].split(","), sys.argv[3].split(",")
results = {}
for name in names:
    path = f"{folder}/{name}.skops"
    estimator = sio.load(path, trusted=sio.get_untrusted_types(file=path))
    with open(f"{folder}/{name}.X", "rb") as f:
        X = pickle.load(f)
    out = {
        f"attribute {key}": value
        for key, value in vars(estimator).items()
        if key.endswith("_")
        and not key.startswith("_")
        and isinstance(value, (np.ndarray, float, int, np.number))
    }
    for method in methods:
        if hasattr(estimator, method):
            out[method] = getattr(estimator, method)(X)
    results[name] = out
with open(f"{folder}/results.pkl", "wb") as f:
    pickle.dump(results, f)
"""


def _check_fresh_process_reload(names, folder):
    import os
    import subprocess
    import sys
    from pathlib import Path

    import sklearn_iclr26

    sio = pytest.importorskip("skops.io")
    expected = {}
    for name in names:
        X, y = _data(_FIRST[name])
        fitted = _fit(_FIRST[name], X, y)
        expected[name] = _outputs(fitted, X)
        sio.dump(fitted, folder / f"{name}.skops")
        with open(folder / f"{name}.X", "wb") as f:
            pickle.dump(X, f)
    env = dict(os.environ, PYTHONPATH=str(Path(sklearn_iclr26.__file__).parents[1]))
    command = [sys.executable, "-c", _FRESH_PROCESS, str(folder)]
    subprocess.run(
        [*command, ",".join(names), ",".join(X_METHODS)],
        check=True,
        env=env,
    )
    with open(folder / "results.pkl", "rb") as f:
        results = pickle.load(f)
    for name in names:
        _assert_same(results[name], expected[name])


def test_skops_fresh_process_reload_is_bit_identical(tmp_path):
    # the estimators the practitioner audit found failing, and two plain nets
    names = [
        "CVQRRegressor",
        "ConNASSearch",
        "MultiPPIMeanEstimator",
        "OTCPRegressor",
        "RLPHeadClassifier",
        "SampleGradientMemorization",
        "TorchMLPClassifier",
        "TorchMLPRegressor",
    ]
    _check_fresh_process_reload(names, tmp_path)


@pytest.mark.slow
def test_skops_fresh_process_reload_of_every_estimator(tmp_path):
    names = [name for name in NAMES if name not in SKOPS_UNSUPPORTED]
    _check_fresh_process_reload(names, tmp_path)


# ------------------------------------------------------------ interrupted fits
# A real SIGINT (``signal.default_int_handler`` installed, as in an
# interactive session) is sent during a fit at the first call of a function
# of the package (``fit`` itself), at the middle one of a clean fit's calls
# (counted by ``sys.settrace``, the policy's own module aside) and when
# ``fit`` returns (every fitted attribute set): before, inside and after the
# child fits, the training loop and the fitted attributes' assignment. Each
# interrupted fit must raise ``KeyboardInterrupt`` and leave the estimator
# exactly as it was: unfitted after a first fit, the previous fit (same
# attributes, bit-identical outputs) after a refit on other rows with one
# more feature.

_PACKAGE = os.path.dirname(sklearn_iclr26.__file__)
_POLICY = os.path.join(_PACKAGE, "utils", "_atomic.py")
_AT_RETURN = "return of fit"


class _SigintAtCall:
    """Global trace function: SIGINT at the ``at``-th call into the package
    (or at the return of the first one, ``fit``)."""

    def __init__(self, at=None):
        self.at, self.calls, self.sent = at, 0, 0

    def __call__(self, frame, event, arg):
        if event != "call":
            return None
        filename = frame.f_code.co_filename
        if not filename.startswith(_PACKAGE) or filename == _POLICY:
            return None
        self.calls += 1
        if self.calls == self.at:
            self._send()
        if self.calls == 1 and self.at == _AT_RETURN:
            return self._at_return
        return None

    def _at_return(self, frame, event, arg):
        if event == "return":
            self._send()
        return self._at_return

    def _send(self):
        self.sent += 1
        signal.raise_signal(signal.SIGINT)

    def run(self, func, *args):
        previous = signal.signal(signal.SIGINT, signal.default_int_handler)
        sys.settrace(self)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                return func(*args)
        finally:
            sys.settrace(None)
            signal.signal(signal.SIGINT, previous)


def _refit_data(estimator):
    """Other rows, and one more feature where the estimator takes any width."""
    X, y = _data(estimator, n_samples=50)
    if isinstance(X, np.ndarray) and X.ndim == 2 and not isinstance(y, tuple):
        wider = np.c_[X, X[:, :1] * 0.5 + 0.25]
        try:
            _fit(estimator, wider, y)
            return wider, y
        except ValueError:
            pass
    return X, y


def _interrupted(estimator, X, y, at):
    tracer = _SigintAtCall(at)
    with pytest.raises(KeyboardInterrupt):
        tracer.run(estimator.fit, X, y)
    assert tracer.sent == 1, at


# the interrupt test only: a cheaper residual model than the default random
# forest (cross-fitted 5 times), the same code path
_INTERRUPT_PARAMS = {"CVQRRegressor": {"residual_estimator": LinearRegression()}}


@pytest.mark.parametrize("name", NAMES)
def test_interrupted_fit_leaves_the_previous_state(name):
    from sklearn.exceptions import NotFittedError
    from sklearn.utils.validation import check_is_fitted

    estimator = clone(_FIRST[name]).set_params(**_INTERRUPT_PARAMS.get(name, {}))
    if "random_state" in estimator.get_params():
        estimator.set_params(random_state=0)
    X, y = _data(estimator)
    X_b, y_b = _refit_data(estimator)
    counter = _SigintAtCall()
    fitted = counter.run(clone(estimator).fit, X, y)
    expected = _outputs(fitted, X)
    keys = set(vars(fitted))
    # the refit on other data makes about as many calls
    points = [1, max(1, counter.calls // 2), _AT_RETURN]

    # a first fit: the interrupt reaches the caller, nothing is left
    for at in points:
        fresh = clone(estimator)
        unfitted = dict(vars(fresh))
        _interrupted(fresh, X, y, at)
        assert vars(fresh).keys() == unfitted.keys(), at
        with pytest.raises(NotFittedError):
            check_is_fitted(fresh)

    # a refit: the previous fit stays, attributes and outputs
    for at in points:
        _interrupted(fitted, X_b, y_b, at)
        assert set(vars(fitted)) == keys, at
        _assert_same(_outputs(fitted, X), expected)


# ------------------------------------------------- the caller's global RNGs
# every test instance: the first ones in test_clone_is_unfitted_and_refits...
# above, the option variants here (an option such as a randomized score or a
# mini-batch schedule is where a global draw would hide)
_VARIANTS = [
    (f"{name}-{i}", clone(cls(**params)))
    for name, cls in all_estimators()
    for i, params in enumerate(_registries()[0].get(name, [{}]))
    if i > 0
]
# methods taking (X, y) or (X, n_samples) that an estimator may have; the
# X-only ones are X_METHODS
XY_METHODS = ("contains", "conformity_scores", "rank")


def _global_rng_states():
    import random

    import torch

    return np.random.get_state(), torch.random.get_rng_state(), random.getstate()


def _seed_global_rngs():
    """Seed numpy's, torch's and Python's global RNGs; return their states."""
    import random

    import torch

    np.random.seed(12345)
    torch.manual_seed(123)
    random.seed(7)
    return _global_rng_states()


def _assert_same_states(before, after):
    import torch

    (np_a, torch_a, py_a), (np_b, torch_b, py_b) = before, after
    assert np_a[0] == np_b[0] and np_a[2:] == np_b[2:], "numpy's global RNG moved"
    np.testing.assert_array_equal(np_a[1], np_b[1], err_msg="numpy's global RNG")
    assert torch.equal(torch_a, torch_b), "torch's global RNG moved"
    assert py_a == py_b, "Python's random module moved"


def _all_outputs(fitted, X, y):
    """_outputs, plus the methods that take y or draw samples."""
    import inspect

    out = _outputs(fitted, X)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for method in XY_METHODS:
            if hasattr(fitted, method):
                function = getattr(fitted, method)
                takes_y = "y" in inspect.signature(function).parameters
                out[method] = function(X, y) if takes_y else function(X)
        if hasattr(fitted, "sample"):
            out["sample"] = fitted.sample(X[:3], 5, random_state=0)
    return out


@pytest.mark.parametrize("key", [key for key, _ in _VARIANTS])
def test_fit_and_methods_leave_the_global_rngs_alone(key):
    # the copies of this contract that the family files once had (conformal
    # anchors, CVQR, label noise, NAS, neural network) are this test and the
    # clone test above; a fit seeded by random_state is bit-identical
    estimator = dict(_VARIANTS)[key]
    X, y = _data(estimator)
    before = _seed_global_rngs()
    outputs = _all_outputs(_fit(estimator, X, y), X, y)
    _assert_same(_all_outputs(_fit(estimator, X, y), X, y), outputs)
    _assert_same_states(before, _global_rng_states())
