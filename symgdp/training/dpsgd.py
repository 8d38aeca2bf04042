r"""A guaranteed Gaussian-DP bracket for DP-SGD (Poisson-subsampled Gaussian, T steps).

DP-SGD with Poisson sampling rate :math:`q`, noise multiplier :math:`\sigma` and
:math:`T` steps is the :math:`T`-fold composition of the subsampled Gaussian mechanism.
Its GDP parameter is usually quoted from the central limit theorem of Bu, Dong, Long &
Su (2020), :math:`\mu_{CLT} = q\sqrt{T(e^{1/\sigma^2} - 1)}`, an *approximation* that can
be below every valid :math:`\mu` (for :math:`q = 0.01, \sigma = 1, T = 1000` it is
0.4145 while every :math:`\mu` for which DP-SGD is :math:`\mu`-GDP on the head
:math:`[0, 3.29]` below is at least 0.5275, ``mu_floor``).

:func:`dpsgd` returns a guaranteed bracket instead, ``[mu_floor, mu_upper]``, which
contains the mechanism's own :math:`\mu` on the head (the smallest :math:`\mu` for which
DP-SGD is :math:`\mu`-GDP on :math:`[0, \varepsilon_h]`): ``mu_upper`` from an upper
bound on the true profile, ``mu_floor`` from a lower bound on it (the floor theorem in
:mod:`symgdp.training.engine`).  Schedules (phases with their own :math:`q, \sigma`) and
the add/remove or replace-one neighbouring relation are supported; every result names
its relation.  The profile behind ``mu_upper`` is the minimum of two upper bounds on the
true profile (the minimum of two valid upper bounds is one):

* the **certified PLD** (:func:`certified_pld`), proven below, tight in the head, with
  an absolute floor (its mass at infinity, about :math:`10^{-15}`);
* the exact Rényi curve of the subsampled Gaussian at integer orders, composed over
  :math:`T` steps and converted by the improved RDP → :math:`(\varepsilon, \delta)`
  conversion (:mod:`symgdp.notions.renyi`), computed in log space so it keeps decaying where the
  PLD's floor takes over.

**Theorem (certified PLD).**  Let :math:`\omega` be the connect-the-dots PMF of one step
on the grid :math:`\Delta\mathbb Z` (Doroshenko, Ghazi, Kamath, Kumar & Manurangsi, PETS
2022): the mass of each cell :math:`(a, b]` of the privacy loss :math:`L` under
:math:`P` is split between :math:`a` and :math:`b` so that :math:`\mathbb E[e^{-L}]` is
kept.  Let :math:`\nu_1 \ge \omega` entrywise after mass below the grid is moved to its
first point and mass above it to :math:`+\infty`, and let :math:`\nu_T` be obtained from
:math:`\nu_1` by convolutions, entrywise rounding up, and moves of mass to larger losses
(including :math:`+\infty`).  Then for every :math:`\varepsilon`

.. math:: \delta_T(\varepsilon) \le \sum_l \nu_T(l)\,(1 - e^{\varepsilon - l})_+ .

*Proof.*  :math:`\delta_T(\varepsilon) = \mathbb E[F(y_1, \dots, y_T)]` with
:math:`y_i = e^{-L_i}` independent and :math:`F = (1 - e^{\varepsilon}\prod y_i)_+`,
which is convex and non-increasing in each :math:`y_i` (and :math:`\le 1`, the value at
:math:`L = +\infty`).  Replacing one coordinate's law by a mean-preserving spread within
cells does not decrease the expectation (Jensen, coordinate by coordinate, Fubini): this
gives :math:`\omega^{*T}`.  Every function :math:`g(s) = \mathbb E[f(s + S)]`,
:math:`f(s) = (1 - e^{\varepsilon - s})_+`, is non-negative and non-decreasing in
:math:`s`, so its integral does not decrease when mass is increased entrywise or moved
to larger :math:`s`, and convolution preserves this order (if :math:`\mu \preceq \mu'`
and :math:`\nu \preceq \nu'` for this cone then :math:`\mu * \nu \preceq \mu' * \nu'`).
:math:`\square`  The same holds for the add direction (the swapped pair), and DP-SGD's
profile is the maximum of the two; for add/remove the add direction is read from the
remove composition (the add-direction theorem in :mod:`symgdp.training.engine`), and a
schedule composes its phases' measures by the same convolutions.

What is computed, and how each hypothesis is met:

* one step in **ball arithmetic** (python-flint's ``arb``): the cell masses
  :math:`P_c, Q_c` come from the closed-form tails of the mixture
  (:math:`\bar\Phi`, i.e. ``erfc``), the split in balls, each mass rounded *up* to an
  integer multiple of :math:`2^{-80}`;
* the :math:`T`-fold composition along a short addition chain (squares and products,
  e.g. 9 squares and 3 products for :math:`T = 1000`) in **exact integer arithmetic**
  (``fmpz_poly`` products); tails are cut where their exact mass is at most
  :math:`10^{-19}`, the left tail moved onto the first kept loss, the right tail to
  :math:`+\infty`; each product is then rounded *down* to :math:`2^{-80}` and the mass
  so removed (exact) moved to :math:`+\infty`, rounded up (no FFT, so no rounding
  margin; for a large :math:`\mu` a finer scale and smaller cuts, see
  :func:`symgdp.training.engine.scale_for`);
* the profile of :math:`\nu_T` evaluated as an exact piecewise-affine function of
  :math:`e^\varepsilon` with float64 sums of non-negative terms, masses and losses
  rounded up and the sums inflated by their worst-case relative rounding
  (:mod:`symgdp.accounting`).

The same composition, shifted by a proven bound on the connect-the-dots displacement
(Bernstein's inequality, the floor theorem in :mod:`symgdp.training.engine`), gives a lower
bound on the true profile, hence ``mu_floor``: any :math:`\mu` for which DP-SGD is
:math:`\mu`-GDP on :math:`[0, \varepsilon_h]` has :math:`\delta_\mu(\varepsilon) \ge
\delta_T(\varepsilon)` there, so it is at least :math:`\mu_{GDP}(\varepsilon,
\text{lower bound})` at every :math:`\varepsilon`.  The shift costs about
:math:`\sqrt{T}\Delta` in :math:`\varepsilon`.

:func:`symgdp.measure` then brackets the supremum of the GDPT of the upper profile on
:math:`[0, \varepsilon_h]`, with :math:`\varepsilon_h` the point where the upper profile
falls to the requested failure probability; that value bounds the true profile at every
:math:`\varepsilon \ge \varepsilon_h` (a profile is non-increasing), so the mechanism is
:math:`\mu_{upper}`-GDP on :math:`[0, \varepsilon_h]` and :math:`(\varepsilon,
\text{failure\_prob})`-DP for every :math:`\varepsilon \ge \varepsilon_h`.  The
guarantee rests on the theorem above, on python-flint's ball arithmetic and exact
integers, and on the float64 rounding analysis of :func:`symgdp.measure`.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from symgdp.contracts import Neighbouring, NeighbouringOrAuto, Sampling
from symgdp.errors import DomainError, SymgdpError
from symgdp.gaussian.vectorised import eps_gdp
from symgdp.training.comparison import eps_pld as _eps_pld
from symgdp.training.engine import (
    check_neighbouring,
    check_phase,
    check_schedule,
    lower_profile,
    one_step_pmfs,
)
from symgdp.training.grids import BASE_GRID, BASE_TOL, auto_grid, floor_grid_step, step_points
from symgdp.training.sampling import plan_sampling, user_plan
from symgdp.training.upper import Bracketed as _Bracketed
from symgdp.training.upper import LazyRDPMu
from symgdp.training.upper import UpperProfile as _UpperProfile

__all__ = ["DPSGDResult", "dpsgd", "mu_clt", "certified_pld"]

_RELATION_TEXT = {"add_remove": "add/remove one record",
                  "replace_one": "replace one record"}


def mu_clt(q: float, sigma: float, steps: int) -> float:
    r"""The CLT approximation :math:`q\sqrt{T(e^{1/\sigma^2} - 1)}` of Bu, Dong, Long & Su
    (2020).  **Not a bound**: it can be below every valid :math:`\mu`.

    Example:
        >>> round(mu_clt(0.01, 1.0, 1000), 4)
        0.4145
    """
    q, sigma, steps = check_phase(q, sigma, steps)
    return q * math.sqrt(steps * math.expm1(1.0 / sigma**2))


def subsampled_gaussian_pmfs(q: float, sigma: float, disc: float, tail: float,
                              bits: int) -> tuple[Any, Any, Any]:
    """Certified one-step PMFs (remove, add, remove-optimistic) of the add/remove pair
    (see :func:`symgdp.training.engine.one_step_pmfs`)."""
    st = one_step_pmfs(q, sigma, disc, tail, bits, "add_remove")
    return st.directions[0], st.directions[1], st.optimistic


@dataclass(frozen=True)
class DPSGDResult:
    r"""Guaranteed GDP bracket for DP-SGD, with the approximations beside it.

    The headline is ``[mu_floor, mu_upper]``: it contains the mechanism's own
    :math:`\mu` on the head, the smallest :math:`\mu` for which DP-SGD is
    :math:`\mu`-GDP on :math:`[0, \varepsilon_h]`.

    Attributes:
        q, sigma, steps: the parameters (``q``, ``sigma`` are ``nan`` for a schedule of
            several phases; ``steps`` is the total; ``schedule`` lists the phases).
        mu_floor: a lower bound on the *mechanism*: every :math:`\mu` for which DP-SGD is
            :math:`\mu`-GDP on :math:`[0, \varepsilon_h]` is at least this (``nan`` with
            ``floor=False``).  ``mu_lower`` is the same number.
        mu_upper: a guarantee: DP-SGD is ``mu_upper``-GDP on :math:`[0, \varepsilon_h]`.
        eps_h: end of the head.
        failure_prob: the upper profile's value at :math:`\varepsilon_h` (at most the
            requested one): the true profile is at most this for every
            :math:`\varepsilon \ge \varepsilon_h`.
        neighbouring: the neighbouring relation assumed (``"add_remove"`` or
            ``"replace_one"``).
        schedule: the phases ``((q, sigma, steps), ...)`` the engine composed (for a
            sampling other than Poisson, those of :class:`~symgdp.training.sampling.SamplingPlan`:
            the dominating pair's, not the trainer's).
        sampling, tight, assumption: the sampling scheme, whether the bracket is tight
            (else ``mu_upper`` is a proved bound without amplification and ``mu_floor``
            Chua et al. 2024's certified max-statistic lower bound, or ``nan`` where none
            is attained), and the scheme with its theorem in words.
        sampling_params, poisson_reference: the scheme's parameters; the Poisson result
            beside a bound without amplification (**not a bound** for the scheme).
        surrogate_lower: the lower end of the measured bracket on what the *upper
            profile* proves (no smaller :math:`\mu` follows from it); **not** a bound on
            the mechanism (the profile is pessimistic).
        mu_clt: the CLT approximation (Bu, Dong, Long & Su 2020). **Not a bound.**
            (``nan`` for replace-one.)
        mu_rdp: upper end of the bracket measured on the Rényi bound alone (add/remove;
            ``nan`` for replace-one), same head; measured when first read (a property:
            :class:`~symgdp.training.upper.LazyRDPMu`, not in ``==`` or ``repr``).
        delta: the :math:`\delta` of the ``eps_*`` fields.
        eps_pld: dp_accounting's own pessimistic PLD :math:`\varepsilon(\delta)`
            (float64 FFT, no error bound; ``nan`` unless ``compare=True``).
        eps_rdp: the Rényi route's :math:`\varepsilon(\delta)` (improved conversion).
        eps_clt: :math:`\varepsilon(\delta)` of ``mu_clt``-GDP (approximate).
        discretization: the PLD's ``value_discretization_interval``.
        floor_discretization: the grid the floor was read from (``nan`` without floor).
        grid_rule: ``"given"``, or how the automatic grid and tol were chosen
            (:mod:`symgdp.training.grids`); ``measurement.tol`` is the tol used.
        eps_certified: the smallest :math:`\varepsilon` at which the upper profile is
            at most ``delta`` (rounded up): DP-SGD is
            :math:`(\varepsilon_{certified}, \delta)`-DP.
        pld_floor: the certified PLD's mass at infinity.
        floor_profile: the certified lower profile behind ``mu_floor`` of ``shuffle`` and
            ``random_allocation`` (:mod:`symgdp.training.allocation_floor`), else ``None``.
        examples_per_user: the examples each user contributes (1: record level; else
            add/remove of one *user*, :mod:`symgdp.training.userlevel`).
        measurement: the :class:`~symgdp.measurement.measure.Measurement` behind ``mu_upper``.
        closed_form: the numbers come from the exact closed form of a Gaussian composition
            (every phase has :math:`q = 1`: :mod:`symgdp.training.closed_form`), not from the
            PLD engine: ``mu_floor`` and ``mu_upper`` are the floats either side of the exact
            :math:`\mu` (at most two ulps apart), the guarantee holds on the whole line
            (``eps_h`` and ``failure_prob`` are still reported, as for the engine),
            ``profile`` is :math:`\delta_{\texttt{mu\_upper}}` rounded up (a
            :class:`~symgdp.training.closed_form.GaussianSource`), ``composed`` is ``None``
            and ``pld_floor``, ``floor_discretization`` are ``nan`` (no PLD, no grid;
            ``discretization`` is the one given, unused).  See :attr:`certification`.
        amplification: for ``random_allocation`` under add/remove, the amplified bound's
            source in words when it lowered ``mu_upper`` (then ``profile`` is the smaller
            of the two upper profiles, measured on the head:
            :mod:`symgdp.training.allocation_upper`), else ``""``.
        seconds: wall time.
    """

    q: float
    sigma: float
    steps: int
    mu_floor: float
    mu_upper: float
    eps_h: float
    failure_prob: float
    neighbouring: Neighbouring
    schedule: tuple[tuple[float, float, int], ...]
    surrogate_lower: float
    mu_clt: float
    delta: float
    eps_pld: float
    eps_rdp: float
    eps_clt: float
    discretization: float
    eps_certified: float = math.nan
    floor_discretization: float = math.nan
    grid_rule: str = "given"
    pld_floor: float = math.nan
    sampling: str = "poisson"
    tight: bool = True
    assumption: str = ""
    sampling_params: Any = field(default=None, compare=False)
    _poisson: Any = field(default=None, compare=False, repr=False)  # its arguments, cache
    plan: Any = field(default=None, compare=False, repr=False)
    examples_per_user: int = 1
    measurement: Any = field(default=None, compare=False, repr=False)
    profile: Any = field(default=None, compare=False, repr=False)
    composed: Any = field(default=None, compare=False, repr=False)
    closed_form: bool = False
    floor_profile: Any = field(default=None, compare=False, repr=False)
    amplification: str = ""
    seconds: float = field(default=math.nan, compare=False)
    _mu_rdp: Any = field(default=math.nan, compare=False, repr=False)  # float or LazyRDPMu

    @property
    def mu_rdp(self) -> float:
        """The Rényi bound alone's ``mu_upper`` (measured on first read)."""
        v = self._mu_rdp
        return v if isinstance(v, float) else v.value()

    @property
    def poisson_reference(self) -> DPSGDResult | None:
        """The Poisson result beside a bound (computed on first use; ``None`` when the
        scheme has none or the engine refuses it): not a bound for the scheme."""
        p = self._poisson
        if p is not None and "result" not in p:
            try:
                p["result"] = dpsgd(*p["args"], **p["kw"])
            except SymgdpError:
                p["result"] = None
        return None if p is None else p["result"]

    def __float__(self) -> float:
        """The safe end of the bracket, ``mu_upper``: ``float(r)`` is the guarantee."""
        return float(self.mu_upper)

    def statement(self) -> Any:
        r"""A privacy statement (:mod:`symgdp.training.statement`): the certified
        :math:`(\varepsilon, \delta)` and :math:`\mu` of this run under each sampling
        assumption (Poisson, fixed-size without replacement, shuffled epochs, random
        allocation) when the data set and batch sizes are known, each line naming its
        assumption and neighbouring relation; ``str()`` of it is the text.

        Example:
            >>> r = dpsgd(sampling="shuffle", dataset_size=40, batch_size=10, sigma=4.0,
            ...           epochs=1, tol=1e-3, value_discretization_interval=1e-3)
            >>> s = r.statement()
            >>> len(s.lines), sorted(s.results)[:2]
            (5, ['poisson', 'poisson_replace_one'])
        """
        from symgdp.training.statement import build_statement

        return build_statement(dpsgd, self)

    @property
    def mu_lower(self) -> float:
        """The lower end of the headline bracket (``mu_floor``)."""
        return self.mu_floor

    @property
    def certification(self) -> str:
        """What the numbers rest on, in one line: ``"exact: ..."`` for the closed form of a
        Gaussian composition (:math:`q = 1`), ``"certified: ..."`` for the PLD engine.

        Example:
            >>> dpsgd(1.0, 2.0, 4, tol=1e-3).certification[:6]
            'exact:'
        """
        if self.closed_form:
            what = ("the mechanism's mu" if self.tight
                    else "mu of the dominating Gaussian composition (a proved bound)")
            return (f"exact: closed form of a Gaussian composition, {what} = c sqrt(sum "
                    "T_i / sigma_i^2) (Dong, Roth & Su 2022, Cor. 3.3) rounded outwards to "
                    "floats; no grid")
        return ("certified: PLD in ball arithmetic and exact integers (the theorem of "
                "symgdp.training.dpsgd)")

    @property
    def width(self) -> float:
        return self.mu_upper - self.mu_floor

    def delta_lower(self, eps: Any) -> Any:
        r"""A proven lower bound on DP-SGD's true :math:`\delta(\varepsilon)` (the floor
        theorem, or :math:`\delta_{\texttt{mu\_floor}}` for the closed form); vectorised."""
        if self.floor_profile is not None:  # allocation_floor, allocation_tight
            return self.floor_profile.delta_lower(eps)
        if not self.tight:
            raise DomainError(f"sampling={self.sampling!r}: the result is a proved upper "
                              "bound only; no lower bound on the mechanism's profile")
        if self.closed_form:
            return self.profile.delta_lower(eps)
        if self.composed is None:
            raise DomainError("this result was computed without its composition")
        out = lower_profile(self.composed, eps)
        if self.plan is not None and self.plan.truncation:
            out = np.maximum(np.nextafter(out - self.plan.extra_delta(eps), -np.inf), 0.0)
        return float(out[0]) if np.ndim(eps) == 0 else out

    def eps_at(self, delta: float) -> float:
        r""":math:`\varepsilon` with :math:`(\varepsilon, \delta)`-DP from the guaranteed
        ``mu_upper``: :math:`\varepsilon_{GDP}(\mu_{upper}, \delta)`, or
        :math:`\varepsilon_h` when that is smaller (the profile is at most ``failure_prob``
        :math:`\le \delta` from :math:`\varepsilon_h` on).  Below ``failure_prob`` the head
        says nothing and :class:`~symgdp.errors.DomainError` is raised, except for a
        ``closed_form`` result, which is ``mu_upper``-GDP on the whole line.

        Example:
            >>> r = dpsgd(0.01, 1.0, 100, tol=1e-3)
            >>> r.eps_at(1e-5) >= r.eps_certified
            True
        """
        d = float(delta)
        if not (0 < d <= 1):
            raise DomainError(f"delta must lie in (0, 1], got {delta!r}")
        if self.closed_form:
            return float(eps_gdp(self.mu_upper, d))
        if d < self.failure_prob:
            raise DomainError(f"delta={d:g} is below the failure probability "
                              f"{self.failure_prob:.3g} of this bracket; ask dpsgd() for a "
                              "smaller failure_prob")
        e = float(eps_gdp(self.mu_upper, d))
        return min(e, self.eps_h)

    def tradeoff(self, alpha: Any, *, discretization: float | None = None,
                 **kw: Any) -> Any:
        r"""Guaranteed bounds on DP-SGD's trade-off curve at the type I errors ``alpha``
        (a :class:`~symgdp.notions.bands.TradeoffBand`; :func:`symgdp.notions.fdp.band`, whose
        keywords ``kw`` takes).  The lower band comes from the upper profile
        ``min(certified PLD, RDP)`` (the worse of the add and remove directions), the
        upper band from a proved lower bound on the profile: by default
        :meth:`delta_lower` (the floor theorem, any schedule and relation); with
        ``discretization`` (one phase, add/remove) the optimistic integer composition on
        that grid, whose rounding costs about :math:`T\Delta/2` in :math:`\varepsilon`.

        Example:
            >>> r = dpsgd(0.01, 1.0, 100, tol=1e-3, compare=False)
            >>> b = r.tradeoff([0.01, 0.1])
            >>> bool(((b.lower <= b.upper) & (b.upper - b.lower < 0.01)).all())
            True
        """
        from symgdp.notions.bands import band

        if self.profile is None:
            raise DomainError("this DPSGDResult carries no profile (build it with dpsgd())")
        disc = self.discretization if discretization is None else float(discretization)
        if not (math.isfinite(disc) and 0 < disc <= 1):
            raise DomainError(f"discretization must lie in (0, 1], got {discretization!r}")
        if (discretization is None and (self.composed is not None or self.amplification)) \
                or self.closed_form:
            # (a closed form has no grid: a valid discretization is not used)
            return band(_Bracketed(self.profile, self.delta_lower), alpha, **kw)
        if len(self.schedule) != 1 or self.neighbouring != "add_remove" \
                or self.sampling != "poisson" or self.examples_per_user != 1 \
                or (self.plan is not None and self.plan.params
                    and "weights" in self.plan.params):
            raise DomainError("a band on its own grid is for one phase of Poisson sampling "
                              f"with add/remove neighbours of one record, not "
                              f"{self._params()} ({self.sampling}, {self.neighbouring}, "
                              f"examples_per_user={self.examples_per_user})")
        from symgdp.training.engine import one_step_tail

        q, sigma, steps = self.schedule[0]
        low = _lower_pmf(q, sigma, steps, disc,
                         one_step_tail(max(self.failure_prob, 1e-300), steps))
        return band(_Bracketed(self.profile, low.lower_delta), alpha, **kw)

    def as_dict(self) -> dict[str, Any]:
        out = {k: getattr(self, k) for k in (
            "mu_floor", "mu_upper", "eps_h", "failure_prob", "neighbouring", "q", "sigma",
            "steps", "mu_lower", "surrogate_lower", "mu_clt", "mu_rdp", "delta", "eps_pld",
            "eps_rdp", "eps_clt", "discretization", "floor_discretization", "grid_rule",
            "eps_certified", "pld_floor", "sampling", "tight", "assumption",
            "examples_per_user", "closed_form", "amplification", "seconds")}
        out["schedule"] = [list(p) for p in self.schedule]
        out["sampling_params"] = dict(self.sampling_params or {})
        return out

    def _params(self) -> str:
        if self.sampling != "poisson":
            return ", ".join(f"{k}={v:g}" if isinstance(v, float) else f"{k}={v}"
                             for k, v in (self.sampling_params or {}).items())
        if len(self.schedule) == 1:
            q, s, t = self.schedule[0]
            return f"q={q:g}, sigma={s:g}, T={t}"
        return "schedule " + ", ".join(f"({q:g}, {s:g}, {t})" for q, s, t in self.schedule) \
            + f" (T={self.steps})"

    def __str__(self) -> str:
        from symgdp.numerics.decimals import format_bracket, format_upper

        rel = _RELATION_TEXT[self.neighbouring]
        if self.examples_per_user != 1:
            rel = f"add/remove one user ({self.examples_per_user} examples per user)"
        if math.isnan(self.mu_floor):
            head = f"mu <= {format_upper(self.mu_upper)}"
        else:
            lo, up = format_bracket(self.mu_floor, self.mu_upper)
            head = f"mu in [{lo}, {up}] (contains the mechanism's mu)"
        if self.closed_form:
            head = f"{head}, exact (closed form, Dong, Roth & Su 2022, Cor. 3.3)"
        clt = ("" if math.isnan(self.mu_clt)
               else f"; CLT approximation {self.mu_clt:.4f} (not a bound)")
        if self.sampling != "poisson" or self.examples_per_user != 1:
            head = (f"{head}; sampling: {self.assumption}"
                    + ("" if self.tight else " (a proved upper bound, not tight)"
                       if math.isnan(self.mu_floor) else " (a proved bracket, not tight)"))
        return (f"DP-SGD {self._params()}, neighbouring: {rel}: {head} on "
                f"[0, {format_upper(self.eps_h, 4)}] (failure probability "
                f"{format_upper(self.failure_prob, 3)}){clt}")


