r"""How a trainer draws its batches: each sampling scheme reduced to a certified question
for the DP-SGD engine (:mod:`symgdp.training.engine`), with the theorem that makes the
reduction a proof.

:func:`symgdp.dpsgd` takes ``sampling=`` one of :data:`SAMPLINGS`; :func:`plan_sampling`
checks the scheme's parameters and returns a :class:`SamplingPlan`: the phases and
the neighbouring relation the engine composes, the relation the result is stated for,
and what is added to the engine's profile.  The schemes (clipping norm 1, noise
multiplier :math:`\sigma`, :math:`n` records, batch size :math:`b`):

* ``"poisson"`` (``q, sigma, steps``): each record in each step independently with
  probability :math:`q`; the engine's own pairs (see :mod:`symgdp.training.engine`).
  **Tight.**

* ``"without_replacement"`` (``dataset_size, batch_size, sigma, steps``): each step a
  fresh uniformly random batch of exactly :math:`b` of the :math:`n` records; stated
  under **replace-one** (the relation that keeps :math:`n`, hence the batch size; the
  replaced record's clipped contribution moves from :math:`c` to :math:`c'`,
  :math:`\|c - c'\| \le 2`, so the unsampled step is :math:`G_{2/\sigma}`).  With
  :math:`\gamma = b/n`, one step is :math:`C_\gamma(G_{2/\sigma})`-DP (Dong, Roth & Su
  2022, Theorem 4.2; for :math:`\varepsilon \ge 0` the profile of Balle, Barthe &
  Gaboardi 2018, Theorem 10): the symmetrisation of the pair :math:`R = (\gamma N(2,
  \sigma^2) + (1 - \gamma)N(0, \sigma^2), N(0, \sigma^2))`, i.e. of the add/remove
  pair of the Poisson-subsampled Gaussian with rate :math:`\gamma` and noise
  :math:`\sigma/2`.  ``mu_upper`` composes that symmetrised measure
  (:mod:`symgdp.training.symmetrised`: adaptive gradients can alternate :math:`R` and its
  swap, so the larger of the two one-direction compositions would not be a bound);
  ``mu_floor`` comes from the pair itself, which is **attained**: with every other
  record's clipped gradient :math:`-e` and the replaced one :math:`e \to -e`
  (:math:`\|e\| = 1`) at every step, the batch sum is :math:`-(b-2)e` with probability
  :math:`\gamma` and :math:`-be` otherwise on one side and :math:`-be` on the other, a
  shift of :math:`R` (the swapped data sets give the swap).  So the bracket contains the
  mechanism's :math:`\mu` (its width is the gap between fixed and adaptive gradients,
  a few per cent at :math:`T = 1000`; zero at :math:`T = 1`).  dp_accounting states the
  same scheme with the noise multiplier over :math:`\|c - c'\|` (its
  ``SampledWithoutReplacementDpEvent`` with noise :math:`s` is ours with :math:`\sigma
  = 2s`).  ``add_remove`` is refused by name: adding a record changes :math:`n`, and no
  analysis of that relation is implemented here.

* ``"shuffle"`` (``dataset_size, batch_size, sigma, epochs``): each epoch a random
  permutation cut into batches of :math:`b`.  **No tight analysis exists**; the result
  is the proved bound **without amplification**: each record is in exactly one batch of
  each epoch, so (coupling the permutations of the other records) each epoch is one use
  of the Gaussian with sensitivity 1 (add/remove, the record's batch gaining or losing
  it, the other batches unchanged: for a fixed-size cut this is the zero-out relation)
  or 2 (replace-one), composed adaptively over the epochs (Dong, Roth & Su 2022,
  Corollary 3.3): :math:`\mu = \sqrt{E}/\sigma` or :math:`2\sqrt{E}/\sigma`, exactly.
  ``mu_floor`` is the certified max-statistic lower bound of Chua, Ghazi, Kamath et al.
  2024 (:mod:`symgdp.training.allocation_floor`: the pair it rests on is attained, with
  :math:`t = \lceil n/b\rceil` batches, the last one partial when :math:`b \nmid n`, and
  sensitivity 1 under this zero-out reading of add/remove, 2 under replace-one).
  Beside it, as tensorflow/privacy's privacy statement does, the Poisson number for
  :math:`q = b/n` and :math:`E\lceil n/b\rceil` steps (``poisson_reference``): **not a
  bound** for shuffling (Chua, Ghazi, Kamath et al. 2024 show shuffled batches can be
  far less private than that number).

* ``"random_allocation"`` (``sigma, steps`` per epoch, ``epochs``): each record in
  exactly one uniformly random step of each epoch (balls in bins).  The result is the
  same proved bound without amplification (the record's step gains or loses it: joint
  convexity of the hockey-stick divergence over the step it lands in, then adaptive
  composition), :math:`\sqrt{E}/\sigma` (add/remove) or :math:`2\sqrt{E}/\sigma`
  (replace-one).  Under add/remove :func:`symgdp.dpsgd` takes the smaller of this and the
  **amplified** bound of :mod:`symgdp.training.allocation_upper`: the dominating pair of one
  epoch (Chua et al. 2025, balls-and-bins; Feldman & Shenfeld 2025, arXiv:2502.08202), proved
  there, with the law of its likelihood ratio certified by mean-preserving spreads and
  composed over the epochs in exact integers; the pair is attained, so its certified lower
  profile (:mod:`symgdp.training.allocation_tight`) is a floor and the bracket is tight.
  Under replace-one no amplified pair is proved here: the bound stays without
  amplification.  The Poisson number with rate :math:`1/t` is
  shown beside it as ``poisson_reference`` and is **not a bound**.
  ``mu_floor`` is the certified max-statistic lower bound (Chua, Ghazi, Kamath et al. 2024;
  :mod:`symgdp.training.allocation_floor`) of the attained pair with sensitivity 1 (under
  replace-one too: the record replaced by one whose gradient is 0; loose there by up to a
  factor 2).

* ``"truncated_poisson"`` (``q, sigma, steps, dataset_size, max_batch_size``): Poisson
  sampling, the batch cut to at most ``max_batch_size`` records by any rule.  The two
  mechanisms coincide unless a batch exceeds the maximum: coupling the sampling and the
  noise, the total variation between them over :math:`T` steps is at most
  :math:`Tp`, :math:`p = \Pr[\mathrm{Bin}(N, q) > B]` (:math:`N = n + 1` under
  add/remove, covering both data sets; :math:`n` under replace-one).  Hence
  :math:`\delta_{trunc}(\varepsilon) \le \delta_{Poisson}(\varepsilon) + Tp(1 +
  e^\varepsilon)` and :math:`\delta_{trunc}(\varepsilon) \ge \delta_{Poisson}(\varepsilon)
  - Tp(1 + e^\varepsilon)` (from :math:`P(S) \le P'(S) + Tp`: the triangle inequality
  of the hockey-stick divergence with total variation).

Every relation a scheme has no analysis for is refused by name
(:class:`~symgdp.errors.DomainError`).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from symgdp.contracts import Neighbouring
from symgdp.errors import DomainError
from symgdp.numerics.rounding import exp_up
from symgdp.training.engine import check_neighbouring, check_phase

__all__ = ["SAMPLINGS", "SamplingPlan", "plan_sampling", "truncation_probability",
           "user_plan"]

#: the sampling schemes :func:`symgdp.dpsgd` accounts, by their fixed names
SAMPLINGS = ("poisson", "without_replacement", "shuffle", "random_allocation",
             "truncated_poisson")

#: the relation a scheme is stated under when none is given
_DEFAULT_RELATION = {"poisson": "add_remove", "without_replacement": "replace_one",
                     "shuffle": "add_remove", "random_allocation": "add_remove",
                     "truncated_poisson": "add_remove"}

_TEXT = {
    "poisson": "Poisson sampling (each record in each step independently with "
               "probability q); tight",
    "without_replacement": "fixed-size batches drawn without replacement each step "
                           "(Dong, Roth & Su 2022, Thm 4.2, symmetrised subsampled Gaussian); "
                           "tight",
    "shuffle": "shuffled epochs (a random permutation cut into batches): no tight analysis "
               "exists; proved bound without amplification (each epoch one use of the "
               "Gaussian)",
    "random_allocation": "random allocation (each record in exactly one step per epoch): "
                         "proved bound without amplification (each epoch one use of the "
                         "Gaussian)",
    "truncated_poisson": "Poisson sampling truncated to a maximum batch size: the Poisson "
                         "profile plus T p (1 + e^eps), p the probability of truncation",
}


#: the floor of shuffled epochs and random allocation, in words
_FLOOR = ("the max-statistic lower bound of Chua, Ghazi, Kamath et al. 2024 (arXiv:2403.17673), "
          "certified")


def _int(name: str, value: Any, low: int = 1) -> int:
    ok = not isinstance(value, bool) and isinstance(value, (int, np.integer))
    if not ok and isinstance(value, float) and value.is_integer():
        ok, value = True, int(value)
    if not ok or int(value) < low:
        raise DomainError(f"{name} must be an integer >= {low}, got {value!r}")
    return int(value)


def truncation_probability(n: int, q: float, max_batch: int) -> float:
    r"""An upper bound (float64, rounded up) on :math:`\Pr[\mathrm{Bin}(n, q) > B]`
    (the regularised incomplete beta function :math:`I_q(B + 1, n - B)` at 40 digits).

    Example:
        >>> p = truncation_probability(2, 0.5, 1)      # 1/4, rounded up
        >>> truncation_probability(10, 0.5, 10), 0.25 <= p <= 0.25 * (1 + 1e-15)
        (0.0, True)
    """
    import mpmath

    if max_batch >= n:
        return 0.0
    with mpmath.workdps(40):
        p = mpmath.betainc(max_batch + 1, n - max_batch, 0, mpmath.mpf(q), regularized=True)
        p = min(p * (1 + mpmath.mpf(10) ** -25), mpmath.mpf(1))
    v = float(p)
    return min(float(np.nextafter(v, np.inf)) if v < p else v, 1.0)


@dataclass(frozen=True)
class SamplingPlan:
    r"""A sampling scheme as the engine's question.

    Attributes:
        sampling: the scheme's name (one of :data:`SAMPLINGS`).
        phases: ``((q, sigma, steps), ...)`` the engine composes (for
            ``without_replacement`` the dominating pair's: rate :math:`b/n`, noise
            :math:`\sigma/2`; for ``shuffle`` and ``random_allocation`` one Gaussian per
            epoch, rate 1).
        engine_relation: the pair's relation in the engine.
        neighbouring: the relation the result is stated under.
        q, sigma, steps: the trainer's rate (``b/n``, or ``1/t``), noise and total steps.
        tight: the engine's bracket contains the mechanism's own :math:`\mu` (else the
            result is a proved upper bound, and ``mu_floor`` is the floor of
            ``floor_pair``, or ``nan`` without one).
        truncation: :math:`Tp` (``truncated_poisson``): the profile gets
            :math:`Tp(1 + e^\varepsilon)` added.
        poisson: ``(q, steps)`` of the Poisson number shown beside a bound without
            amplification (not a bound for the scheme), or ``None``.
        examples_per_user: ``k`` examples per user (Poisson, add/remove of a user:
            :mod:`symgdp.training.userlevel`); 1 for record-level accounting.
        floor_pair: ``(t, c)`` of the attained max-statistic pair behind a floor of a bound
            without amplification (``shuffle``, ``random_allocation``:
            :mod:`symgdp.training.allocation_floor`), or ``None`` (no floor).
        assumption: the scheme in words, with its theorem.
        params: the scheme's parameters as given.
    """

    sampling: str
    phases: tuple[tuple[float, float, int], ...]
    engine_relation: Neighbouring
    neighbouring: Neighbouring
    q: float
    sigma: float
    steps: int
    tight: bool = True
    truncation: float = 0.0
    poisson: tuple[float, int] | None = None
    symmetrise: bool = False
    assumption: str = ""
    params: Any = None
    examples_per_user: int = 1
    floor_pair: tuple[int, float] | None = None

    def extra_delta(self, eps: Any) -> Any:
        r""":math:`Tp(1 + e^\varepsilon)` rounded up (vectorised; 0 without truncation)."""
        x = np.asarray(eps, dtype=np.float64)
        if self.truncation == 0:
            return np.zeros(x.shape)
        with np.errstate(over="ignore"):
            return self.truncation * (1.0 + np.exp(x)) * (1.0 + 2.0**-48)

    def wrap(self, upper: Any) -> Any:
        """The engine's upper profile with the truncation term added (itself when none)."""
        return upper if self.truncation == 0 else _PlusTruncation(upper, self)

    def finish(self, result: Any, poisson_reference: Any = None) -> Any:
        """The engine's result restated for the scheme (a new frozen dataclass)."""
        kw: dict[str, Any] = dict(
            sampling=self.sampling, neighbouring=self.neighbouring, tight=self.tight,
            assumption=self.assumption, sampling_params=self.params,
            _poisson=poisson_reference, plan=self,
            examples_per_user=self.examples_per_user)
        if self.sampling != "poisson" or len(self.phases) == 1:
            kw.update(q=self.q, sigma=self.sigma, steps=self.steps)
        if self.truncation:  # the Renyi and CLT numbers are the untruncated run's
            kw.update(mu_clt=math.nan, eps_clt=math.nan, eps_rdp=math.nan,
                      eps_pld=math.nan)
        if self.symmetrise:  # no Renyi curve or CLT of the symmetrised measure here
            kw.update(mu_clt=math.nan, eps_clt=math.nan, _mu_rdp=math.nan, eps_rdp=math.nan,
                      eps_pld=math.nan)
        if self.examples_per_user != 1:  # no Renyi curve or CLT of the user-level pair here
            kw.update(mu_clt=math.nan, eps_clt=math.nan, _mu_rdp=math.nan, eps_rdp=math.nan)
        if not self.tight:
            # (the floor of floor_pair, if any, is put in by symgdp.dpsgd afterwards)
            kw.update(mu_floor=math.nan, floor_discretization=math.nan, mu_clt=math.nan,
                      eps_clt=math.nan, _mu_rdp=math.nan, eps_rdp=math.nan, eps_pld=math.nan)
        return dataclasses.replace(result, **kw)


