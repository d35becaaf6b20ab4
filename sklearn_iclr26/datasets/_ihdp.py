"""IHDP semi-synthetic treatment-effect data (Hill, 2011), generated offline."""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import importlib.util
from pathlib import Path

import numpy as np
from sklearn.utils import Bunch, check_random_state

from sklearn_iclr26.utils._sklearn_compat import StrOptions, validate_params

__all__ = ["load_ihdp"]

_FEATURES = [
    "bw", "b.head", "preterm", "birth.o", "nnhealth", "momage", "sex", "twin",
    "b.marr", "mom.lths", "mom.hs", "mom.scoll", "cig", "first", "booze", "drugs",
    "work.dur", "prenatal", "site1", "site2", "site3", "site4", "site5", "site6",
    "site7",
]  # fmt: skip


def _sim_csv(data_home):
    if data_home is not None:
        path = Path(data_home) / "sim.csv"
        if not path.is_file():
            raise FileNotFoundError(
                f"{path} does not exist: data_home must hold the IHDP covariate "
                "file sim.csv (as shipped in econml/data/ihdp/)."
            )
        return path
    spec = importlib.util.find_spec("econml")
    if spec is None or not spec.submodule_search_locations:
        raise ImportError(
            "load_ihdp reads the IHDP covariates shipped with econml "
            "(econml/data/ihdp/sim.csv): pip install 'sklearn-iclr26[causal]', "
            "or pass data_home= a folder holding sim.csv. Nothing is downloaded."
        )
    path = Path(next(iter(spec.submodule_search_locations))) / "data/ihdp/sim.csv"
    if not path.is_file():  # pragma: no cover - a broken econml install
        raise FileNotFoundError(f"econml is installed but {path} is missing.")
    return path


@validate_params(
    {
        "surface": [StrOptions({"A", "B"})],
        "random_state": ["random_state"],
        "data_home": [str, Path, None],
        "return_X_y": ["boolean"],
    },
    prefer_skip_nested_validation=True,
)
def load_ihdp(*, surface="B", random_state=None, data_home=None, return_X_y=False):
    """IHDP semi-synthetic data: real covariates, simulated outcomes.

    The covariates of the Infant Health and Development Program (747 children
    after removing treated children with non-white mothers, 139 treated, 25
    covariates) come from the file ``sim.csv`` that econml ships
    (``econml/data/ihdp/``; it is read without importing econml); the
    outcomes follow Hill's (2011) response surface A (constant effect 4) or B
    (heterogeneous, exponential control surface), exactly as
    ``econml.data.dgps.ihdp_surface_A/B`` generate them, with the noiseless
    potential outcomes returned as well. Nothing is downloaded.

    Parameters
    ----------
    surface : {"A", "B"}, default="B"
        Hill's response surface.
    random_state : int, RandomState instance or None, default=None
        Draws the surface coefficients and the noise (one replication per
        seed; the same seed gives econml's replication).
    data_home : str or path, default=None
        A folder holding ``sim.csv``; ``None`` reads econml's copy.
    return_X_y : bool, default=False
        Return ``(X, y, treatment, tau)`` instead of a Bunch.

    Returns
    -------
    data : :class:`~sklearn.utils.Bunch`
        ``data`` (covariates, shape (747, 25); the first six standardised,
        ``first`` shifted to {1, 2} as in econml), ``target`` (factual
        outcome), ``treatment`` (0/1), ``tau`` (true CATE), ``mu0`` and
        ``mu1`` (noiseless potential outcomes), ``feature_names``.

    Examples
    --------
    >>> from sklearn_iclr26.datasets import load_ihdp
    >>> X, y, t, tau = load_ihdp(surface="A", random_state=0, return_X_y=True)
    >>> X.shape, int(t.sum()), float(tau.mean())
    ((747, 25), 139, 4.0)
    """
    path = _sim_csv(data_home)
    with open(path) as f:
        header = f.readline().strip().split(",")
    raw = np.loadtxt(path, delimiter=",", skiprows=1)
    col = {name: i for i, name in enumerate(header)}
    keep = ~((raw[:, col["treat"]] == 1) & (raw[:, col["momwhite"]] == 0))
    raw = raw[keep]
    T = raw[:, col["treat"]]
    X = raw[:, [col[name] for name in _FEATURES]].copy()
    X[:, :6] = (X[:, :6] - X[:, :6].mean(axis=0)) / X[:, :6].std(axis=0)
    X[:, 13] += 1
    Xi = np.insert(X, 0, np.ones(len(X)), axis=1)  # intercept, as econml
    n, d = Xi.shape
    rng = check_random_state(random_state)
    if surface == "A":
        beta = rng.choice([0, 1, 2, 3, 4], size=d, p=[0.5, 0.2, 0.15, 0.1, 0.05])
        mu0 = Xi @ beta
        mu1 = mu0 + 4.0
    else:
        beta = rng.choice([0, 0.1, 0.2, 0.3, 0.4], size=d, p=[0.6, 0.1, 0.1, 0.1, 0.1])
        offset = np.concatenate((np.zeros((n, 1)), np.full((n, d - 1), 0.5)), axis=1)
        mu0 = np.exp((Xi + offset) @ beta)
        omega = np.mean((Xi @ beta - mu0)[T == 1]) - 4
        mu1 = Xi @ beta - omega
    y = np.where(T == 1, mu1, mu0) + rng.normal(0, 1, size=n)
    tau = mu1 - mu0
    if return_X_y:
        return X, y, T, tau
    return Bunch(
        data=X,
        target=y,
        treatment=T,
        tau=tau,
        mu0=mu0,
        mu1=mu1,
        feature_names=np.asarray(_FEATURES, dtype=object),
    )
