"""Adversarial review of the DP-SGD speed rewrite (Taylor-block tails, exact cuts, chains,
FLINT threads, scale_for).  Every reference is independent of the code under test and
named in a comment."""

from __future__ import annotations

import os
import random
import sys
from concurrent.futures import ThreadPoolExecutor

import flint
import mpmath as mp
import pytest
from references import delta_gdp, gdpt_below

from symgdp.training.engine import _tails
from symgdp.training.tailblocks import addremove_tails


def _mp_tails(q: float, sigma: float, l: mp.mpf) -> tuple[mp.mpf, mp.mpf]:
    """Reference: the add/remove tails P(L > l), Q(L > l) of the subsampled Gaussian in
    40-digit mpmath, from x_l = sigma^2 log((e^l - 1 + q)/q) + 1/2 and erfc."""
    qq, s = mp.mpf(q), mp.mpf(sigma)
    t = mp.expm1(l) + qq
    if t <= 0:
        return mp.mpf(1), mp.mpf(1)
    x = s * s * mp.log(t / qq) + mp.mpf(1) / 2
    f = mp.erfc(x / (s * mp.sqrt(2))) / 2
    g = mp.erfc((x - 1) / (s * mp.sqrt(2))) / 2
    return (1 - qq) * f + qq * g, f


def _contains(ball: flint.arb, v: mp.mpf) -> bool:
    m = mp.mpf(ball.mid().str(60, radius=False))
    r = mp.mpf(ball.rad().str(60, radius=False))
    return abs(v - m) <= r * (1 + mp.mpf(10) ** -30)


def _misses(q: float, sigma: float, disc: float, j0: int, pbar: list, abar: list,
            every: int = 7) -> list[int]:
    out = []
    with mp.workdps(60):
        for i in range(0, len(pbar), every):
            p, f = _mp_tails(q, sigma, mp.mpf(j0 + i) * mp.mpf(disc))
            if not (_contains(pbar[i], p) and _contains(abar[i], f)):
                out.append(j0 + i)
    return out


def test_taylor_blocks_survive_another_thread_restoring_flints_series_cap(monkeypatch):
    # FLINT's series cap (flint.ctx.cap) is process-wide; addremove_tails sets it to 50
    # and a concurrent call (another Python thread) restores its own saved value (10)
    # in the middle of this one's blocks.  Simulated deterministically: every arb_series
    # is built right after such a restore.  The balls must still contain the 40-digit
    # mpmath tails (reference: _mp_tails).  On the speed merge the truncated series kept
    # only 10 of the terms the Cauchy remainder assumed: balls off by ~1e-13 relative.
    real = flint.arb_series

    def racing(*a, **k):
        flint.ctx.cap = 10
        return real(*a, **k)

    monkeypatch.setattr(flint, "arb_series", racing)
    q, sigma, disc = 0.01, 1.0, 1e-3
    old_prec, old_cap = flint.ctx.prec, flint.ctx.cap
    flint.ctx.prec = 100
    try:
        pbar, abar, _ = addremove_tails(q, sigma, disc, -20, 3000, 100)
    finally:
        flint.ctx.prec, flint.ctx.cap = old_prec, old_cap
    assert _misses(q, sigma, disc, -20, pbar, abar) == []


def test_tails_from_python_threads_are_still_rigorous():
    # A thread-pool sweep (the ordinary way to run dpsgd over a grid of parameters)
    # calls _tails concurrently; FLINT's context (prec, cap) is shared.  Reference: the
    # same tails computed serially (rigorous balls of the same quantity must overlap)
    # and 40-digit mpmath at every 7th grid point.
    params = [(0.01 + 0.001 * k, 1.0, 1e-3, 1e-19, "add_remove", 80) for k in range(6)]
    raw = _tails.__wrapped__
    serial = {p: raw(*p) for p in params}
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)  # interleave often (the race, not the timing, is tested)
    old_prec, old_cap = flint.ctx.prec, flint.ctx.cap
    try:
        with ThreadPoolExecutor(4) as ex:
            par = dict(zip(params, ex.map(lambda p: raw(*p), params), strict=True))
    finally:
        sys.setswitchinterval(old)
        flint.ctx.prec, flint.ctx.cap = old_prec, old_cap
    for p in params:
        j0, _, _, pb, ab, _ = par[p]
        for x, y in zip(serial[p][3] + serial[p][4], pb + ab, strict=True):
            assert x.overlaps(y), (p, x, y)
        assert _misses(p[0], p[1], p[2], j0, pb, ab, every=37) == []


