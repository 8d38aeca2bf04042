r"""Certified composition of any profiles and mechanisms, with a mechanism-level bracket.

:func:`compose` composes profiles (symbolic, refined, implicit, the Kairouz-Oh-Viswanath
profile, subsampled, numeric PLD-backed ones), known mechanisms and earlier compositions,
each any number of times, and returns a :class:`Composition`: a numeric
:class:`~symgdp.profile.Profile` (an upper bound on the composed profile at every
:math:`\varepsilon`, the far tail included) that also carries

* ``mu_upper``: the composed mechanism is ``mu_upper``-GDP on the head :math:`[0,
  \varepsilon_h]`, :math:`\varepsilon_h` where the upper profile falls to the failure
  probability (and :math:`(\varepsilon, \text{failure\_prob})`-DP beyond);
* ``mu_floor``: every :math:`\mu` for which the composed mechanism is :math:`\mu`-GDP on
  that head is at least this (a proved lower bound on its sup-GDPT there);
* ``eps_at(delta)``: the smallest :math:`\varepsilon` with :math:`(\varepsilon,
  \delta)`-DP, bracketed (lower, upper);
* ``certified``, ``neighbouring`` and ``failure_prob``.

**Neighbouring relation.**  The composition theorem below is the same for add/remove
and for replace-one: every step's profile must hold for the one relation of the
composition, in both directions of each neighbouring pair.  So for a
:class:`~symgdp.profile.Profile` the relation is a *label*: ``neighbouring=`` says which
relation the given profiles were stated for, and the result holds for that relation.  The
mechanisms here whose privacy depends on the relation are accounted under it, never
relabelled: a :class:`SubsampledGaussian` (noise relative to a per-record clipping norm)
uses the dominating pair of its relation, an earlier :class:`Composition` keeps its own,
and a mismatch is a :class:`~symgdp.errors.DomainError`; a profile subsampled with
:meth:`Profile.subsample <symgdp.profile.Profile.subsample>` (an add/remove amplification
theorem) is refused under replace-one.  A Gaussian profile ``gaussian(sigma=s)`` is the
mechanism of sensitivity 1 *in the stated relation*; the sum of records with
:math:`\|v_i\| \le 1` has sensitivity 2 under replace-one
(:func:`symgdp.from_dp_event` accounts dp_accounting's events that way).

**Theorem.**  Each step :math:`i` (taken :math:`k_i` times) gives, on a common grid
:math:`\Delta\mathbb Z`, an integer measure :math:`\nu_i` rounded up and one rounded down
(:mod:`symgdp.pld.onestep` for profiles, :mod:`symgdp.training.dpsgd` for the
Poisson-subsampled Gaussian, also the lower side of its ``Profile.subsample``); their
exact integer convolutions (:mod:`symgdp.pld.pmf`) give an upper bound on the composed
profile (Blackwell domination of each step, then the cone order of the integer rounding)
and, after subtracting :math:`G = 1 - \prod_i (1 - g_i)^{k_i}`, a lower bound on the
composition of mechanisms whose profiles are the given ones.  No FFT is involved, so there is no
rounding margin: the bound holds at every :math:`\varepsilon`.  ``mu_upper`` is then the
upper end of :func:`symgdp.measurement.measure.measure` on the head, ``mu_floor`` the largest
:math:`\mu_{GDP}(\varepsilon, \text{lower bound})` over a grid of the head, checked at 40
digits (a :math:`\mu`-GDP mechanism has :math:`\delta_\mu \ge \delta` everywhere).

**Adaptive grid.**  Unless ``discretization`` is given, the grid is refined (a ladder of
:math:`\Delta`, aligned so that pure-DP and Laplace steps' loss jumps fall on it) until
``mu_upper - mu_floor <= target_width`` or the next grid would exceed ``max_support``
points of the composed support.

With ``certify=False`` the composition is dp_accounting's float64 FFT route
(:func:`symgdp.accounting.float_route.compose`), labelled ``certified=False``; its rounding
margin is an estimate and it has no floor.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import Any, Literal

import numpy as np
import sympy

from symgdp.accounting.eps_bracket import EpsBracket
from symgdp.accounting.subsampled_gaussian import (
    NEIGHBOURING,
    SubsampledGaussian,
    engine_bracket,
    engine_phases,
)
from symgdp.contracts import Neighbouring
from symgdp.errors import DomainError, UnboundParameterError
from symgdp.pld.curves import curves_source, first_eps_below
from symgdp.pld.head import head_measure
from symgdp.pld.onestep import StepPMFs, profile_step
from symgdp.pld.pmf import (
    MAX_SUPPORT,
    SCALE_BITS,
    IntPMF,
    check_count,
    check_support,
    int_compose,
    int_self_compose,
    support_estimate,
)
from symgdp.profile import Profile
from symgdp.training.engine import check_neighbouring

__all__ = ["compose", "Composition", "LazyComposition", "SubsampledGaussian", "EpsBracket",
           "NEIGHBOURING"]

#: the neighbouring relations a result can name
_LADDER = (4e-3, 1e-3, 2.5e-4, 6.25e-5)
_RELATION = {"add_remove": "add/remove neighbours", "replace_one": "replace-one neighbours"}


def _check_count(count: Any, item: Any) -> int:
    ok = (isinstance(count, (int, np.integer)) and not isinstance(count, bool)) or (
        isinstance(count, (float, np.floating)) and float(count).is_integer())
    if not ok or int(count) < 1:
        raise DomainError(f"a count must be a positive integer, got {count!r} for "
                          f"{_label(item)}")
    return check_count(int(count), f"the count of {_label(item)}")


def _label(item: Any) -> str:
    n = getattr(item, "name", None)
    return str(n) if n else type(item).__name__


# -- items -----------------------------------------------------------------------------------
class _Atom:
    """One kind of step: a bound profile, a numeric source or a SubsampledGaussian."""

    def __init__(self, obj: Any, kind: str, certified: bool, note: str = "") -> None:
        from symgdp.mechanisms import subsampled_gaussian_parameters

        self.obj, self.kind, self.certified, self.note = obj, kind, certified, note
        self.name = _label(obj)
        #: (q, sigma) of a Gaussian (q = 1) or its Profile.subsample: see asymmetric()
        self.gauss = subsampled_gaussian_parameters(obj) if kind == "profile" else None
        #: the same, rounded the other way (q up, sigma down): a dominating pair
        self.gauss_up = (subsampled_gaussian_parameters(obj, upper=True)
                         if self.gauss is not None else None)
        self._steps: dict[tuple[float, float, bool], StepPMFs] = {}

    def kinks(self) -> tuple[float, ...]:
        if self.kind == "subsampled_gaussian":
            return ()
        own = getattr(self.obj, "meta", {}).get("kinks")
        if own:
            return tuple(float(e) for e in own)
        tag = getattr(self.obj, "meta", {}).get("mechanism")
        if (isinstance(tag, tuple) and tag[0] in ("laplace", "pure_dp", "randomized_response")
                and "subsampled" not in self.obj.meta):
            try:
                return (float(sympy.sympify(tag[1]).xreplace(dict(self.obj.values))),)
            except (TypeError, ValueError):
                return ()
        return ()

    def asymmetric(self) -> bool:
        r"""A profile of a mechanism known to differ between the add and remove directions
        (a subsampled one): its profile is the maximum of two different directional
        curves, so the symmetric pair of the lower side (module onestep) can be strictly
        worse than the mechanism after composition, and that lower side is not used.  A
        subsampled Gaussian (``gauss``) takes the engine's instead: a record of norm 1
        and its absence realise the remove pair (add/remove), so its optimistic PMF
        (:func:`symgdp.training.engine.one_step_pmfs`) bounds the mechanism from below;
        beside one, so does a plain Gaussian (``q = 1``, ``engine``): no reveal term."""
        return "subsampled" in getattr(self.obj, "meta", {})

    def step(self, disc: float, tail: float, engine: bool = False) -> StepPMFs:
        use = self.gauss is not None and (engine or self.gauss[0] < 1)
        key = (disc, tail, use)
        if key not in self._steps:
            if self.kind == "subsampled_gaussian":
                self._steps[key] = self.obj.step(disc, SCALE_BITS, tail)
            elif use and self.gauss is not None:  # the engine's pairs on both sides
                from symgdp.training.engine import one_step_pmfs

                opt = one_step_pmfs(*self.gauss, disc, tail, SCALE_BITS).optimistic
                if self.gauss_up is not None and self.gauss_up[0] < 1:
                    # the exact pairs of the subsampled Gaussian (q up, sigma down): they
                    # dominate every mechanism with this Gaussian profile, subsampled
                    # (module notes, *Subsampled Gaussian profiles*)
                    rem, add = one_step_pmfs(*self.gauss_up, disc, tail,
                                             SCALE_BITS).directions
                    self._steps[key] = StepPMFs(rem, add, opt, 0.0, symmetric=False)
                else:
                    up = profile_step(self.obj, disc, SCALE_BITS, tail=tail, lower=False)
                    self._steps[key] = StepPMFs(up.remove, up.add, opt, 0.0, symmetric=True)
            else:
                # a lower side also for a source bounding the profile on both sides
                encloses = hasattr(getattr(self.obj, "source", None), "delta_bounds")
                self._steps[key] = profile_step(self.obj, disc, SCALE_BITS, tail=tail,
                                                lower=(self.kind == "profile" or encloses)
                                                and not self.asymmetric())
        return self._steps[key]


def _atoms_of(item: Any, count: int, out: list[tuple[_Atom, int]]) -> None:
    if isinstance(item, Composition):
        for a, k in item.atoms:
            out.append((a, k * count))
        return
    if isinstance(item, SubsampledGaussian):
        out.append((_Atom(item, "subsampled_gaussian", True), count))
        return
    if hasattr(item, "_pmf_remove") and hasattr(item, "self_compose"):
        item = Profile.from_pld(item)
    if not isinstance(item, Profile):
        raise DomainError(f"cannot compose an object of type {type(item).__name__} "
                          f"({item!r}): expected a Profile, a mechanism, a (profile, count) "
                          "pair, a composition or a dp_accounting PLD")
    src = item.source
    if src is not None:
        proved = bool(getattr(src, "certified", False)) or (
            src.kind == "PLD" and getattr(src, "margin", 1.0) == 0.0)
        out.append((_Atom(item, "numeric", proved, "" if proved else _unproved(item, src)),
                    count))
        return
    if not isinstance(item.meta.get("mechanism"), tuple):
        item.validate()  # the mechanisms' own profiles are valid by construction
    from symgdp.evaluation.interval import ArbUnsupported, profile_arb

    try:
        profile_arb(item)
        out.append((_Atom(item, "profile", True), count))
    except ArbUnsupported as exc:
        out.append((_Atom(item, "numeric", False,
                          f"{_label(item)}: no ball arithmetic ({exc}); float64 values"),
                    count))


def _unproved(item: Any, src: Any) -> str:
    """Why a numeric source's values are not proved, in the words of its kind."""
    kind = getattr(src, "kind", "numeric")
    if kind == "PLD":
        return f"{_label(item)}: a float64 PLD (estimated rounding margin, not proved)"
    return (f"{_label(item)}: a numeric {kind} profile whose source does not mark its "
            "values as proved (certified=True), so the composition is not certified")


