"""symgdp.sweep: the same records on every executor, resumable output, failing points.

The numbers themselves are checked against the closed form of the Laplace mechanism's GDP
parameter, mu(eps0) = -2 Phi^{-1}(exp(-eps0/2)/2) (mpmath, 40 digits); the sweep must
agree record for record with a plain loop over Profile.measure, and the serial, process
pool and Dask executors must return identical records (timing aside).
"""

from __future__ import annotations

import json
import math
from concurrent.futures import Executor, Future

import mpmath
import pytest
import sympy

from symgdp import Profile, mechanisms, sweep
from symgdp.errors import DomainError

SGD_GRID = {"A": [1.0, 1.5], "B": [1], "sigma": [1.0, 3.5]}
SETTINGS = {"tol": 1e-6, "eps_h": 50.0}


def strip(records):
    return [{k: v for k, v in r.items() if k != "seconds"} for r in records]


class Counting(Executor):
    """A serial executor that counts the grid points and the tasks it is given (a task
    carries a batch of points); ``fail_after`` tasks it runs no more and fails instead."""

    def __init__(self, fail_after=None):
        self.submitted = 0
        self.batches = []
        self.fail_after = fail_after

    def submit(self, fn, /, *args, **kwargs):
        batch = args[0] if isinstance(args[0], list) else [args[0]]
        f = Future()
        if self.fail_after is not None and len(self.batches) >= self.fail_after:
            f.set_exception(RuntimeError("the worker died"))
            return f
        self.submitted += len(batch)
        self.batches.append([t.index for t in batch])
        f.set_result(fn(*args, **kwargs))
        return f


@pytest.fixture(scope="module")
def serial():
    return sweep(mechanisms.sgd_family, SGD_GRID, executor="serial", **SETTINGS)


@pytest.fixture(scope="module")
def dask_client():
    distributed = pytest.importorskip("distributed")
    # one cluster for the module: it takes seconds to start
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=":0") as cluster, \
            distributed.Client(cluster) as client:
        yield client


def test_laplace_brackets_contain_the_closed_form():
    grid = {"eps0": [0.25, 1.0, 3.0]}
    t = sweep(mechanisms.laplace, grid, executor="serial", eps_h=20, tol=1e-7)
    for r in t:
        with mpmath.workdps(40):
            # mu = -2 Phi^{-1}(e^{-eps0/2}/2) = 2 sqrt2 erfinv(1 - e^{-eps0/2})
            e0 = mpmath.mpf(r["point"]["eps0"])
            mu = 2 * mpmath.sqrt(2) * mpmath.erfinv(1 - mpmath.exp(-e0 / 2))
        assert r["error"] is None and r["mu_lower"] <= mu <= r["mu_upper"]
        assert r["mu_upper"] - r["mu_lower"] <= 1e-7 and r["covers_tail"]


def test_serial_equals_a_plain_loop(serial):
    for r in serial:
        m = mechanisms.sgd_family(**r["point"]).measure(identify=False, **SETTINGS)
        assert (r["mu_lower"], r["mu_upper"], r["certified"]) == (m.lower, m.upper, m.certified)
    assert [r["point"] for r in serial] == [
        {"A": a, "B": 1, "sigma": s} for a in SGD_GRID["A"] for s in SGD_GRID["sigma"]]


def test_process_pool_gives_identical_records(serial):
    pooled = sweep(mechanisms.sgd_family, SGD_GRID, workers=2, **SETTINGS)
    assert strip(pooled) == strip(serial)


def test_dask_gives_identical_records(serial, dask_client):
    on_dask = sweep(mechanisms.sgd_family, SGD_GRID, executor=dask_client.get_executor(),
                    **SETTINGS)
    assert strip(on_dask) == strip(serial)


def test_dask_batches_give_identical_records(serial, dask_client):
    from symgdp.planning.sweep import _width

    ex = dask_client.get_executor()
    assert _width(ex, None) == 2  # the cluster's two worker threads size the batches
    on_dask = sweep(mechanisms.sgd_family, SGD_GRID, executor=ex, chunksize=3, **SETTINGS)
    assert strip(on_dask) == strip(serial)


def test_dask_identify_stays_symbolic(dask_client):
    # Dask's workers are daemonic processes; the symbolic steps must still run bounded
    # in their own child, not fall back to a numeric answer
    t = sweep(mechanisms.sgd_family, {"A": [2.0], "B": [1], "sigma": [1.0]},
              executor=dask_client.get_executor(), task="identify")
    assert t[0]["method"] == "symbolic" and sympy.sympify(t[0]["limit"]) == 2  # A^2/(2 sigma^2)