# -- one step: the integer PMFs dominate the exact pessimistic discretisation -------------
def _mp_tails_at(q: float, sigma: float, rel: str, js: list[int], disc: float) -> dict:
    """Reference (mpmath at the working precision, from the densities' Gaussian tails, not
    the code's formulas): {j: (P(L > l_j), Q(L > l_j))} at the grid losses l_j = j disc.
    Replace-one: x_l found by mpmath's root finder on L(x) = l, L(x) = log(p(x)/q(x))."""
    qq, s = mp.mpf(q), mp.mpf(sigma)
    rt = s * mp.sqrt(2)

    def phibar(z):
        return mp.erfc(z / rt) / 2

    def loss(x):
        def lmix(sh):
            e = (2 * sh * x - 1) / (2 * s * s)
            return e if qq == 1 else mp.log(1 - qq + qq * mp.exp(e))
        return lmix(1) - (lmix(-1) if rel == "replace_one" else 0)

    out = {}
    for j in sorted(set(js)):
        l = mp.mpf(j) * mp.mpf(disc)
        if rel == "add_remove":
            t = mp.expm1(l) + qq
            if t <= 0:
                out[j] = (mp.mpf(1), mp.mpf(1))
                continue
            x = s * s * mp.log(t / qq) + mp.mpf(1) / 2
            out[j] = ((1 - qq) * phibar(x) + qq * phibar(x - 1), phibar(x))
        else:
            lo, hi = mp.mpf(-1), mp.mpf(1)
            while loss(lo) > l:
                lo *= 2
            while loss(hi) < l:
                hi *= 2
            x = mp.findroot(lambda z, l=l: loss(z) - l, (lo, hi), solver="illinois",
                            verify=False)
            assert abs(loss(x) - l) < mp.mpf(10) ** (-mp.mp.dps + 8) * (1 + abs(l))
            out[j] = ((1 - qq) * phibar(x) + qq * phibar(x - 1),
                      (1 - qq) * phibar(x) + qq * phibar(x + 1))
    return out


def _exact_right_sum(tails: dict, j0: int, n: int, disc: float, add: bool, k: int
                     ) -> mp.mpf:
    """Reference: the mass at +infinity plus the masses at grid indices >= k of the exact
    connect-the-dots measure on the grid (Doroshenko et al. 2022: each cell's mass to its
    two ends keeping E[e^{-loss}], mass below the grid onto its first point, above it to
    +infinity).  Remove: losses l_j under P; add: losses -l_j under Q (the pair swapped),
    index k then holding -l_{j0 + n - 1 - k}.  The cells wholly above k telescope, so only
    the cell cut at k enters, through the part of its mass sent to its upper end
    (``up``): remove, S(k) = P(L > l_k) + up(cell k-1); add, S(k) = 1 - Q(L > l_c) +
    up(cell c), c = n - 1 - k; S(0) = 1 (everything).  The split is checked to be a split
    (0 <= up <= the cell's mass): the reference's own consistency."""
    if k == 0:
        return mp.mpf(1)
    ed, slack = mp.exp(mp.mpf(disc)), mp.mpf(10) ** -35
    c = n - 1 - k if add else k - 1           # the cell's lower grid index
    (pa, qa), (pb, qb) = tails[j0 + c], tails[j0 + c + 1]
    pc, qc = pa - pb, qa - qb
    el = mp.exp(mp.mpf(j0 + c) * mp.mpf(disc))  # e^{l_c}
    if not add:  # ends l_c < l_{c+1}; y = e^{-l}, times e^{l_c}: 1 and 1/ed; E_P[y] = qc
        up, cell = (pc - qc * el) / (1 - 1 / ed), pc
        right = pb
    else:        # ends -l_{c+1} < -l_c under Q; y = e^{l}: el ed and el; E_Q[y] = pc
        up, cell = (el * ed * qc - pc) / (el * ed - el), qc
        right = 1 - qa
    assert -slack <= up <= cell + slack, (add, k, up, cell)
    return right + up


