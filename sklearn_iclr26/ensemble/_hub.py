"""A hub of fitted task modules for adaptive module composition (MoMa)."""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import copy
from numbers import Integral

import numpy as np
from sklearn.base import clone
from sklearn.utils.validation import check_is_fitted, validate_data

from sklearn_iclr26.utils import _persistence
from sklearn_iclr26.utils._atomic import atomic_fit
from sklearn_iclr26.utils._random import seed_from_random_state
from sklearn_iclr26.utils._torch import forward_module
from sklearn_iclr26.utils._validation import store_params
from sklearn_iclr26.utils._verbose import log_progress

__all__ = ["ModuleHub"]


def _is_torch_mlp(module):
    """A fitted torch MLP of the package (its ``_mlp_layers`` accessor)."""
    layers = getattr(module, "_mlp_layers", None)
    return callable(layers) and layers() is not None


def _linear_layers(module):
    """The ``nn.Linear`` layers of a fitted torch MLP, input to output."""
    from torch import nn

    return [m for m in module._mlp_layers() if isinstance(m, nn.Linear)]


def _body_embedding(torch_module, X):
    # every layer of the MLP's Sequential except the last (the output Linear):
    # the activations of the last hidden layer
    return torch_module.layers[:-1](X)


class ModuleHub:
    """A hub of fitted modules, one per source task, for module composition.

    MoMa (Wang et al., ICLR 2026) keeps one module per source task, all trained
    from **one shared initialisation**, and composes them for a new task
    (:class:`AdaptiveCompositionRegressor`,
    :class:`AdaptiveCompositionClassifier`). The hub either trains the modules
    itself (:meth:`add_task`: a clone of ``estimator`` per task, every clone with
    the same seed, hence the same initial parameters) or registers modules
    fitted elsewhere (:meth:`add_module`).

    A module is any fitted estimator with an embedding: the package's
    :class:`~sklearn_iclr26.neural_network.TorchMLPRegressor` /
    :class:`~sklearn_iclr26.neural_network.TorchMLPClassifier` (embedding: the
    activations of the last hidden layer; these can also be merged in weight
    space) or any estimator with ``transform`` (embedding: its output; these are
    composed by their predictions only).

    Parameters
    ----------
    estimator : estimator, default=None
        Template trained by :meth:`add_task`; ``None`` means
        ``TorchMLPRegressor(hidden_layer_sizes=(64,), max_iter=200)``.
    random_state : int, RandomState instance or None, default=None
        Seeds the one shared initialisation of the modules trained by
        :meth:`add_task` (drawn once, at the first call).
    verbose : int, default=0
        If positive, report each trained module.

    Attributes
    ----------
    modules : dict of str to estimator
        The fitted modules by task name, in insertion order.
    init_seed_ : int
        The seed of the shared initialisation (set by the first :meth:`add_task`).

    See Also
    --------
    AdaptiveCompositionRegressor : Compose the hub's modules for a new task.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_iclr26.ensemble import ModuleHub
    >>> from sklearn_iclr26.neural_network import TorchMLPRegressor
    >>> rng = np.random.RandomState(0)
    >>> X = rng.normal(size=(60, 4))
    >>> hub = ModuleHub(TorchMLPRegressor((8,), max_iter=20), random_state=0)
    >>> hub = hub.add_task("a", X, X[:, 0]).add_task("b", X, X[:, 1] ** 2)
    >>> hub.names
    ['a', 'b']
    >>> hub.embed("a", X[:3]).shape
    (3, 8)
    >>> hub.shares_initialisation()
    True
    """

    def __init__(self, estimator=None, *, random_state=None, verbose=0):
        store_params(self, locals())
        self.modules = {}

    # ------------------------------------------------------------ registry
    @property
    def names(self):
        """Task names, in insertion order."""
        return list(self.modules)

    def __len__(self):
        return len(self.modules)

    def __contains__(self, name):
        return name in self.modules

    def __getitem__(self, name):
        return self.modules[name]

    def __repr__(self):
        return f"ModuleHub(n_modules={len(self)}, names={self.names!r})"

    def _check_new_name(self, name):
        if not isinstance(name, str):
            raise TypeError(f"A task name must be a str, got {type(name).__name__}.")
        if name in self.modules:
            raise ValueError(f"The hub already holds a module named {name!r}.")

    def add_module(self, name, module):
        """Register a fitted module under ``name``.

        Parameters
        ----------
        name : str
            Task name.
        module : estimator
            A fitted estimator with an embedding (a torch MLP of the package, or
            anything with ``transform``).

        Returns
        -------
        self : ModuleHub
        """
        self._check_new_name(name)
        if not (_is_torch_mlp(module) or hasattr(module, "transform")):
            raise TypeError(
                f"Module {name!r} ({type(module).__name__}) has no embedding: use "
                "TorchMLPRegressor/TorchMLPClassifier or an estimator with a "
                "`transform` method."
            )
        check_is_fitted(module)
        # a new dict, so a copy of the hub taken before (the all-or-nothing
        # transaction of add_task) keeps its own registry
        self.modules = {**self.modules, name: module}
        return self

    @atomic_fit(keep_fitted=True)
    def add_task(self, name, X, y, *, init_from=None, **fit_params):
        """Train a module on a source task from the shared initialisation.

        With ``init_from`` the module is instead a fine-tune of one pretrained
        backbone (MoMa's recipe: every module a short full fine-tune of one
        checkpoint): a copy of ``init_from`` trained further on the task with
        ``warm_start=True`` for the template's ``max_iter`` epochs (and its
        ``alpha`` and ``learning_rate_init``); ``init_from`` is left unchanged.

        Parameters
        ----------
        name : str
            Task name.
        X : array-like of shape (n_samples, n_features)
            Source-task inputs.
        y : array-like of shape (n_samples,)
            Source-task target.
        init_from : fitted TorchMLPRegressor or TorchMLPClassifier, default=None
            Pretrained backbone to fine-tune; ``None`` trains from the shared
            initialisation.
        **fit_params : dict
            Passed to the module's ``fit``.

        Returns
        -------
        self : ModuleHub
        """
        self._check_new_name(name)
        if self.estimator is None:
            from sklearn_iclr26.utils._torch_mlp_regressor import TorchMLPRegressor

            template = TorchMLPRegressor(hidden_layer_sizes=(64,), max_iter=200)
        else:
            template = self.estimator
        if init_from is not None:
            if not _is_torch_mlp(init_from):
                raise TypeError("init_from must be a fitted torch MLP of the package.")
            module = copy.deepcopy(init_from)
            tparams = template.get_params()
            keep = ("max_iter", "alpha", "learning_rate_init")
            module.set_params(
                warm_start=True, **{k: tparams[k] for k in keep if k in tparams}
            )
            module.fit(X, y, **fit_params)
            log_progress(self, f"ModuleHub: fine-tuned module {name!r}")
            return self.add_module(name, module)
        if not hasattr(self, "init_seed_"):
            self.init_seed_ = seed_from_random_state(self.random_state)
        module = clone(template)
        if "random_state" in module.get_params():
            module.set_params(random_state=self.init_seed_)
        module.fit(X, y, **fit_params)
        log_progress(self, f"ModuleHub: trained module {name!r}")
        return self.add_module(name, module)

    # ------------------------------------------------------------ embeddings
    def embed(self, name, X):
        """Embed ``X`` with one module.

        Parameters
        ----------
        name : str
            Task name.
        X : array-like of shape (n_samples, n_features)
            Inputs, handed to the module as given.

        Returns
        -------
        embedding : ndarray of shape (n_samples, n_dims)
        """
        module = self.modules[name]
        if _is_torch_mlp(module):
            Xv = validate_data(module, X, reset=False, dtype=[np.float64, np.float32])
            return forward_module(
                module.net_,
                Xv,
                dtype=module.dtype,
                n_jobs=module.n_jobs,
                func=_body_embedding,
            )
        out = module.transform(X)
        if hasattr(out, "toarray"):
            out = out.toarray()
        return np.asarray(out, dtype=np.float64).reshape(np.shape(out)[0], -1)

    def diversity(self, X, names=None):
        """Pairwise linear CKA between the modules' embeddings of ``X``.

        Centred kernel alignment (Kornblith et al., 2019) with linear kernels:
        ``||Y^T Z||_F^2 / (||Y^T Y||_F ||Z^T Z||_F)`` on column-centred
        embeddings; 1 for embeddings equal up to rotation and scale, near 0 for
        unrelated ones. A hub whose modules have not specialised (near-copies
        of a shared initialisation) has CKA near 1 and gives composition
        nothing to choose between.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Inputs to embed.
        names : list of str, default=None
            Modules to compare; ``None`` means all.

        Returns
        -------
        cka : ndarray of shape (n_modules, n_modules)
            Symmetric, ones on the diagonal (NaN for a constant embedding).
        """
        names = self.names if names is None else list(names)
        grams = []
        for n in names:
            E = self.embed(n, X)
            E = E - E.mean(axis=0)
            grams.append(E)
        k = len(names)
        cka = np.eye(k)
        for i in range(k):
            for j in range(i + 1, k):
                A, B = grams[i], grams[j]
                num = np.linalg.norm(A.T @ B) ** 2
                den = np.linalg.norm(A.T @ A) * np.linalg.norm(B.T @ B)
                cka[i, j] = cka[j, i] = num / den if den > 0 else np.nan
        return cka

    # ------------------------------------------------- shared initialisation
    def init_signature(self, name):
        """What fixes a torch module's initial hidden-layer parameters.

        A fitted torch MLP's hidden layers are initialised by its class of
        network, layer sizes, activation, dtype, number of features and integer
        seed (the output layer is drawn last, so its size does not matter).
        Two modules with equal signatures started from identical hidden-layer
        parameters.

        Parameters
        ----------
        name : str
            Task name.

        Returns
        -------
        signature : tuple or None
            ``None`` for a module that is not a torch MLP or whose
            ``random_state`` is not an int (no reproducible initialisation).
        """
        module = self.modules[name]
        if not _is_torch_mlp(module) or not isinstance(module.random_state, Integral):
            return None
        hidden = tuple(int(h) for h in np.atleast_1d(module.hidden_layer_sizes))
        return (
            hidden,
            module.activation,
            module.dtype,
            int(module.n_features_in_),
            int(module.random_state),
        )

    def shares_initialisation(self, names=None):
        """Whether modules started from one shared initialisation.

        Parameters
        ----------
        names : list of str, default=None
            Modules to compare; ``None`` means all.

        Returns
        -------
        shared : bool
        """
        names = self.names if names is None else list(names)
        signatures = {self.init_signature(n) for n in names}
        return len(signatures) == 1 and None not in signatures

    def body_parameters(self, name):
        """The hidden-layer parameters of a torch module.

        Parameters
        ----------
        name : str
            Task name.

        Returns
        -------
        params : list of (weight, bias) ndarray
            One pair per hidden layer (the output layer excluded), copies.
        """
        module = self.modules[name]
        if not _is_torch_mlp(module):
            raise TypeError(f"Module {name!r} is not a torch MLP of the package.")
        return [
            (
                layer.weight.detach().cpu().numpy().copy(),
                layer.bias.detach().cpu().numpy().copy(),
            )
            for layer in _linear_layers(module)[:-1]
        ]

    def merge(self, weights, names=None):
        """Merge hidden-layer parameters in weight space: ``sum_j w_j theta_j``.

        Modules with zero weight are skipped, so a one-hot weight vector returns
        that module's parameters exactly.

        Parameters
        ----------
        weights : array-like of shape (n_modules,)
            Convex weights, aligned with ``names``.
        names : list of str, default=None
            Modules; ``None`` means all, in hub order.

        Returns
        -------
        params : list of (weight, bias) ndarray
        """
        names = self.names if names is None else list(names)
        weights = np.asarray(weights, dtype=np.float64)
        if weights.shape != (len(names),):
            raise ValueError(
                f"weights must have shape ({len(names)},), got {weights.shape}."
            )
        active = [(n, w) for n, w in zip(names, weights) if w != 0.0]
        if not active:
            raise ValueError("At least one weight must be non-zero.")
        if not self.shares_initialisation([n for n, _ in active]):
            raise ValueError(
                "Weight-space merging needs modules trained from one shared "
                f"initialisation; modules {[n for n, _ in active]} do not share "
                "one (same torch MLP architecture, number of features and integer "
                "random_state). Use merge='predictions' or build the hub with "
                "ModuleHub.add_task."
            )
        merged = None
        for name, w in active:
            params = self.body_parameters(name)
            if merged is None:
                merged = [(w * W, w * b) for W, b in params]
            else:
                merged = [
                    (mW + w * W, mb + w * b) for (mW, mb), (W, b) in zip(merged, params)
                ]
        return merged

    # ------------------------------------------------------------ persistence
    def save(self, path):
        """Save the hub, with its fitted modules, to ``path`` with skops.

        The file is a ``skops.io`` archive (the optional dependency skops),
        as for every estimator of the package: plain values and numpy arrays,
        each torch net as its module class, parameters and weights. See
        :ref:`persistence`.

        Parameters
        ----------
        path : str or path-like
            File to write.
        """
        _persistence.save(self, path)

    @classmethod
    def load(cls, path, *, trusted=None):
        """Load a hub written by :meth:`save`, building only trusted types.

        The file is read by ``skops.io.load``, which builds no type that is
        not trusted and unpickles nothing. Trusted are skops's defaults
        (Python containers, numpy arrays, scikit-learn's estimators) and the
        package's types a hub of torch MLPs holds (``ModuleHub``,
        ``TorchMLPRegressor``, ``TorchMLPClassifier``, their torch module and
        the saved net); a file naming any other type raises skops's
        ``UntrustedTypesFoundException`` naming it, without building
        anything. A file of trusted types can still hold weights that predict
        something else: load hubs whose origin you know. See
        :ref:`persistence`.

        Parameters
        ----------
        path : str or path-like
            File to read.
        trusted : list of str, default=None
            Further ``"module.Class"`` types to build (e.g. the class of a
            module registered with :meth:`add_module` that is not a torch MLP
            of the package nor a scikit-learn estimator), after checking them
            yourself; ``skops.io.get_untrusted_types(file=path)`` lists what
            the file names.

        Returns
        -------
        hub : ModuleHub
        """
        if isinstance(trusted, str):
            raise TypeError("trusted must be a list of str, got a str.")
        hub = _persistence.load(path, trusted=[*_HUB_TYPES, *(trusted or ())])
        if not isinstance(hub, cls):
            raise TypeError(f"{path} does not hold a ModuleHub.")
        return hub


# the package's types in the file of a hub of torch MLPs (what ModuleHub.load
# trusts besides skops's defaults)
_HUB_TYPES = (
    "sklearn_iclr26.ensemble._hub.ModuleHub",
    "sklearn_iclr26.utils._torch_mlp_regressor.TorchMLPRegressor",
    "sklearn_iclr26.utils._torch_mlp_classifier.TorchMLPClassifier",
    "sklearn_iclr26.utils._mlp_modules.MLPModule",
    "sklearn_iclr26.utils._persistence.SavedNet",
)