class _PlusTruncation:
    """An upper profile plus T p (1 + e^eps), capped at 1, in log space (proved values:
    the sum is rounded up by a relative 2^-48)."""

    proved_values = True

    def __init__(self, upper: Any, plan: SamplingPlan) -> None:
        self.upper, self.plan = upper, plan
        self.name = f"{getattr(upper, 'name', 'PLD')} + truncation"

    def log_delta(self, eps: Any) -> Any:
        x = np.asarray(eps, dtype=np.float64)
        base = np.exp(np.asarray(self.upper.log_delta(x), dtype=np.float64))
        total = np.minimum((base + self.plan.extra_delta(x)) * (1.0 + 2.0**-48), 1.0)
        with np.errstate(divide="ignore"):
            out = np.log(total) * (1.0 - 2.0**-50)  # toward 0: up
        return float(out) if np.ndim(eps) == 0 else out

    def __call__(self, eps: Any) -> Any:
        # a certified upper delta: exp of the (upper) log rounded up, never to nearest
        return exp_up(self.log_delta(eps))

    def _mp_log(self, e: float) -> float:
        return float(self.log_delta(float(e)))


def _need(scheme: str, given: dict[str, Any], names: tuple[str, ...]) -> None:
    missing = [k for k in names if given.get(k) is None]
    if missing:
        raise DomainError(f"sampling={scheme!r} needs {', '.join(missing)} "
                          f"(got {', '.join(f'{k}={v!r}' for k, v in given.items())})")