def test_profile_with_a_grid_over_its_parameters(serial):
    p = Profile.parse("B*exp(-sigma**2*eps**2/A**2)", {"B": 1})
    t = sweep(p, [{"A": 1.0, "sigma": 3.5}, {"A": 1.5, "sigma": 1.0}], executor="serial",
              **SETTINGS)
    same = {(r["point"]["A"], r["point"]["sigma"]): r for r in serial}
    for r in t:
        ref = same[(r["point"]["A"], r["point"]["sigma"])]
        assert (r["mu_lower"], r["mu_upper"]) == (ref["mu_lower"], ref["mu_upper"])


def test_resume_after_a_crash_recomputes_nothing_finished(tmp_path, serial):
    out = tmp_path / "sgd.jsonl"
    sweep(mechanisms.sgd_family, SGD_GRID, executor="serial", out=out, **SETTINGS)
    lines = out.read_text().splitlines(keepends=True)
    assert len(lines) == len(serial)
    # the crash: three records written, the fourth torn in the middle of its line
    out.write_text("".join(lines[:3]) + lines[3][: len(lines[3]) // 2])
    counting = Counting()
    resumed = sweep(mechanisms.sgd_family, SGD_GRID, executor=counting, out=out, resume=True,
                    **SETTINGS)
    assert counting.submitted == len(serial) - 3
    assert strip(resumed) == strip(serial)
    again = Counting()
    sweep(mechanisms.sgd_family, SGD_GRID, executor=again, out=out, resume=True, **SETTINGS)
    assert again.submitted == 0
    records = [json.loads(line) for line in out.read_text().splitlines()]
    assert sorted(r["index"] for r in records) == list(range(len(serial)))


def test_existing_output_is_not_overwritten_nor_mixed(tmp_path):
    out = tmp_path / "lap.jsonl"
    sweep(mechanisms.laplace, {"eps0": [1.0]}, executor="serial", out=out, eps_h=10)
    with pytest.raises(DomainError, match="resume=True"):
        sweep(mechanisms.laplace, {"eps0": [1.0]}, executor="serial", out=out, eps_h=10)
    with pytest.raises(DomainError, match="different sweep"):
        sweep(mechanisms.laplace, {"eps0": [1.0]}, executor="serial", out=out, eps_h=20,
              resume=True)


def test_failing_points_are_recorded_and_the_rest_completes(tmp_path):
    out = tmp_path / "bad.jsonl"
    # eps0 = -1 is refused by the factory; q = -1 makes an increasing "profile" (refused
    # by the validation in the worker)
    t = sweep(mechanisms.laplace, {"eps0": [1.0, -1.0, 2.0]}, workers=2, out=out, eps_h=10)
    assert [r["error"] is None for r in t] == [True, False, True]
    assert t[1]["error"].startswith("DomainError") and "eps0" in t[1]["error"]
    p = Profile.parse("exp(-q*eps**2)")
    t2 = sweep(p, {"q": [1.0, -1.0]}, workers=2, eps_h=10)
    assert t2[0]["error"] is None and t2[1]["error"].startswith("ProfileError")
    assert len(t.errors) == 1 and len(out.read_text().splitlines()) == 3


def test_to_pandas(serial):
    pytest.importorskip("pandas")
    df = serial.to_pandas()
    assert list(df["sigma"]) == [r["point"]["sigma"] for r in serial]
    assert (df["mu_lower"] <= df["mu_upper"]).all()


def test_bad_grids_are_named():
    with pytest.raises(DomainError, match="nope not in"):
        sweep(Profile.parse("exp(-a*eps)"), {"nope": [1]}, executor="serial")
    with pytest.raises(DomainError, match="repeats"):
        sweep(mechanisms.laplace, [{"eps0": 1}, {"eps0": 1}], executor="serial")
    with pytest.raises(DomainError, match="no values"):
        sweep(mechanisms.laplace, {"eps0": []}, executor="serial")
    with pytest.raises(DomainError, match="task"):
        sweep(mechanisms.laplace, {"eps0": [1]}, task="plot")


def test_calibrate_at_every_point():
    # Laplace with budget c*e0: the largest safe e0 for mu <= 1 is eps0*/c, with
    # eps0* = -2 log(2 Phi(-1/2)) (closed form, mpmath)
    p = Profile.parse("Max(0, 1 - exp((eps - c*e0)/2))")
    t = sweep(p, {"c": [1, 2]}, executor="serial", task="calibrate", eps_h=20,
              calibrate={"parameter": "e0", "target_mu": 1.0, "bracket": [0.05, 3.0]})
    with mpmath.workdps(40):
        star = -2 * mpmath.log(2 * mpmath.ncdf(-0.5))
    for r in t:
        truth = float(star / r["point"]["c"])
        assert r["error"] is None and r["direction"] == "increasing"
        assert r["bracket"][0] <= truth <= r["bracket"][1] and r["mu_upper"] <= 1.0


def test_progress_bar_on_request(capsys):
    sweep(mechanisms.laplace, {"eps0": [1.0, 2.0]}, executor="serial", eps_h=10,
          progress=True)
    assert "2/2" in capsys.readouterr().err  # tqdm's counter


def test_mu_tail_recorded_only_on_request():
    grid = {"A": [1.5], "B": [1.0], "sigma": [2.0]}
    plain = sweep(mechanisms.sgd_family, grid, executor="serial", eps_h=20)
    assert "mu_tail" not in plain[0]  # the tail limit is not derived at all
    tail = sweep(mechanisms.sgd_family, grid, executor="serial", eps_h=20, identify=True)
    # closed form: eps^2 / (-2 log(B e^{-sigma^2 eps^2/A^2})) -> A^2/(2 sigma^2), so
    # mu_tail = A / (sigma sqrt 2)
    assert tail[0]["mu_tail"] == pytest.approx(1.5 / (2.0 * math.sqrt(2)), rel=1e-12)
    assert (tail[0]["mu_lower"], tail[0]["mu_upper"]) == (plain[0]["mu_lower"],
                                                          plain[0]["mu_upper"])
    assert tail[0]["sweep"] != plain[0]["sweep"]  # a different sweep for resuming


LAPLACE_GRID = {"eps0": [0.5, -1.0, 1.0, 2.0, -2.0, 3.0, 0.75]}  # eps0 < 0: refused


@pytest.fixture(scope="module")
def laplace_serial():
    return sweep(mechanisms.laplace, LAPLACE_GRID, executor="serial", eps_h=10)


def test_batches_keep_each_points_record_error_and_the_grid_order(laplace_serial):
    # the reference is the serial sweep, one point at a time in this process
    for size in (1, 2, 3, 7, 50):
        ex = Counting()
        t = sweep(mechanisms.laplace, LAPLACE_GRID, executor=ex, chunksize=size, eps_h=10)
        assert strip(t) == strip(laplace_serial)
        assert [r["index"] for r in t] == list(range(7))
        assert [r["error"] is None for r in t] == [True, False, True, True, False, True, True]
        # contiguous batches of the requested size cover every point the factory built
        # once (the points it refused are records already, never sent)
        assert sum(ex.batches, []) == [0, 2, 3, 5, 6]
        assert [len(b) for b in ex.batches[:-1]] == [size] * (len(ex.batches) - 1)
        assert 1 <= len(ex.batches[-1]) <= size


def test_a_point_failing_inside_a_batch_fails_alone():
    # q < 0 makes an increasing "profile", refused by the validation in the worker, in
    # the middle of a batch; the reference is the serial sweep, one point at a time
    p = Profile.parse("exp(-q*eps**2)")
    grid = {"q": [1.0, -1.0, 2.0, -0.5, 0.5]}
    ref = sweep(p, grid, executor="serial", eps_h=10)
    ex = Counting()
    t = sweep(p, grid, executor=ex, chunksize=5, eps_h=10)
    assert ex.batches == [[0, 1, 2, 3, 4]] and strip(t) == strip(ref)
    assert [r["error"] is None for r in t] == [True, False, True, False, True]
    assert t[1]["error"].startswith("ProfileError")


def test_default_batch_size_follows_points_and_workers():
    from symgdp.planning.sweep import _MAX_CHUNK, _TASKS_PER_WORKER, _chunk_size

    for n in (1, 2, 7, 8, 9, 100, 255, 256, 257, 1000, 10**5):
        for w in (1, 2, 3, 16):
            size = _chunk_size(n, w)
            tasks = -(-n // size)
            assert 1 <= size <= _MAX_CHUNK
            # about four tasks per worker, more only when the batches hit their cap
            assert tasks <= _TASKS_PER_WORKER * w or size == _MAX_CHUNK
            assert size == 1 or tasks >= min(n, _TASKS_PER_WORKER * w) // 2
    ex = Counting()
    sweep(mechanisms.laplace, LAPLACE_GRID, executor=ex, workers=1, eps_h=10)
    # 5 points the factory built, 1 worker: batches of ceil(5 / 4) = 2
    assert [len(b) for b in ex.batches] == [2, 2, 1]


def test_resume_with_batches_submits_exactly_the_unfinished_points(tmp_path,
                                                                   laplace_serial):
    out = tmp_path / "lap.jsonl"
    # the sweep dies after its first batch (points 0, 2, 3; the factory's refusals 1 and 4
    # are written at once): those records are in the file
    with pytest.raises(RuntimeError, match="worker died"):
        sweep(mechanisms.laplace, LAPLACE_GRID, executor=Counting(fail_after=1),
              chunksize=3, out=out, eps_h=10)
    written = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["index"] for r in written] == [1, 4, 0, 2, 3]
    ex = Counting()
    t = sweep(mechanisms.laplace, LAPLACE_GRID, executor=ex, chunksize=3, out=out,
              resume=True, eps_h=10)
    assert ex.submitted == 2 and ex.batches == [[5, 6]]
    assert strip(t) == strip(laplace_serial)
    records = [json.loads(line) for line in out.read_text().splitlines()]
    assert sorted(r["index"] for r in records) == list(range(7))


def test_progress_counts_points_not_batches(capsys):
    sweep(mechanisms.laplace, LAPLACE_GRID, executor=Counting(), chunksize=3, eps_h=10,
          progress=True)
    # tqdm's counter: the 5 points to compute (2 batches; the 2 refused points are done)
    assert "5/5" in capsys.readouterr().err


def test_bad_batch_settings_are_named():
    for bad in (0, -2, 1.5, True):
        with pytest.raises(DomainError, match="chunksize"):
            sweep(mechanisms.laplace, {"eps0": [1.0, 2.0]}, executor=Counting(),
                  chunksize=bad)
    with pytest.raises(DomainError, match="workers"):
        sweep(mechanisms.laplace, {"eps0": [1.0, 2.0]}, executor=Counting(), workers=0)


def test_a_numeric_source_profile_is_swept_in_this_process(tmp_path):
    # generalized Gaussian noise with a symbolic shape has no text form: its points run
    # here (serially), each bound to the certified numeric source; each
    # bracket against the GDPT on a grid of [0, 2] computed independently from the
    # 40-digit incomplete-gamma reference of tests/noise/test_gengauss.py: its maximum is
    # at most the sup (<= mu_upper), and within the grid's resolution of it (>= mu_lower)
    from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor

    import symgdp

    x = sympy.Symbol("x", real=True)
    k, s = sympy.symbols("k sigma", positive=True)
    noise = symgdp.additive_noise(k / (2 * s * sympy.gamma(1 / k))
                                  * sympy.exp(-sympy.Abs(x / s) ** k),
                                  sensitivity=1, variable=x).replace(values={"sigma": 1})
    grid = {"k": [1.5, 3, 0.5]}
    out = tmp_path / "gg.jsonl"
    recs = sweep(noise, grid, eps_h=2, tol=1e-3, out=out)
    assert recs[2]["error"].startswith("DomainError") and "below 1" in recs[2]["error"]
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "noise"))
    from test_gengauss import gamma_profile

    from symgdp import mu_gdp

    for r, shape in zip(recs[:2], (1.5, 3), strict=True):
        g = max(mu_gdp(e, float(gamma_profile(shape, 1, 1, e)), rounding="nearest")
                for e in [i / 20 for i in range(41)])
        assert r["error"] is None and g * (1 - 1e-12) <= r["mu_upper"]
        assert r["mu_lower"] <= g * (1 + 1e-3)
    assert sweep(noise, grid, eps_h=2, tol=1e-3, out=out, resume=True) == recs
    for pool in (ProcessPoolExecutor, ThreadPoolExecutor):   # flint's precision is global
        with pool(1) as ex, pytest.raises(DomainError, match="no text form"):
            sweep(noise, grid, eps_h=2, tol=1e-3, executor=ex)
