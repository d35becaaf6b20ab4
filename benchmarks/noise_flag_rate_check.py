"""NDX flagged set and noise_rate_ against cleanlab on generated many-class data.

One-off check of issue 40 item 1 (doc/label_noise.rst, "What noise_rate_ is").
make_classification (n_features=20, n_informative=15, class_sep=2), 20 % flips
(pairwise c -> c+1 or symmetric), LogisticRegression or LightGBM::

    OMP_NUM_THREADS=1 python benchmarks/noise_flag_rate_check.py \
        N_CLASSES {pair,sym} N {lr,lgbm}
"""

import sys
import time
import warnings

import numpy as np
from cleanlab.filter import find_label_issues as cl_find
from lightgbm import LGBMClassifier
from sklearn.datasets import make_classification
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import StratifiedKFold, cross_val_predict

from sklearn_iclr26.label_noise import InstanceNoiseCorrector
from sklearn_iclr26.label_noise._label_issues import cleanlab_flip_rate

K = int(sys.argv[1])
kind = sys.argv[2]
n = int(sys.argv[3])
est = sys.argv[4] if len(sys.argv) > 4 else "lr"
rng = np.random.default_rng(0)
X, y = make_classification(
    n_samples=n,
    n_features=20,
    n_informative=15,
    n_classes=K,
    n_clusters_per_class=1,
    class_sep=2.0,
    random_state=0,
)
flip = rng.random(n) < 0.2
if kind == "pair":
    yn = np.where(flip, (y + 1) % K, y)
else:
    yn = np.where(flip, (y + rng.integers(1, K, n)) % K, y)
clf = (
    LogisticRegression(max_iter=2000)
    if est == "lr"
    else LGBMClassifier(n_jobs=1, verbose=-1, n_estimators=100)
)
t = time.time()
oof = cross_val_predict(
    clf,
    X,
    yn,
    cv=StratifiedKFold(5, shuffle=True, random_state=0),
    method="predict_proba",
)
m = cl_find(yn, oof)


def pr(mask):
    return (flip[mask].mean() if mask.sum() else np.nan, mask[flip].mean(), mask.sum())


print(
    "cleanlab",
    pr(m),
    "oof disagree",
    (oof.argmax(1) != yn).mean(),
    "cl rate",
    cleanlab_flip_rate(yn, oof),
    time.time() - t,
)
t = time.time()
with warnings.catch_warnings(record=True) as w:
    warnings.simplefilter("always")
    inc = InstanceNoiseCorrector(None if est == "lgbm" else clf, random_state=0).fit(
        X, yn
    )
print(
    "ndx",
    pr(inc.label_issues_),
    "rate",
    inc.noise_rate_,
    "true",
    flip.mean(),
    time.time() - t,
    [str(x.message)[:80] for x in w],
)
p = inc._issue_proba
print(
    "in-sample disagree",
    (p.argmax(1) != yn).mean(),
    "in-sample CJ rate",
    cleanlab_flip_rate(yn, p),
)
s = inc.mislabel_scores_
k = round(cleanlab_flip_rate(yn, p) * n)
top = np.zeros(n, bool)
top[np.argsort(-s, kind="stable")[:k]] = True
print("top-k by in-sample CJ rate", pr(top))
from sklearn.metrics import roc_auc_score

print(
    "auroc ndx",
    roc_auc_score(flip, s),
    "cl",
    roc_auc_score(flip, 1 - oof[np.arange(n), yn]),
)