def _refuse_extra(scheme: str, given: dict[str, Any], allowed: tuple[str, ...]) -> None:
    extra = [k for k, v in given.items() if v is not None and k not in allowed]
    if extra:
        raise DomainError(f"sampling={scheme!r} does not take "
                          f"{', '.join(f'{k}={given[k]!r}' for k in extra)}")


def plan_sampling(sampling: Any, *, q: Any = None, sigma: Any = None, steps: Any = None,
                  neighbouring: Any = "auto", dataset_size: Any = None,
                  batch_size: Any = None, epochs: Any = None, max_batch_size: Any = None,
                  examples_per_user: Any = 1, schedule: Any = None) -> SamplingPlan:
    r"""The engine's question for a sampling scheme (module notes), its parameters checked.

    Example:
        >>> p = plan_sampling("without_replacement", dataset_size=100, batch_size=10,
        ...                   sigma=2.0, steps=5)
        >>> p.phases, p.engine_relation, p.neighbouring
        (((0.1, 1.0, 5),), 'add_remove', 'replace_one')
        >>> plan_sampling("shuffle", dataset_size=100, batch_size=10, sigma=2.0,
        ...               epochs=3).phases
        ((1.0, 2.0, 3),)
    """
    name = str(sampling).strip().lower().replace("-", "_") if isinstance(sampling, str) \
        else None
    if name not in SAMPLINGS:
        raise DomainError(f"sampling must be one of {', '.join(SAMPLINGS)}, got "
                          f"{sampling!r}")
    from symgdp.training.userlevel import check_examples_per_user

    k = check_examples_per_user(examples_per_user)
    if k != 1 and name != "poisson":
        raise DomainError(f"examples_per_user={examples_per_user!r} with sampling="
                          f"{sampling!r}: user-level accounting is implemented for Poisson "
                          "sampling only")
    rel: Neighbouring = (check_neighbouring(_DEFAULT_RELATION[name])
                         if isinstance(neighbouring, str) and neighbouring == "auto"
                         else check_neighbouring(neighbouring))
    given = dict(q=q, sigma=sigma, steps=steps, dataset_size=dataset_size,
                 batch_size=batch_size, epochs=epochs, max_batch_size=max_batch_size)
    params = {k_: v for k_, v in given.items() if v is not None}
    text = _TEXT[name]

    def sizes() -> tuple[int, int]:
        n = _int("dataset_size", dataset_size)
        b = _int("batch_size", batch_size)
        if b > n:
            raise DomainError(f"batch_size={batch_size!r} is above dataset_size="
                              f"{dataset_size!r}")
        return n, b

    if name == "poisson":
        _refuse_extra(name, given, ("q", "sigma", "steps", "dataset_size", "batch_size",
                                    "epochs"))
        if q is None and dataset_size is not None and batch_size is not None:
            n, b = sizes()
            q = b / n
            if steps is None and epochs is not None:
                steps = _int("epochs", epochs) * math.ceil(n / b)
        elif dataset_size is not None or batch_size is not None or epochs is not None:
            raise DomainError("sampling='poisson' takes q, sigma, steps, or dataset_size, "
                              f"batch_size (q = b/n), sigma and steps or epochs (got {params})")
        _need(name, dict(q=q, sigma=sigma, steps=steps), ("q", "sigma", "steps"))
        qq, s, t = check_phase(q, sigma, steps)
        if k != 1:
            plan = user_plan(((qq, s, t),), k, neighbouring)
            return dataclasses.replace(plan, params={**params, "examples_per_user": k})
        return SamplingPlan(name, ((qq, s, t),), rel, rel, qq, s, t, assumption=text,
                            params=params)
    if schedule is not None and name != "without_replacement":
        raise DomainError(f"schedule= is for Poisson or without_replacement phases, not "
                          f"sampling={sampling!r}")
    if name == "without_replacement" and schedule is not None:
        return _wor_schedule(schedule, dataset_size, given, rel, neighbouring, text, params)
    if name == "without_replacement":
        _refuse_extra(name, given, ("sigma", "steps", "dataset_size", "batch_size",
                                    "epochs"))
        _need(name, given, ("dataset_size", "batch_size", "sigma"))
        n, b = sizes()
        if steps is None:
            _need(name, dict(steps=steps, epochs=epochs), ("steps",))
        if epochs is not None:
            raise DomainError(f"sampling='without_replacement' counts steps, got "
                              f"epochs={epochs!r} beside steps={steps!r}")
        if rel != "replace_one":
            raise DomainError(
                f"sampling='without_replacement' under neighbouring={neighbouring!r}: no "
                "analysis of fixed-size batches under add/remove is implemented (adding a "
                "record changes the data set size); use neighbouring='replace_one'")
        gamma = b / n
        _, s, t = check_phase(gamma, sigma, steps)
        return SamplingPlan(name, ((gamma, s / 2.0, t),), "add_remove", rel, gamma, s, t,
                            symmetrise=True, assumption=text, params=params)
    if name in ("shuffle", "random_allocation"):
        pair: tuple[int, float] | None
        if name == "shuffle":
            _refuse_extra(name, given, ("sigma", "dataset_size", "batch_size", "epochs"))
            _need(name, given, ("dataset_size", "batch_size", "sigma", "epochs"))
            n, b = sizes()
            per, rate = math.ceil(n / b), b / n
            # the max-statistic pair of t = ceil(n/b) batches (the last one partial when
            # b does not divide n: the max's law does not depend on which batch holds the
            # record, allocation_floor)
            pair = (per, 2.0 if rel == "replace_one" else 1.0)
            text += "; floor: " + _FLOOR
        else:
            _refuse_extra(name, given, ("sigma", "steps", "epochs"))
            _need(name, given, ("sigma", "steps"))
            per = _int("steps", steps)
            rate = 1.0 / per
            pair = (per, 1.0)  # under replace-one: the record replaced by a zero gradient
            if rel == "add_remove" and per > 1:
                text = ("random allocation (each record in exactly one step per epoch): "
                        "proved bound, the smaller of the bound without amplification (each "
                        "epoch one use of the Gaussian) and the amplified one (the pair of one "
                        "epoch, Chua et al. 2025 and Feldman & Shenfeld 2025, its likelihood "
                        "ratio's law certified: symgdp.training.allocation_upper)")
            else:  # (the amplified bound's floor is named by symgdp.dpsgd)
                text += "; floor: " + _FLOOR + (" (sensitivity 1: loose under replace-one)"
                                                if rel == "replace_one" else "")
        e = _int("epochs", 1 if epochs is None else epochs)
        _, s, _ = check_phase(1.0, sigma, 1)
        engine = ((1.0, s, e),)
        return SamplingPlan(name, engine, rel, rel, rate, s, e * per, tight=False,
                            poisson=(rate, e * per), assumption=text, params=params,
                            floor_pair=pair)
    # truncated_poisson
    _refuse_extra(name, given, ("q", "sigma", "steps", "dataset_size", "max_batch_size"))
    _need(name, given, ("q", "sigma", "steps", "dataset_size", "max_batch_size"))
    qq, s, t = check_phase(q, sigma, steps)
    n = _int("dataset_size", dataset_size)
    bmax = _int("max_batch_size", max_batch_size)
    if bmax > n:
        raise DomainError(f"max_batch_size={max_batch_size!r} is above dataset_size="
                          f"{dataset_size!r}")
    p = truncation_probability(n + 1 if rel == "add_remove" else n, qq, bmax)
    tp = min(float(np.nextafter(t * p, np.inf)) if p else 0.0, 1.0)
    return SamplingPlan(name, ((qq, s, t),), rel, rel, qq, s, t, truncation=tp,
                        assumption=f"{text} (T p <= {tp:.3g})", params=params)