def _normalise(items: tuple[Any, ...], times: Any) -> list[tuple[Any, int]]:
    if not items:
        raise DomainError("compose() needs at least one profile or mechanism")
    t = 1 if times is None else _check_count(times, "times")
    pairs = []
    for it in items:
        if isinstance(it, tuple):
            if len(it) != 2:
                raise DomainError(f"a composed item is a profile or a (profile, count) "
                                  f"pair, got a tuple of length {len(it)}: {it!r}")
            pairs.append((it[0], check_count(_check_count(it[1], it[0]) * t,
                                             f"the count of {_label(it[0])} times {t}")))
        else:
            pairs.append((it, t))
    return pairs


def _parametric(item: Any) -> bool:
    """A formula, or a numeric source with ``bind`` (noise with a symbolic shape)."""
    src = getattr(item, "source", None)
    return isinstance(item, Profile) and (src is None or callable(getattr(src, "bind", None)))


def _unbound(item: Any) -> set[sympy.Symbol]:
    if isinstance(item, LazyComposition):
        return item.unbound_symbols
    if _parametric(item):
        return item.unbound_symbols
    return set()


# -- the result ------------------------------------------------------------------------------
class Composition(Profile):
    r"""A composed profile (an upper bound at every :math:`\varepsilon`) with the
    composed mechanism's GDP bracket ``[mu_floor, mu_upper]`` (see :mod:`this module
    <symgdp.accounting.certified>`).  It is a :class:`~symgdp.profile.Profile`:
    ``p(eps)``, ``p.measure()``, ``p.eps_for_delta(delta)`` work as for any profile."""

    __slots__ = ("_info",)
    _info: dict[str, Any]

    @property
    def atoms(self) -> tuple[tuple[_Atom, int], ...]:
        return self._info["atoms"]

    @property
    def certified(self) -> bool:
        """Both ends of the bracket are proved (no float64 estimate anywhere)."""
        return bool(self._info["certified"])

    @property
    def certification(self) -> str:
        """What the result rests on, in one line: ``"certified: ..."`` for the proved
        route; otherwise ``"NOT certified: ..."`` naming the unproved part, either
        dp_accounting's float64 FFT route (``certify=False``: a rounding margin that is
        estimated) or, on the exact integer route, a step whose float64 values its
        source does not mark as proved (``certified=True``; its note says which step), the
        composition of those values being still exact integer arithmetic.

        Example:
            >>> from symgdp import mechanisms
            >>> compose(mechanisms.randomized_response(1.0), times=2).certification
            'certified: exact integer composition of proved step values'
        """
        if self._info.get("exact"):
            return f"certified: {self.notes[0]}"
        if self.certified:
            return "certified: exact integer composition of proved step values"
        if not self.atoms:
            return ("NOT certified: dp_accounting's float64 FFT composition (rounding margin "
                    "estimated, not proved)")
        return ("NOT certified: exact integer composition, but a step's float64 values are "
                "not marked as proved by their source (see notes)")

    @property
    def neighbouring(self) -> str:
        """The neighbouring relation every step was stated or accounted for
        (``"add_remove"`` or ``"replace_one"``; module notes)."""
        return self._info["neighbouring"]

    @property
    def discretization(self) -> float:
        return float(self._info["disc"])

    @property
    def notes(self) -> tuple[str, ...]:
        return tuple(self._info["notes"])

    def _bracket(self) -> dict[str, Any]:
        c = self._cache
        if "bracket" not in c:
            c["bracket"] = _measure_bracket(self)
        return c["bracket"]

    @property
    def mu_upper(self) -> float:
        """The composed mechanism is ``mu_upper``-GDP on ``[0, eps_h]``."""
        return self._bracket()["mu_upper"]

    @property
    def mu_lower(self) -> float:
        """Lower end of the measured bracket of the *upper profile* (not of the mechanism)."""
        return self._bracket()["mu_lower"]

    @property
    def mu_floor(self) -> float:
        """No mu below this follows from the given profiles: the composition of symmetric
        mechanisms whose profiles are exactly the given ones is not mu-GDP on ``[0, eps_h]``
        for any smaller mu.  It is a floor of the mechanism's own mu when each profile is
        the mechanism's exact profile (the known mechanisms); for a profile that is only an
        upper bound, it bounds what the profile can prove.  A ``Profile.subsample`` of a
        Gaussian (add/remove) takes the DP-SGD engine's lower side (see ``notes``).  ``nan``
        when a step has no lower side (numeric items whose source does not enclose the exact
        profile, other subsampled profiles)."""
        return self._bracket()["mu_floor"]

    @property
    def eps_h(self) -> float:
        return self._bracket()["eps_h"]

    @property
    def failure_prob(self) -> float:
        """The upper profile's value at ``eps_h``: the composition is
        (eps, failure_prob)-DP for every eps >= eps_h."""
        return self._bracket()["failure_prob"]

    @property
    def measurement(self) -> Any:
        return self._bracket()["measurement"]

    @property
    def width(self) -> float:
        return self.mu_upper - self.mu_floor

    def lower_delta(self, eps: Any) -> Any:
        r"""A proved lower bound on the composed mechanisms' :math:`\delta(\varepsilon)`
        (0 where none is available)."""
        x = np.atleast_1d(np.asarray(eps, dtype=np.float64))
        low = self._info.get("low")
        if low is None:
            out = np.zeros(x.shape)
        else:
            # the subtraction rounded to nearest: one float down keeps it a lower bound
            out = np.maximum(np.nextafter(low.lower_delta(x) - self._info["G"], -np.inf), 0.0)
        return float(out[0]) if np.ndim(eps) == 0 else out

    @property
    def log_delta_lower(self) -> Callable[[Any], Any] | None:
        r"""``log_delta_lower(eps)``: :math:`\log` of :meth:`lower_delta` (``-inf`` where
        it is 0), a proved lower bound on the composed mechanisms' :math:`\log\delta`;
        ``None`` when the composition has no lower side (a float64 route, or a step
        without one).  With it, :meth:`tradeoff` gives a band whose *upper* side is not
        trivial too (:func:`symgdp.notions.fdp.band` looks for this name).

        Example:
            >>> from symgdp import mechanisms, mp
            >>> c = compose(mechanisms.gaussian(0.5), times=4)  # exactly 1-GDP; mp: 40 digits
            >>> bool(c.log_delta_lower(1.0) <= float(mp.log_delta_mu(1.0, 1.0)) <= c.log_delta(1.0))
            True
        """
        if self._info.get("low") is None:
            return None

        def log_delta_lower(eps: Any) -> Any:
            with np.errstate(divide="ignore"):
                # np.log is within an ulp: (1 + 4u) moves the (non-positive) value down
                out = np.log(np.asarray(self.lower_delta(eps), dtype=np.float64)) * (
                    1.0 + 2.0**-50)
            return float(out) if np.ndim(eps) == 0 else out

        return log_delta_lower

    def eps_at(self, delta: float) -> EpsBracket:
        r"""The smallest :math:`\varepsilon` with :math:`(\varepsilon, \delta)`-DP, as a
        bracket ``(lower, upper)``; ``upper`` is guaranteed (rounded up)."""
        d = float(delta)
        if not (0 < d <= 1):
            raise DomainError(f"delta must lie in (0, 1], got {delta!r}")
        if self._info.get("exact"):  # eps_gdp grows with mu: both ends in closed form
            return EpsBracket(*self.source.eps_bracket(d))
        up = first_eps_below(self, math.log(d), 1e-12)
        lo = 0.0
        if self._info.get("low") is not None and self.lower_delta(0.0) > d:
            a, b = 0.0, max(up, 1e-12)
            if self.lower_delta(b) > d:
                return EpsBracket(b, up)
            while b - a > 1e-12 * max(1.0, b):
                m = 0.5 * (a + b)
                if self.lower_delta(m) > d:
                    a = m
                else:
                    b = m
            lo = a
        return EpsBracket(lo, up)

    def calibration_measurement(self, **kw: Any) -> Any:
        """The head measurement with the mechanism's floor as its lower end (what
        :func:`symgdp.calibrate` needs to decide safe / proven unsafe).  Without a floor
        (a step without a lower side, e.g. a subsampled Laplace profile) the lower end is
        that of the *upper profile's* measurement: what this composition can prove, not a
        bound on the mechanism (:attr:`floorless` says so, and calibrate notes it)."""
        import dataclasses

        m = self.measurement
        floor = self.mu_floor
        lower = min(floor, m.upper) if math.isfinite(floor) else min(m.lower, m.upper)
        return dataclasses.replace(m, lower=lower, certified=self.certified)

    @property
    def floorless(self) -> bool:
        """No proved lower side: ``mu_floor`` is ``nan`` (see :attr:`mu_floor`)."""
        return not math.isfinite(self.mu_floor)

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "mu_floor": self.mu_floor, "mu_upper": self.mu_upper,
                "eps_h": self.eps_h, "failure_prob": self.failure_prob,
                "certified": self.certified, "neighbouring": self.neighbouring,
                "discretization": self.discretization, "floor": self.source.floor,
                "notes": list(self.notes)}

    def __repr__(self) -> str:
        b = self._bracket()
        return (f"Composition({self.name}: mu in [{b['mu_floor']:.6f}, {b['mu_upper']:.6f}] "
                f"on [0, {b['eps_h']:.4g}], failure probability {b['failure_prob']:.3g}, "
                f"{_SHORT_CERT[self.certified, bool(self.atoms)]}, "
                f"{_RELATION[self.neighbouring]})")

    __str__ = __repr__


