r"""dp_accounting's ``DpEvent`` trees, accounted with a proof.

:func:`from_dp_event` reads a tree of events of Google's ``dp_accounting`` and returns
the certified composition of :func:`symgdp.compose` (a
:class:`~symgdp.accounting.certified.Composition`: ``eps_at(delta)`` as a bracket,
``[mu_floor, mu_upper]``, ``certified``, ``neighbouring``).

The neighbouring relation changes the mechanism, not only its label.  dp_accounting's
events release :math:`\sum_i v_i` plus noise with :math:`\|v_i\| \le 1` (noise multipliers
relative to that clipping norm), so adding or removing a record moves the sum by at most 1
and replacing one moves it by at most 2.  Events and what they become:

* ``GaussianDpEvent(noise_multiplier=s)``: the Gaussian mechanism of sensitivity 1
  (add/remove, :math:`\mu = 1/s`) or 2 (replace-one, :math:`\mu = 2/s`), as
  dp_accounting's PLD accountant under ``ADD_OR_REMOVE_ONE`` / ``REPLACE_ONE``;
* ``LaplaceDpEvent(noise_multiplier=b)``: the Laplace mechanism, :math:`\varepsilon_0 =
  1/b`, under add/remove only (dp_accounting refuses ``REPLACE_ONE`` too);
* ``RandomizedResponseDpEvent(noise_parameter=p, num_buckets=k)``: report the true bucket
  with probability :math:`1 - p`, else a uniform one; its profile
  :math:`(1 - p + p/k - e^\varepsilon p/k)_+` is exact under replace-one, the only
  relation it is accounted under (as in dp_accounting);
* ``PoissonSampledDpEvent(q, GaussianDpEvent)``: the subsampled Gaussian with the exact
  dominating pair of the relation (:mod:`symgdp.training.engine`: the two directional
  pairs for add/remove, :math:`((1-q)N(0,\sigma^2) + qN(1,\sigma^2), (1-q)N(0,\sigma^2) +
  qN(-1,\sigma^2))` for replace-one); ``PoissonSampledDpEvent(q, LaplaceDpEvent)``: the
  subsampled Laplace profile (:meth:`Profile.subsample <symgdp.profile.Profile.subsample>`,
  an add/remove theorem), add/remove only;
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
from symgdp.contracts import Neighbouring
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
    """Append ``(step, count)`` for every private leaf of ``event`` under ``relation``."""
    from dp_accounting import dp_event as E

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
    for kind, leaf in _LEAVES:
        if isinstance(event, getattr(E, kind)):
            step = leaf(event, relation)
            if step is not None:
                out.append((step, count))
            return
    raise DomainError(f"cannot account a dp_accounting event of type "
                      f"{type(event).__name__}: {event!r}")


# -- leaves: each returns the step under the relation, None for a step without privacy
# cost, or raises DomainError naming the event and the relation it cannot account --------
def _sensitivity(relation: str) -> int:
    """The l2 distance of the sum ``sum_i v_i`` (``||v_i|| <= 1``) between neighbours."""
    return 2 if relation == "replace_one" else 1


def _noise(event: Any, what: str = "noise_multiplier") -> float:
    s = float(getattr(event, what))
    if not s > 0:
        raise DomainError(f"{type(event).__name__}({what}={s!r}) is not private")
    return s


def _gaussian(event: Any, relation: str) -> Any:
    from symgdp import mechanisms

    s = _noise(event)
    # mu = sensitivity / s: 1/s for add/remove, 2/s for replace-one
    return mechanisms.gaussian(sigma=sympy.Rational(s), sensitivity=_sensitivity(relation))


def _laplace(event: Any, relation: str) -> Any:
    from symgdp import mechanisms

    if relation != "add_remove":
        raise DomainError(f"LaplaceDpEvent is accounted under add/remove only (as in "
                          f"dp_accounting), not under {relation}; pass "
                          "neighbouring='add_remove'")
    return mechanisms.laplace(b=sympy.Rational(_noise(event)))


def _randomized_response(event: Any, relation: str) -> Any:
    if relation != "replace_one":
        raise DomainError(f"RandomizedResponseDpEvent is accounted under replace-one only "
                          f"(as in dp_accounting), not under {relation}; pass "
                          "neighbouring='replace_one'")
    p, k = float(event.noise_parameter), event.num_buckets
    if isinstance(k, bool) or not isinstance(k, int) or k < 1 or not 0 <= p <= 1:
        raise DomainError(f"invalid RandomizedResponseDpEvent(noise_parameter={p!r}, "
                          f"num_buckets={k!r})")
    if k == 1 or p == 1:
        return None  # the output does not depend on the input
    if p == 0:
        raise DomainError("RandomizedResponseDpEvent(noise_parameter=0) is not private")
    return _rr_profile(p, k)


def _poisson_sampled(event: Any, relation: str) -> Any:
    """Poisson subsampling of a Gaussian (add/remove or replace-one, the dominating pairs
    of :mod:`symgdp.training.engine`) or of a Laplace (add/remove only)."""
    from dp_accounting import dp_event as E

    from symgdp import mechanisms

    q = float(event.sampling_probability)
    if not 0 <= q <= 1:
        raise DomainError(f"PoissonSampledDpEvent sampling_probability={q!r} is not in "
                          "[0, 1]")
    inner = event.event
    if isinstance(inner, E.GaussianDpEvent):
        s = _noise(inner)
        return None if q == 0 else SubsampledGaussian(q, s, neighbouring=relation)
    if isinstance(inner, E.LaplaceDpEvent):
        if relation != "add_remove":
            raise DomainError(f"PoissonSampledDpEvent of a LaplaceDpEvent is accounted under "
                              f"add/remove only (as in dp_accounting), not under {relation}; "
                              "pass neighbouring='add_remove'")
        prof = mechanisms.laplace(b=sympy.Rational(_noise(inner)))
        if q == 0:
            return None
        return prof if q == 1 else prof.subsample(sympy.Rational(q))
    raise DomainError(f"PoissonSampledDpEvent of {type(inner).__name__} is not "
                      "supported (Gaussian and Laplace are)")


_LEAVES = (("GaussianDpEvent", _gaussian), ("LaplaceDpEvent", _laplace),
           ("RandomizedResponseDpEvent", _randomized_response),
           ("PoissonSampledDpEvent", _poisson_sampled))


def from_dp_event(event: Any, *, neighbouring: Neighbouring = "add_remove", **kw: Any) -> Any:
    r"""The certified composition of a dp_accounting ``DpEvent`` tree under the
    neighbouring relation ``neighbouring`` (``"add_remove"`` or ``"replace_one"``), which
    decides the mechanism of each event (module notes).

    Extra keywords go to :func:`symgdp.compose` (``failure_prob``, ``target_width``,
    ``discretization``, ...).

    Example:
        >>> import dp_accounting as dpa
        >>> c = from_dp_event(dpa.SelfComposedDpEvent(dpa.GaussianDpEvent(2.0), 4))
        >>> c.mu_floor <= 1.0 <= c.mu_upper, c.neighbouring          # 4-fold 0.5-GDP
        (True, 'add_remove')
        >>> r = from_dp_event(dpa.GaussianDpEvent(1.0), neighbouring="replace_one")
        >>> r.mu_floor <= 2.0 <= r.mu_upper, r.neighbouring    # sensitivity 2: mu = 2/s
        (True, 'replace_one')
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
