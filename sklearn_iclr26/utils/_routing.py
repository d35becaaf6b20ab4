"""Metadata routing of the meta-estimators' ``fit`` parameters (private).

scikit-learn's pattern (``StackingClassifier``, ``CalibratedClassifierCV``):
``get_metadata_routing`` returns a ``MetadataRouter`` naming each inner
estimator, with ``fit`` mapped to its ``fit``; ``fit(X, y, **fit_params)``
then hands each inner estimator what it requested when
``sklearn.set_config(enable_metadata_routing=True)``, and, with routing
disabled (the default), every parameter to every inner estimator, as before.
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

from sklearn.utils.metadata_routing import (
    MetadataRouter,
    MethodMapping,
    process_routing,
)

from sklearn_iclr26.utils._sklearn_compat import _routing_enabled

__all__ = ["fit_router", "route_fit_params"]


def fit_router(owner, children, *, self_request=False):
    """A ``MetadataRouter`` mapping ``owner.fit`` to each child's ``fit``.

    Parameters
    ----------
    owner : estimator
        The meta-estimator.
    children : dict
        ``{name: estimator}``; ``None`` entries are skipped.
    self_request : bool, default=False
        Whether ``owner`` consumes metadata itself (its own requests are added).

    Returns
    -------
    router : MetadataRouter
    """
    router = MetadataRouter(owner=owner)
    if self_request:
        router.add_self_request(owner)
    for name, child in children.items():
        if child is not None:
            router.add(
                **{name: child},
                method_mapping=MethodMapping().add(caller="fit", callee="fit"),
            )
    return router


def route_fit_params(owner, fit_params, names):
    """``{name: params}``: the ``fit`` parameters each child receives.

    With routing enabled, what each child requested (``process_routing``
    raises for a parameter no child requested); otherwise every parameter
    goes to every child.

    Parameters
    ----------
    owner : estimator
        The meta-estimator (its ``get_metadata_routing`` names ``names``).
    fit_params : dict
        The metadata passed to ``owner.fit``.
    names : iterable of str
        The children to return parameters for.

    Returns
    -------
    params : dict of dict
    """
    names = list(names)
    if not fit_params:
        return {name: {} for name in names}
    if _routing_enabled():
        routed = process_routing(owner, "fit", **fit_params)
        return {
            name: dict(routed[name].fit) if name in routed else {} for name in names
        }
    return {name: dict(fit_params) for name in names}