#: (certified, integer route) -> the word in a composition's repr (see ``certification``)
_SHORT_CERT = {(True, True): "certified", (True, False): "certified",
               (False, True): "NOT certified (exact composition; a step's float64 values "
                              "not marked as proved)",
               (False, False): "NOT certified (float64 FFT estimate)"}


def _new(source: Any, name: str, info: dict[str, Any]) -> Composition:
    p = Composition.from_source(source, name=name)
    assert isinstance(p, Composition)  # from_source builds cls(...)
    object.__setattr__(p, "_info", info)
    return p


def _measure_bracket(p: Composition) -> dict[str, Any]:
    info = p._info
    fp = info["failure_prob"]
    m, fail = head_measure(p, fp, info["tol"])
    floor = _floor(p, m.eps_h) if info.get("low") is not None else math.nan
    return {"mu_upper": m.upper, "mu_lower": m.lower, "mu_floor": floor,
            "eps_h": m.eps_h, "failure_prob": fail, "measurement": m}


def _floor(p: Composition, eps_h: float) -> float:
    """Largest proved mu_gdp(eps, lower delta(eps)) over a grid of [0, eps_h], refined
    around its best point, rounded down and checked in ball arithmetic."""
    from symgdp.gaussian.gdp_balls import delta_mu_proved_at_most
    from symgdp.gaussian.vectorised import mu_gdp

    def best(xs: np.ndarray) -> tuple[float, float, float]:
        d = p.lower_delta(xs)
        ok = d > 0
        if not np.any(ok):
            return 0.0, 0.0, 0.0
        mus = np.asarray(mu_gdp(xs[ok], d[ok], rounding="down"), dtype=np.float64)
        i = int(np.nanargmax(mus))
        return float(mus[i]), float(xs[ok][i]), float(d[ok][i])

    xs = np.linspace(0.0, eps_h, 161)
    m, e, dl = best(xs)
    if m <= 0:
        return 0.0
    step = eps_h / 160
    m2, e2, d2 = best(np.linspace(max(e - step, 0.0), min(e + step, eps_h), 41))
    if m2 > m:
        m, e, dl = m2, e2, d2
    for shrink in (1e-12, 1e-9, 1e-6, 1e-3):
        cand = m * (1.0 - shrink)
        # delta_mu is increasing in mu: delta_cand(e) <= dl <= delta(e) forces every valid
        # mu above cand
        if delta_mu_proved_at_most(e, cand, dl):
            return cand
    return 0.0


