r"""dp_accounting's ``DpEvent`` trees, accounted with a proof.

:func:`from_dp_event` reads a tree of events of Google's ``dp_accounting`` and returns
the certified composition of :func:`symgdp.compose` (a
:class:`~symgdp.accounting.certified.Composition`: ``eps_at(delta)`` as a bracket,
``[mu_floor, mu_upper]``, ``certified``, ``neighbouring``).

Events and what they become (sensitivity 1, as in dp_accounting):

* ``GaussianDpEvent(noise_multiplier=s)``: the Gaussian mechanism, :math:`\mu = 1/s`;
* ``LaplaceDpEvent(noise_multiplier=b)``: the Laplace mechanism, :math:`\varepsilon_0 =
  1/b` (add/remove only, as in dp_accounting);
* ``RandomizedResponseDpEvent(noise_parameter=p, num_buckets=k)``: report the true bucket
  with probability :math:`1 - p`, else a uniform one; its profile
  :math:`(1 - p + p/k - e^\varepsilon p/k)_+` is exact (replace-one only, as in
  dp_accounting);
* ``PoissonSampledDpEvent(q, GaussianDpEvent)``: the subsampled Gaussian with its exact
  directional loss distributions (:mod:`symgdp.training.dpsgd`); ``PoissonSampledDpEvent(q,
  LaplaceDpEvent)``: the subsampled Laplace profile (:meth:`Profile.subsample
  <symgdp.profile.Profile.subsample>`);
* ``SelfComposedDpEvent``, ``ComposedDpEvent``: counts and concatenation;
  ``NoOpDpEvent``: nothing.

A tree whose every private step is DP-SGD's (Poisson-sampled Gaussians, or fixed-size
batches without replacement under replace-one) is answered by the DP-SGD engine instead
(:mod:`symgdp.training.event_route`: the bracket of :func:`symgdp.dpsgd`).

Any other event (or a non-private one) is a :class:`~symgdp.errors.DomainError` naming
it: a composition is never reported for an event that was not accounted.
"""

from __future__ import annotations

import math
from typing import Any

import sympy

from symgdp.accounting.certified import NEIGHBOURING, EpsBracket, SubsampledGaussian, compose
from symgdp.errors import DomainError

__all__ = ["from_dp_event"]


def _rr_profile(p: float, k: int) -> Any:
    from symgdp.profile import Profile
    from symgdp.symbolic.symbols import eps

    a = sympy.Rational(1) - sympy.Rational(p) + sympy.Rational(p) / k
    b = sympy.Rational(p) / k
    e0 = math.log(float(a / b))
    return Profile(sympy.Max(0, a - b * sympy.exp(eps)),
                   name=f"RR(p={p:g}, k={k})", kinks=(e0,))