def certified_pld(q: float, sigma: float, steps: int, *,
                  value_discretization_interval: float = 1e-4,
                  failure_prob: float = 1e-10, neighbouring: Neighbouring = "add_remove") -> Any:
    r"""The certified pessimistic PLD profile of DP-SGD: a numeric
    :class:`~symgdp.profile.Profile` (a PLD source) that is an upper bound on the true
    profile at every :math:`\varepsilon \ge 0` (the theorem in :mod:`symgdp.training.dpsgd`), with
    no rounding margin: one step in ball arithmetic, the composition in exact integers.

    Example:
        >>> p = certified_pld(1.0, 1.0, 4)          # 4-fold 1-GDP is 2-GDP
        >>> from symgdp import delta_mu
        >>> bool(delta_mu(1.0, 2.0) <= p(1.0) <= delta_mu(1.0, 2.0) + 1e-3), p.source.margin
        (True, 0.0)
    """
    from symgdp.pld.curves import check_discretization

    q, sigma, steps = check_phase(q, sigma, steps)
    disc = check_discretization(value_discretization_interval)
    comp = _compose([(q, sigma, steps)], disc, float(failure_prob), neighbouring)
    return _pld_profile(comp)


def _compose(phases: Any, disc: float, fp: float, rel: Neighbouring, k: int = 1,
             weights: Any = None) -> Any:
    from symgdp.training.engine import compose_schedule

    if k != 1 or weights is not None:  # the mixture-of-Gaussians pair (add/remove only)
        from symgdp.training.userlevel import compose_user_level

        if rel != "add_remove":
            raise DomainError(f"examples_per_user={k} under neighbouring={rel!r}: only "
                              "add/remove of a user is analysed")
        return compose_user_level(phases, k, disc, fp, weights)
    return compose_schedule(phases, disc, fp, rel)