SCALE = int(os.environ.get("SYMGDP_TEST_SCALE", "1"))


def _one_step_wanted(q: float, sigma: float, rel: str) -> bool:
    """Replace-one at sigma = 0.2 costs most (the reference root-finds every grid loss it
    checks).  At scale 1 three of its five rates stay: 1e-6 (the smallest rate), 0.5 and
    0.99999 (1 - q tiny, the cancellation hazard).  The two left for SYMGDP_TEST_SCALE >=
    2 have their branch covered elsewhere at scale 1: q = 1e-3 lies between 1e-6 and 0.5
    in the same small-q regime, and q = 1 (the exact q == 1 branch of the loss) runs at
    sigma = 1 and 50 under replace-one and at sigma = 0.2 under add/remove."""
    return SCALE >= 2 or not (rel == "replace_one" and sigma == 0.2 and q in (1e-3, 1.0))


def _checked_indices(n: int) -> list[int]:
    """Every index of a small grid; of a large one (sigma = 0.2: ~9000 points, each a 40-
    digit root search under replace-one) the 8 at each end and a fixed random sample of
    350 (seeded), so that no stride can hide a periodic error; all at SYMGDP_TEST_SCALE >=
    2.  The claim is per index and each reference value needs only two grid points' tails
    (_exact_right_sum), so a sample checks exactly what it says at each index it checks."""
    if n <= 400 or SCALE >= 2:
        return list(range(n))
    rng = random.Random(n)
    return sorted(set(range(8)) | set(range(n - 8, n)) | set(rng.sample(range(n), 350)))


ONE_STEP = [pytest.param(q, s, rel, marks=[pytest.mark.slow]
                         if (rel, s) == ("replace_one", 0.2) and q > 0.9 else [])
            for rel in ("add_remove", "replace_one")
            for q in (1e-6, 1e-3, 0.5, 0.99999, 1.0) for s in (0.2, 1.0, 50.0)
            if _one_step_wanted(q, s, rel)]


