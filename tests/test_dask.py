"""The two dask paths (dask is the optional extra ``[scale]``, installed by
``make test``) users take, on an in-process ``LocalCluster``.

(a) ``GridSearchCV`` over the toolkit's estimators under
``joblib.parallel_backend("dask")`` gives the same CV results as the
sequential run; (b) predictions over a ``dask.array`` / ``dask.dataframe`` by
blocks (``map_blocks`` / ``map_partitions`` with a fitted estimator) equal the
in-memory predictions. ``LocalCluster(processes=False)``: no network beyond the
process itself.
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import joblib
import numpy as np
import pandas as pd
import pytest
from sklearn.datasets import load_breast_cancer, load_diabetes
from sklearn.model_selection import GridSearchCV, KFold, cross_validate
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from sklearn_iclr26.neural_network import TorchMLPClassifier, TorchMLPRegressor

# the optional extra: skip (not error at collection) where it is missing;
# dask.dataframe also needs pyarrow, so only its test skips without it
da = pytest.importorskip("dask.array")
distributed = pytest.importorskip("distributed")


@pytest.fixture(scope="module")
def client():
    cluster = distributed.LocalCluster(
        processes=False, n_workers=2, threads_per_worker=1, dashboard_address=None
    )
    client = distributed.Client(cluster)
    yield client
    client.close()
    cluster.close()


def _grid():
    pipe = make_pipeline(
        StandardScaler(), TorchMLPClassifier(max_iter=20, random_state=0)
    )
    return GridSearchCV(
        pipe,
        {"torchmlpclassifier__hidden_layer_sizes": [(4,), (16,)]},
        cv=KFold(3, shuffle=True, random_state=0),
    )


def test_grid_search_under_dask_equals_sequential(client):
    X, y = load_breast_cancer(return_X_y=True)
    X, y = X[:240], y[:240]
    sequential = _grid().fit(X, y)
    with joblib.parallel_backend("dask"):
        parallel = _grid().fit(X, y)
    np.testing.assert_array_equal(
        sequential.cv_results_["mean_test_score"],
        parallel.cv_results_["mean_test_score"],
    )
    assert sequential.best_params_ == parallel.best_params_
    np.testing.assert_array_equal(sequential.predict(X), parallel.predict(X))


def test_cross_validate_under_dask_equals_sequential(client):
    X, y = load_diabetes(return_X_y=True)
    est = make_pipeline(
        StandardScaler(), TorchMLPRegressor(max_iter=20, random_state=0)
    )
    cv = KFold(3, shuffle=True, random_state=0)
    sequential = cross_validate(est, X, y, cv=cv)
    with joblib.parallel_backend("dask"):
        parallel = cross_validate(est, X, y, cv=cv, n_jobs=-1)
    np.testing.assert_array_equal(sequential["test_score"], parallel["test_score"])


def test_block_predictions_over_dask_array_and_dataframe(client):
    try:  # a plain ImportError (not ModuleNotFoundError) without pyarrow
        import dask.dataframe as dd
    except ImportError as exc:
        pytest.skip(f"dask.dataframe is not usable: {exc}")
    X, y = load_breast_cancer(return_X_y=True)
    est = make_pipeline(
        StandardScaler(), TorchMLPClassifier(max_iter=20, random_state=0)
    )
    est.fit(X, y)
    expected = est.predict_proba(X)

    X_dask = da.from_array(X, chunks=(100, X.shape[1]))
    proba = X_dask.map_blocks(
        est.predict_proba, dtype=np.float64, chunks=(100, 2)
    ).compute()
    np.testing.assert_allclose(proba, expected, rtol=1e-12)

    frame = pd.DataFrame(X, columns=[f"f{i}" for i in range(X.shape[1])])
    est_df = make_pipeline(
        StandardScaler(), TorchMLPClassifier(max_iter=20, random_state=0)
    ).fit(frame, y)
    ddf = dd.from_pandas(frame, npartitions=4)
    labels = ddf.map_partitions(
        lambda part: pd.Series(est_df.predict(part), index=part.index),
        meta=pd.Series(dtype=np.int64),
    ).compute()
    np.testing.assert_array_equal(labels.to_numpy(), est_df.predict(frame))


def test_grid_search_with_threads_equals_sequential():
    # torch's global RNG is process-wide: threaded fits must not draw from each
    # other's seeds (utils/_torch.py serialises the seeded blocks)
    X, y = load_breast_cancer(return_X_y=True)
    X, y = X[:240], y[:240]
    sequential = _grid().fit(X, y)
    with joblib.parallel_backend("threading", n_jobs=2):
        threaded = _grid().set_params(n_jobs=2).fit(X, y)
    np.testing.assert_array_equal(
        sequential.cv_results_["mean_test_score"],
        threaded.cv_results_["mean_test_score"],
    )


def test_sparse_prediction_sets_by_dask_blocks(client):
    import scipy.sparse as sp
    from dask import compute, delayed

    from sklearn_iclr26.conformal import SOCOPClassifier

    X, y = load_breast_cancer(return_X_y=True)
    clf = SOCOPClassifier(random_state=0).fit(X[:400], y[:400])
    expected = clf.predict_set(X, output="sparse")
    X_dask = da.from_array(X, chunks=(100, X.shape[1]))
    blocks = X_dask.to_delayed().ravel()
    sets = sp.vstack(
        compute(*[delayed(clf.predict_set)(b, output="sparse") for b in blocks])
    )
    assert sp.issparse(sets)
    np.testing.assert_array_equal(sets.toarray(), expected.toarray())
    np.testing.assert_array_equal(sets.toarray(), clf.predict_set(X))
