"""Shared fixtures: where the multi-output data of ``../shared/data`` lives, and
a dask cluster of worker processes."""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import os
from pathlib import Path

import pytest

_REPO = Path(__file__).resolve().parent.parent


def _find_multioutput_home():
    candidates = []
    if os.environ.get("SKLEARN_ICLR26_DATA"):
        home = Path(os.environ["SKLEARN_ICLR26_DATA"])
        candidates += [home / "multioutput", home]
    candidates.append(_REPO.parent / "shared" / "data" / "multioutput")
    for candidate in candidates:
        if (candidate / "rf1.arff").is_file():
            return candidate
    return None


@pytest.fixture(scope="session")
def multioutput_data_home():
    """Folder with the larger multi-output files (rf1, scm20d, bio, wq...)."""
    home = _find_multioutput_home()
    if home is None:
        pytest.skip(
            "the multi-output data folder (../shared/data/multioutput or "
            "$SKLEARN_ICLR26_DATA) is not present"
        )
    return home


@pytest.fixture(scope="module")
def client(request):
    """A dask ``Client`` on a ``LocalCluster`` of two single-threaded worker processes.

    The requesting test module's functions are pickled by value: pytest's
    importlib mode leaves the module unimportable by name on the workers.
    """
    distributed = pytest.importorskip("distributed")
    cloudpickle = pytest.importorskip("cloudpickle")
    cloudpickle.register_pickle_by_value(request.module)
    cluster = distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
    )
    dask_client = distributed.Client(cluster)
    yield dask_client
    dask_client.close()
    cluster.close()
    cloudpickle.unregister_pickle_by_value(request.module)