@pytest.mark.parametrize("q,sigma,rel", ONE_STEP)
def test_one_step_pmfs_dominate_the_exact_pessimistic_masses(q, sigma, rel):
    # Claim (symgdp.training.engine.one_step_pmfs): each direction's integer PMF is at
    # least the exact connect-the-dots measure entrywise (masses rounded up), so its
    # right-cumulative sums (from +inf down) dominate the exact ones and its total is at
    # least 1.  Reference: _exact_right_sum on mpmath tails (_mp_tails_at) at the indices
    # of _checked_indices, the mass at +infinity and the total.
    from symgdp.training.engine import one_step_pmfs

    disc, tau = 1e-2, 1e-19
    st = one_step_pmfs(q, sigma, disc, tau, 80, rel, True)
    rem = st.directions[0]
    j0, n = rem.lower, rem.size
    dirs = [(rem, False)]
    if rel == "add_remove":
        dirs.append((st.directions[1], True))
    ks = _checked_indices(n)
    # Digits: the remove direction weights Q's tails by e^{l} (l < 0: damped; l > 0: the
    # tails are tiny and exact to 40 digits relative), so 40 digits reach far below the
    # 1e-35 slack.  The add direction weights P's tails near 1 by e^{-l} for l << 0: 40
    # digits plus those the cancellation costs (replace-one is symmetric: no add direction)
    extra = int(2 * max(0.0, -j0 * disc) / 2.3) if rel == "add_remove" else 0
    with mp.workdps(40 + extra):
        need = {j0 + k + d for k in ks for d in (-1, 0) if 0 <= k + d < n}
        if rel == "add_remove":
            need |= {j0 + n - 1 - k + d for k in ks for d in (0, 1) if 0 <= n - 1 - k + d < n}
        tails = _mp_tails_at(q, sigma, rel, sorted(need | {j0, j0 + n - 1}), disc)
        unit = mp.mpf(2) ** -rem.bits
        slack = mp.mpf(10) ** -35
        for pmf, add in dirs:
            if add:
                assert pmf.lower == -(j0 + n - 1)
            c = [int(v) for v in pmf.poly.coeffs()] + [0] * n
            suffix = [0] * (n + 1)   # exact integer sums of the masses at indices >= k
            for i in range(n - 1, -1, -1):
                suffix[i] = suffix[i + 1] + c[i]
            inf = 1 - tails[j0][1] if add else tails[j0 + n - 1][0]
            got_inf = pmf.inf * unit
            assert got_inf >= inf - slack, (add, got_inf, inf)
            for k in ks:
                want = _exact_right_sum(tails, j0, n, disc, add, k)
                assert got_inf + suffix[k] * unit >= want - slack, (add, k)
            assert got_inf + suffix[0] * unit >= 1


# -- end to end: brackets against an independent mpmath truth (T = 1, 2) ------------------
class _Truth:
    r"""Reference: the exact profile of T = 1 or 2 steps of the Poisson-subsampled
    Gaussian (clipping 1), in mpmath.  One step: g_R(e) = E_P[(1 - e^{e - L})_+] =
    P(L > e) - e^e Q(L > e), g_A(e) = E_Q[(1 - e^{e + L})_+] = Q(L < -e) - e^e P(L < -e)
    from the Gaussian tails at x_e (L increasing).  Two steps: delta(eps) =
    int p(x) g_R(eps - L(x)) dx (remove) and int q(x) g_A(eps + L(x)) dx (add), by
    mpmath.quad; the profile is the larger direction (add/remove) or g_R (replace-one,
    symmetric)."""

    def __init__(self, q: float, sigma: float, rel: str) -> None:
        self.q, self.s, self.rel = mp.mpf(q), mp.mpf(sigma), rel

    def _phibar(self, z):
        return mp.erfc(z / (self.s * mp.sqrt(2))) / 2

    def loss(self, x):
        q, s = self.q, self.s

        def lmix(sh):
            e = (2 * sh * x - 1) / (2 * s * s)
            return e if q == 1 else mp.log(1 - q + q * mp.exp(e))
        return lmix(1) - (lmix(-1) if self.rel == "replace_one" else 0)

    def _x(self, l):
        if self.rel == "add_remove":
            t = mp.expm1(l) + self.q
            return -mp.inf if t <= 0 else self.s ** 2 * mp.log(t / self.q) + mp.mpf(1) / 2
        lo, hi = mp.mpf(-1), mp.mpf(1)
        while self.loss(lo) > l:
            lo *= 2
        while self.loss(hi) < l:
            hi *= 2
        return mp.findroot(lambda z: self.loss(z) - l, (lo, hi), solver="illinois",
                           verify=False)

    def _tails(self, x):
        q = self.q
        if x == -mp.inf:
            return mp.mpf(1), mp.mpf(1)
        p = (1 - q) * self._phibar(x) + q * self._phibar(x - 1)
        if self.rel == "add_remove":
            return p, self._phibar(x)
        return p, (1 - q) * self._phibar(x) + q * self._phibar(x + 1)

    def g_r(self, e):
        p, qq = self._tails(self._x(e))
        return max(p - mp.exp(e) * qq, mp.mpf(0))

    def g_a(self, e):
        p, qq = self._tails(self._x(-e))
        return max((1 - qq) - mp.exp(e) * (1 - p), mp.mpf(0))

    def _dens(self, x, which):
        q, s = self.q, self.s

        def phi(z):
            return mp.npdf(z / s) / s
        if which == "P":
            return (1 - q) * phi(x) + q * phi(x - 1)
        if self.rel == "add_remove":
            return phi(x)
        return (1 - q) * phi(x) + q * phi(x + 1)

    def delta(self, eps, steps):
        eps = mp.mpf(eps)
        two = self.rel == "add_remove"
        if steps == 1:
            return max(self.g_r(eps), self.g_a(eps) if two else 0)
        s = self.s
        # breakpoints: a fine partition of the bulk, and the kinks of the integrands (the
        # pole of x_l at l = log(1 - q), where g_R and g_A stop being smooth)
        base = [-40 * s - 2] + [-8 * s - 1 + (16 * s + 3) * k / 64 for k in range(65)] \
            + [40 * s + 2]
        kinks_r, kinks_a = [], []
        if self.q < 1 and two:
            kinks_r.append(self._x(eps - mp.log(1 - self.q)))
            kinks_a.append(self._x(-mp.log(1 - self.q) - eps))

        def parts(extra):
            return sorted({p for p in base + extra if mp.isfinite(p)})
        d = mp.quad(lambda x: self._dens(x, "P") * self.g_r(eps - self.loss(x)),
                    parts(kinks_r))
        if two:
            d = max(d, mp.quad(lambda x: self._dens(x, "Q") * self.g_a(eps + self.loss(x)),
                               parts(kinks_a)))
        return d