# -- the lazy composition of profiles with free parameters ---------------------------------
class LazyComposition:
    r"""A composition whose items still have unbound parameters: symbolic until every
    parameter has a value.  ``replace(values={...})`` (or :meth:`bind`) binds them and
    composes (a :class:`Composition` once nothing is left unbound), which is how
    :func:`symgdp.calibrate` searches a parameter through a composition."""

    def __init__(self, pairs: list[tuple[Any, int]], options: dict[str, Any],
                 values: dict[sympy.Symbol, Any] | None = None) -> None:
        self.pairs = pairs
        self.options = options
        self._values = dict(values or {})

    @property
    def name(self) -> str:
        return " ∘ ".join(f"({_label(p)})^{k}" if k > 1 else _label(p) for p, k in self.pairs)

    @property
    def free_symbols(self) -> set[sympy.Symbol]:
        out: set[sympy.Symbol] = set()
        for p, _ in self.pairs:
            out |= set(getattr(p, "free_symbols", set()))
        return out

    @property
    def unbound_symbols(self) -> set[sympy.Symbol]:
        out: set[sympy.Symbol] = set()
        for p, _ in self.pairs:
            out |= _unbound(p)
        return out - set(self._values)

    @property
    def values(self) -> dict[sympy.Symbol, Any]:
        return dict(self._values)

    @property
    def expr(self) -> sympy.Expr:
        return sympy.Function("delta_composition")(sympy.Symbol("varepsilon"))

    def require_bound(self) -> None:
        missing = self.unbound_symbols
        if missing:
            names = ", ".join(sorted(str(s) for s in missing))
            raise UnboundParameterError(f"this composition needs values for: {names} "
                                        "(bind them with .bind({...}) or calibrate one)")

    def replace(self, values: dict[Any, Any] | None = None, **_: Any) -> Any:
        names = {v.name: v for v in self.free_symbols}
        given = {}
        for key, v in dict(values or {}).items():  # a parameter by name or by symbol
            sym = names.get(key if isinstance(key, str) else getattr(key, "name", ""))
            if sym is None:
                raise DomainError(f"this composition has no parameter {key!r} (its "
                                  f"parameters: {', '.join(sorted(names)) or 'none'})")
            given[sym] = v
        vals = {**self._values, **given}
        pairs = []
        for p, k in self.pairs:
            mine = {s: v for s, v in vals.items() if s in getattr(p, "free_symbols", set())}
            if isinstance(p, LazyComposition):
                p = p.replace(values=mine)
            elif _parametric(p) and mine:
                p = _rebind(p, mine)
            pairs.append((p, k))
        lazy = LazyComposition(pairs, self.options, vals)
        if lazy.unbound_symbols:
            return lazy
        return compose(*pairs, **self.options)

    def bind(self, values: dict[Any, Any]) -> Any:
        return self.replace(values=values)

    def with_options(self, **options: Any) -> LazyComposition:
        """The same lazy composition with some :func:`compose` options changed (e.g. a
        smaller ``failure_prob``: :func:`symgdp.calibrate` measures a composition on a head
        long enough for its ``(eps, delta)`` target)."""
        unknown = set(options) - {"failure_prob", "tol", "target_width", "discretization",
                                  "max_support", "time_budget"}
        if unknown:
            raise DomainError(f"with_options() cannot change {sorted(unknown)}")
        return LazyComposition(self.pairs, {**self.options, **options}, self._values)

    def __getattr__(self, name: str) -> Any:
        if name in ("measure", "log_delta", "eps_for_delta", "mu_upper", "mu_floor",
                    "eps_at", "gdpt"):
            self.require_bound()
        raise AttributeError(name)

    def __call__(self, eps: Any) -> Any:
        self.require_bound()

    def __repr__(self) -> str:
        names = ", ".join(sorted(str(s) for s in self.unbound_symbols))
        return f"LazyComposition({self.name}; unbound: {names})"


