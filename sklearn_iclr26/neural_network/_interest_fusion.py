"""iFusion: CTR prediction fusing long- and short-term interests by diffusion."""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import re
from numbers import Integral, Real

import numpy as np
from sklearn.base import ClassifierMixin, TransformerMixin
from sklearn.utils.multiclass import type_of_target
from sklearn.utils.validation import check_is_fitted, validate_data

from sklearn_iclr26.utils._atomic import atomic_fit
from sklearn_iclr26.utils._columns import check_disjoint, resolve_columns
from sklearn_iclr26.utils._random import seed_from_random_state
from sklearn_iclr26.utils._sklearn_compat import Interval, StrOptions, _fit_context
from sklearn_iclr26.utils._torch import forward_module
from sklearn_iclr26.utils._torch_estimator import (
    DTYPES,
    BaseTorchEstimator,
)
from sklearn_iclr26.utils._validation import (
    check_hidden_layer_sizes,
    store_params,
    validate_classifier_fit_data,
)
from sklearn_iclr26.utils._warnings import warn_user

__all__ = ["DiffusionInterestFusionClassifier"]

_LAYOUT_KEYS = ("long", "sessions", "candidate", "dense")
_LONG = re.compile(r"^long_\d+$")
_SESSION = re.compile(r"^session(\d+)_\d+$")
_CANDIDATE = re.compile(r"^candidate(_\d+)?$")


def _name_key(name):
    """Sort key of a column name: its text with the item index as a number."""
    head, _, tail = str(name).rpartition("_")
    return (head, int(tail)) if tail.isdigit() else (str(name), -1)


_GOLDEN = np.uint64(0x9E3779B97F4A7C15)


def _splitmix64(z):
    """The splitmix64 finaliser, elementwise on a uint64 array (wraps mod 2^64)."""
    z = z + _GOLDEN
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


def row_noise(X, seed, shape):
    """Standard-normal draws of shape ``(n_samples, *shape)`` keyed by row content.

    Row ``i`` gets the draws of a counter-based generator (splitmix64 and
    Box-Muller) keyed by ``seed`` and the bits of ``X[i]`` (as float64), so a
    row's draws do not depend on the other rows, their order, the batch it is
    in or on earlier calls. Identical rows get identical draws.
    """
    with np.errstate(over="ignore"):
        bits = np.ascontiguousarray(np.asarray(X, dtype=np.float64) + 0.0)
        bits = bits.reshape(len(bits), -1).view(np.uint64)
        key = np.full(len(bits), np.uint64(seed) + _GOLDEN, dtype=np.uint64)
        for j in range(bits.shape[1]):
            key = _splitmix64(key ^ bits[:, j])
        size = int(np.prod(shape))
        counter = _splitmix64(np.arange(2 * size, dtype=np.uint64))
        u = _splitmix64(key[:, None] ^ counter[None, :])
    u = ((u >> np.uint64(11)).astype(np.float64) + 0.5) * 2.0**-53
    z = np.sqrt(-2.0 * np.log(u[:, :size])) * np.cos(2.0 * np.pi * u[:, size:])
    return z.reshape(len(bits), *shape)


def _fuse_func(n_steps, scales):
    def func(module, X, **aux):
        return module.fuse(**aux, n_steps=n_steps, scales=scales)[0]

    return func


def _logit_func(n_steps, scales):
    def func(module, X, **aux):
        fused, _, cand = module.fuse(**aux, n_steps=n_steps, scales=scales)
        return module.head(fused, cand, X)

    return func


