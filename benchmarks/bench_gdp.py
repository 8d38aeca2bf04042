r"""Benchmark of the float64 GDP core: speed, accuracy, round trips.

One run measures

(a) throughput of ``mu_gdp(eps, log_delta=...)`` on 10⁶ random pairs
    (ε ~ U[0, 50], μ ~ U[0.1, 8], log δ from ``log_delta_mu``), best of 3;
(b) accuracy of our δ_μ(ε) and log δ_μ(ε), and of the plain formula
    ``norm.cdf(a) - exp(eps) * norm.cdf(b)`` that common accountants use, against a
    40-digit mpmath reference, the one the tests use (``tests/references.py``: Φ via
    ``mpmath.erfc``, precision raised until the cancellation between the two terms is
    covered), for ε up to 1000;
(c) round-trip error of ``mu_gdp`` / ``eps_gdp`` fed the reference log δ (including δ that
    underflows float64), against the μ / ε the reference was computed at;

and writes a markdown report, with machine and date, into its own section of
``docs/benchmarks.md`` (between ``<!-- bench_gdp:start -->`` and ``<!-- bench_gdp:end -->``;
other sections of the file are left alone).

Usage::

    python benchmarks/bench_gdp.py            # full run (10^6 pairs, 4000 reference points)
    python benchmarks/bench_gdp.py --quick    # smoke run (10^5 pairs, 400 points)
"""

from __future__ import annotations

import argparse
import functools
import sys
import time
from collections.abc import Callable
from typing import Any

import mpmath
import numpy as np
import scipy
from _common import DOC, ROOT, machine, write_section  # benchmarks/ is first on sys.path
from scipy.special import log_ndtr
from scipy.stats import norm

from symgdp.gaussian import vectorised as g

# The independent 40-digit reference is the tests' own (tests/references.py), not a copy.
sys.path.insert(0, str(ROOT / "tests"))
from references import REF_DPS, ref_log_delta  # noqa: E402

START, END = "<!-- bench_gdp:start -->", "<!-- bench_gdp:end -->"

TARGET_LOG = 1e-13  # log delta relative error, eps in [0, 2000], mu in [0.05, 10]
TARGET_DELTA = 5e-13  # delta relative error wherever delta >= 1e-300
TARGET_RT = 1e-12  # round trip relative error
TARGET_RATE = 3e6  # mu_gdp inversions per second (the speed issue's target)
TINY = 1e-300  # below this only absolute accuracy is asked of delta
SUBNORMAL = 2.2250738585072014e-308  # the smallest normal float64
EXP_OVERFLOW = float(np.log(np.finfo(np.float64).max))  # 709.78...


# ----------------------------------------------------------------------------- reference


def plain_delta(eps: np.ndarray, mu: np.ndarray) -> np.ndarray:
    """The textbook formula as common accountants evaluate it (no log space, no erfcx)."""
    with np.errstate(all="ignore"):
        return norm.cdf(-eps / mu + mu / 2) - np.exp(eps) * norm.cdf(-eps / mu - mu / 2)


# --------------------------------------------------------------------------------- helpers


def guarded(f: Callable[..., Any], *args: np.ndarray, **kw: np.ndarray) -> tuple[np.ndarray, int]:
    """Vectorised call; if it raises, redo element by element and count the failures
    (NaN in the output), so that one bad input does not hide the rest of the picture."""
    try:
        with np.errstate(all="ignore"):
            return np.asarray(f(*args, **kw), dtype=np.float64), 0
    except Exception:  # noqa: BLE001 - any failure is reported, not hidden
        pass
    shape = np.broadcast_shapes(*(np.shape(a) for a in (*args, *kw.values())))
    flat_args = [np.broadcast_to(a, shape).ravel() for a in args]
    flat_kw = {k: np.broadcast_to(v, shape).ravel() for k, v in kw.items()}
    out = np.full(int(np.prod(shape)), np.nan)
    failures = 0
    for i in range(out.size):
        try:
            with np.errstate(all="ignore"):
                out[i] = f(*(a[i] for a in flat_args), **{k: v[i] for k, v in flat_kw.items()})
        except Exception:  # noqa: BLE001
            failures += 1
    return out.reshape(shape), failures


