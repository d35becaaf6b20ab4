"""Scorers of the optimal-transport family: none registered, on purpose.

:class:`~sklearn_iclr26.ot.TreeSlicedEmbedding` is a transformer: its L1
distances are tree-sliced Wasserstein distances between the rows'
distributions, and it is there to feed a downstream estimator (a
nearest-neighbour or kernel model over distributions). Its settings
(``n_trees``, ``n_lines``, ``splitting``, ``delta``) are tuned by what that
estimator is for, with the downstream scorer of the ``Pipeline`` (e.g.
``GridSearchCV(make_pipeline(TreeSlicedEmbedding(), KNeighborsClassifier()),
{"treeslicedembedding__n_trees": [...]})`` with ``accuracy``). A scorer of the
embedding alone would have to compare its distances with exact Wasserstein
distances, which cost what the embedding avoids; that comparison is a
benchmark (``benchmarks/bench_tsw.py``, against POT), not a tuning target.
The distances, the two-sample test and the geometric median are functions,
with nothing to cross-validate.
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

SCORERS = {}