def _pld_profile(comp: Any) -> Any:
    from symgdp.pld.curves import curves_source
    from symgdp.profile import Profile

    return Profile.from_source(curves_source(comp.curves()), name="DP-SGD (certified PLD)",
                               discretization=comp.disc)


def _floor_grid(eps_h: float, argmax: Any) -> np.ndarray:
    xs = np.linspace(0.0, eps_h, 161)
    if argmax is not None and math.isfinite(float(argmax)):
        a = float(argmax)
        xs = np.concatenate([xs, np.clip(a + np.linspace(-0.02, 0.02, 41) * eps_h, 0, eps_h)])
    return np.unique(xs)


def _mu_floor(comp: Any, eps_h: float, argmax: Any = None, plan: Any = None) -> float:
    """Largest mu_gdp(eps, proven lower bound on the true delta(eps)) over a grid of
    [0, eps_h], rounded down and checked in ball arithmetic: every mu for which DP-SGD is
    mu-GDP on [0, eps_h] is at least this."""
    from symgdp.training.allocation_floor import mu_floor_from_lower

    xs = _floor_grid(eps_h, argmax)
    d = lower_profile(comp, xs)
    if plan is not None and plan.truncation:  # the truncated mechanism: minus T p (1 + e^eps)
        d = np.nextafter(d - plan.extra_delta(xs), -np.inf)
    return mu_floor_from_lower(xs, d)


