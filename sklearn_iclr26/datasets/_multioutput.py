"""Loader for the multi-target regression sets (Mulan ARFF files and bio/CASP)."""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import gzip
import os
from pathlib import Path

import numpy as np
from sklearn.utils import Bunch

from sklearn_iclr26.utils._sklearn_compat import validate_params

__all__ = ["MULTIOUTPUT_DATASETS", "get_data_home", "load_multioutput"]

#: name -> (file name, number of targets d); the targets are the last d columns.
MULTIOUTPUT_DATASETS = {
    "andro": ("andro.arff", 6),
    "atp1d": ("atp1d.arff", 6),
    "atp7d": ("atp7d.arff", 6),
    "bio": ("bio_casp.csv", 2),
    "edm": ("edm.arff", 2),
    "enb": ("enb.arff", 2),
    "jura": ("jura.arff", 3),
    "oes10": ("oes10.arff", 16),
    "oes97": ("oes97.arff", 16),
    "osales": ("osales.arff", 12),
    "rf1": ("rf1.arff", 8),
    "scm20d": ("scm20d.arff", 16),
    "scpf": ("scpf.arff", 3),
    "sf1": ("sf1.arff", 3),
    "sf2": ("sf2.arff", 3),
    "slump": ("slump.arff", 3),
    "wq": ("wq.arff", 14),
}

_PACKAGED = Path(__file__).parent / "data"
DATA_HOME_ENV = "SKLEARN_ICLR26_DATA"


@validate_params(
    {"data_home": [str, os.PathLike, None]}, prefer_skip_nested_validation=True
)
def get_data_home(data_home=None):
    """Folder searched for the larger data files.

    ``data_home`` if given, else the environment variable
    ``SKLEARN_ICLR26_DATA``, else ``~/sklearn_iclr26_data``.

    Parameters
    ----------
    data_home : str or path-like, default=None
        The folder; ``None`` uses the environment variable or the default.

    Returns
    -------
    path : pathlib.Path
        The folder (with ``~`` expanded); it may not exist.

    Examples
    --------
    >>> from sklearn_iclr26.datasets import get_data_home
    >>> get_data_home("/tmp/my_data").as_posix()
    '/tmp/my_data'
    """
    if data_home is None:
        data_home = os.environ.get(DATA_HOME_ENV, "~/sklearn_iclr26_data")
    return Path(data_home).expanduser()


def _open_text(path):
    """A text handle on ``path``, decompressing a ``.gz`` file."""
    if path.suffix == ".gz":
        return gzip.open(path, "rt", encoding="utf-8")
    return open(path, encoding="utf-8")


def _read_arff(path):
    from scipy.io import arff

    with _open_text(path) as handle:
        records, meta = arff.loadarff(handle)
    names = list(meta.names())
    columns = []
    for column in names:
        values = records[column]
        kind, categories = meta[column]
        if kind == "nominal":
            # integer codes in the order the header declares the categories;
            # missing values ("?") become NaN
            codes = {c.encode(): float(i) for i, c in enumerate(categories)}
            columns.append(np.array([codes.get(v, np.nan) for v in values]))
        elif values.dtype.kind in "fiu":
            columns.append(np.asarray(values, dtype=np.float64))
        else:
            raise ValueError(f"{path.name}: attribute {column!r} is not numeric.")
    return np.column_stack(columns), names


def _read_bio(path):
    with _open_text(path) as handle:
        header = [h.strip().strip('"') for h in handle.readline().split(",")]
    table = np.loadtxt(path, delimiter=",", skiprows=1, dtype=np.float64)
    # the CVQR paper's "bio" task: targets F7 and F9, features the rest
    targets = ["F7", "F9"]
    order = [h for h in header if h not in targets] + targets
    index = [header.index(h) for h in order]
    return table[:, index], order


@validate_params(
    {
        "name": [str],
        "data_home": [str, os.PathLike, None],
        "return_X_y": ["boolean"],
    },
    prefer_skip_nested_validation=True,
)
def load_multioutput(name, *, data_home=None, return_X_y=False):
    """Load a multi-target regression dataset.

    The Mulan convention: the targets are the last ``d`` attributes of the
    ARFF file. Small sets (andro, edm, enb, jura, scpf, sf1, sf2, slump, and
    wq gzipped) ship with the package; larger ones (rf1, scm20d, bio, atp1d,
    atp7d, oes97, oes10, osales) are read from ``data_home``, as ``.arff`` or
    ``.arff.gz`` (``.csv`` for bio). Nothing is downloaded.

    Parameters
    ----------
    name : str
        One of ``MULTIOUTPUT_DATASETS``.
    data_home : str or path-like, default=None
        Folder holding the data files; default the environment variable
        ``SKLEARN_ICLR26_DATA``, else ``~/sklearn_iclr26_data``. Searched
        before the packaged copies.
    return_X_y : bool, default=False
        Return ``(X, Y)`` instead of a Bunch.

    Returns
    -------
    data : :class:`~sklearn.utils.Bunch`
        ``data`` (n_samples, n_features), ``target`` (n_samples, d),
        ``feature_names``, ``target_names``, ``name``, ``filename``. Missing
        values (rf1 has some) are NaN; nominal attributes (sf1, sf2) are
        integer codes in the order the file declares the categories.

    Raises
    ------
    FileNotFoundError
        When the file is neither in ``data_home`` nor packaged; the message
        names the file and where it was looked for.

    Examples
    --------
    >>> from sklearn_iclr26.datasets import load_multioutput
    >>> X, Y = load_multioutput("enb", return_X_y=True)
    >>> X.shape, Y.shape
    ((768, 8), (768, 2))
    """
    if name not in MULTIOUTPUT_DATASETS:
        raise ValueError(
            f"Unknown multi-output dataset {name!r}. Available: "
            f"{', '.join(sorted(MULTIOUTPUT_DATASETS))}."
        )
    filename, n_targets = MULTIOUTPUT_DATASETS[name]
    home = get_data_home(data_home)
    candidates = [
        folder / f"{filename}{suffix}"
        for folder in (home, home / "multioutput", _PACKAGED)
        for suffix in ("", ".gz")
    ]
    path = next((p for p in candidates if p.is_file()), None)
    if path is None:
        raise FileNotFoundError(
            f"Dataset {name!r} needs the file {filename!r}, which was not found in "
            f"{home} (nor in its 'multioutput' subfolder) and is not shipped with "
            f"the package. Put {filename} there, or pass data_home= (or set "
            f"{DATA_HOME_ENV}) to the folder holding it."
        )
    if filename.endswith(".csv"):
        table, names = _read_bio(path)
    else:
        table, names = _read_arff(path)
    X, Y = table[:, :-n_targets], table[:, -n_targets:]
    if return_X_y:
        return X, Y
    return Bunch(
        data=X,
        target=Y,
        feature_names=np.asarray(names[:-n_targets], dtype=object),
        target_names=np.asarray(names[-n_targets:], dtype=object),
        name=name,
        filename=str(path),
    )