def _rebind(p: Profile, values: dict[Any, Any]) -> Profile:
    naive = p.meta.get("naive")
    if p.meta.get("segments") and isinstance(naive, Profile):
        return naive.replace(values={**naive.values, **values}).refine()
    return p.replace(values={**p.values, **values})


# -- the neighbouring relation -----------------------------------------------------------------
def _relation(pairs: list[tuple[Any, int]], neighbouring: str | None) -> Neighbouring:
    """The relation of a composition (module notes): the one the items carry (a
    SubsampledGaussian, a Composition, a LazyComposition), which must agree with each other
    and with ``neighbouring`` when given (a profile carries one when its metadata or its
    source's has ``neighbouring``); a DomainError naming the item otherwise, and for a
    subsampled profile under replace-one."""
    if neighbouring is not None and neighbouring not in NEIGHBOURING:
        raise DomainError(f"neighbouring must be one of {NEIGHBOURING}, got {neighbouring!r}")
    carried: list[tuple[str, str]] = []
    for p, _ in pairs:
        if isinstance(p, (SubsampledGaussian, Composition)):
            carried.append((_label(p), p.neighbouring))
        elif isinstance(p, LazyComposition):
            carried.append((p.name, p.options["neighbouring"]))
        elif isinstance(p, Profile):
            # a profile (or its numeric source) that states its relation in its metadata
            own = p.meta.get("neighbouring") or getattr(p.source, "meta", {}).get(
                "neighbouring")
            if own is not None:
                carried.append((_label(p), str(own)))
    if neighbouring is None:
        rels = sorted({r for _, r in carried})
        if len(rels) > 1:
            raise DomainError("the items are accounted under different neighbouring "
                              f"relations ({', '.join(f'{n}: {r}' for n, r in carried)}); "
                              "a composition needs one relation for every step")
        neighbouring = rels[0] if rels else "add_remove"
    for n, r in carried:
        if r != neighbouring:
            raise DomainError(f"{n} is accounted under {r}, not under neighbouring="
                              f"{neighbouring!r}: build it under {neighbouring} (a "
                              "SubsampledGaussian takes neighbouring=) or compose under "
                              f"{r}; a relation is never relabelled")
    if neighbouring == "replace_one":
        for p, _ in pairs:
            if isinstance(p, Profile) and p.source is None and "subsampled" in p.meta:
                raise DomainError(
                    f"{_label(p)} is a Poisson-subsampled profile (Profile.subsample, "
                    "theory section 7), an add/remove theorem: under replace-one the "
                    "amplification needs the base mechanism's add/remove profile, which a "
                    "profile does not state; compose it under neighbouring='add_remove' "
                    "(or a SubsampledGaussian(..., neighbouring='replace_one'))")
    return check_neighbouring(neighbouring)