def _phases(q: Any, sigma: Any, steps: Any, schedule: Any) -> tuple[Any, ...]:
    if schedule is not None:
        if q is not None or sigma is not None or steps is not None:
            raise DomainError("give either q, sigma, steps or schedule=, not both")
        return check_schedule(schedule)
    if q is None or sigma is None or steps is None:
        raise DomainError("dpsgd needs q, sigma and steps (or schedule=[(q, sigma, steps), "
                          "...])")
    return (check_phase(q, sigma, steps),)


def dpsgd(q: float | None = None, sigma: float | None = None, steps: int | None = None, *,
          schedule: Any = None, neighbouring: NeighbouringOrAuto = "auto",
          failure_prob: float = 1e-10, delta: float = 1e-5, tol: float | None = None,
          value_discretization_interval: float | None = None, floor: bool = True,
          compare: bool = False, floor_discretization: float | None = None,
          rdp_only: bool = True, sampling: Sampling = "poisson", dataset_size: int | None = None,
          batch_size: int | None = None, epochs: int | None = None,
          max_batch_size: int | None = None, examples_per_user: int = 1,
          _mixture_weights: Any = None, _engine: bool = False) -> DPSGDResult:
    r"""Guaranteed GDP :math:`\mu` bracket ``[mu_floor, mu_upper]`` for DP-SGD (see
    :mod:`symgdp.training.dpsgd`); it contains the mechanism's own :math:`\mu` on the head.

    Args:
        q: Poisson sampling rate in :math:`(0, 1]`.
        sigma: noise multiplier (noise standard deviation over the clipping norm).
        steps: number of steps :math:`T`.
        schedule: instead of ``q, sigma, steps``: phases ``[(q, sigma, steps), ...]``
            run in order (each phase's steps composed, then the phases); with
            ``sampling="without_replacement"`` phases ``[(batch_size, sigma, steps), ...]``
            on one data set of ``dataset_size`` records (replace-one; each phase's
            symmetrised measure, composed in order).
        neighbouring: ``"add_remove"`` (add or remove one record) or ``"replace_one"``.
        failure_prob: the largest acceptable :math:`\delta(\varepsilon_h)`.
        delta: the :math:`\delta` at which the ``eps_*`` fields are reported.
        tol: width of the measured bracket of ``mu_upper``; ``None``: automatic.
        value_discretization_interval: the PLD's grid; ``None``: automatic, :math:`10^{-4}`
            unless that run's ``mu_upper`` is below 0.2, then about :math:`10^{-2}\mu/\sqrt
            T` (``tol`` :math:`10^{-3}\mu`): a relative width near 1 %
            (:mod:`symgdp.training.grids`; ``grid_rule`` says what was done).
        floor: also compute ``mu_floor`` (cheap: same composition); ``nan`` otherwise.
        compare: also compute ``eps_pld`` with dp_accounting's own (float64 FFT) PLD
            (it costs as much as dp_accounting itself); ``nan`` otherwise.
        floor_discretization: a separate grid for the floor (another composition);
            default: the same composition as ``mu_upper``, or automatically a finer grid
            when the floor's shift (about :math:`\Delta\sqrt{11.5\,T}`) exceeds a
            twentieth of the head (tiny heads: small :math:`q`, large :math:`\sigma`);
            for shuffle and random allocation the max-statistic floor's loss grid.
        rdp_only: also give ``mu_rdp`` (the Rényi bound alone; add/remove only),
            measured when first read.
        sampling: how batches are drawn, one of ``"poisson"`` (``q, sigma, steps``),
            ``"without_replacement"`` (``dataset_size, batch_size, sigma, steps``),
            ``"shuffle"`` (``dataset_size, batch_size, sigma, epochs``),
            ``"random_allocation"`` (``sigma, steps`` per epoch, ``epochs``) and
            ``"truncated_poisson"`` (``q, sigma, steps, dataset_size, max_batch_size``):
            each scheme's theorem and what it proves in :mod:`symgdp.training.sampling`
            (``neighbouring="auto"`` takes the relation the scheme is stated for: replace-one
            for ``without_replacement``, add/remove otherwise).  The result names it
            (``sampling``, ``assumption``; ``tight`` false: a proved upper bound without
            amplification, ``mu_floor`` the certified max-statistic lower bound of Chua et
            al. 2024 (:mod:`symgdp.training.allocation_floor`; ``nan`` for shuffled batches
            that do not divide the data set), and ``poisson_reference`` the Poisson
            number beside it, not a bound).
        dataset_size, batch_size, epochs, max_batch_size: the scheme's parameters.
        examples_per_user: ``k``, the examples each user contributes (Poisson sampling,
            add/remove of a *user*): each example sampled independently with rate
            ``q`` and clipped to norm 1, one step is the mixture-of-Gaussians pair
            :math:`\sum_j \binom{k}{j}q^j(1-q)^{k-j}N(j, \sigma^2)` vs
            :math:`N(0, \sigma^2)` in both directions (Ganesh 2024, arXiv:2401.10294;
            :mod:`symgdp.training.userlevel`), certified as for ``k = 1`` (no Rényi
            curve beside it: ``mu_rdp``, ``mu_clt`` are ``nan``).  Replace-one and the
            other sampling schemes are refused for ``k > 1``.
        _mixture_weights: internal (:mod:`symgdp.training.event_route`): the law of
            :math:`J` as ``k + 1`` weights of a ``MixtureOfGaussiansDpEvent`` (normalised
            exactly) instead of :math:`\mathrm{Bin}(k, q)`.
        _engine: internal (tests): the PLD engine even where the closed form applies.

    When every phase the engine would compose has :math:`q = 1` (Poisson with ``q=1``,
    ``without_replacement`` with ``batch_size == dataset_size``, ``shuffle`` and
    ``random_allocation``, whose bound is one Gaussian per epoch, ``truncated_poisson``
    that never truncates), DP-SGD is a Gaussian composition and the result is its exact
    closed form (``closed_form=True``, :mod:`symgdp.training.closed_form`), at no cost.

    Example:
        >>> r = dpsgd(0.01, 1.0, 100, tol=1e-3)
        >>> r.mu_floor <= r.surrogate_lower <= r.mu_upper <= r.mu_floor + 0.01
        True
        >>> r.failure_prob <= 1e-10, r.neighbouring
        (True, 'add_remove')
        >>> dpsgd(schedule=[(0.01, 1.0, 100)], tol=1e-3).mu_upper == r.mu_upper
        True
    """
    from symgdp.pld.curves import check_discretization
    from symgdp.training.userlevel import check_examples_per_user, check_weights

    t0 = time.perf_counter()
    plan = None
    k = check_examples_per_user(examples_per_user)
    # the law of J given instead of Bin(k, q) (dp_accounting's mixture events, event_route)
    weights = check_weights(_mixture_weights, k)
    if weights is not None and sampling != "poisson":
        raise DomainError(f"mixture weights are for Poisson phases, not sampling={sampling!r}")
    if (schedule is not None and sampling == "poisson" and k != 1) or weights is not None:
        plan = user_plan(_phases(q, sigma, steps, schedule), k, neighbouring, weights)
        phases, rel = plan.phases, plan.engine_relation
    elif schedule is None or sampling != "poisson" or k != 1:
        if schedule is not None and (q is not None or sigma is not None or steps is not None):
            raise DomainError("give either q, sigma, steps or schedule=, not both")
        plan = plan_sampling(sampling, q=q, sigma=sigma, steps=steps,
                             neighbouring=neighbouring, dataset_size=dataset_size,
                             batch_size=batch_size, epochs=epochs,
                             max_batch_size=max_batch_size,
                             examples_per_user=examples_per_user, schedule=schedule)
        phases, rel = plan.phases, plan.engine_relation
    else:
        phases = _phases(q, sigma, steps, schedule)
        rel = check_neighbouring("add_remove" if neighbouring == "auto" else neighbouring)
    fp = float(failure_prob)
    if not (0 < fp < 1):
        raise DomainError(f"failure_prob must lie in (0, 1), got {failure_prob!r}")
    d = float(delta)
    if not (0 < d < 1):
        raise DomainError(f"delta must lie in (0, 1), got {delta!r}")
    # None: automatic (the rule of symgdp.training.grids); given values are used as given
    auto = (value_discretization_interval is None, tol is None)
    disc = BASE_GRID if auto[0] else check_discretization(value_discretization_interval)
    tol_ = BASE_TOL if tol is None else tol
    if floor and floor_discretization is not None:
        fdisc = float(floor_discretization)
        if not (math.isfinite(fdisc) and 0 < fdisc <= 1):
            raise DomainError(f"floor_discretization must lie in (0, 1], got "
                              f"{floor_discretization!r}")
    if plan is not None and plan.truncation * 2.0 > fp:
        raise DomainError(f"sampling='truncated_poisson': the probability of truncation "
                          f"over the run, T p <= {plan.truncation:.3g}, is not below half "
                          f"of failure_prob={fp:g}; raise max_batch_size or failure_prob")
    if not _engine and weights is None and all(p[0] == 1.0 for p in phases) \
            and (plan is None or plan.truncation == 0):
        out = _closed_form(phases, rel, k, fp, d, tol_, disc, floor, compare, rdp_only,
                           plan is not None and plan.symmetrise)
        out = dataclasses.replace(out, grid_rule="automatic: no grid (closed form)"
                                  if any(auto) else "given")
        if plan is not None and plan.sampling == "random_allocation" and rel == "add_remove":
            out = _amplified(out, plan, fp, d, tol_)
    else:
        out = _engine_result(phases, rel, k, weights, plan, fp, d, tol_, disc, floor,
                             floor_discretization, compare, rdp_only, auto)
    out = dataclasses.replace(out, seconds=time.perf_counter() - t0)
    if plan is None:
        return out
    ref = None if plan.poisson is None else {  # the Poisson number beside a bound, lazily
        "args": (plan.poisson[0], plan.sigma, plan.poisson[1]),
        "kw": dict(neighbouring=plan.neighbouring, failure_prob=fp, delta=d, tol=tol,
                   value_discretization_interval=value_discretization_interval,
                   floor=False, rdp_only=False)}
    out = plan.finish(out, ref)
    if out.amplification:  # the upper end is the attained pair's own profile: tight
        out = dataclasses.replace(out, tight=True)
    if floor and plan.floor_pair is not None:  # shuffle, random allocation: Chua et al.'s
        from symgdp.training.allocation_floor import scheme_floor

        pf = None
        if out.amplification:  # random allocation: the floor of the attained pair itself
            pf = _pair_floor(out, plan, fp)
        if pf is not None and floor_discretization is None:
            fl, fg, fprof, note = pf
        else:  # the max-statistic floor (on its grid, when one is given)
            fl, fg, fprof, note = scheme_floor(plan, out.eps_h, floor_discretization)
            if out.amplification:
                from symgdp.training.allocation_floor import THEOREM as MAX_STAT

                note = f"; floor: {MAX_STAT}{note}"
            if pf is not None and not fl >= pf[0]:
                fl, fg, fprof, note = pf
        if fl > out.mu_upper:  # a floor above a proved bound is a bug: never shown
            raise SymgdpError(f"internal: the floor {fl!r} is above mu_upper {out.mu_upper!r}")
        out = dataclasses.replace(out, mu_floor=fl, floor_discretization=fg,
                                  floor_profile=fprof, assumption=out.assumption + note)
    return dataclasses.replace(out, seconds=time.perf_counter() - t0)


