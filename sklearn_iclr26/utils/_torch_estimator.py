"""The one base of the package's torch estimators.

:class:`BaseTorchEstimator` owns what every network estimator shares: the
training parameters and their constraints, the call to the engine
(:func:`~sklearn_iclr26.utils._torch.train_module`, which trains a skorch
``NeuralNet`` subclass), the ``[ClassName] epoch i/n`` progress, early
stopping, ``warm_start``, user ``callbacks``, the fitted training record
(``n_iter_``, ``loss_curve_``, ``validation_loss_curve_``, ``best_iter_``),
the forward pass over row batches, and the tags. :class:`TorchClassifierMixin`
and :class:`TorchRegressorMixin` add ``fit`` (validation, label encoding or
the one target standardisation) and ``predict`` / ``predict_proba``.

A subclass says only what is its own:

``_module_spec(X, n_outputs, sample_weight)`` (required)
    The torch module class and its keyword arguments.
``_criterion_spec(n_outputs)``
    The loss class and its keyword arguments; the task mixins give
    per-sample cross-entropy / squared error.
``_training_options(X, y)``
    Further engine keywords: ``aux`` (per-sample arrays batched with ``X``),
    ``callbacks`` (the method's own skorch callbacks), ``optimizer``,
    ``optimizer_param_groups``, ``net_class`` / ``net_params`` (a
    ``NeuralNet`` subclass with its own ``train_step``).
``_after_training(X, y)``
    Fitted attributes read from ``net_.history`` and the callbacks.
``_own_early_stopping`` (class attribute, default False)
    True where the method's own callback (from ``_training_options`` or
    ``_train(callbacks=...)``) does the early stopping on a metric of its
    own: the base then holds no rows out and adds no ``EarlyStopping``.

**Protected entry points** (a contract with the other families:
``label_noise``, ``nas``; change them only together with their callers):

``_fit_with_criterion(X, y, *, n_outputs, criterion, criterion_params=None,
aux=None, sample_weight=None, callbacks=None)``
    Fit the network with a given per-sample loss. Validates the parameters,
    ``X`` and ``sample_weight`` as ``fit`` does, then trains through the
    engine. ``criterion`` is a torch loss class called as
    ``criterion(y_pred, y_true, **aux)`` returning per-sample losses; ``y``
    is passed as is: for a classifier, encoded labels ``0, ..., n_outputs -
    1`` (``classes_`` becomes ``arange(n_outputs)``); for a regressor,
    targets used without the standardisation. Available where the class
    attribute ``_accepts_criterion`` is true (estimators whose own loss *is*
    the method set it to false). Returns ``self``.
``_raw_decision(X)``
    The raw network output on ``X`` (float64): logits of a classifier,
    standardised outputs of a regressor, batched by ``working_memory``.
``_module_spec(X, n_outputs, sample_weight=None)``
    The overridable module hook (the architecture searches swap it).
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import copy
import copyreg
import inspect
import re
from abc import ABCMeta, abstractmethod
from numbers import Integral, Real

import numpy as np
from scipy.special import softmax
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin, is_classifier
from sklearn.model_selection import train_test_split
from sklearn.utils.validation import check_is_fitted, validate_data

from sklearn_iclr26.utils._atomic import atomic_fit
from sklearn_iclr26.utils._docstrings import substitute
from sklearn_iclr26.utils._persistence import SavedNet, with_saved_nets
from sklearn_iclr26.utils._sklearn_compat import (
    Interval,
    StrOptions,
    _check_sample_weight,
    _fit_context,
)
from sklearn_iclr26.utils._torch import (
    check_regression_fit,
    forward_module,
    train_module,
)
from sklearn_iclr26.utils._validation import (
    N_JOBS_CONSTRAINT,
    validate_classifier_fit_data,
)

__all__ = [
    "TRAINING_CONSTRAINTS",
    "BaseTorchEstimator",
    "TorchClassifierMixin",
    "TorchRegressorMixin",
]

DTYPES = [np.float64, np.float32]

#: constraints of the training parameters every torch estimator has, in the
#: order of the signatures' shared tail (keyword-only, after the estimator's
#: own parameters; tests/test_torch_signatures.py)
TRAINING_CONSTRAINTS = {
    "alpha": [Interval(Real, 0, None, closed="left")],
    "batch_size": [Interval(Integral, 1, None, closed="left"), None],
    "learning_rate_init": [Interval(Real, 0, None, closed="neither")],
    "max_iter": [Interval(Integral, 1, None, closed="left")],
    "early_stopping": ["boolean"],
    "validation_fraction": [Interval(Real, 0, 1, closed="neither")],
    "n_iter_no_change": [Interval(Integral, 1, None, closed="left")],
    "tol": [Interval(Real, 0, None, closed="left")],
    "warm_start": ["boolean"],
    "callbacks": [list, None],
    "dtype": [StrOptions({"float64", "float32"})],
    "device": [str],
    # torch threads: None = 1, -1 = all cores; 0 is meaningless
    "n_jobs": N_JOBS_CONSTRAINT,
    "random_state": ["random_state"],
    "verbose": ["verbose"],
}

# numpydoc entries of the shared parameters; ``{default}`` is read from the
# subclass's ``__init__`` signature, so the documented default is the real one
_TRAINING_DOCS = {
    "batch_size": (
        "int or None",
        "Mini-batch size, clipped to ``n_samples``; ``None`` means full batch.",
    ),
    "learning_rate_init": ("float", "Learning rate of the optimizer (Adam)."),
    "max_iter": (
        "int",
        "Number of epochs (the maximum when ``early_stopping=True``).",
    ),
    "alpha": ("float", "L2 penalty (the optimizer's ``weight_decay``)."),
    "early_stopping": (
        "bool",
        (
            "Hold out ``validation_fraction`` of the training rows (stratified "
            "for classifiers), stop when their loss has not improved by ``tol`` "
            "for ``n_iter_no_change`` epochs, and keep the best epoch's weights "
            "(skorch's ``EarlyStopping``). ``False`` runs ``max_iter`` epochs."
        ),
    ),
    "validation_fraction": (
        "float",
        "Fraction of the training rows held out when ``early_stopping=True``.",
    ),
    "n_iter_no_change": (
        "int",
        "Epochs without improvement before early stopping ends training.",
    ),
    "tol": ("float", "Minimum improvement of the validation loss (absolute)."),
    "warm_start": (
        "bool",
        (
            "When ``fit`` is called again on data that gives the same network "
            "(features, outputs), continue training the fitted network for "
            "``max_iter`` more epochs instead of starting anew; ``n_iter_`` and "
            "``loss_curve_`` accumulate."
        ),
    ),
    "callbacks": (
        "list of skorch callbacks or None",
        (
            "Extra skorch callbacks (e.g. ``skorch.callbacks.LRScheduler``, "
            "``Checkpoint``, ``GradientNormClipping``) added to the net; they are "
            "copied in ``fit``, so the parameter itself is never modified."
        ),
    ),
    "dtype": ('{"float64", "float32"}', "Precision of the torch module."),
    "device": ("str", 'The torch device, e.g. ``"cuda"``.'),
    "n_jobs": (
        "int or None",
        (
            "Torch threads during fit and predict; ``None`` means 1, ``-1`` all "
            "cores, ``-2`` all but one; 0 is rejected."
        ),
    ),
    "random_state": (
        "int, RandomState instance or None",
        (
            "Seeds weight initialisation, shuffling and the validation split; a "
            "fixed value gives bit-identical results."
        ),
    ),
    "verbose": (
        "int",
        (
            "If positive, print ``[ClassName] epoch i/n: train_loss ...`` after "
            "each epoch; 2 adds the method's own detail where it has one."
        ),
    ),
}

_TRAINING_ATTRIBUTES = """n_iter_ : int
    Number of epochs run (accumulated over ``warm_start`` refits).