def _delta_gdp(mu, eps):
    """Reference: the Gaussian mechanism's profile (Dong, Roth & Su 2022)."""
    return delta_gdp(mu, eps)


def _mu_at(d, eps):
    """The mu with delta_mu(eps) = d, by bisection (its lower end, 70 halvings)."""
    return gdpt_below(eps, d, iterations=70)


def _mu_head(tr: _Truth, steps: int, eps_h: float, n: int = 16):
    """sup of mu(eps) over a grid of [0, eps_h], refined twice around the best point."""
    es = [mp.mpf(eps_h) * k / n for k in range(n + 1)]
    best, k = max((_mu_at(tr.delta(e, steps), e), i) for i, e in enumerate(es))
    lo, hi = es[max(k - 1, 0)], es[min(k + 1, n)]
    for _ in range(2):
        sub = [lo + (hi - lo) * i / 8 for i in range(9)]
        v, kk = max((_mu_at(tr.delta(e, steps), e), i) for i, e in enumerate(sub))
        best = max(best, v)
        lo, hi = sub[max(kk - 1, 0)], sub[min(kk + 1, 8)]
    return best


# T = 2 takes minutes per case (a 30-digit quadrature whose integrand inverts the loss by
# a root search, at every point of the head): a deeper check, like the others
_DEEP = pytest.mark.skipif(not os.environ.get("SYMGDP_TEST_SCALE"),
                           reason="deeper check: SYMGDP_TEST_SCALE (minutes per case)")
E2E = [pytest.param(q, s, t, rel, marks=[pytest.mark.slow, _DEEP] if t > 1 else [])
       for t in (1, 2) for rel in ("add_remove", "replace_one")
       for q, s in ((1e-3, 0.5), (0.5, 1.0), (0.99999, 2.0), (0.2, 0.3), (0.05, 5.0))]