def _pair_floor(out: DPSGDResult, plan: Any, fp: float) -> tuple[float, float, Any, str] | None:
    """Random allocation (add/remove, amplified): the floor of the attained pair itself
    (:mod:`symgdp.training.allocation_tight`) as ``(mu_floor, grid, lower profile, note)``,
    or ``None`` when it is refused or proves nothing."""
    from symgdp.training.allocation_floor import mu_floor_from_lower
    from symgdp.training.allocation_tight import pair_floor

    try:
        pf = pair_floor(plan.sigma, int(plan.params["steps"]), plan.phases[0][2], fp)
    except DomainError:
        return None
    xs = _floor_grid(out.eps_h, getattr(out.measurement, "argmax", None))
    mu = mu_floor_from_lower(xs, pf.delta_lower(xs))
    if not mu > 0:
        return None
    return mu, pf.disc, pf, ("; floor: the attained pair's certified lower profile "
                             "(symgdp.training.allocation_tight)")


def _amplified(out: DPSGDResult, plan: Any, fp: float, d: float, tol: float
               ) -> DPSGDResult:
    """Random allocation under add/remove: the smaller of the bound without amplification
    (``out``, the Gaussian composition) and the amplified one
    (:mod:`symgdp.training.allocation_upper`), measured on the head; ``out`` itself when
    the amplification does not lower mu (then its statement holds on the whole line), or
    when the amplified bound refuses the setting (sigma too small for its grid, a
    composition too large): ``out`` is a proved bound on its own, so a refusal of the
    amplified one must not refuse the call."""
    from symgdp.pld.head import head_measure
    from symgdp.training.allocation_upper import THEOREM, allocation_upper
    from symgdp.training.upper import Smaller

    per, epochs = int(plan.params["steps"]), plan.phases[0][2]
    if per < 2:  # one step per epoch: the Gaussian itself
        return out
    if epochs > 10_000:
        # each epoch's P-atom at +oo (about 1e-20) composes to a floor of E 1e-20 that
        # spoils the head long before, and the composition costs a minute: not tried
        return out
    try:
        amp = allocation_upper(plan.sigma, per, epochs, fp)
    except DomainError:
        return out
    upper = Smaller(out.profile, amp.profile, name="random allocation: min(Gaussian without "
                    "amplification, amplified certified PLD)")
    m, fail = head_measure(upper, fp, tol)
    if not m.upper < out.mu_upper:
        return out
    return dataclasses.replace(
        out, mu_upper=m.upper, eps_h=m.eps_h, failure_prob=fail, surrogate_lower=m.lower,
        discretization=amp.disc, eps_certified=_eps_for_delta(upper, d), measurement=m,
        profile=upper, closed_form=False, amplification=THEOREM)