def pct(x: float) -> str:
    return "n/a" if np.isnan(x) else f"{x:.0%}"


def fmt(x: float) -> str:
    if np.isnan(x):
        return "n/a"
    return f"{x:.2e}" if x != 0 else "0"


# ------------------------------------------------------------------------------- measures


def bench_throughput(n: int, repeats: int, seed: int, rounding: str = "up") -> dict[str, Any]:
    """(a) mu_gdp(eps, log_delta=L, rounding=rounding) on n random pairs, best of
    ``repeats``."""
    rng = np.random.default_rng(seed)
    eps = rng.uniform(0.0, 50.0, n)
    mu = rng.uniform(0.1, 8.0, n)
    L = g.log_delta_mu(eps, mu)
    times = []
    got = None
    error = ""
    for _ in range(repeats):
        t0 = time.perf_counter()
        try:
            got = g.mu_gdp(eps, log_delta=L, rounding=rounding)
        except Exception as exc:  # noqa: BLE001 - reported in the table
            error = f"{type(exc).__name__}: {exc}"
            break
        times.append(time.perf_counter() - t0)
    res: dict[str, Any] = {"n": n, "repeats": repeats, "error": error, "rounding": rounding}
    if times:
        best = min(times)
        res.update(best=best, rate=n / best)
        # self-consistency of this run (the independent check is part (c))
        res["rt_max"] = float(np.max(np.abs(got - mu) / mu))
    return res