def _walk(event: Any, count: int, relation: str, out: list[tuple[Any, int]]) -> None:
    from dp_accounting import dp_event as E

    from symgdp import mechanisms

    name = type(event).__name__
    if isinstance(event, E.NoOpDpEvent):
        return
    if isinstance(event, E.SelfComposedDpEvent):
        c = event.count
        if isinstance(c, bool) or not isinstance(c, int) or c < 0:
            raise DomainError(f"SelfComposedDpEvent count must be a non-negative integer, "
                              f"got {c!r}")
        if c:
            _walk(event.event, count * c, relation, out)
        return
    if isinstance(event, E.ComposedDpEvent):
        for e in event.events:
            _walk(e, count, relation, out)
        return
    if isinstance(event, E.GaussianDpEvent):
        s = float(event.noise_multiplier)
        if not s > 0:
            raise DomainError(f"GaussianDpEvent(noise_multiplier={s!r}) is not private")
        out.append((mechanisms.gaussian(sigma=sympy.Rational(s)), count))
        return
    if isinstance(event, E.LaplaceDpEvent):
        b = float(event.noise_multiplier)
        if relation != "add_remove":
            raise DomainError("LaplaceDpEvent is accounted under add/remove only "
                              "(as in dp_accounting); pass neighbouring='add_remove'")
        if not b > 0:
            raise DomainError(f"LaplaceDpEvent(noise_multiplier={b!r}) is not private")
        out.append((mechanisms.laplace(b=sympy.Rational(b)), count))
        return
    if isinstance(event, E.RandomizedResponseDpEvent):
        if relation != "replace_one":
            raise DomainError("RandomizedResponseDpEvent is accounted under replace-one "
                              "only (as in dp_accounting); pass neighbouring='replace_one'")
        p, k = float(event.noise_parameter), event.num_buckets
        if isinstance(k, bool) or not isinstance(k, int) or k < 1 or not 0 <= p <= 1:
            raise DomainError(f"invalid RandomizedResponseDpEvent(noise_parameter={p!r}, "
                              f"num_buckets={k!r})")
        if k == 1 or p == 1:
            return  # the output does not depend on the input
        if p == 0:
            raise DomainError("RandomizedResponseDpEvent(noise_parameter=0) is not private")
        out.append((_rr_profile(p, k), count))
        return
    if isinstance(event, E.PoissonSampledDpEvent):
        q = float(event.sampling_probability)
        if relation != "add_remove":
            raise DomainError("PoissonSampledDpEvent is accounted under add/remove only; "
                              "pass neighbouring='add_remove'")
        if not 0 <= q <= 1:
            raise DomainError(f"PoissonSampledDpEvent sampling_probability={q!r} is not in "
                              "[0, 1]")
        if q == 0:
            return
        inner = event.event
        if isinstance(inner, E.GaussianDpEvent):
            s = float(inner.noise_multiplier)
            if not s > 0:
                raise DomainError(f"GaussianDpEvent(noise_multiplier={s!r}) is not private")
            out.append((SubsampledGaussian(q, s), count))
            return
        if isinstance(inner, E.LaplaceDpEvent):
            b = float(inner.noise_multiplier)
            if not b > 0:
                raise DomainError(f"LaplaceDpEvent(noise_multiplier={b!r}) is not private")
            prof = mechanisms.laplace(b=sympy.Rational(b))
            out.append((prof if q == 1 else prof.subsample(sympy.Rational(q)), count))
            return
        raise DomainError(f"PoissonSampledDpEvent of {type(inner).__name__} is not "
                          "supported (Gaussian and Laplace are)")
    raise DomainError(f"cannot account a dp_accounting event of type {name}: {event!r}")


def from_dp_event(event: Any, *, neighbouring: str = "add_remove", **kw: Any) -> Any:
    r"""The certified composition of a dp_accounting ``DpEvent`` tree (module notes).

    Extra keywords go to :func:`symgdp.compose` (``failure_prob``, ``target_width``,
    ``discretization``, ...).

    Example:
        >>> import dp_accounting as dpa
        >>> c = from_dp_event(dpa.SelfComposedDpEvent(dpa.GaussianDpEvent(2.0), 4))
        >>> c.mu_floor <= 1.0 <= c.mu_upper, c.neighbouring          # 4-fold 0.5-GDP
        (True, 'add_remove')
    """
    if neighbouring not in NEIGHBOURING:
        raise DomainError(f"neighbouring must be one of {NEIGHBOURING}, got {neighbouring!r}")
    try:
        from dp_accounting import dp_event as E
    except ImportError as exc:  # pragma: no cover - dp_accounting is a core dependency
        raise ImportError("from_dp_event needs dp_accounting") from exc
    if not isinstance(event, E.DpEvent):
        raise DomainError(f"expected a dp_accounting DpEvent, got {type(event).__name__}: "
                          f"{event!r}")
    from symgdp.training.event_route import dpsgd_for_event  # DP-SGD-shaped trees

    routed = dpsgd_for_event(event, neighbouring, EpsBracket, **kw)
    if routed is not None:
        return routed
    items: list[tuple[Any, int]] = []
    _walk(event, 1, neighbouring, items)
    if not items:
        raise DomainError(f"the event {event!r} has no private step to account")
    return compose(*items, neighbouring=neighbouring, **kw)