def _rdp_curve(phases: Any) -> tuple[Any, Any]:
    """The Rényi orders and the composed Rényi curve of Poisson phases (add/remove)."""
    from symgdp.notions.renyi import DEFAULT_ORDERS, subsampled_gaussian_log_a

    orders = np.asarray(DEFAULT_ORDERS, dtype=np.float64)
    total = sum(t * subsampled_gaussian_log_a(qq, s, DEFAULT_ORDERS)
                for qq, s, t in phases) / (orders - 1.0)
    return orders, total


def _closed_form(phases: Any, rel: Neighbouring, k: int, fp: float, d: float, tol: float,
                 disc: float, floor: bool, compare: bool, rdp_only: bool,
                 sym: bool) -> DPSGDResult:
    r"""Every phase has q = 1: the composition of Gaussians with sensitivity c (1 under
    add/remove, 2 under replace-one, k for a user with k examples), exactly
    :math:`c\sqrt{\sum_i T_i/\sigma_i^2}`-GDP (:mod:`symgdp.training.closed_form`)."""
    from symgdp.notions.renyi import eps_from_rdp
    from symgdp.training.closed_form import (
        THEOREM,
        GaussianSource,
        gaussian_measurement,
        gaussian_mu_bracket,
        head_end,
    )

    c = k * (2 if rel == "replace_one" else 1)
    lo, up = gaussian_mu_bracket([(t, c, s) for _, s, t in phases])
    src = GaussianSource(lo, up, name="DP-SGD (exact Gaussian composition)")
    eps_h, fail = head_end(up, fp)
    m = gaussian_measurement(lo, up, eps_h, tol, src, f"q = 1: DP-SGD is the Gaussian "
                             f"mechanism with sensitivity {c} composed ({THEOREM})")
    eps_rdp = clt = math.nan
    mu_rdp: Any = math.nan
    if rel == "add_remove" and not sym and k == 1:  # the Rényi and CLT numbers beside it
        with np.errstate(over="ignore", invalid="ignore"):
            orders, total = _rdp_curve(phases)
            eps_rdp = float(eps_from_rdp(orders, total, d))
        # (far beyond what the engine could compose: e^{1/sigma^2} overflows, inf)
        clt = math.sqrt(sum(t * (math.expm1(1.0 / (s * s)) if s > 0.04 else math.inf)
                            for _, s, t in phases))
        if rdp_only:  # measured when read (inf when the Rényi bound proves no head)
            mu_rdp = LazyRDPMu(_UpperProfile(None, orders, total), fp, tol)
    single = len(phases) == 1
    return DPSGDResult(
        q=phases[0][0] if single else math.nan, sigma=phases[0][1] if single else math.nan,
        steps=sum(p[2] for p in phases), mu_floor=lo if floor else math.nan, mu_upper=up,
        eps_h=eps_h, failure_prob=fail, neighbouring=rel, schedule=tuple(phases),
        surrogate_lower=lo, mu_clt=clt, _mu_rdp=mu_rdp, delta=d,
        eps_pld=_eps_pld(phases, disc, d, rel, k) if compare else math.nan,
        eps_rdp=eps_rdp, eps_clt=float(eps_gdp(clt, d)) if clt == clt else math.nan,
        discretization=disc, eps_certified=float(eps_gdp(up, d)), measurement=m,
        profile=src, closed_form=True)


