"""The one skorch-backed torch training helper of the package.

Every estimator with a network trains it through :func:`train_module` (its
``net_class`` picks the skorch ``NeuralNet`` subclass, e.g. the architecture
searches' bilevel net) and runs it through :func:`forward_module`; no estimator
writes a training loop of its own; estimators reach it through the torch base's
``_train`` (``utils/_torch_estimator.py``, ``doc/developers.rst``):

* hyperparameters live in the estimator's ``__init__``; the skorch net is built
  here, inside ``fit``;
* one seed is drawn from ``random_state`` and torch's global RNG is forked
  (:func:`torch_rng`) in fit **and** predict, so the user's RNG is untouched and
  results are bit-identical for a fixed ``random_state``;
* the torch thread count is scoped (:func:`torch_num_threads`);
* ``dtype`` is ``"float64"`` (default, exact sample-weight equivalence with full
  batches) or ``"float32"``; outputs are always float64 numpy arrays;
* the loss is the weighted mean ``sum(w * l) / sum(w)`` of the per-sample
  losses returned by the criterion (``reduction="none"``);
* extra per-sample arrays (``aux``) ride along with ``X`` in skorch's input
  dict, so they are batched with it; the module's ``forward(X, **aux)`` and the
  criterion ``criterion(y_pred, y_true, **aux)`` both receive them.

Two safety mechanisms live here too, so that every torch estimator (and the
shared torch base that inherits from this engine) gets them:

* **Ctrl-C is never mistaken for convergence.** skorch ends its training
  loop on any ``KeyboardInterrupt`` and returns normally; skorch's own
  ``EarlyStopping`` relies on that. Every training call here runs inside
  :func:`user_interrupts` (of the package's one fit-atomicity policy,
  :mod:`sklearn_iclr26.utils._atomic`), which (in the main thread) records a
  real SIGINT and, once skorch has returned, re-raises it as
  ``KeyboardInterrupt``. The package's own early stops raise
  :class:`_StopTraining` (a ``KeyboardInterrupt`` subclass, so skorch still
  ends the loop cleanly). The estimators' ``fit`` is all or nothing through
  ``@atomic_fit`` of that policy.
* **Divergence is an error, never a silent NaN.** After training, a module
  with a non-finite parameter raises a ``ValueError`` ("non-finite parameter
  weights ... preprocess the input data"), as scikit-learn's ``MLPRegressor``
  does; :func:`forward_module` raises the same kind of error on non-finite
  outputs; and :func:`check_regression_fit` (run by the torch regressors'
  ``@atomic_fit(check=check_regression_fit)``) checks a regressor's
  predictions on its training rows: outside ``[min(y) - F * s, max(y) + F * s]``, with
  ``s = max(max(y) - min(y), max|y|)`` (1 when ``y`` is all 0) and
  ``F = DIVERGENCE_FACTOR = 1e3``, they count as divergence. A trained
  regressor's fitted values lie near the target's range; a thousand times
  its scale away on the very rows it was trained on only happens when
  training blew up (on ``X[:, 0] *= 1e300`` the nets give about 1e299).

torch and skorch are imported lazily so that ``import sklearn_iclr26`` stays
fast.
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import contextlib
import os
import threading

import numpy as np

from sklearn_iclr26.utils._atomic import _NamedError, user_interrupts
from sklearn_iclr26.utils._random import seed_from_random_state

__all__ = [
    "DIVERGENCE_FACTOR",
    "check_finite_module",
    "check_regression_fit",
    "check_regression_outputs",
    "forward_module",
    "seed_from_random_state",
    "torch_dtype",
    "torch_num_threads",
    "torch_rng",
    "train_module",
    "user_interrupts",
]

_DTYPES = ("float64", "float32")

# torch's global RNG and thread count are process-wide: two threads that fork,
# seed and draw from them at once (joblib's threading backend, a dask worker
# with several threads) would draw from each other's seeds. One re-entrant
# lock serialises the seeded blocks, so results do not depend on the backend.
_TORCH_GLOBAL_STATE_LOCK = threading.RLock()


# ----------------------------------------------------------- interrupts


class _StopTraining(KeyboardInterrupt):
    """The package's own early stop of a skorch training loop.

    skorch ends its loop on any ``KeyboardInterrupt`` and returns normally;
    raising this subclass from a callback ends training the same way, and
    tells the stop apart from a user's Ctrl-C (which :func:`user_interrupts`
    re-raises).
    """


# ----------------------------------------------------- non-finite checks

DIVERGENCE_FACTOR = 1e3
"""Regression outputs on the training rows farther than ``DIVERGENCE_FACTOR``
times the target's scale outside its range count as divergence (see the
module docstring)."""

_PREPROCESS_ADVICE = (
    "The input data may contain large values and need to be preprocessed "
    "(e.g. with sklearn.preprocessing.StandardScaler), or lower the learning "
    "rate."
)


class _NonFiniteError(_NamedError):
    """Training diverged; :func:`~sklearn_iclr26.utils._atomic.atomic_fit`
    names the estimator."""


def check_finite_module(net):
    """Raise ``ValueError`` if a parameter of the trained module is not finite."""
    import torch

    module = getattr(net, "module_", net)
    with torch.no_grad():
        for name, param in module.named_parameters():
            if not bool(torch.isfinite(param).all()):
                raise _NonFiniteError(
                    "Training produced non-finite parameter weights (parameter "
                    f"{name!r} of {type(module).__name__}). {_PREPROCESS_ADVICE}"
                )


def _check_finite_outputs(out, what="network outputs"):
    if not np.isfinite(out).all():
        raise _NonFiniteError(
            f"The {what} are not finite (the training diverged, or the rows "
            f"are far outside the training data). {_PREPROCESS_ADVICE}"
        )


def check_regression_outputs(y_pred, y, *, factor=DIVERGENCE_FACTOR):
    """Raise ``ValueError`` if fitted values show that training diverged.

    ``y_pred`` (predictions on the training rows) must be finite and, per
    output, inside ``[min(y) - factor * s, max(y) + factor * s]`` with
    ``s = max(max(y) - min(y), max|y|)`` (``s = 1`` when ``y`` is all 0).
    """
    y = np.asarray(y, dtype=np.float64)
    y_pred = np.asarray(y_pred, dtype=np.float64)
    _check_finite_outputs(y_pred, "predictions on the training data")
    y_2d = y.reshape(len(y), -1)
    pred_2d = y_pred.reshape(len(y_pred), -1)
    if y_2d.shape[1] != pred_2d.shape[1] or not len(y_2d):
        return
    low, high = y_2d.min(axis=0), y_2d.max(axis=0)
    scale = np.maximum(high - low, np.maximum(np.abs(low), np.abs(high)))
    scale = np.where(scale > 0, scale, 1.0)
    outside = (pred_2d < low - factor * scale) | (pred_2d > high + factor * scale)
    if outside.any():
        worst = float(np.max(np.abs(pred_2d[outside])))
        raise _NonFiniteError(
            "Training diverged: predictions on the training data reach "
            f"{worst:.3g}, more than {factor:g} times the target's scale "
            f"outside its range [{float(low.min()):.3g}, {float(high.max()):.3g}]. "
            f"{_PREPROCESS_ADVICE}"
        )


def check_regression_fit(estimator, X=None, y=None, *args, **kwargs):
    """The torch regressors' divergence check, run by ``@atomic_fit(check=...)``.

    For a regressor, the predictions on the training rows ``X`` (first
    argument of ``fit``) are checked by :func:`check_regression_outputs`
    against ``y`` (second argument); a divergence error rolls the fit back.
    """
    from sklearn.base import is_regressor

    if is_regressor(estimator) and y is not None:
        check_regression_outputs(estimator.predict(X), y)


def torch_dtype(dtype):
    """Map ``"float64"``/``"float32"`` to the torch dtype."""
    import torch

    if dtype not in _DTYPES:
        raise ValueError(f"dtype must be one of {_DTYPES}, got {dtype!r}.")
    return torch.float64 if dtype == "float64" else torch.float32


@contextlib.contextmanager
def torch_num_threads(n_jobs):
    """Set torch's intra-op thread count for a block.

    ``None`` means 1 thread, ``-1`` all cores, ``-2`` all but one, and so on.
    """
    import torch

    if n_jobs is None:
        n_threads = 1
    elif n_jobs < 0:
        n_threads = max(1, (os.cpu_count() or 1) + 1 + n_jobs)
    else:
        n_threads = int(n_jobs)
    previous = torch.get_num_threads()
    torch.set_num_threads(n_threads)
    try:
        yield
    finally:
        torch.set_num_threads(previous)


@contextlib.contextmanager
def torch_rng(seed, n_jobs=None, device="cpu"):
    """Fork torch's global RNG, seed it, and scope the thread count.

    Inside the block torch draws from a generator seeded by ``seed``; after it
    the caller's RNG state is restored unchanged: the CPU generator always,
    the CUDA generators too when ``device`` is a CUDA device. Blocks in
    different threads of one process run one at a time (torch's RNG and thread
    count are process-wide), so threaded parallelism gives the sequential
    results. On the CPU only
    the CPU generator is seeded (``torch.manual_seed`` would also queue a seed
    for CUDA generators that are not initialised yet, a side effect on the
    caller's CUDA RNG when CUDA starts later).
    """
    import torch

    cuda = str(device).startswith("cuda") and torch.cuda.is_available()
    devices = list(range(torch.cuda.device_count())) if cuda else []
    with (
        _TORCH_GLOBAL_STATE_LOCK,
        torch.random.fork_rng(devices=devices),
        torch_num_threads(n_jobs),
    ):
        if cuda:
            torch.manual_seed(seed)
        else:
            torch.random.default_generator.manual_seed(seed)
        yield


def _as_array(a, dtype):
    # a writeable, C-contiguous copy in the module dtype (torch warns on
    # read-only memmaps)
    return np.require(a, dtype=dtype, requirements=["C", "W"])


_OPTIMIZERS = ("adam", "adamw", "sgd")


def _optimizer_class(optimizer):
    import torch

    if not isinstance(optimizer, str):
        return optimizer
    classes = {
        "adam": torch.optim.Adam,
        "adamw": torch.optim.AdamW,
        "sgd": torch.optim.SGD,
    }
    if optimizer not in classes:
        raise ValueError(
            f"optimizer must be one of {sorted(classes)}, got {optimizer!r}."
        )
    return classes[optimizer]


def _net_inputs(X, y, sample_weight, aux, dtype):
    """skorch's input dict (``X``, ``sample_weight``, aux arrays) and ``y``."""
    inputs = {"X": _as_array(X, dtype)}
    if sample_weight is not None:
        inputs["sample_weight"] = _as_array(sample_weight, dtype)
    for key, value in (aux or {}).items():
        value = np.asarray(value)
        inputs[key] = _as_array(value, dtype) if value.dtype.kind == "f" else value
    if y is not None:
        y = np.asarray(y)
        y = _as_array(y, dtype) if y.dtype.kind == "f" else np.ascontiguousarray(y)
    return inputs, y


_SKORCH_DEFAULTS = ("epoch_timer", "train_loss", "valid_loss", "print_log")


def _rebind(net, callbacks, train_split):
    """A warm start: this call's callbacks and validation rows on the old net.

    The module, optimizer and history stay. Callbacks already on the net (the
    same objects: a method's own, carried over with their state) are kept as
    they are; new ones are initialised; skorch's loss records are kept, and
    ``valid_loss`` is added when this call validates.
    """
    from skorch.callbacks import PassthroughScoring

    previous = dict(net.callbacks_)
    kept = [(n, c) for n, c in net.callbacks_ if n in _SKORCH_DEFAULTS]
    if train_split is not None and "valid_loss" not in previous:
        kept.append(("valid_loss", PassthroughScoring(name="valid_loss").initialize()))
    rebound = []
    for callback in callbacks:
        name, callback = (
            callback
            if isinstance(callback, tuple)
            else (type(callback).__name__, callback)
        )
        if previous.get(name) is not callback:
            callback.initialize()
        rebound.append((name, callback))
    net.callbacks = list(callbacks)
    net.callbacks_ = kept + rebound
    net.train_split = train_split


def train_module(
    module,
    X,
    y=None,
    *,
    criterion,
    module_params=None,
    criterion_params=None,
    sample_weight=None,
    aux=None,
    max_epochs=100,
    batch_size=None,
    learning_rate=1e-2,
    optimizer="adam",
    weight_decay=0.0,
    dtype="float64",
    device="cpu",
    random_state=None,
    n_jobs=None,
    verbose=0,
    callbacks=None,
    warm_start_net=None,
    optimizer_param_groups=None,
    validation=None,
    net_class=None,
    net_params=None,
):
    """Train a torch module through skorch; return the fitted ``NeuralNet``.

    The one training set-up of the package: every estimator's network is
    trained here, by a skorch ``NeuralNet`` subclass (``net_class``:
    :class:`~sklearn_iclr26.utils._skorch_net.WeightedNet` by default; the
    predictive-coding and bilevel nets bring their own ``train_step``).

    Parameters
    ----------
    module : type of torch.nn.Module
        Module class, defined at module level (so that it pickles); built by
        skorch with ``module_params`` and ``dtype=<torch dtype>``. Its
        ``forward`` takes ``X`` and, as keyword arguments, the ``aux`` arrays.
    X : ndarray of shape (n_samples, n_features)
        Module input.
    y : ndarray of shape (n_samples, ...) or None
        Target passed to the criterion; ``None`` for losses computed from the
        module output and ``aux`` alone.
    criterion : type of torch.nn.Module
        Loss class; instantiated with ``criterion_params`` (for built-in torch
        losses pass ``{"reduction": "none"}``). Called as
        ``criterion(y_pred, y_true, **aux)``, it returns per-sample losses.
    module_params, criterion_params : dict, default=None
        Keyword arguments of the module and of the criterion.
    sample_weight : ndarray of shape (n_samples,), default=None
        Per-sample weights of the loss (weighted mean).
    aux : dict of str to ndarray, default=None
        Extra per-sample arrays batched with ``X``.
    max_epochs : int, default=100
        Number of epochs.
    batch_size : int or None, default=None
        Mini-batch size, clipped to ``n_samples``; ``None`` means full batch.
        Batches are shuffled only when mini-batching.
    learning_rate : float, default=1e-2
        Optimizer learning rate.
    optimizer : {"adam", "adamw", "sgd"} or torch optimizer class, default="adam"
        Optimizer.
    weight_decay : float, default=0.0
        Optimizer weight decay (L2 penalty).
    dtype : {"float64", "float32"}, default="float64"
        Precision of the module and its inputs.
    device : str, default="cpu"
        torch device.
    random_state : int, RandomState instance or None, default=None
        Seeds weight initialisation and shuffling (one seed is drawn).
    n_jobs : int or None, default=None
        torch threads during training; ``None`` means 1.
    verbose : int, default=0
        If positive and no :class:`EpochProgress` is among ``callbacks``,
        print the training loss after each epoch under the module's name
        (estimators pass their own :class:`EpochProgress` instead).
    callbacks : list of skorch callbacks, default=None
        Extra skorch callbacks (learning-rate schedules, checkpoints, early
        stopping...). The net's history always records the per-epoch
        ``train_loss`` (and ``valid_loss`` when ``validation`` is given).
    warm_start_net : skorch.NeuralNet, default=None
        Continue training this already-initialised net instead of a new one
        (its module, optimizer and history are kept).
    optimizer_param_groups : list of (str, dict), default=None
        skorch's ``optimizer__param_groups``: parameters whose names match a
        pattern (``fnmatch``, e.g. ``"augmenter.*"``) get the group's
        optimizer options; the other parameters use ``learning_rate`` and
        ``weight_decay``. ``None`` keeps one group.
    validation : dict, default=None
        Held-out rows scored after every epoch (history key ``valid_loss``),
        with keys ``"X"``, ``"y"`` and optionally ``"sample_weight"`` and
        ``"aux"``, as the training arguments.
    net_class : type of skorch.NeuralNet, default=None
        The net; ``None`` means ``WeightedNet``. A subclass of ``WeightedNet``
        or ``GradientStepNet`` (whose torch state loads weights-only).
    net_params : dict, default=None
        Further keyword arguments of ``net_class`` (e.g. a second optimizer,
        a custom ``iterator_train`` and its ``iterator_train__*`` options).

    Returns
    -------
    net : skorch.NeuralNet
        The trained net; ``net.module_`` is the torch module and
        ``len(net.history)`` the number of epochs run.
    """
    from skorch.dataset import Dataset
    from skorch.helper import predefined_split

    from sklearn_iclr26.utils._skorch_net import (
        BatchIndexLoader,
        EpochProgress,
        WeightedNet,
        _SafeStateNet,
    )

    net_class = WeightedNet if net_class is None else net_class
    if not issubclass(net_class, _SafeStateNet):
        raise TypeError(
            f"net_class must subclass WeightedNet or GradientStepNet "
            f"(utils._skorch_net), got {net_class.__name__}: their torch state "
            "loads weights-only, with no fallback to a plain torch.load."
        )
    n_samples = X.shape[0]
    batch = n_samples if batch_size is None else max(1, min(batch_size, n_samples))
    inputs, y = _net_inputs(X, y, sample_weight, aux, dtype)
    split = {"train_split": None, "callbacks__valid_loss": None}
    if validation is not None:
        valid_inputs, valid_y = _net_inputs(
            validation["X"],
            validation.get("y"),
            validation.get("sample_weight"),
            validation.get("aux"),
            dtype,
        )
        split = {"train_split": predefined_split(Dataset(valid_inputs, valid_y))}
    # skorch adds its default callbacks to the list: keep the per-epoch
    # ``train_loss`` (and ``valid_loss``) in the history; drop the epoch timer
    # and the PrintLog table (it colours values with raw ANSI codes, which
    # garble log files: plain lines through EpochProgress instead)
    all_callbacks = list(callbacks or [])
    named = [c[1] if isinstance(c, tuple) else c for c in all_callbacks]
    if verbose and not any(isinstance(c, EpochProgress) for c in named):
        all_callbacks.append(
            EpochProgress(None, max_epochs, name=getattr(module, "__name__", "net"))
        )
    seed = seed_from_random_state(random_state)
    with torch_rng(seed, n_jobs, device):
        if warm_start_net is None:
            params = {f"module__{k}": v for k, v in (module_params or {}).items()}
            params.update(
                {f"criterion__{k}": v for k, v in (criterion_params or {}).items()}
            )
            if optimizer_param_groups is not None:
                params["optimizer__param_groups"] = [
                    (str(pattern), dict(options))
                    for pattern, options in optimizer_param_groups
                ]
            params.update(split)
            params.update(
                iterator_train=BatchIndexLoader,
                iterator_valid=BatchIndexLoader,
                iterator_train__shuffle=batch < n_samples,
            )
            params.update(net_params or {})
            net = net_class(
                module=module,
                module__dtype=torch_dtype(dtype),
                criterion=criterion,
                optimizer=_optimizer_class(optimizer),
                optimizer__weight_decay=weight_decay,
                lr=learning_rate,
                max_epochs=max_epochs,
                batch_size=batch,
                callbacks=all_callbacks,
                callbacks__epoch_timer=None,
                callbacks__print_log=None,
                verbose=0,
                device=device,
                **params,
            )
            with user_interrupts():
                net.fit(inputs, y)
        else:
            net = warm_start_net
            _rebind(net, all_callbacks, split["train_split"])
            with user_interrupts():
                net.partial_fit(inputs, y, epochs=max_epochs)
    check_finite_module(net)
    return net


def forward_module(
    net,
    X,
    *,
    aux=None,
    dtype="float64",
    n_jobs=None,
    func=None,
    row_bytes=None,
    enable_grad=False,
    check_finite=True,
):
    """Run a trained net in eval mode over row batches; return float64 numpy.

    The one inference runner of the package. Rows are processed in batches
    sized by scikit-learn's ``working_memory`` (:mod:`sklearn_iclr26.utils.
    _batching`), so memory stays bounded at any number of rows. Forks torch's
    RNG (iterating a DataLoader draws from it even without shuffling) and
    scopes the thread count.

    Parameters
    ----------
    net : skorch.NeuralNet
        A net returned by :func:`train_module`.
    X : ndarray of shape (n_samples, ...)
        Input rows.
    aux : dict of str to ndarray, default=None
        Further row-aligned arrays, batched with ``X``.
    dtype : {"float64", "float32"}, default="float64"
        Precision of the inputs (the module's).
    n_jobs : int or None, default=None
        torch threads; ``None`` means 1.
    func : callable, default=None
        ``func(module, X_batch, **aux_batch) -> tensor`` (or a tuple whose first
        item is used) called on torch tensors on the net's device, with the
        module in eval mode; ``None`` runs ``module(X_batch, **aux_batch)``.
        This is the hook for anything beyond a plain forward pass (ranks by
        Newton steps, Hessian log-determinants, a head of the network).
    row_bytes : int, default=None
        Working bytes one row needs, for the batch size; ``None`` guesses
        ``64 * 8 * (n_features + n_aux_columns)``.
    enable_grad : bool, default=False
        Run with autograd enabled (for ``func`` that differentiates with
        ``torch.autograd.grad``); parameters are never updated here.

    Returns
    -------
    out : ndarray of float64
        The outputs of all batches, concatenated along the first axis.
    """
    import torch

    from sklearn_iclr26.utils._batching import batch_slices

    X = _as_array(X, dtype)
    arrays = {}
    for key, value in (aux or {}).items():
        value = np.asarray(value)
        arrays[key] = _as_array(value, dtype) if value.dtype.kind == "f" else value
    n_samples = X.shape[0]
    if row_bytes is None:
        width = int(np.prod(X.shape[1:], dtype=np.int64)) + sum(
            int(np.prod(a.shape[1:], dtype=np.int64)) for a in arrays.values()
        )
        row_bytes = 64 * 8 * max(width, 1)
    module = net.module_
    was_training = module.training
    module.eval()
    device = net.device
    outs = []
    grad_mode = torch.enable_grad() if enable_grad else torch.no_grad()
    try:
        with grad_mode, torch_rng(0, n_jobs, device):
            for batch in batch_slices(max(n_samples, 1), row_bytes):
                xb = torch.as_tensor(X[batch]).to(device)
                auxb = {
                    k: torch.as_tensor(v[batch]).to(device) for k, v in arrays.items()
                }
                out = module(xb, **auxb) if func is None else func(module, xb, **auxb)
                if isinstance(out, tuple):
                    out = out[0]
                outs.append(out.detach().cpu().numpy().astype(np.float64, copy=False))
    finally:
        module.train(was_training)
    out = np.concatenate(outs, axis=0)
    if check_finite:
        _check_finite_outputs(out)
    return out