# -- compose ---------------------------------------------------------------------------------
def _aligned(disc: float, kinks: list[float]) -> float:
    """``disc`` shrunk so that the largest kink is a multiple of it (others if they are
    commensurate)."""
    if not kinks:
        return disc
    e = max(kinks)
    m = max(1, int(math.ceil(e / disc - 1e-9)))
    return e / m


def compose(*items: Any, times: Any = None, certify: bool = True,
            discretization: float | None = None, target_width: float = 1e-3,
            failure_prob: float = 1e-10, tol: float = 1e-4, max_support: int = 4_000_000,
            neighbouring: Neighbouring | None = None, **kw: Any) -> Any:
    r"""The composition of profiles and mechanisms, certified by default.

    ``compose(a, b, c)`` composes the three; ``compose(a, times=k)`` is the
    :math:`k`-fold composition; ``compose((a, 10), (b, 20))`` mixes counts;
    ``compose(a, b, times=k)`` repeats the pair :math:`k` times.  Items: any
    :class:`~symgdp.profile.Profile` (symbolic, refined, implicit, KOV, subsampled,
    numeric), a mechanism, a :class:`SubsampledGaussian`, an earlier
    :class:`Composition`, a dp_accounting PLD.

    Args:
        certify: ``True`` (default) for the proved route of this module; ``False`` for
            dp_accounting's float64 route (``certified=False`` on the result).
        discretization: the grid :math:`\Delta` (default: adaptive).
        target_width: adaptive grids stop refining once ``mu_upper - mu_floor`` is below.
        failure_prob: where the measured head ends.
        tol: the width of the head measurement of ``mu_upper``.
        max_support: the adaptive grid stops before the composed support would exceed
            this many points.
        time_budget: (keyword) seconds after which the adaptive grid stops refining;
            default none, so that the result does not depend on the machine's load.
        neighbouring: the neighbouring relation, ``"add_remove"`` or ``"replace_one"``
            (module notes, *Neighbouring relation*).  For a profile it is the relation
            the profile was stated for, a label that the composition carries: composing
            profiles is the same theorem under either relation.  A
            :class:`SubsampledGaussian` or an earlier :class:`Composition` carries its
            own relation and must agree; a subsampled profile
            (:meth:`Profile.subsample <symgdp.profile.Profile.subsample>`, an add/remove
            theorem) is refused under ``"replace_one"``.  Default ``None``: the relation
            the items carry, else ``"add_remove"``.

    Returns:
        A :class:`Composition` (a :class:`~symgdp.profile.Profile`), or a
        :class:`LazyComposition` while a parameter is unbound.

    Example:
        >>> from symgdp import mechanisms
        >>> c = compose(mechanisms.gaussian(0.5), times=4)      # exactly 1-GDP
        >>> c.mu_floor <= 1.0 <= c.mu_upper <= c.mu_floor + 1e-3, c.certified
        (True, True)
    """
    if "value_discretization_interval" in kw:  # the float route's name for the grid
        vdi = kw.pop("value_discretization_interval")
        if certify:
            discretization = vdi if discretization is None else discretization
        else:
            kw["value_discretization_interval"] = vdi
    engine = bool(kw.pop("_engine", False))  # internal (tests): no closed form
    unknown = set(kw) - {"time_budget", "tail_mass_truncation", "tail_delta", "max_eps",
                         "grid_points"}
    if unknown:
        raise DomainError(f"compose() got unknown options {sorted(unknown)}")
    tm = kw.get("tail_mass_truncation", 0.0)
    if not (isinstance(tm, (int, float)) and 0 <= tm < 1):
        raise DomainError(f"tail_mass_truncation must lie in [0, 1), got {tm!r}")
    pairs = _normalise(items, times)
    neighbouring = _relation(pairs, neighbouring)
    options = dict(certify=certify, discretization=discretization,
                   target_width=target_width, failure_prob=failure_prob, tol=tol,
                   max_support=max_support, neighbouring=neighbouring, **kw)
    if any(_unbound(p) for p, _ in pairs):
        return LazyComposition(pairs, options)
    fp = float(failure_prob)
    if not (0 < fp < 1):
        raise DomainError(f"failure_prob must lie in (0, 1), got {failure_prob!r}")
    if not certify:
        return _float_route(pairs, fp, tol, neighbouring, discretization, kw)
    atoms: list[tuple[_Atom, int]] = []
    for p, k in pairs:
        _atoms_of(p, k, atoms)
    for a, k in atoms:  # a composition's counts multiply: check the products again
        check_count(k, f"the count of {a.name}")
    total = check_count(sum(k for _, k in atoms), "the total number of steps")
    tail = min(max(1e-3 * fp / total, 1e-30), 1e-16)
    kinks = [e for a, _ in atoms for e in a.kinks()]
    names = [f"({a.name})^{k}" if k > 1 else a.name for a, k in atoms]
    name = " ∘ ".join(names)
    if discretization is not None:
        ladder = [float(discretization)]
        if not (math.isfinite(ladder[0]) and 0 < ladder[0] <= 1):
            raise DomainError(f"discretization must lie in (0, 1], got {discretization!r}")
    else:
        ladder = [_aligned(d, kinks) for d in _LADDER]
    exact = None if engine else _gaussian_route(atoms, fp, tol, name, neighbouring)
    if exact is not None:
        return exact
    phases = None if engine else engine_phases(
        [(a.obj, a.kind, a.gauss, a.gauss_up, k) for a, k in atoms], neighbouring)
    if phases is not None:  # every step a (subsampled) Gaussian: the DP-SGD engine
        src, bracket, low, note, grid = engine_bracket(phases, neighbouring, fp, tol,
                                                       discretization)
        p = _new(src, name, {"atoms": tuple(atoms), "certified": True, "low": low,
                             "G": 0.0, "neighbouring": neighbouring, "disc": grid,
                             "failure_prob": fp, "tol": tol, "notes": [note]})
        p._cache["bracket"] = bracket
        return p
    result = None
    t0 = time.perf_counter()
    # refuse before any work what even the coarsest grid cannot hold in memory
    check_support([(a.step(ladder[0], tail).remove, k) for a, k in atoms],
                  f"the composition {name if len(name) <= 80 else name[:77] + '...'}",
                  "use a coarser discretization or fewer repetitions")
    if len(ladder) > 1:
        # skip grids whose lower side is predicted too loose: g falls as the square of
        # the grid (module onestep), so G(disc) ~ G(first) (disc / first)^2
        g0 = sum(k * a.step(ladder[0], tail).g for a, k in atoms)
        while (len(ladder) > 1 and math.isfinite(g0)
               and g0 > 0.25 * target_width
               and support_estimate([(a.step(ladder[1], tail).remove, k)
                                     for a, k in atoms]) <= min(max_support, MAX_SUPPORT)):
            g0 *= (ladder[1] / ladder[0]) ** 2
            ladder = ladder[1:]
    for i, disc in enumerate(ladder):
        result = _compose_on(atoms, disc, tail, fp, tol, name, neighbouring)
        if i + 1 == len(ladder) or not math.isfinite(result.mu_floor):
            break
        if result.mu_upper - result.mu_floor <= target_width:
            break
        # the next grid: support grows by ladder ratio; stop before max_support
        nxt = sum(k * (a.step(disc, tail).remove.size) for a, k in atoms)
        if nxt * disc / ladder[i + 1] > max_support:
            break
        if support_estimate([(a.step(ladder[i + 1], tail).remove, k)
                             for a, k in atoms]) > min(max_support, MAX_SUPPORT):
            break
        # a wall-clock budget only when asked for: by default the result (and so every
        # test and example) does not depend on the machine's load, max_support bounds it
        budget = kw.get("time_budget")
        if budget is not None and time.perf_counter() - t0 > float(budget):
            break
    assert result is not None
    return result