def _engine_result(phases: Any, rel: Neighbouring, k: int, weights: Any, plan: Any, fp: float,
                   d: float, tol: float, disc: float, floor: bool,
                   floor_discretization: float | None, compare: bool,
                   rdp_only: bool, auto: tuple[bool, bool] = (False, False),
                   least: float = 0.0) -> DPSGDResult:
    """The certified PLD engine's bracket (module notes); ``auto``: the grid, the tol are
    chosen (:mod:`symgdp.training.grids`), this run on ``disc``, ``tol`` being the first;
    ``least``: the floor's own grid is no finer."""
    from symgdp.notions.renyi import eps_from_rdp
    from symgdp.pld.head import head_measure

    total_steps = sum(p[2] for p in phases)
    comp = _compose(phases, disc, fp, rel, k, weights)
    pld_profile = _pld_profile(comp)
    sym = plan is not None and plan.symmetrise
    if sym:  # the upper bound from the symmetrised measure; the floor from the pair (R)
        from symgdp.training.symmetrised import compose_symmetric_schedule

        pld_profile = _pld_profile(compose_symmetric_schedule(phases, disc, fp))
    if rel == "add_remove" and not sym and k == 1 and weights is None:
        orders, total = _rdp_curve(phases)
        upper = _UpperProfile(pld_profile, orders, total)
        eps_rdp = eps_from_rdp(orders, total, d)
        clt = math.sqrt(sum(t * (qq * qq) * math.expm1(1.0 / (s * s)) for qq, s, t in phases))
    else:  # no Rényi curve of the replace-one or user-level pair here: the PLD alone
        upper = _UpperProfile(pld_profile, None, None)
        eps_rdp = clt = math.nan
    if plan is not None:
        upper = plan.wrap(upper)
    m, fail = head_measure(upper, fp, tol)
    rule = "given"
    if any(auto):  # a small mu: a finer grid and/or tol (symgdp.training.grids)
        sp = step_points(phases, disc, fp, rel) if k == 1 and weights is None else None
        ch = auto_grid(m.upper, total_steps, disc, tol, comp.pmfs[0].size, sp, auto=auto)
        if ch.disc != disc:
            return dataclasses.replace(_engine_result(
                phases, rel, k, weights, plan, fp, d, ch.tol, ch.disc, floor,
                floor_discretization, compare, rdp_only, least=ch.floor_least),
                grid_rule=ch.text)
        if ch.tol != tol:
            m, fail = head_measure(upper, fp, ch.tol)
        rule = ch.text
    eps_pld = _eps_pld(phases, disc, d, rel, k, weights) if compare else math.nan
    mu_rdp: Any = math.nan  # measured when read (the first run's tol, as before)
    if rdp_only and getattr(upper, "orders", None) is not None:
        mu_rdp = LazyRDPMu(upper, fp, tol)
    mu_fl, fdisc = math.nan, math.nan
    if floor:
        argmax = getattr(m, "argmax", None)
        user = k != 1 or weights is not None
        if floor_discretization is not None:
            fdisc = float(floor_discretization)
        elif not user:
            fdisc = floor_grid_step(phases, disc, fp, rel, m.eps_h, least)
        else:
            from symgdp.training.userlevel import floor_grid_step as user_floor_grid

            fdisc = user_floor_grid(phases, k, disc, fp, m.eps_h, weights, least)
        # the composition of mu_upper serves whenever the floor's grid is its grid (also
        # when floor_discretization names that same grid)
        mu_fl = _mu_floor(comp, m.eps_h, argmax, plan) if floor_discretization is None \
            or fdisc == disc else 0.0
        if fdisc != disc:  # the floor's own grid: another composition
            mu_fl = max(mu_fl, _mu_floor(_compose(phases, fdisc, fp, rel, k, weights), m.eps_h,
                                         argmax, plan))
        mu_fl = min(mu_fl, m.upper)
    single = len(phases) == 1
    return DPSGDResult(
        q=phases[0][0] if single else math.nan, sigma=phases[0][1] if single else math.nan,
        steps=total_steps, mu_floor=mu_fl, mu_upper=m.upper, eps_h=m.eps_h,
        failure_prob=fail, neighbouring=rel, schedule=tuple(phases),
        surrogate_lower=m.lower, mu_clt=clt, _mu_rdp=mu_rdp, delta=d, eps_pld=eps_pld,
        eps_rdp=eps_rdp, eps_clt=float(eps_gdp(clt, d)) if clt == clt else math.nan,
        discretization=disc, floor_discretization=fdisc,
        grid_rule=rule,
        eps_certified=_eps_for_delta(upper, d),
        pld_floor=pld_profile.source.floor, measurement=m, profile=upper, composed=comp)


def _eps_for_delta(profile: Any, delta: float) -> float:
    """Smallest eps (to 1e-9, rounded up) where the upper profile is <= delta."""
    from symgdp.pld.curves import first_eps_below

    return first_eps_below(profile, math.log(delta), 1e-9)


@functools.lru_cache(maxsize=4)
def _lower_pmf(q: float, sigma: float, steps: int, disc: float, tail: float) -> Any:
    """The optimistic T-fold integer composition (remove direction): its ``lower_delta``
    is a proved lower bound on DP-SGD's profile."""
    from symgdp.pld.pmf import SCALE_BITS, int_self_compose

    _, _, opt = subsampled_gaussian_pmfs(q, sigma, disc, tail, SCALE_BITS)
    return int_self_compose(opt, steps)
