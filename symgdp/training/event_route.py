r"""dp_accounting's DP-SGD-shaped events, answered by the DP-SGD engine.

:func:`dpsgd_for_event` recognises a ``DpEvent`` tree whose every private step is a
subsampled Gaussian of DP-SGD and returns the certified :func:`symgdp.dpsgd` result
behind a :class:`RoutedDPSGD` (the interface of :func:`symgdp.from_dp_event`'s
compositions: ``eps_at(delta)`` as a bracket, ``[mu_floor, mu_upper]``, ``neighbouring``),
or ``None`` when the tree is not DP-SGD-shaped (then the general route answers, or
refuses the event by name).

Recognised (sensitivity 1 as in dp_accounting; ``NoOpDpEvent`` ignored;
``SelfComposedDpEvent`` and ``ComposedDpEvent`` flattened, the phases in order):

* ``PoissonSampledDpEvent(q, GaussianDpEvent(s))``: one step of Poisson DP-SGD with
  rate ``q`` and noise multiplier ``s``, under either relation (replace-one: the pair of
  dp_accounting's ``REPLACE`` adjacency, :mod:`symgdp.training.engine`); a sequence of
  them is a schedule;
* ``MixtureOfGaussiansDpEvent(sd, [0, u, ..., ku], weights)`` with binomial weights
  :math:`\mathrm{Bin}(k, q)` (to 1e-12), the same mixture at every step, under
  add/remove: user-level DP-SGD with :math:`k` examples per user and :math:`\sigma =
  sd/u` (:mod:`symgdp.training.userlevel`), certified with the event's *own* weights
  (normalised exactly), so nothing is rounded into the mechanism; other mixtures, mixed
  trees and replace-one go to the general route, which refuses them by name;
* ``SampledWithoutReplacementDpEvent(n, b, GaussianDpEvent(s))``, all steps alike, under
  replace-one: ``sampling="without_replacement"`` with :math:`\sigma = 2s`
  (dp_accounting's noise multiplier is over the replace-one sensitivity
  :math:`\|c - c'\|`, ours over the clipping norm; :mod:`symgdp.training.sampling`).

The keywords of :func:`symgdp.from_dp_event` that the engine takes (``failure_prob``,
``tol``, ``discretization`` or ``value_discretization_interval``, ``delta``) are passed
on; any other keyword sends the event to the general route.
"""

from __future__ import annotations

import math
from typing import Any

from symgdp.contracts import Neighbouring
from symgdp.training.dpsgd import DPSGDResult, dpsgd

__all__ = ["dpsgd_for_event", "RoutedDPSGD"]

_KEYS = {"failure_prob": "failure_prob", "tol": "tol", "delta": "delta",
         "discretization": "value_discretization_interval",
         "value_discretization_interval": "value_discretization_interval"}


class _NotShaped(Exception):
    """The tree has a step that is not DP-SGD's."""


def _flatten(event: Any, count: int, out: list[tuple[Any, ...]]) -> None:
    from dp_accounting import dp_event as E

    if isinstance(event, E.NoOpDpEvent):
        return
    if isinstance(event, E.SelfComposedDpEvent):
        c = event.count
        if isinstance(c, bool) or not isinstance(c, int) or c < 0:
            raise _NotShaped  # the general route names the bad count
        if c:
            _flatten(event.event, count * c, out)
        return
    if isinstance(event, E.ComposedDpEvent):
        for e in event.events:
            _flatten(e, count, out)
        return
    if isinstance(event, E.MixtureOfGaussiansDpEvent):
        try:
            sd = float(event.standard_deviation)
            sens = tuple(float(c) for c in event.sensitivities)
            probs = tuple(float(p) for p in event.sampling_probs)
        except (TypeError, ValueError):
            raise _NotShaped from None
        if not (math.isfinite(sd) and sd > 0) or len(sens) != len(probs):
            raise _NotShaped
        out.append(("mog", sd, sens, probs, count))
        return
    inner = getattr(event, "event", None)
    if not isinstance(inner, E.GaussianDpEvent):
        raise _NotShaped
    s = float(inner.noise_multiplier)
    if not (math.isfinite(s) and s > 0):
        raise _NotShaped
    if isinstance(event, E.PoissonSampledDpEvent):
        q = float(event.sampling_probability)
        if not (0 <= q <= 1):
            raise _NotShaped
        if q > 0:
            out.append(("poisson", q, s, count))
        return
    if isinstance(event, E.SampledWithoutReplacementDpEvent):
        n, b = event.source_dataset_size, event.sample_size
        if not all(isinstance(v, int) and not isinstance(v, bool) for v in (n, b)) \
                or not 0 < b <= n:
            raise _NotShaped
        out.append(("wor", n, b, s, count))
        return
    raise _NotShaped