def reference_points(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """(ε, μ) points for (b)/(c): ε up to 1000 (uniform, log-uniform and around exp
    overflow), μ in [0.05, 10] log-uniform (the range of the log δ target); around the
    exp overflow μ ∈ [15, 60], since δ ≥ 1e-300 at ε ≥ 710 needs μ ≳ 17."""
    rng = np.random.default_rng(seed)
    k = n // 4
    eps = np.concatenate([
        rng.uniform(0.0, 1000.0, k),
        10.0 ** rng.uniform(-8, 3, k),
        rng.uniform(0.0, 10.0, k),
        rng.uniform(EXP_OVERFLOW - 5, EXP_OVERFLOW + 50, n - 3 * k),
    ])
    mu = 10.0 ** rng.uniform(np.log10(0.05), 1.0, n)
    tail = slice(3 * k, n)
    mu[tail] = rng.uniform(15.0, 60.0, n - 3 * k)
    return eps, mu


BANDS = [(0.0, 1.0), (1.0, 10.0), (10.0, 100.0), (100.0, EXP_OVERFLOW), (EXP_OVERFLOW, 1000.0)]


def band_name(lo: float, hi: float) -> str:
    lo_s = "709.78" if lo == EXP_OVERFLOW else f"{lo:g}"
    hi_s = "709.78" if hi == EXP_OVERFLOW else f"{hi:g}"
    return f"[{lo_s}, {hi_s}" + ("]" if hi == 1000.0 else ")")


def accuracy(eps: np.ndarray, mu: np.ndarray) -> dict[str, Any]:
    """(b) and (c) on the reference points."""
    t0 = time.perf_counter()
    ref = [ref_log_delta(e, m) for e, m in zip(eps, mu, strict=True)]
    t_ref = time.perf_counter() - t0
    LR = np.array([float(r) for r in ref])
    with mpmath.workdps(REF_DPS):
        DR = np.array([float(mpmath.exp(r)) for r in ref])
    L, fail_l = guarded(functools.partial(g.log_delta_mu, rounding="nearest"), eps, mu)
    D, fail_d = guarded(functools.partial(g.delta_mu, rounding="nearest"), eps, mu)
    P = plain_delta(eps, mu)
    normal = DR >= TINY

    rows = []
    for lo, hi in BANDS:
        sel = (eps >= lo) & ((eps < hi) if hi != 1000.0 else (eps <= hi))
        sn = sel & normal
        with np.errstate(all="ignore"):
            e_l = np.abs(L - LR)[sel] / np.abs(LR[sel])
            e_d = np.abs(D - DR)[sn] / DR[sn]
            e_p = np.abs(P - DR)[sn] / DR[sn]
        pn = P[sn]
        rows.append({
            "band": band_name(lo, hi),
            "n": int(sel.sum()),
            "n_normal": int(sn.sum()),
            "log_max": float(np.nanmax(e_l)) if e_l.size else np.nan,
            "log_max10": float(np.nanmax(e_l[mu[sel] <= 10])) if np.any(mu[sel] <= 10)
            else np.nan,
            "log_med": float(np.nanmedian(e_l)) if e_l.size else np.nan,
            "d_max": float(np.nanmax(e_d)) if e_d.size else np.nan,
            "d_med": float(np.nanmedian(e_d)) if e_d.size else np.nan,
            "p_max": float(np.nanmax(e_p)) if np.any(np.isfinite(e_p)) else np.nan,
            "p_med": float(np.nanmedian(e_p)) if np.any(np.isfinite(e_p)) else np.nan,
            "p_nan": float(np.mean(np.isnan(pn))) if pn.size else np.nan,
            "p_neg": float(np.mean(pn < 0)) if pn.size else np.nan,
            "p_zero": float(np.mean(pn == 0)) if pn.size else np.nan,
            "p_bad": float(np.mean(~(e_p <= 1e-6))) if pn.size else np.nan,
        })

    # (c) round trips from the reference log delta (underflowed delta included).  The
    # allowed error is the 1e-12 target plus the conditioning of the inverse: an input
    # error of 1e-13 |log delta| (2 u more when delta itself is rounded) divided by the
    # derivative d log delta / d mu = phi(a)/delta or d log delta / d eps = e^eps Phi(b)/delta.
    u = 2.0**-53
    with np.errstate(all="ignore"):
        a = mu / 2 - eps / mu
        dl_dmu = np.exp(-0.5 * a * a - 0.5 * np.log(2 * np.pi) - LR)
        dl_deps = np.exp(eps + log_ndtr(-eps / mu - mu / 2) - LR)
    mu_rt, fail_mu = guarded(functools.partial(g.mu_gdp, rounding="nearest"), eps, log_delta=LR)
    eps_rt, fail_eps = guarded(functools.partial(g.eps_gdp, rounding="nearest"), mu,
                               log_delta=LR)
    inner = (DR > 0) & (DR < 1)
    mu_rt_d, fail_mu_d = guarded(functools.partial(g.mu_gdp, rounding="nearest"), eps[inner],
                                 delta=DR[inner])
    under = DR == 0
    # a subnormal float delta is rounded by far more than 2 u (1e-323 has two significant
    # bits): its root is then up to ~1e-4 relative from mu, and the truth there is the root
    # of the rounded delta, solved on the reference with mpmath.findroot
    truth_d = mu.copy()
    for i in np.flatnonzero(inner & (DR < SUBNORMAL)):
        with mpmath.workdps(REF_DPS):
            target = mpmath.log(mpmath.mpf(float(DR[i])))
            e_i = float(eps[i])
            truth_d[i] = float(mpmath.findroot(lambda m, e_i=e_i, t=target:
                                               ref_log_delta(e_i, m) - t,
                                               mpmath.mpf(float(mu[i]))))
    with np.errstate(all="ignore"):
        err_mu = np.abs(mu_rt - mu)
        tol_mu = TARGET_RT * mu + 1e-13 * np.abs(LR) / dl_dmu
        err_mu_d = np.abs(mu_rt_d - truth_d[inner])
        tol_mu_d = (TARGET_RT * truth_d + (1e-13 * np.abs(LR) + 2 * u) / dl_dmu)[inner]
        err_eps = np.abs(eps_rt - eps)
        tol_eps = TARGET_RT * eps + 1e-13 * np.abs(LR) / dl_deps
        pos = eps > 0
    roundtrips = [
        ("μ_GDP(ε, log δ), all points", err_mu / mu, err_mu / tol_mu, fail_mu),
        ("μ_GDP(ε, log δ), δ underflowed", (err_mu / mu)[under], (err_mu / tol_mu)[under], 0),
        ("μ_GDP(ε, δ), 0 < δ < 1 in float64", err_mu_d / mu[inner], err_mu_d / tol_mu_d,
         fail_mu_d),
        ("ε_GDP(μ, log δ)", (err_eps / eps)[pos], err_eps / tol_eps, fail_eps),
    ]
    return {
        "rows": rows,
        "n": eps.size,
        "n_under": int(under.sum()),
        "fail_l": fail_l,
        "fail_d": fail_d,
        "t_ref": t_ref,
        "roundtrips": roundtrips,
    }


# --------------------------------------------------------------------------------- report


def verdict(ok: bool) -> str:
    return "met" if ok else "**missed**"


def render(mach: dict[str, str], thrs: list[dict[str, Any]], acc: dict[str, Any],
           quick: bool) -> str:
    out = [START, "", "## GDP core (`benchmarks/bench_gdp.py`)", ""]
    out.append(f"Run: `python benchmarks/bench_gdp.py{' --quick' if quick else ''}`"
               + (" (**quick run**: fewer points; the full run is the reference)" if quick
                  else "") + ".")
    out.append("")
    out += ["| machine | |", "|---|---|"]
    out += [f"| {k} | {v} |" for k, v in mach.items()]
    out.append("")

    out += ["### (a) Throughput of `mu_gdp(eps, log_delta=...)`", ""]
    thr = thrs[0]
    out.append(f"{thr['n']:,} random pairs, ε ~ U[0, 50], μ ~ U[0.1, 8], log δ from "
               f"`log_delta_mu`; best of {thr['repeats']} (wall clock, one process), with "
               f"the default `rounding=\"up\"` (a proven upper bound on μ) and with "
               f"`rounding=\"nearest\"` (the plain float root).")
    out.append("")
    out += ["| rounding | pairs | best time (s) | inversions / s | target ≥ 3e6 "
            "| max rel. error vs input μ |", "|---|---|---|---|---|---|"]
    for thr in thrs:
        if thr["error"]:
            out.append(f"| {thr['rounding']} | **failed**: `{thr['error']}` | | | | |")
            continue
        ok = thr["rate"] >= TARGET_RATE
        out.append(f"| {thr['rounding']} | {thr['n']:,} | {thr['best']:.3f} | "
                   f"{thr['rate']:.3g} | {verdict(ok)} | {fmt(thr['rt_max'])} |")
    out.append("")

    out += ["### (b) Accuracy against 40-digit mpmath, ε ≤ 1000", ""]
    out.append("The float accuracy, `rounding=\"nearest\"` here and in (c); the default "
               "`rounding=\"up\"` (resp. `\"down\"`) moves each value to its safe side by "
               "a proven bound on this error, about 1e-14 relative, up to ~1e-11 where the "
               "bound is pessimistic (tested against 50-digit mpmath in "
               "`tests/gaussian/test_conversions_rounding.py`).")
    out.append("")
    out.append(f"{acc['n']} points: ε uniform, log-uniform and around the `exp` overflow at "
               f"ε ≈ 709.78, μ ∈ [0.05, 10] log-uniform, except μ ∈ [15, 60] around the "
               f"overflow (δ ≥ 1e-300 at ε ≥ 710 needs μ ≳ 17); reference: Φ(a) − e^ε Φ(b) "
               f"with `mpmath.erfc` at 40 digits "
               f"({acc['t_ref']:.1f} s). Relative errors of δ over points with "
               f"δ ≥ 1e-300; of log δ over all points ({acc['n_under']} of them have δ "
               f"below the float64 range). \"plain\" is `norm.cdf(a) - exp(eps) * "
               f"norm.cdf(b)` (SciPy); its NaN / < 0 / = 0 fractions and \"unusable\" "
               f"(NaN, negative, zero, inf or off by more than 1e-6) are over the points "
               f"with δ ≥ 1e-300.")
    if acc["fail_l"] or acc["fail_d"]:
        out.append(f"\n**Exceptions**: log_delta_mu failed on {acc['fail_l']} points, "
                   f"delta_mu on {acc['fail_d']}.")
    out.append("")
    out += ["| ε band | points (δ ≥ 1e-300) | ours log δ max / median | ours δ max / median "
            "| plain δ max / median | plain NaN | plain < 0 | plain = 0 | plain unusable |",
            "|---|---|---|---|---|---|---|---|---|"]
    for r in acc["rows"]:
        out.append(
            f"| {r['band']} | {r['n']} ({r['n_normal']}) | {fmt(r['log_max'])} / "
            f"{fmt(r['log_med'])} | {fmt(r['d_max'])} / {fmt(r['d_med'])} | "
            f"{fmt(r['p_max'])} / {fmt(r['p_med'])} | {pct(r['p_nan'])} | {pct(r['p_neg'])} | "
            f"{pct(r['p_zero'])} | {pct(r['p_bad'])} |")
    log_max = np.nanmax([r["log_max10"] for r in acc["rows"]])
    d_max = max((r["d_max"] for r in acc["rows"] if not np.isnan(r["d_max"])), default=np.nan)
    out.append("")
    out.append(f"Targets: log δ ≤ 1e-13 relative for μ ≤ 10 — {verdict(log_max <= TARGET_LOG)} "
               f"(max {fmt(log_max)}); δ ≤ 5e-13 relative where δ ≥ 1e-300 — "
               f"{verdict(d_max <= TARGET_DELTA)} (max {fmt(d_max)}).")
    out.append("")

    out += ["### (c) Round trips from the reference log δ", ""]
    out.append("Input: the reference log δ (or δ rounded to float64); truth: the μ or ε it "
               "was computed at. \"error / allowed\" divides the error by 1e-12·truth plus "
               "the conditioning of the inverse (1e-13·|log δ|, +2u for a rounded δ, over "
               "∂ log δ/∂μ or |∂ log δ/∂ε|): it matters where δ is within ~1e-13 of 1 or "
               "ε ≈ 0, where the answer is only determined to that extent. For a δ that is "
               "subnormal in float64 (rounded by far more than 2u) the truth is the root of "
               "the rounded δ (`mpmath.findroot` on the reference). Target: ≤ 1.")
    out += ["", "| inverse | points | max rel. error | median rel. error | max error / allowed "
            "| exceptions | target |", "|---|---|---|---|---|---|---|"]
    for name, r, ratio, fails in acc["roundtrips"]:
        mx = float(np.nanmax(r)) if r.size else np.nan
        md = float(np.nanmedian(r)) if r.size else np.nan
        rmax = float(np.nanmax(ratio)) if ratio.size else np.nan
        ok = fails == 0 and not np.any(np.isnan(ratio)) and not rmax > 1
        out.append(f"| {name} | {ratio.size} | {fmt(mx)} | {fmt(md)} | {fmt(rmax)} | {fails} "
                   f"| {verdict(ok)} |")
    out += ["", END]
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="smoke run with fewer points")
    ap.add_argument("--no-write", action="store_true", help="print only, do not edit docs/")
    ap.add_argument("--seed", type=int, default=20260101)
    args = ap.parse_args(argv)

    mach = machine({"NumPy": np.__version__, "SciPy": scipy.__version__,
                    "mpmath": mpmath.__version__})
    n_pairs, n_ref = (100_000, 400) if args.quick else (1_000_000, 4000)
    thrs = [bench_throughput(n_pairs, 3, args.seed, r) for r in ("up", "nearest")]
    acc = accuracy(*reference_points(n_ref, args.seed + 1))
    section = render(mach, thrs, acc, args.quick)
    print(section)
    if not args.no_write:
        write_section(section, START, END)
        print(f"\nwritten to {DOC.relative_to(ROOT)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