class DiffusionInterestFusionClassifier(
    ClassifierMixin, TransformerMixin, BaseTorchEstimator
):
    """CTR classifier fusing long- and short-term interests (iFusion).

    A binary click-through-rate model on interaction histories. Each row holds
    a long-term history, ``K`` short-term sessions (oldest first) and a
    candidate item, as padded item-id sequences (``0`` = padding) or as
    pre-computed embeddings, plus optional dense features. The interests are
    fused into one vector that a feed-forward tower scores against the
    candidate. ``fusion`` selects the fusion, so that the baselines are the
    same class with another setting:

    * ``"diffusion"`` (iFusion): the long-term interest is the start of a
      DDPM; each session, oldest first, denoises it once more (autoregressive
      sessions), guided by a core-preference vector (average pool of the
      sessions so far) and a transient vector (attention over the current
      session's items) with their own scales (decoupled classifier-free
      guidance). A consistency loss trains the deterministic multi-step
      sampler to return the one-step output, so inference takes one step per
      session;
    * ``"concat"``: a linear map of the concatenated interest vectors;
    * ``"mlp"``: the concatenated interest vectors through an MLP of the
      denoiser's depth and width (the capacity-matched concat);
    * ``"attention"``: attention over the interest vectors with the candidate
      as query;
    * ``"din"``: DIN's target attention (Zhou et al., 2018; the local
      activation unit, an MLP on ``[q, k, q - k, q * k]`` with unnormalised
      weights) over every history item, long-term and session items, with
      the candidate item as query (needs a candidate block).

    Read :ref:`ifusion` for the exact losses and which parts are our
    reconstruction of the paper's notes.

    Parameters
    ----------
    fusion : {"diffusion", "concat", "mlp", "attention", "din"}, \
            default="diffusion"
        How the long- and short-term interests are fused.
    layout : dict or None, default=None
        Where the column blocks of ``X`` are: ``{"long": cols, "sessions":
        [cols_1, ..., cols_K], "candidate": cols, "dense": cols}``, each
        ``cols`` a list of column names (``X`` a DataFrame) or of integer
        positions; ``"candidate"`` and ``"dense"`` are optional, and columns
        in no block are dense features. ``None`` finds the blocks by the
        names of :class:`~InteractionSequenceEncoder`
        (``long_<j>``, ``session<k>_<j>``, ``candidate``, any other column
        dense), so ``X`` must then be a DataFrame with those columns; blocks
        are never taken from raw positions unless positions are given here.
    n_items : "auto", int or None, default="auto"
        ``"auto"`` or int: the blocks hold item ids (integers, ``0`` =
        padding) and the embedding table has ``n_items`` rows (``"auto"``:
        the largest id seen in fit plus one) and one more for unknown ids.
        ``None``: the blocks hold pre-computed embeddings, one vector per
        block (all blocks of the same width).
    embed_dim : int, default=32
        Width of the item embeddings and interest vectors.
    hidden_layer_sizes : array-like of int, default=(64,)
        Hidden layers of the CTR tower.
    n_sessions : int or None, default=None
        Use the ``n_sessions`` most recent session blocks; ``None`` uses all.
    n_diffusion_steps : int, default=20
        Steps ``T`` of the DDPM schedule (cosine, down to ``abar_T = 0.095``).
        Each stage starts from the forward-process sample ``x_T =
        sqrt(abar_T) x + sqrt(1 - abar_T) eps`` of its input ``x``, in training
        and at predict time (see Notes for the seeding of ``eps``).
    n_sampling_steps : int, default=1
        Denoising steps per session at predict time: 1 is the one-step
        consistency output (the method's inference); more runs the
        deterministic DDIM sampler. Only used with ``fusion="diffusion"``.
    guidance_scales : tuple of two floats, default=(1.0, 1.0)
        Scales ``(gamma_cp, gamma_tf)`` of the core-preference and transient
        guidance; ``(0, 0)`` gives the unconditional denoiser.
    evolution_weight : float, default=0.1
        Weight of the interest-evolution loss.
    evolution_loss : {"next_session", "reconstruction"}, default="next_session"
        The interest-evolution loss. ``"next_session"`` (the method's): the
        cosine distance ``1 - cos(x_k, s_{k+1})`` between stage ``k``'s fused
        interest and the interest of the user's following session, ``s_{k+1}``
        the pooled (encoded) vector of session block ``k + 1`` of the same
        row, with a stopped gradient; it exists for the stages ``1, ...,
        K - 1`` (the last session's follower is the interaction being
        scored, not in the row), so with one session block it is zero.
        ``"reconstruction"`` (an ablation, this estimator's earlier loss): the
        DDPM ``x_0``-prediction loss of the stage input, with the guidance
        dropped with probability ``cond_dropout``.
    stage_start : {"noise", "mean"}, default="noise"
        Where each diffusion stage starts, in training and at predict time:
        ``"noise"`` (the method's, the long-term interest diffused towards
        Gaussian noise), the forward-process sample ``x_T = sqrt(abar_T) x +
        sqrt(1 - abar_T) eps``; ``"mean"`` (an ablation, this estimator's
        earlier start) its noise-free mean ``sqrt(abar_T) x``, which keeps
        the long-term interest and makes predictions deterministic without a
        seed.
    orthogonality_weight : float, default=0.01
        Weight of the orthogonality (decorrelation) term ``(g_cp . g_tf)^2 /
        d`` of the two guidance vectors.
    consistency_weight : float, default=1.0
        Weight of the consistency loss, which distils the deterministic
        multi-step sampler onto the one-step output (0 switches it off; the
        one-step output then differs from the sampler's).
    cond_dropout : float, default=0.1
        Probability of dropping each guidance vector in the DDPM loss
        (classifier-free guidance training; ``evolution_loss="reconstruction"``
        only).
    validation_split : {"random", "last"}, default="random"
        The rows held out when ``early_stopping=True``: a stratified random
        ``validation_fraction``, or the last ``ceil(validation_fraction *
        n_samples)`` rows of ``X`` (a time-ordered split when the rows are
        given with the latest interactions last).
    handle_unknown : {"ignore", "error"}, default="ignore"
        Item ids outside the table (``>= n_items``): ``"ignore"`` maps them to
        the unknown-item row (with a warning in fit), ``"error"`` raises.
    dtype : {"float64", "float32"}, default="float32"
        Precision of the torch module. float32 by default, unlike the other
        torch estimators (float64): CTR logs are large (the reproduction fits
        80,001 rows) and at that scale float64 costs about 1.7 times the CPU
        time of a fit (20,000 rows, default network, 2 epochs: 4.6-5.3 s
        against 2.6-3.2 s); what float64 buys elsewhere, sample-weight
        equivalence with full batches, does not hold here anyway (the
        diffusion losses draw noise per sample).
    %(training_parameters)s

    Attributes
    ----------
    classes_ : ndarray of shape (2,)
        Class labels.
    n_features_in_ : int
        Number of columns of ``X`` seen during fit.
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Column names of ``X``, when it is a DataFrame with string names.
    layout_ : dict
        The resolved blocks as integer positions: ``"long"``, ``"sessions"``
        (list of lists), ``"candidate"`` (list, possibly empty), ``"dense"``.
    n_items_ : int or None
        Rows of the item table (without the unknown row); ``None`` for
        embedding input.
    %(training_attributes)s

    See Also
    --------
    InteractionSequenceEncoder : Builds ``X`` from an interaction log.
    TorchMLPClassifier : A plain MLP on a feature matrix.

    Notes
    -----
    This estimator needs the block layout; its bare ``fit(X, y)`` on an
    unnamed matrix raises (it is in the default-parameter exemption table).
    Seeding contract of ``fusion="diffusion"``: training draws the stages'
    starting noise from torch's generator, seeded from ``random_state`` by
    the engine (bit-identical refits). At predict time the noise of a row is
    a counter-based draw keyed by a seed fixed at fit (drawn from
    ``random_state`` after training, so random at fit when it is ``None``)
    and by the row's values in its blocks (in layout order):
    ``predict_proba``, ``decision_function``, ``predict`` and ``transform``
    give bit-identical output on every call and after pickling, and the same
    output for a row (up to floating-point rounding of batched matrix
    products) whatever the other rows, their order, the batching by
    ``working_memory`` or ``n_jobs``, or the column order of a DataFrame.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_iclr26.neural_network import DiffusionInterestFusionClassifier
    >>> rng = np.random.RandomState(0)
    >>> X = rng.randint(0, 20, size=(200, 13)).astype(float)  # ids, 0 = padding
    >>> y = (X[:, 12] > 10).astype(int)
    >>> layout = {"long": list(range(6)), "sessions": [[6, 7, 8], [9, 10, 11]],
    ...           "candidate": [12]}
    >>> clf = DiffusionInterestFusionClassifier(
    ...     layout=layout, embed_dim=8, max_iter=3, random_state=0).fit(X, y)
    >>> clf.predict_proba(X[:2]).shape
    (2, 2)
    >>> clf.transform(X[:2]).shape
    (2, 8)
    """

    _parameter_constraints: dict = {
        **BaseTorchEstimator._parameter_constraints,
        "fusion": [StrOptions({"diffusion", "concat", "mlp", "attention", "din"})],
        "layout": [dict, None],
        "n_items": [
            StrOptions({"auto"}),
            Interval(Integral, 1, None, closed="left"),
            None,
        ],
        "embed_dim": [Interval(Integral, 1, None, closed="left")],
        "hidden_layer_sizes": ["array-like"],
        "n_sessions": [Interval(Integral, 1, None, closed="left"), None],
        "n_diffusion_steps": [Interval(Integral, 1, None, closed="left")],
        "n_sampling_steps": [Interval(Integral, 1, None, closed="left")],
        "guidance_scales": [tuple, list],
        "evolution_weight": [Interval(Real, 0, None, closed="left")],
        "evolution_loss": [StrOptions({"next_session", "reconstruction"})],
        "stage_start": [StrOptions({"noise", "mean"})],
        "orthogonality_weight": [Interval(Real, 0, None, closed="left")],
        "consistency_weight": [Interval(Real, 0, None, closed="left")],
        "cond_dropout": [Interval(Real, 0, 1, closed="both")],
        "handle_unknown": [StrOptions({"ignore", "error"})],
        "validation_split": [StrOptions({"random", "last"})],
    }

    # the click loss with the diffusion terms is the method
    _accepts_criterion = False

    def __init__(
        self,
        fusion="diffusion",
        *,
        layout=None,
        n_items="auto",
        embed_dim=32,
        hidden_layer_sizes=(64,),
        n_sessions=None,
        n_diffusion_steps=20,
        n_sampling_steps=1,
        guidance_scales=(1.0, 1.0),
        evolution_weight=0.1,
        evolution_loss="next_session",
        stage_start="noise",
        orthogonality_weight=0.01,
        consistency_weight=1.0,
        cond_dropout=0.1,
        validation_split="random",
        handle_unknown="ignore",
        alpha=0.0,
        batch_size=256,
        learning_rate_init=1e-3,
        max_iter=20,
        early_stopping=False,
        validation_fraction=0.1,
        n_iter_no_change=10,
        tol=1e-4,
        warm_start=False,
        callbacks=None,
        dtype="float32",
        device="cpu",
        n_jobs=None,
        random_state=None,
        verbose=0,
    ):
        store_params(self, locals())

    # ------------------------------------------------------------ layout

    def _resolve_layout(self, n_features):
        names = getattr(self, "feature_names_in_", None)
        if self.layout is None:
            if names is None:
                raise ValueError(
                    "DiffusionInterestFusionClassifier needs the block `layout` of "
                    "X: pass layout={'long': [...], 'sessions': [[...], ...], "
                    "'candidate': [...]} or a DataFrame with the column names of "
                    "InteractionSequenceEncoder (long_<j>, session<k>_<j>, "
                    "candidate); X has no column names."
                )
            long_cols, sessions, cand, dense = [], {}, [], []
            # blocks in the order of the names' item index, whatever the
            # column order of X
            for j, name in sorted(enumerate(names), key=lambda jn: _name_key(jn[1])):
                m = _SESSION.match(name)
                if _LONG.match(name):
                    long_cols.append(j)
                elif m:
                    sessions.setdefault(int(m.group(1)), []).append(j)
                elif _CANDIDATE.match(name):
                    cand.append(j)
                else:
                    dense.append(j)
            if not long_cols:
                raise ValueError(
                    "No `layout` given and X has no 'long_<j>' columns: pass "
                    "layout= or the DataFrame of InteractionSequenceEncoder "
                    "(set_output(transform='pandas'))."
                )
            layout = {
                "long": long_cols,
                "sessions": [sessions[k] for k in sorted(sessions)],
                "candidate": cand,
                "dense": dense,
            }
        else:
            unknown = set(self.layout) - set(_LAYOUT_KEYS)
            if unknown or "long" not in self.layout:
                raise ValueError(
                    f"layout must have the key 'long' and only keys {_LAYOUT_KEYS}; "
                    f"got {sorted(self.layout)}."
                )
            sessions = self.layout.get("sessions", [])
            if isinstance(sessions, (str, int, np.integer)) or any(
                isinstance(s, (str, int, np.integer)) for s in sessions
            ):
                raise ValueError(
                    "layout['sessions'] must be a list of column lists, one per "
                    "session."
                )

            def columns(what, cols):
                return resolve_columns(cols, self, n_features, what, allow_empty=True)

            groups = {"layout['long']": columns("layout['long']", self.layout["long"])}
            for k, cols in enumerate(sessions):
                what = f"layout['sessions'][{k}]"
                groups[what] = columns(what, cols)
            groups["layout['candidate']"] = columns(
                "layout['candidate']", self.layout.get("candidate", [])
            )
            if "dense" in self.layout:
                dense = columns("layout['dense']", self.layout["dense"])
            else:
                used = {c for cols in groups.values() for c in cols}
                dense = [j for j in range(n_features) if j not in used]
            groups["layout['dense']"] = dense
            check_disjoint(groups)
            layout = {
                "long": groups["layout['long']"],
                "sessions": [
                    groups[f"layout['sessions'][{k}]"] for k in range(len(sessions))
                ],
                "candidate": groups["layout['candidate']"],
                "dense": dense,
            }
        if not layout["long"]:
            raise ValueError("layout['long'] is empty.")
        if not layout["sessions"]:
            raise ValueError(
                "layout has no session block; the fusion needs at least one "
                "short-term session."
            )
        if self.n_sessions is not None:
            if self.n_sessions > len(layout["sessions"]):
                raise ValueError(
                    f"n_sessions={self.n_sessions} but the layout has "
                    f"{len(layout['sessions'])} session blocks."
                )
            layout["sessions"] = layout["sessions"][-self.n_sessions :]
        widths = {len(s) for s in layout["sessions"]}
        if len(widths) > 1:
            raise ValueError(
                f"All session blocks must have the same width (pad with 0); got "
                f"widths {sorted(widths)}."
            )
        if self.n_items is None:
            blocks = [layout["long"]] + layout["sessions"]
            blocks += [layout["candidate"]] if layout["candidate"] else []
            dims = {len(b) for b in blocks}
            if len(dims) > 1:
                raise ValueError(
                    "Mismatched embedding dimensions: with n_items=None every block "
                    "(long, each session, candidate) is one pre-computed embedding "
                    f"of the same width; got widths {sorted(dims)}."
                )
        elif len(layout["candidate"]) > 1:
            raise ValueError(
                "With item ids the candidate block is one column (the candidate "
                f"item id); got {len(layout['candidate'])} columns."
            )
        return layout

    # ------------------------------------------------------------ inputs

    def _ids(self, block, what, fitting):
        if not np.all(np.isfinite(block)):
            raise ValueError(
                f"The {what} block has missing values: ragged sequences must be "
                "padded with 0 to a fixed width (InteractionSequenceEncoder does "
                "this)."
            )
        ids = block.astype(np.int64)
        if np.any(ids != block) or np.any(ids < 0):
            raise ValueError(
                f"The {what} block must hold non-negative integer item ids "
                "(0 = padding), or set n_items=None for pre-computed embeddings."
            )
        outside = ids >= self.n_items_
        if np.any(outside):
            n_out = int(outside.sum())
            if self.handle_unknown == "error":
                raise ValueError(
                    f"{n_out} item id(s) in the {what} block are outside the item "
                    f"table (>= {self.n_items_}); set handle_unknown='ignore' to "
                    "map them to the unknown-item bucket."
                )
            if fitting:
                warn_user(
                    f"{n_out} item id(s) in the {what} block are outside the item "
                    f"table (>= {self.n_items_}); they are mapped to the "
                    "unknown-item bucket."
                )
            ids = np.where(outside, self.n_items_, ids)
        return ids

    def _inputs(self, X, fitting=False):
        """Dense matrix and the aux dict of blocks for the torch module."""
        lay = self.layout_
        K, S = len(lay["sessions"]), len(lay["sessions"][0])
        if fitting and self.n_items is not None:
            id_cols = (
                lay["long"] + [c for s in lay["sessions"] for c in s] + lay["candidate"]
            )
            block = X[:, id_cols]
            if self.n_items == "auto":
                finite = block[np.isfinite(block)]
                self.n_items_ = int(max(finite.max(initial=0), 0)) + 1
            else:
                self.n_items_ = int(self.n_items)
        sessions = X[:, [c for s in lay["sessions"] for c in s]]
        if self.n_items is None:
            aux = {
                "long": X[:, lay["long"]],
                "sessions": sessions.reshape(len(X), K, S),
            }
            if lay["candidate"]:
                aux["candidate"] = X[:, lay["candidate"]]
        else:
            aux = {
                "long": self._ids(X[:, lay["long"]], "long-term", fitting),
                "sessions": self._ids(sessions, "session", fitting).reshape(
                    len(X), K, S
                ),
            }
            if lay["candidate"]:
                aux["candidate"] = self._ids(
                    X[:, lay["candidate"]], "candidate", fitting
                ).ravel()
        dense = X[:, lay["dense"]]
        if fitting:
            self._dense_mean = dense.mean(axis=0) if len(dense) else 0.0
            std = dense.std(axis=0)
            self._dense_scale = np.where(std > 0, std, 1.0)
        dense = (dense - self._dense_mean) / self._dense_scale
        return np.ascontiguousarray(dense), aux

    def _module_spec(self, X, n_outputs, sample_weight=None):
        """The module on the dense matrix ``X`` (the blocks ride in ``aux``)."""
        from sklearn_iclr26.neural_network._interest_fusion_modules import (
            IFusionModule,
        )

        scales = tuple(float(g) for g in self.guidance_scales)
        if len(scales) != 2:
            raise ValueError(
                "guidance_scales must be two floats (gamma_cp, gamma_tf), got "
                f"{self.guidance_scales!r}."
            )
        lay = self.layout_
        return IFusionModule, {
            "fusion": self.fusion,
            "n_items": None if self.n_items is None else self.n_items_ + 1,
            "input_dim": len(lay["long"]),
            "embed_dim": self.embed_dim,
            "n_sessions": len(lay["sessions"]),
            "has_candidate": bool(lay["candidate"]),
            "n_dense": X.shape[1],
            "hidden_layer_sizes": check_hidden_layer_sizes(self.hidden_layer_sizes),
            "n_diffusion_steps": self.n_diffusion_steps,
            "guidance_scales": scales,
            "evolution_weight": self.evolution_weight,
            "evolution_loss": self.evolution_loss,
            "stage_start": self.stage_start,
            "orthogonality_weight": self.orthogonality_weight,
            "consistency_weight": self.consistency_weight,
            "cond_dropout": self.cond_dropout,
        }

    def _criterion_spec(self, n_outputs):
        from sklearn_iclr26.neural_network._interest_fusion_modules import (
            IFusionLoss,
        )

        return IFusionLoss, {}

    # -------------------------------------------------------------- fit

    @atomic_fit
    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, sample_weight=None):
        """Fit the encoders, the fusion and the CTR tower.

        Parameters
        ----------
        X : {array-like, DataFrame} of shape (n_samples, n_features)
            Rows with the blocks of ``layout`` (item ids or embeddings) and
            dense features.
        y : array-like of shape (n_samples,)
            Binary click labels.
        sample_weight : array-like of shape (n_samples,), default=None
            Per-sample weights of the loss.

        Returns
        -------
        self : object
            Fitted estimator.
        """
        # item-id blocks may hold NaN (an error with its own message below)
        X, y, y_encoded, sample_weight = validate_classifier_fit_data(
            self, X, y, sample_weight, dtype=DTYPES, ensure_all_finite=False
        )
        if len(self.classes_) > 2:
            raise ValueError(
                "Only binary classification is supported. The type of the target "
                f"is {type_of_target(y)}."
            )
        self.layout_ = self._resolve_layout(X.shape[1])
        if self.n_items is None:
            self.n_items_ = None
        self._check_finite(X, fitting=True)
        if self.fusion == "din" and not self.layout_["candidate"]:
            raise ValueError(
                "fusion='din' attends over the history with the candidate as "
                "query; the layout has no candidate block."
            )
        dense, aux = self._inputs(X, fitting=True)
        # the engine's X is the dense matrix; the blocks are per-sample aux
        self._train(dense, y_encoded.astype(np.float64), 1, sample_weight, aux=aux)
        # the predict-time noise seed, drawn after training (seeding contract)
        self._noise_seed = seed_from_random_state(self.random_state)
        return self

    def _validation_split(self, X, y):
        if self.validation_split == "random":
            return super()._validation_split(X, y)
        n = X.shape[0]
        # the small tolerance keeps n_valid / n from rounding up one row
        n_valid = int(np.ceil(self.validation_fraction * n - 1e-9))
        if n_valid < 1 or n_valid >= n:
            raise ValueError(
                f"early_stopping needs at least one training and one validation "
                f"row; got {n} rows with validation_fraction="
                f"{self.validation_fraction}."
            )
        return np.arange(n - n_valid), np.arange(n - n_valid, n)

    def _check_finite(self, X, fitting=False):
        """The NaN policy: dense features (and embeddings) must be finite."""
        if not np.all(np.isfinite(X[:, self.layout_["dense"]])):
            raise ValueError(
                "Input X contains NaN or infinity in the dense features."
                if fitting
                else "Input X contains NaN or infinity."
            )
        if self.n_items is None and not np.all(np.isfinite(X)):
            raise ValueError("Input X contains NaN or infinity.")

    # ---------------------------------------------------------- predict

    def _forward_blocks(self, X, func_factory):
        """Validation, the NaN policy and the batched pass on dense + blocks."""
        check_is_fitted(self)
        X = validate_data(self, X, reset=False, dtype=DTYPES, ensure_all_finite=False)
        self._check_finite(X)
        dense, aux = self._inputs(X)
        if self.fusion == "diffusion" and self.stage_start == "noise":
            lay = self.layout_
            # keyed by the blocks in layout order (not the column order of X)
            cols = lay["long"] + [c for s in lay["sessions"] for c in s]
            cols += lay["candidate"] + lay["dense"]
            shape = (len(lay["sessions"]), self.embed_dim)
            aux["noise"] = row_noise(X[:, cols], self._noise_seed, shape)
        scales = tuple(float(g) for g in self.guidance_scales)
        func = func_factory(self.n_sampling_steps, scales)
        return forward_module(
            self.net_, dense, aux=aux, dtype=self.dtype, n_jobs=self.n_jobs, func=func
        )

    def _raw_decision(self, X):
        """The click logit, shape ``(n_samples,)`` (one output: binary)."""
        return self._forward_blocks(X, _logit_func)

    def decision_function(self, X):
        """Click logit of each row.

        Parameters
        ----------
        X : {array-like, DataFrame} of shape (n_samples, n_features)
            Rows laid out as in fit.

        Returns
        -------
        logit : ndarray of shape (n_samples,)
            Log-odds of ``classes_[1]``.
        """
        return self._raw_decision(X)

    def predict_proba(self, X):
        """Click probabilities.

        Parameters
        ----------
        X : {array-like, DataFrame} of shape (n_samples, n_features)
            Rows laid out as in fit.

        Returns
        -------
        proba : ndarray of shape (n_samples, 2)
            Columns follow ``classes_``.
        """
        logit = self.decision_function(X)
        p1 = 1.0 / (1.0 + np.exp(-logit))
        return np.column_stack([1.0 - p1, p1])

    def predict(self, X):
        """Predicted labels.

        Parameters
        ----------
        X : {array-like, DataFrame} of shape (n_samples, n_features)
            Rows laid out as in fit.

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
            ``classes_[1]`` where the logit is positive.
        """
        logit = self.decision_function(X)  # NotFittedError before classes_
        return self.classes_[(logit > 0).astype(int)]

    def transform(self, X):
        """The fused interest vector of each row.

        Parameters
        ----------
        X : {array-like, DataFrame} of shape (n_samples, n_features)
            Rows laid out as in fit.

        Returns
        -------
        fused : ndarray of shape (n_samples, embed_dim)
            The output of the fusion (one consistency step per session for
            ``fusion="diffusion"``, or ``n_sampling_steps`` DDIM steps).
        """
        return self._forward_blocks(X, _fuse_func)

    def fit_transform(self, X, y, sample_weight=None):
        """Fit, then return the fused interest vectors of ``X``.

        Parameters
        ----------
        X : {array-like, DataFrame} of shape (n_samples, n_features)
            Training rows.
        y : array-like of shape (n_samples,)
            Binary click labels.
        sample_weight : array-like of shape (n_samples,), default=None
            Per-sample weights.

        Returns
        -------
        fused : ndarray of shape (n_samples, embed_dim)
            Fused interest vectors.
        """
        return self.fit(X, y, sample_weight=sample_weight).transform(X)

    def get_feature_names_out(self, input_features=None):
        """Get the names of the fused-interest columns.

        Parameters
        ----------
        input_features : array-like of str or None, default=None
            Ignored (the output columns do not map to input columns).

        Returns
        -------
        names : ndarray of str
            ``fused_0, ..., fused_<embed_dim - 1>``.
        """
        check_is_fitted(self)
        return np.asarray([f"fused_{j}" for j in range(self.embed_dim)], dtype=object)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        tags.input_tags.allow_nan = False
        return tags