@pytest.mark.parametrize("q,sigma,steps,rel", E2E)
def test_bracket_profile_and_eps_against_the_exact_mechanism(q, sigma, steps, rel):
    # Claims: mu_floor <= mu(head) <= mu_upper; delta_lower <= delta <= the upper profile;
    # eps_at(d) and eps_certified are (eps, d)-DP, i.e. delta(eps) <= d there.
    # Reference: _Truth (exact profile in 30-digit mpmath), _mu_head (sup over the head).
    import symgdp

    r = symgdp.dpsgd(q, sigma, steps, neighbouring=rel, value_discretization_interval=1e-3,
                     tol=1e-4)
    with mp.workdps(30):
        tr = _Truth(q, sigma, rel)
        mu = _mu_head(tr, steps, r.eps_h, n=16 if steps == 1 else 6)
        assert r.mu_floor <= mu + 1e-9 and mu <= r.mu_upper, (r.mu_floor, mu, r.mu_upper)
        for e in [r.eps_h * k / 6 for k in range(7)]:
            d = tr.delta(e, steps)
            assert r.delta_lower(e) <= d * (1 + 1e-12) + 1e-300, (e, d)
            assert d <= r.profile(e), (e, d)
        for d in (r.failure_prob, 1e-6, 1e-3, 0.1):
            if d >= r.failure_prob:
                assert tr.delta(r.eps_at(d), steps) <= d
        assert tr.delta(r.eps_certified, steps) <= r.delta


# -- schedules of Gaussian phases: closed form -------------------------------------------
@pytest.mark.slow
@pytest.mark.parametrize("rel", ["add_remove", "replace_one"])
def test_many_phase_gaussian_schedule_against_the_closed_form(rel):
    # q = 1 in every phase: the composition is the Gaussian mechanism with
    # mu = k sqrt(sum_i T_i / sigma_i^2), k = 1 (add/remove) or 2 (replace-one, sensitivity
    # 2): Dong, Roth & Su 2022, Cor. 3.3.  Phases of 1, 2, 3, 7, 15 steps exercise the
    # chains (2^k - 1, odd, one step) and the phase products; eps_at is checked against
    # the closed-form profile delta_mu (reference: _delta_gdp).  The engine, forced: dpsgd
    # answers q = 1 in closed form (tests/training/test_dpsgd_closed_form.py)
    import math

    import symgdp

    sch = [(1.0, 2.0, 3), (1.0, 1.5, 7), (1.0, 4.0, 1), (1.0, 3.0, 15), (1.0, 2.5, 2)]
    k = 2.0 if rel == "replace_one" else 1.0
    mu = k * math.sqrt(sum(t / s**2 for _, s, t in sch))
    r = symgdp.dpsgd(schedule=sch, neighbouring=rel, value_discretization_interval=1e-3,
                     tol=1e-4, _engine=True)
    assert not r.closed_form
    assert r.mu_floor <= mu <= r.mu_upper
    assert r.mu_upper - r.mu_floor < 1e-2
    with mp.workdps(30):
        for d in (r.failure_prob, 1e-5, 0.3):
            assert _delta_gdp(mp.mpf(mu), mp.mpf(r.eps_at(d))) <= d


def test_taylor_blocks_wait_for_the_series_cap_lock():
    # the measurement's series (symgdp.measurement.series) set FLINT's process-wide series
    # cap under SERIES_CAP_LOCK; the Taylor blocks set it too, and restoring their saved cap
    # while a series runs in another thread would truncate that series (its missing
    # coefficients read as exact zeros).  So the blocks take the same lock: while another
    # thread holds it, they wait (reference: the lock's own state; no timing is asserted
    # beyond "not finished while the lock is held", which cannot fail with the lock used)
    import threading

    from symgdp.numerics.balls import SERIES_CAP_LOCK

    done = threading.Event()

    def work():
        addremove_tails(0.01, 1.0, 1e-3, -20, 400, 100)
        done.set()

    with SERIES_CAP_LOCK:
        t = threading.Thread(target=work)
        t.start()
        finished_while_held = done.wait(1.0)
    t.join(120)
    assert done.is_set() and not finished_while_held