def dpsgd_for_event(event: Any, neighbouring: Neighbouring = "add_remove",
                    bracket: Any = tuple, **kw: Any) -> RoutedDPSGD | None:
    r"""The DP-SGD engine's answer for a DP-SGD-shaped event (module notes), or ``None``.

    ``bracket`` builds what ``eps_at`` returns from ``(lower, upper)`` (the caller's
    bracket type; a tuple by default).

    Example:
        >>> import dp_accounting as dpa
        >>> step = dpa.PoissonSampledDpEvent(0.1, dpa.GaussianDpEvent(2.0))
        >>> ev = dpa.SelfComposedDpEvent(step, 5)
        >>> r = dpsgd_for_event(ev, tol=1e-3, discretization=1e-3)
        >>> r.result.schedule, r.neighbouring
        (((0.1, 2.0, 5),), 'add_remove')
        >>> dpsgd_for_event(dpa.GaussianDpEvent(1.0)) is None
        True
    """
    if any(k not in _KEYS for k in kw):
        return None
    steps: list[tuple[Any, ...]] = []
    try:
        _flatten(event, 1, steps)
    except _NotShaped:
        return None
    if not steps:
        return None
    opts = {_KEYS[k]: v for k, v in kw.items()}
    kinds = {s[0] for s in steps}
    if kinds == {"poisson"}:
        phases: list[list[Any]] = []
        for _, q, s, c in steps:
            if phases and phases[-1][0] == q and phases[-1][1] == s:
                phases[-1][2] += c
            else:
                phases.append([q, s, c])
        res = dpsgd(schedule=[tuple(p) for p in phases], neighbouring=neighbouring, **opts)
        return RoutedDPSGD(res, bracket)
    if kinds == {"mog"}:
        return _mixture_route(steps, neighbouring, opts, bracket)
    if kinds == {"wor"} and len({s[1:4] for s in steps}) == 1 \
            and neighbouring == "replace_one":
        _, n, b, s, _ = steps[0]
        total = sum(st[4] for st in steps)
        res = dpsgd(sampling="without_replacement", dataset_size=n, batch_size=b,
                    sigma=2.0 * s, steps=total, neighbouring="replace_one", **opts)
        return RoutedDPSGD(res, bracket)
    return None


def _binomial_q(sens: tuple[float, ...], probs: tuple[float, ...]) -> tuple[int, float] | None:
    """``(k, q)`` when the sensitivities are exactly ``0, u, 2u, ..., ku`` (``u > 0``) and
    the weights are ``Bin(k, q)``'s to 1e-12 (the label; the engine uses the weights
    themselves), else ``None``."""
    from symgdp.training.userlevel import binomial_weights

    k = len(sens) - 1
    if k < 1 or not sens[1] > 0 or any(c != j * sens[1] for j, c in enumerate(sens)):
        return None
    if not all(math.isfinite(p) and p >= 0 for p in probs) \
            or abs(math.fsum(probs) - 1.0) > 1e-9:
        return None
    q = math.fsum(j * p for j, p in enumerate(probs)) / (k * math.fsum(probs))
    if not 0 < q <= 1:
        return None
    b = binomial_weights(k, min(q, 1.0))
    if max(abs(p - float(v)) for p, v in zip(probs, b, strict=True)) > 1e-12:
        return None
    return k, q