def user_plan(phases: Any, k: int, neighbouring: Any = "auto", weights: Any = None
              ) -> SamplingPlan:
    r"""The plan of user-level DP-SGD with Poisson sampling (``k`` examples per user,
    add/remove of a user; :mod:`symgdp.training.userlevel`).  Replace-one of a user is
    refused by name: no dominating pair of it is proved here.  ``weights``: the law of the
    number :math:`J` of the user's examples in a batch, given (``k + 1`` numbers; the
    mixture of a ``MixtureOfGaussiansDpEvent``) instead of :math:`\mathrm{Bin}(k, q)`.

    Example:
        >>> user_plan(((0.01, 1.0, 10),), 3).assumption[:33]
        'Poisson sampling at user level: 3'
    """
    rel: Neighbouring = (check_neighbouring("add_remove")
                         if isinstance(neighbouring, str) and neighbouring == "auto"
                         else check_neighbouring(neighbouring))
    if rel != "add_remove":
        raise DomainError(f"examples_per_user={k!r} under neighbouring={neighbouring!r}: "
                          "user-level replace-one is not analysed here (no dominating pair "
                          "of it is proved); use neighbouring='add_remove' (add or remove "
                          "one user with all their examples)")
    single = len(phases) == 1
    q, s, _ = phases[0]
    text = (f"Poisson sampling at user level: {k} examples per user, each sampled "
            "independently with probability q and clipped to norm 1, add/remove of one "
            "user (mixture-of-Gaussians pair, Ganesh 2024); tight")
    params: dict[str, Any] = {"examples_per_user": k}
    if weights is not None:
        text = (f"mixture of Gaussians N(j, sigma^2), j = 0..{k}, with the given weights "
                f"{tuple(weights)} (normalised) against N(0, sigma^2), both directions "
                "(add/remove); tight")
        params["weights"] = tuple(weights)
    return SamplingPlan("poisson", tuple(phases), "add_remove", "add_remove",
                        q if single else math.nan, s if single else math.nan,
                        sum(p[2] for p in phases), assumption=text,
                        params=params, examples_per_user=k)


