r"""An opacus-style privacy accountant for DP-SGD training loops, with certified answers.

:class:`Accountant` records the steps of a training loop (``step(noise_multiplier=,
sample_rate=)``, as in opacus) without importing torch or opacus; consecutive equal
steps merge into one phase.  Its answers come from :func:`symgdp.dpsgd` on the recorded
schedule (the certified PLD and its floor), cached until the next step.
"""

from __future__ import annotations

import math
from typing import Any

from symgdp.contracts import NeighbouringOrAuto, Sampling
from symgdp.errors import DomainError
from symgdp.training.engine import check_neighbouring, check_phase

__all__ = ["Accountant"]


class Accountant:
    r"""Record DP-SGD steps and answer with certified privacy statements.

    Args:
        neighbouring: ``"add_remove"`` (opacus's relation) or ``"replace_one"``
            (``"auto"``: the relation the sampling scheme is stated for).
        sampling: how the loop draws its batches (:func:`symgdp.dpsgd`'s names):
            ``"poisson"`` (steps with their own ``sample_rate``), or, with
            ``dataset_size`` and ``batch_size``, ``"without_replacement"``,
            ``"shuffle"`` and ``"random_allocation"`` (whole epochs of
            :math:`\lceil n/b\rceil` steps), or ``"truncated_poisson"`` with
            ``dataset_size`` and ``max_batch_size``; every scheme but Poisson keeps one
            noise multiplier (one phase).
        dataset_size, batch_size, max_batch_size: the scheme's sizes.
        examples_per_user: ``k``, the examples each user contributes: the answers are
            then user-level (add/remove one user, Poisson sampling: the
            mixture-of-Gaussians pair of :func:`symgdp.dpsgd`); default 1, record level.
        **options: passed to :func:`symgdp.dpsgd` (``tol``,
            ``value_discretization_interval``, ...).

    Example:
        >>> acc = Accountant()
        >>> for _ in range(50):
        ...     acc.step(noise_multiplier=1.0, sample_rate=0.01)
        >>> len(acc), acc.history
        (50, [(1.0, 0.01, 50)])
        >>> r = acc.get_mu(with_floor=True)
        >>> r.mu_floor <= r.mu_upper == acc.get_mu()
        True
    """

    def __init__(self, neighbouring: NeighbouringOrAuto = "auto", *,
                 sampling: Sampling = "poisson",
                 dataset_size: int | None = None, batch_size: int | None = None,
                 max_batch_size: int | None = None, examples_per_user: int = 1,
                 **options: Any) -> None:
        from symgdp.training.sampling import SAMPLINGS
        from symgdp.training.userlevel import check_examples_per_user

        if sampling not in SAMPLINGS:
            raise DomainError(f"sampling must be one of {', '.join(SAMPLINGS)}, got "
                              f"{sampling!r}")
        self.sampling = sampling
        if neighbouring == "auto":  # the relation the scheme is stated for
            neighbouring = "replace_one" if sampling == "without_replacement" \
                else "add_remove"
        self.neighbouring = check_neighbouring(neighbouring)
        self.sizes = dict(dataset_size=dataset_size, batch_size=batch_size,
                          max_batch_size=max_batch_size)
        self.examples_per_user = check_examples_per_user(examples_per_user)
        if self.examples_per_user != 1 and sampling != "poisson":
            raise DomainError(f"examples_per_user={examples_per_user} is analysed for "
                              f"Poisson sampling, not sampling={sampling!r}")
        self.options = dict(options)
        self._phases: list[list[Any]] = []  # [noise_multiplier, sample_rate, steps]
        self._cache: dict[Any, Any] = {}

    def step(self, *, noise_multiplier: float, sample_rate: float | None = None,
             steps: int = 1) -> None:
        """Record ``steps`` steps (default one) with this noise multiplier and Poisson
        sampling rate (``sample_rate`` only for Poisson schemes; the others take their
        sizes from the constructor); equal consecutive steps merge into one phase."""
        if (sample_rate is None) != (self.sampling in ("without_replacement", "shuffle",
                                                       "random_allocation")):
            raise DomainError(f"sampling={self.sampling!r} takes "
                              + ("a sample_rate" if sample_rate is None else
                                 f"no sample_rate (got {sample_rate!r})"))
        q, s, t = check_phase(1.0 if sample_rate is None else sample_rate,
                              noise_multiplier, steps)
        if self._phases and self._phases[-1][0] == s and self._phases[-1][1] == q:
            self._phases[-1][2] += t
        else:
            self._phases.append([s, q, t])
        self._cache.clear()

    @property
    def history(self) -> list[tuple[float, float, int]]:
        """The phases as ``(noise_multiplier, sample_rate, steps)``, in order (opacus's
        layout)."""
        return [(s, q, t) for s, q, t in self._phases]

    @property
    def schedule(self) -> list[tuple[float, float, int]]:
        """The phases as ``(q, sigma, steps)``, the layout of :func:`symgdp.dpsgd`."""
        return [(q, s, t) for s, q, t in self._phases]

    def __len__(self) -> int:
        return sum(t for _, _, t in self._phases)

    def __repr__(self) -> str:
        who = ("" if self.examples_per_user == 1 else
               f", examples_per_user={self.examples_per_user}")
        return (f"Accountant(neighbouring={self.neighbouring!r}{who}, steps={len(self)}, "
                f"phases={len(self._phases)})")

    def result(self, failure_prob: float = 1e-10, delta: float = 1e-5) -> Any:
        """The :class:`~symgdp.training.dpsgd.DPSGDResult` of the recorded schedule (cached)."""
        from symgdp.training.dpsgd import dpsgd

        if not self._phases:
            raise DomainError("no steps recorded yet: call step() first")
        key = (float(failure_prob), float(delta))
        if key not in self._cache:
            kw = dict(neighbouring=self.neighbouring, failure_prob=failure_prob,
                      delta=delta, **self.options)
            if self.examples_per_user != 1:
                kw["examples_per_user"] = self.examples_per_user
            if self.sampling == "poisson":
                self._cache[key] = dpsgd(schedule=self.schedule, **kw)
            else:
                self._cache[key] = self._scheme_result(dpsgd, kw)
        return self._cache[key]

    def _scheme_result(self, dpsgd: Any, kw: dict[str, Any]) -> Any:
        if len(self._phases) != 1:
            raise DomainError(f"sampling={self.sampling!r} is accounted for one noise "
                              f"multiplier and rate; recorded {self.history}")
        s, q, t = self._phases[0]
        n, b = self.sizes["dataset_size"], self.sizes["batch_size"]
        if self.sampling == "truncated_poisson":
            return dpsgd(q, s, t, sampling="truncated_poisson", dataset_size=n,
                         max_batch_size=self.sizes["max_batch_size"], **kw)
        if self.sampling == "without_replacement":
            return dpsgd(sampling="without_replacement", dataset_size=n, batch_size=b,
                         sigma=s, steps=t, **kw)
        if not (isinstance(n, int) and isinstance(b, int) and 0 < b <= n):
            raise DomainError(f"sampling={self.sampling!r} needs dataset_size and "
                              f"batch_size (got {n!r}, {b!r})")
        per = math.ceil(n / b)
        if t % per:
            raise DomainError(f"sampling={self.sampling!r}: {t} steps are not whole epochs "
                              f"of {per} steps")
        if self.sampling == "shuffle":
            return dpsgd(sampling="shuffle", dataset_size=n, batch_size=b, sigma=s,
                         epochs=t // per, **kw)
        return dpsgd(sampling="random_allocation", sigma=s, steps=per, epochs=t // per,
                     **kw)

    def get_mu(self, failure_prob: float = 1e-10, *, with_floor: bool = False) -> Any:
        r"""The certified :math:`\mu`: the training run is :math:`\mu`-GDP on the head
        :math:`[0, \varepsilon_h]` and :math:`(\varepsilon, \text{failure\_prob})`-DP
        beyond it.  With ``with_floor`` the whole result (``mu_floor``, ``mu_upper``)."""
        r = self.result(failure_prob)
        return r if with_floor else r.mu_upper

    def get_epsilon(self, delta: float) -> float:
        r"""The certified :math:`\varepsilon` at ``delta``: the training run is
        :math:`(\varepsilon, \delta)`-DP (the smallest :math:`\varepsilon` where the
        certified upper profile is at most ``delta``, rounded up)."""
        d = float(delta)
        if not (0 < d < 1):
            raise DomainError(f"delta must lie in (0, 1), got {delta!r}")
        fp = min(1e-10, d / 10.0)
        r = self.result(fp, d)
        if math.isnan(r.eps_certified):  # pragma: no cover - defensive
            raise DomainError(f"no certified epsilon at delta={d:g}")
        return r.eps_certified
