"""SampleGradientMemorization flag size and ranking on keel tables (issue 40 item 4).

20 % symmetric flips, standardised features, 2 seeds; prints whether a weight-norm
peak was found, the flagged fraction with the precision / recall of the flags, the
AUROC of ``mislabel_scores_`` and the network's clean accuracy::

    OMP_NUM_THREADS=1 python benchmarks/csg_flags_check.py vehicle
    OMP_NUM_THREADS=1 python benchmarks/csg_flags_check.py contraceptive \
        '{"batch_size": 128}'
"""

import json
import sys
import warnings

import numpy as np
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler

from sklearn_iclr26.datasets import load_keel
from sklearn_iclr26.memorization import SampleGradientMemorization


def main():
    name = sys.argv[1]
    params = json.loads(sys.argv[2]) if len(sys.argv) > 2 else {}
    X, y = load_keel(name, return_X_y=True)
    if len(X) > 3000:
        X, _, y, _ = train_test_split(X, y, train_size=3000, stratify=y, random_state=0)
    X = StandardScaler().fit_transform(X)
    n_classes, n = len(np.unique(y)), len(y)
    for seed in range(2):
        rng = np.random.default_rng(seed)
        flipped = rng.random(n) < 0.2
        y_noisy = np.where(flipped, (y + rng.integers(1, n_classes, n)) % n_classes, y)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            est = SampleGradientMemorization(random_state=seed, **params)
            est.fit(X, y_noisy)
        mask = est.label_issues_
        auroc = roc_auc_score(flipped, est.mislabel_scores_)
        accuracy = np.mean(est.predict(X) == y)
        print(
            f"{name} seed {seed} {params} peak found {est.peak_found_} "
            f"(epoch {est.peak_iter_} of {est.n_iter_}): flagged {mask.mean():.3f}, "
            f"precision {flipped[mask].mean():.2f}, recall {mask[flipped].mean():.2f}, "
            f"AUROC {auroc:.3f}, clean accuracy {accuracy:.3f}"
        )


if __name__ == "__main__":
    main()