def _wor_schedule(schedule: Any, dataset_size: Any, given: dict[str, Any], rel: Neighbouring,
                  neighbouring: Any, text: str, params: dict[str, Any]) -> SamplingPlan:
    r"""Phases of fixed-size batches without replacement, ``schedule=[(batch_size, sigma,
    steps), ...]`` on one data set of ``dataset_size`` records (replace-one): each phase's
    step is :math:`C_{\gamma_i}(G_{2/\sigma_i})`-DP, :math:`\gamma_i = b_i/n` (Dong, Roth &
    Su 2022, Theorem 4.2), and the steps compose as trade-off functions (their Theorem
    3.2), so the engine composes the phases' symmetrised measures in order."""
    name = "without_replacement"
    _refuse_extra(name, given, ("dataset_size",))
    _need(name, dict(dataset_size=dataset_size), ("dataset_size",))
    n = _int("dataset_size", dataset_size)
    if rel != "replace_one":
        raise DomainError(
            f"sampling='without_replacement' under neighbouring={neighbouring!r}: no "
            "analysis of fixed-size batches under add/remove is implemented (adding a "
            "record changes the data set size); use neighbouring='replace_one'")
    if isinstance(schedule, (str, bytes)) or not hasattr(schedule, "__iter__"):
        raise DomainError(f"a without_replacement schedule is a list of (batch_size, sigma, "
                          f"steps) triples, got {schedule!r}")
    phases, entries = [], []
    for i, entry in enumerate(schedule):
        if isinstance(entry, (str, bytes)) or not hasattr(entry, "__len__") \
                or len(entry) != 3:
            raise DomainError(f"schedule entry {i} must be a (batch_size, sigma, steps) "
                              f"triple, got {entry!r}")
        b = _int(f"schedule entry {i}: batch_size", entry[0])
        if b > n:
            raise DomainError(f"schedule entry {i}: batch_size={entry[0]!r} is above "
                              f"dataset_size={dataset_size!r}")
        _, s, t = check_phase(b / n, entry[1], entry[2])
        phases.append((b / n, s / 2.0, t))
        entries.append((b, s, t))
    if not phases:
        raise DomainError("the schedule is empty: give at least one (batch_size, sigma, "
                          "steps)")
    single = len(phases) == 1
    return SamplingPlan(name, tuple(phases), "add_remove", rel,
                        phases[0][0] if single else math.nan,
                        entries[0][1] if single else math.nan, sum(e[2] for e in entries),
                        symmetrise=True, assumption=text,
                        params={**params, "schedule": tuple(entries)})