def _gaussian_route(atoms: list[tuple[_Atom, int]], fp: float, tol: float, name: str,
                    neighbouring: Neighbouring) -> Composition | None:
    """Every step a Gaussian mechanism (the catalogue's profile, a SubsampledGaussian with
    q = 1): the exact Gaussian composition (:mod:`symgdp.training.closed_form`), its
    bracket known; else None."""
    from symgdp.training.closed_form import gaussian_composition, step_mu

    mus = [(step_mu(a.obj, a.kind), k) for a, k in atoms]
    if any(m is None for m, _ in mus):
        return None
    src, bracket, note = gaussian_composition(mus, fp, tol, name)
    p = _new(src, name, {"atoms": tuple(atoms), "certified": True, "low": src, "G": 0.0,
                         "neighbouring": neighbouring, "disc": math.nan, "failure_prob": fp,
                         "tol": tol, "notes": [note], "exact": True})
    p._cache["bracket"] = bracket
    return p


def _compose_on(atoms: list[tuple[_Atom, int]], disc: float, tail: float, fp: float,
                tol: float, name: str, neighbouring: Neighbouring) -> Composition:
    engine = any(a.gauss is not None and a.gauss[0] < 1 for a, _ in atoms)
    steps = [(a.step(disc, tail, engine), k) for a, k in atoms]
    sym = all(s.symmetric for s, _ in steps)
    rem: IntPMF | None = None
    add: IntPMF | None = None
    low: IntPMF | Literal[False] | None = None  # False: a step has no proved lower side
    log1m_g = 0.0
    for s, k in steps:
        r = int_self_compose(s.remove, k)
        rem = r if rem is None else int_compose(rem, r)
        if not sym:
            a = int_self_compose(s.add, k)
            add = a if add is None else int_compose(add, a)
        if s.low is not None and low is not False:
            lw = int_self_compose(s.low, k)
            low = lw if low is None else int_compose(low, lw)
            log1m_g += k * math.log1p(-min(s.g, 1.0)) if s.g < 1 else -math.inf
        else:
            low = False
    assert rem is not None
    curves = [rem.curve()] + ([] if add is None else [add.curve()])  # add is None iff sym
    G = -math.expm1(log1m_g) if math.isfinite(log1m_g) else 1.0
    notes = [a.note for a, _ in atoms if a.note]
    if engine:
        notes.append("Profile.subsample of a Gaussian: the exact pairs of the "
                     "Poisson-subsampled Gaussian (add/remove; both directions on the upper "
                     "side, q rounded up and sigma down; the remove pair's lower PLD on the "
                     "lower side, q down and sigma up), as in symgdp.dpsgd: they dominate "
                     "every mechanism with that Gaussian profile, subsampled")
    if low is False or G >= 1.0:
        low = None
        bare = sorted({a.name for (a, _), (s, _) in zip(atoms, steps, strict=True)
                       if s.low is None or not s.g < 1})
        notes.append(f"no floor: {', '.join(bare) or 'a step'} has no proved lower side (a "
                     "numeric source, a subsampled (asymmetric) profile other than a "
                     "subsampled Gaussian, or a profile its grid values prove is not convex "
                     "in e^eps), so the composition has none")
    info = {"atoms": tuple(atoms), "certified": all(a.certified for a, _ in atoms),
            "neighbouring": neighbouring, "disc": disc, "low": low,
            "G": G * (1 + 1e-9) if G > 0 else 0.0, "failure_prob": fp, "tol": tol,
            "notes": notes}
    return _new(curves_source(curves, discretization=disc), name, info)