loss_curve_ : list of float
    Training loss (weighted mean over the training rows) of each epoch;
    ``len(loss_curve_) == n_iter_``.
validation_loss_curve_ : list of float or None
    Validation loss of each epoch when ``early_stopping=True``, else None.
best_iter_ : int
    The epoch whose weights are kept (1-based): the best validation epoch
    with early stopping, else ``n_iter_``.
net_ : skorch.NeuralNet
    The fitted skorch net; ``net_.module_`` is the torch module and
    ``net_.history`` skorch's per-epoch record. After a ``skops`` load it
    is a ``SavedNet`` with the same ``module_``, ``device`` and ``history``
    (predictions are identical; ``warm_start`` needs a pickled model)."""


def _training_parameters_doc(cls):
    """The numpydoc entries of the shared parameters of ``cls``, in signature
    order: the class docstring's own entry where it documents one (moved
    here from wherever it stands in Parameters, so that the documented order
    is the signature's by construction), else the shared text with the
    default read from ``__init__``, wrapped at the placeholder's indentation.
    Returns ``(doc without the moved entries, text of the placeholder)``."""
    import textwrap

    doc = cls.__dict__.get("__doc__") or ""
    match = re.search(r"^([ \t]*)%\(training_parameters\)s", doc, re.MULTILINE)
    if match is None:
        return doc, ""
    indent = match.group(1)
    # the Parameters section: up to the next numpydoc header (or the end)
    header = re.compile(rf"^{indent}\w[\w ]*\n{indent}-{{3,}}\n", re.MULTILINE)
    start = header.search(doc)
    while start is not None and not start.group(0).startswith(indent + "Param"):
        start = header.search(doc, start.end())
    begin = start.end() if start else 0
    stop = header.search(doc, begin)
    end = stop.start() if stop else len(doc)
    section = doc[begin:end]
    own = {}

    def pop(entry):
        name = entry.group(1)
        if name not in _TRAINING_DOCS:
            return entry.group(0)
        own[name] = textwrap.dedent(entry.group(0)).rstrip("\n")
        return ""

    section = re.sub(
        rf"^{indent}(\w+) :.*\n(?:{indent}[ \t]+\S.*\n)*",
        pop,
        section,
        flags=re.MULTILINE,
    )
    lines = []
    for name, param in inspect.signature(cls.__init__).parameters.items():
        if name not in _TRAINING_DOCS:
            continue
        if name in own:
            lines.append(own[name])
            continue
        kind, text = _TRAINING_DOCS[name]
        default = param.default
        shown = f'"{default}"' if isinstance(default, str) else repr(default)
        lines.append(f"{name} : {kind}, default={shown}")
        lines.extend(
            textwrap.wrap(
                text,
                width=79 - len(indent),
                initial_indent="    ",
                subsequent_indent="    ",
            )
        )
    return doc[:begin] + section + doc[end:], "\n".join(lines)


def _same_spec(a, b):
    """Whether two ``(module class, module parameters)`` specs are equal."""
    if a is None or b is None or a[0] is not b[0] or a[1].keys() != b[1].keys():
        return False
    for key, value in a[1].items():
        other = b[1][key]
        if isinstance(value, np.ndarray) or isinstance(other, np.ndarray):
            if not np.array_equal(value, other):
                return False
        elif value != other:
            return False
    return True


def _take_rows(value, rows):
    if value is None:
        return None
    if isinstance(value, dict):
        return {k: _take_rows(v, rows) for k, v in value.items()}
    return np.asarray(value)[rows]


def _named_callback(callback):
    """``(name, callback)`` as skorch names it (a tuple, or the class name)."""
    if isinstance(callback, tuple):
        return callback
    return type(callback).__name__, callback


def _silent(*args, **kwargs):
    """The early-stopping message sink (the progress lines say enough)."""


class BaseTorchEstimator(BaseEstimator, metaclass=ABCMeta):
    """Training parameters, engine call and forward pass of a torch estimator.

    See the module docstring for the hooks a subclass implements and the
    protected entry points. A class docstring may contain the line
    ``%(training_parameters)s`` in its Parameters section: it is replaced by
    the entries of the shared training parameters of the class's
    ``__init__`` (with their real defaults) that the docstring does not
    document itself.
    """

    _parameter_constraints: dict = dict(TRAINING_CONSTRAINTS)

    #: whether ``_fit_with_criterion`` may replace the estimator's loss
    _accepts_criterion = True

    #: ``early_stopping`` is done by the estimator's own callback (on a metric
    #: other than the held-out training loss); the base then neither holds
    #: rows out nor adds skorch's ``EarlyStopping``
    _own_early_stopping = False

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        doc = cls.__dict__.get("__doc__")
        if doc:
            # the family bases' shared texts first (their ``_doc_texts``, most
            # derived first): the training parameters are then listed only
            # where the docstring leaves them out
            for base in cls.__mro__:
                texts = base.__dict__.get("_doc_texts")
                if texts:
                    cls.__doc__ = substitute(cls.__doc__, cls, **texts)
            doc, parameters = _training_parameters_doc(cls)
            cls.__doc__ = substitute(
                doc,
                cls,
                training_parameters=parameters,
                training_attributes=_TRAINING_ATTRIBUTES,
            )

    # ------------------------------------------------------------ state

    def __getstate__(self):
        """The state skops saves: each fitted skorch net as a
        :class:`~sklearn_iclr26.utils._persistence.SavedNet` (module class,
        constructor parameters, weights as numpy arrays, plain history), so
        that ``skops.io.get_untrusted_types`` names no torch or skorch type."""
        return with_saved_nets(super().__getstate__())

    def __reduce_ex__(self, protocol):
        # pickle, joblib and copy keep the whole net (optimizer and callbacks
        # included), so that warm_start continues a reloaded model's training
        return copyreg.__newobj__, (type(self),), super().__getstate__()

    # ------------------------------------------------------------ hooks

    @abstractmethod
    def _module_spec(self, X, n_outputs, sample_weight=None):
        """``(module class, module keyword arguments)``."""

    def _criterion_spec(self, n_outputs):
        """``(criterion class, keyword arguments)``: per-sample cross-entropy
        for a classifier, squared error for a regressor."""
        from torch import nn

        loss = nn.CrossEntropyLoss if is_classifier(self) else nn.MSELoss
        return loss, {"reduction": "none"}

    def _training_options(self, X, y):
        """Further engine keywords (see the module docstring)."""
        return {}

    def _after_training(self, X, y):
        """Read method-specific fitted attributes from the net (no-op)."""

    # ------------------------------------------------ protected entry points

    @atomic_fit
    def _fit_with_criterion(
        self,
        X,
        y,
        *,
        n_outputs,
        criterion,
        criterion_params=None,
        aux=None,
        sample_weight=None,
        callbacks=None,
    ):
        """Fit with a given per-sample criterion (see the module docstring)."""
        if not self._accepts_criterion:
            raise TypeError(
                f"{type(self).__name__} trains its own loss; it cannot be fitted "
                "with another criterion."
            )
        self._validate_params()
        X = validate_data(self, X, reset=True, dtype=DTYPES)
        if sample_weight is not None:
            sample_weight = _check_sample_weight(
                sample_weight, X, ensure_non_negative=True
            )
        n_outputs = int(n_outputs)
        self._set_output_encoding(n_outputs)
        return self._train(
            X,
            y,
            n_outputs,
            sample_weight,
            criterion=(criterion, criterion_params),
            aux=aux,
            callbacks=callbacks,
        )

    def _raw_decision(self, X):
        """Raw network outputs, float64 (see the module docstring)."""
        return self._forward(X)

    # ------------------------------------------------------------ template

    def _train(
        self,
        X,
        y,
        n_outputs,
        sample_weight=None,
        *,
        criterion=None,
        aux=None,
        callbacks=None,
    ):
        """Build the module and the loss from the hooks and train the net."""
        from sklearn_iclr26.utils._skorch_net import EpochProgress

        self._check_device()
        options = dict(self._training_options(X, y))
        module_spec = self._module_spec(X, n_outputs, sample_weight)
        criterion, criterion_params = criterion or self._criterion_spec(n_outputs)
        aux = {**(options.pop("aux", None) or {}), **(aux or {})} or None
        method_callbacks = list(options.pop("callbacks", None) or [])
        all_callbacks = [*(callbacks or []), *copy.deepcopy(self.callbacks or [])]
        if self.verbose:
            all_callbacks.append(("progress", EpochProgress(self, self.max_iter)))
        X_fit, y_fit, weight_fit, aux_fit = X, y, sample_weight, aux
        validation = None
        if self.early_stopping and not self._own_early_stopping:
            from skorch.callbacks import EarlyStopping

            rows, valid = self._validation_split(X, y)
            X_fit, y_fit = X[rows], _take_rows(y, rows)
            weight_fit = _take_rows(sample_weight, rows)
            aux_fit = _take_rows(aux, rows)
            validation = {
                "X": X[valid],
                "y": _take_rows(y, valid),
                "sample_weight": _take_rows(sample_weight, valid),
                "aux": _take_rows(aux, valid),
            }
            all_callbacks.append(
                (
                    "early_stopping",
                    EarlyStopping(
                        monitor="valid_loss",
                        patience=self.n_iter_no_change,
                        threshold=self.tol,
                        threshold_mode="abs",
                        load_best=True,
                        sink=_silent,
                    ),
                )
            )
        warm_net = None
        if (
            self.warm_start
            and hasattr(self, "net_")
            and _same_spec(getattr(self, "_fitted_module_spec", None), module_spec)
        ):
            if isinstance(self.net_, SavedNet):
                raise ValueError(
                    f"{type(self).__name__} was loaded from a skops file, which "
                    "keeps the network's weights but not its optimizer: "
                    "warm_start cannot continue its training. Refit with "
                    "warm_start=False, or save with pickle/joblib to resume."
                )
            # a copy: a failed or interrupted refit leaves the fitted net as it was
            warm_net = copy.deepcopy(self.net_)
            # the method's own callbacks carry their state over (records that
            # extend, a running maximum); the others are this call's
            previous = dict(warm_net.callbacks_)
            method_callbacks = [
                (name, previous.get(name, callback))
                for name, callback in map(_named_callback, method_callbacks)
            ]
        all_callbacks = [*method_callbacks, *all_callbacks]
        self.net_ = train_module(
            module_spec[0],
            X_fit,
            y_fit,
            criterion=criterion,
            criterion_params=criterion_params,
            module_params=module_spec[1],
            sample_weight=weight_fit,
            aux=aux_fit,
            max_epochs=self.max_iter,
            batch_size=self.batch_size,
            learning_rate=self.learning_rate_init,
            weight_decay=self.alpha,
            dtype=self.dtype,
            device=self.device,
            random_state=self.random_state,
            n_jobs=self.n_jobs,
            callbacks=all_callbacks,
            warm_start_net=warm_net,
            validation=validation,
            **options,
        )
        self._fitted_module_spec = module_spec
        self._record_training()
        self._after_training(X, y)
        return self

    def _record_training(self):
        history = self.net_.history
        self.n_iter_ = len(history)
        self.loss_curve_ = [float(h.get("train_loss", np.nan)) for h in history]
        self.validation_loss_curve_ = None
        self.best_iter_ = self.n_iter_
        if self.early_stopping and not self._own_early_stopping:
            self.validation_loss_curve_ = [
                float(h.get("valid_loss", np.nan)) for h in history
            ]
            stopper = dict(self.net_.callbacks_).get("early_stopping")
            if stopper is not None and stopper.best_epoch_:
                # the epoch whose weights skorch's EarlyStopping restored
                self.best_iter_ = int(stopper.best_epoch_)

    def _validation_split(self, X, y):
        """Training and validation row indices (stratified for classifiers)."""
        n = X.shape[0]
        stratify = None
        if is_classifier(self) and y is not None:
            labels = np.asarray(y)
            if labels.ndim == 1:
                _, counts = np.unique(labels, return_counts=True)
                n_valid = int(np.ceil(self.validation_fraction * n))
                if counts.min() >= 2 and n_valid >= len(counts):
                    stratify = labels
        rows, valid = train_test_split(
            np.arange(n),
            test_size=self.validation_fraction,
            random_state=self.random_state,
            stratify=stratify,
        )
        if len(rows) == 0 or len(valid) == 0:
            raise ValueError(
                f"early_stopping needs at least one training and one validation "
                f"row; got {n} rows with validation_fraction="
                f"{self.validation_fraction}."
            )
        return np.sort(rows), np.sort(valid)

    def _check_device(self):
        if str(self.device).startswith("cuda"):
            import torch

            if not torch.cuda.is_available():
                raise ValueError(
                    f"{type(self).__name__}: device={self.device!r} was requested "
                    "but torch has no CUDA device here; use device='cpu'."
                )

    def _forward(self, X, func=None, aux=None, **check_params):
        """``check_is_fitted``, ``validate_data`` and the batched forward pass."""
        check_is_fitted(self)
        X = validate_data(self, X, reset=False, dtype=DTYPES, **check_params)
        return forward_module(
            self.net_, X, aux=aux, dtype=self.dtype, n_jobs=self.n_jobs, func=func
        )

    def _mc_dropout_forward(self, X, n_passes, seed):
        """Raw network outputs of ``n_passes`` passes with dropout kept on.

        The protected entry point for Monte-Carlo dropout (the G-learner's
        uncertainty filter): every ``torch.nn.Dropout`` with ``p > 0`` of the
        fitted module draws fresh masks on each pass from a generator seeded
        by ``seed``, so the result is reproducible and torch's global random
        state is untouched. The module stays in evaluation mode otherwise.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Input rows (validated as by ``predict``).
        n_passes : int
            Number of forward passes.
        seed : int
            Seed of the dropout masks.

        Returns
        -------
        passes : ndarray of shape (n_passes, n_samples, n_outputs)
            The raw outputs, one pass per leading index.
        """
        import torch
        from torch import nn

        check_is_fitted(self)
        module = self.net_.module_
        dropouts = [
            m for m in module.modules() if isinstance(m, nn.Dropout) and m.p > 0
        ]
        if not dropouts:
            raise ValueError(
                f"{type(self).__name__} has no dropout layer: Monte-Carlo dropout "
                "needs a network fitted with dropout > 0."
            )
        generator = torch.Generator(device=self.net_.device)
        generator.manual_seed(int(seed))

        def keep_dropout_on(layer, inputs, output):
            x = inputs[0]
            mask = torch.rand(
                x.shape, generator=generator, device=x.device, dtype=x.dtype
            ).ge_(layer.p)
            return x * mask / (1.0 - layer.p)

        handles = [m.register_forward_hook(keep_dropout_on) for m in dropouts]
        try:
            passes = [self._forward(X) for _ in range(n_passes)]
        finally:
            for handle in handles:
                handle.remove()
        return np.stack([np.asarray(p).reshape(len(p), -1) for p in passes])

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.non_deterministic = False
        return tags


class TorchClassifierMixin(ClassifierMixin):
    """``fit`` with label encoding; logits -> ``predict_proba`` / ``predict``."""

    def _set_output_encoding(self, n_outputs):
        # _fit_with_criterion: y holds encoded labels, predictions are indices
        self.classes_ = np.arange(n_outputs)

    @atomic_fit
    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, sample_weight=None):
        """Fit the network.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training data.
        y : array-like of shape (n_samples,)
            Target labels.
        sample_weight : array-like of shape (n_samples,), default=None
            Per-sample weights (weighted mean loss); all-zero weights raise.

        Returns
        -------
        self : object
            Fitted estimator.
        """
        X, _, y_encoded, sample_weight = validate_classifier_fit_data(
            self, X, y, sample_weight, dtype=DTYPES
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
            Softmax of the network's logits; columns follow ``classes_``.
        """
        return softmax(self._raw_decision(X), axis=1)

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