def _mixture_route(steps: list[tuple[Any, ...]], neighbouring: str, opts: dict[str, Any],
                   bracket: Any) -> RoutedDPSGD | None:
    """Mixture-of-Gaussians events of user-level DP-SGD (sensitivities 0..k, binomial
    weights, the same mixture at every step) under add/remove, to the user-level engine
    with the events' own weights; ``None`` (the general route, which refuses the event by
    name) otherwise."""
    if neighbouring != "add_remove" or len({s[2:4] for s in steps}) != 1:
        return None
    _, _, sens, probs, _ = steps[0]
    shape = _binomial_q(sens, probs)
    if shape is None:
        return None
    from fractions import Fraction

    k, q = shape
    u = sens[1]
    phases: list[list[Any]] = []
    for _, sd, _, _, c in steps:
        if Fraction(sd) / Fraction(u) != Fraction(sd / u):
            return None  # sigma = sd/u is not a float: a rounded sigma is another mechanism
        if phases and phases[-1][1] == sd / u:
            phases[-1][2] += c
        else:
            phases.append([q, sd / u, c])
    res = dpsgd(schedule=[tuple(p) for p in phases], examples_per_user=k,
                neighbouring="add_remove", _mixture_weights=probs, **opts)
    return RoutedDPSGD(res, bracket)


class RoutedDPSGD:
    r"""A :class:`~symgdp.training.dpsgd.DPSGDResult` with the interface of
    :func:`symgdp.from_dp_event`'s compositions.

    Attributes:
        result: the DP-SGD result itself (its ``mu_floor``, ``mu_upper``, ``eps_h``,
            ``failure_prob``, ``neighbouring``, ``sampling`` are this object's).
    """

    certified = True

    def __init__(self, result: DPSGDResult, bracket: Any = tuple) -> None:
        self.result = result
        self._bracket = bracket

    def __getattr__(self, name: str) -> Any:
        if name in ("mu_floor", "mu_upper", "eps_h", "failure_prob", "neighbouring",
                    "sampling", "measurement", "width", "delta_lower", "tradeoff"):
            return getattr(self.result, name)
        raise AttributeError(name)

    @property
    def mu_lower(self) -> float:
        """Lower end of the measured bracket of the upper profile (``surrogate_lower``)."""
        return self.result.surrogate_lower

    @property
    def discretization(self) -> float:
        return self.result.discretization

    @property
    def notes(self) -> tuple[str, ...]:
        return (f"routed to the DP-SGD engine ({self.result.sampling} sampling)",)

    def __float__(self) -> float:
        return float(self.result.mu_upper)

    def __call__(self, eps: Any) -> Any:
        return self.result.profile(eps)

    def log_delta(self, eps: Any) -> Any:
        return self.result.profile.log_delta(eps)

    def lower_delta(self, eps: Any) -> Any:
        """A proved lower bound on the mechanism's :math:`\\delta(\\varepsilon)`."""
        return self.result.delta_lower(eps)

    def eps_at(self, delta: float) -> Any:
        r"""The smallest :math:`\varepsilon` with :math:`(\varepsilon, \delta)`-DP as a
        bracket ``(lower, upper)``: ``upper`` from the certified upper profile (rounded
        up), ``lower`` where the proved lower profile falls to ``delta``."""
        from symgdp.errors import DomainError
        from symgdp.pld.curves import first_eps_below

        d = float(delta)
        if not (0 < d <= 1):
            raise DomainError(f"delta must lie in (0, 1], got {delta!r}")
        up = first_eps_below(self.result.profile, math.log(d), 1e-12)
        lo = 0.0
        if self.result.tight and float(self.lower_delta(0.0)) > d:
            a, b = 0.0, max(up, 1e-12)
            if float(self.lower_delta(b)) > d:
                return self._bracket((b, up)) if self._bracket is tuple \
                    else self._bracket(b, up)
            while b - a > 1e-12 * max(1.0, b):
                m = 0.5 * (a + b)
                if float(self.lower_delta(m)) > d:
                    a = m
                else:
                    b = m
            lo = a
        return self._bracket((lo, up)) if self._bracket is tuple else self._bracket(lo, up)

    def to_dict(self) -> dict[str, Any]:
        out = self.result.as_dict()
        out.update(certified=True, routed="dpsgd")
        return out

    def __repr__(self) -> str:
        return f"RoutedDPSGD({self.result})"

    __str__ = __repr__