def _float_route(pairs: list[tuple[Any, int]], fp: float, tol: float, neighbouring: Neighbouring,
                 discretization: float | None, kw: dict[str, Any]) -> Composition:
    """dp_accounting's float64 FFT route, labelled not certified."""
    from symgdp.accounting.float_route import compose as float_compose

    disc = kw.pop("value_discretization_interval", 1e-4 if discretization is None
                  else discretization)
    kw.pop("time_budget", None)
    total = None
    labels = []
    for p, k in pairs:
        if isinstance(p, (Composition, SubsampledGaussian)):
            raise DomainError(f"certify=False composes profiles and PLDs only, got {p!r}")
        one = float_compose(p, times=k, value_discretization_interval=disc, **kw)
        labels.append(one.name or "PLD")  # (always named: float_route.compose)
        total = one if total is None else float_compose(total, one,
                                                        value_discretization_interval=disc,
                                                        **kw)
    assert total is not None
    info = {"atoms": (), "certified": False, "neighbouring": neighbouring, "disc": disc,
            "low": None, "G": 0.0, "failure_prob": fp, "tol": tol,
            "notes": ["float64 FFT route (dp_accounting): rounding margin estimated, "
                      "not proved; no floor"]}
    src = total.source
    p = Composition.from_source(src, name=" ∘ ".join(labels))
    assert isinstance(p, Composition)  # from_source builds cls(...)
    object.__setattr__(p, "_info", info)
    return p