class TorchRegressorMixin(RegressorMixin):
    """``fit`` on standardised targets (multi-output); ``predict`` in y units."""

    def _set_output_encoding(self, n_outputs):
        # _fit_with_criterion: the targets are used as given (no scaling)
        self._y_ndim = 1 if n_outputs == 1 else 2
        self._y_mean = np.zeros(n_outputs)
        self._y_scale = np.ones(n_outputs)

    def _standardize_targets(self, y, sample_weight):
        """Standardise ``y`` (weighted); remember how to undo it."""
        y = np.asarray(y, dtype=np.float64)
        self._y_ndim = y.ndim
        y_2d = y.reshape(len(y), -1)
        self._y_mean = np.average(y_2d, axis=0, weights=sample_weight)
        y_std = np.sqrt(
            np.average((y_2d - self._y_mean) ** 2, axis=0, weights=sample_weight)
        )
        self._y_scale = np.where(y_std > 0, y_std, 1.0)
        return (y_2d - self._y_mean) / self._y_scale

    def _unstandardize(self, out):
        out = out * self._y_scale + self._y_mean
        return out.ravel() if self._y_ndim == 1 else out

    @atomic_fit(check=check_regression_fit)
    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, sample_weight=None):
        """Fit the network.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training data.
        y : array-like of shape (n_samples,) or (n_samples, n_outputs)
            Targets (standardised internally).
        sample_weight : array-like of shape (n_samples,), default=None
            Per-sample weights (weighted mean loss).

        Returns
        -------
        self : object
            Fitted estimator.
        """
        X, y = validate_data(
            self, X, y, dtype=DTYPES, y_numeric=True, multi_output=True
        )
        if sample_weight is not None:
            sample_weight = _check_sample_weight(
                sample_weight, X, ensure_non_negative=True
            )
        y_scaled = self._standardize_targets(y, sample_weight)
        return self._train(X, y_scaled, y_scaled.shape[1], sample_weight)

    def predict(self, X):
        """Predicted targets.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Input data.

        Returns
        -------
        y_pred : ndarray of shape (n_samples,) or (n_samples, n_outputs)
            Predictions in the units of ``y``.
        """
        return self._unstandardize(self._raw_decision(X))

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.multi_output = True
        return tags
