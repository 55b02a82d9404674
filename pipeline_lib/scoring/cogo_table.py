"""Scoring of figure cogo_table's claims from its statistics (its sidecar's ``stats``, or the copy kept in
``docs/stats``): the ledger job and ``publish`` call :func:`score_claims`; the figure job does not."""
from __future__ import annotations

from .. import claims
from ..analysis.fourier import TABLE
from ..figures.cogo_table import CELL_IDS, REFERENCE, Params


def score_claims(stats: dict, params: Params) -> dict:
    d23, d29 = talk_run(stats, 23), talk_run(stats, 29)
    out = {f"tian.cogo_table.{what}_d23": score_cell(d23, 23, c) for c, what in CELL_IDS.items()}
    out["tian.cogo_table.not_order_46_d29"] = score_cell(d29, 29, "pct_not_46")
    for d in (71, 127):
        out[f"tian.cogo_table.row_d{d}"] = score_row(talk_run(stats, d), d)
    out["tian.cogo_table.match_construction"] = score_construction(stats)
    out["tian.cogo_table.weight_decay_simpler"] = score_weight_decay(stats)
    return out

def talk_value(cell: str) -> tuple[float, float, float]:
    """A cell of REFERENCE as (mean, its printed uncertainty (taken as a standard error), the step of its last
    printed digit): "47.07 ± 1.88" -> (47.07, 1.88, 0.01)."""
    mean, _, sem = cell.partition("±")
    digits = len(mean.strip().partition(".")[2])
    return float(mean), float(sem) if sem.strip() else 0.0, 10.0 ** -digits


def talk_run(stats: dict, d: int) -> dict | None:
    """The row of modulus d in the talk's setting (Adam, q = 512, wd = 5e-5): a row whose seeds each have their
    own split (as the talk's) if there is one, else the first run."""
    rows = [s for s in stats["runs"].values() if s["d"] == d and s["talk_setting"] and s.get("optimizer") == "adam"]
    return max(rows, key=lambda s: bool(s.get("split_per_seed")), default=None)


def cell_check(s: dict, column: str, ref: float, se: float, rounding: float) -> tuple[float, float, float, int, str]:
    """(mean, t low, t high, seeds, verdict) of one column over the solved seeds; the first column as the
    reference's per-seed count. The verdict: claims.agrees within the talk's own 95% half-width and half its printed
    digit (claims.printed_margin), except
    for a printed 0 ± 0, which says every seed had none: claims.share_holds over the seeds with a 0."""
    values = s["per_seed"]["count_not_46" if column == "pct_not_46" else column]
    m, lo, hi = claims.mean_interval(values)
    n = sum(v is not None for v in values)
    if ref == 0 and se == 0:
        return m, lo, hi, n, claims.share_holds(sum(v == 0 for v in values if v is not None), n)
    return m, lo, hi, n, claims.agrees(m, lo, hi, ref, claims.printed_margin(se, rounding))


def score_cell(s: dict | None, d: int, column: str) -> dict:
    if s is None:
        return claims.not_run(f"no d = {d} Adam run at the talk's q = 512, wd = 5e-5 among runs")
    cell = REFERENCE[d][TABLE.index(column)] if d in REFERENCE else None
    ref, se, rounding = talk_value(cell) if cell else (0.0, 0.0, 0.0)
    m, lo, hi, n, verdict = cell_check(s, column, ref, se, rounding)
    if n == 0:
        return claims.not_run(f"d = {d}: no solved seed with this column defined")
    what = (f"talk {cell}" + ("; every seed 0" if ref == 0 and se == 0 else
                              "; equivalence margin +-" + f"{claims.printed_margin(se, rounding):.3g}" + " (the talk's 95% half-width and half its digit)")
            if cell else "no talk value (count 0 claimed: every seed 0)")
    extra = ""
    if column == "pct_not_46":
        pct = claims.mean_interval(s["per_seed"]["pct_not_46"])[0]
        what = (f"talk count {ref:g} per seed" if d in REFERENCE else what) + f"; ours as % of frequencies {pct:.2f}%"
    if s.get("split_per_seed"):
        extra = f"; {s['seeds']} seeds, each with its own train/test split (as the talk)"
    else:
        extra = "; our seeds share one train/test split (the talk: one per seed)"
    return claims.score(m, (lo, hi), n, what + extra, verdict)


def score_row(s: dict | None, d: int) -> dict:
    if s is None:
        return claims.not_run(f"no d = {d} Adam run at the talk's q = 512, wd = 5e-5 (config/cogo_paper.yaml)")
    passed = [cell_check(s, c, *talk_value(REFERENCE[d][i]))[4] == "reproduced" for i, c in enumerate(TABLE)]
    k = sum(passed)
    return claims.score(k / len(TABLE), (float("nan"),) * 2, s["solved"],
                        f"talk's d = {d} row; columns passing: {k}/{len(TABLE)}", claims.share_holds(k, len(TABLE), of="columns"))


def score_construction(stats: dict) -> dict:
    """Slide 3's "95% of the solutions are factorizable into 2*3 or 2*2": per solved seed of the talk's moduli in its
    setting, the % of its order-4/6 frequencies that factorise; the mean's t interval, clipped to [0, 100] (a mean of
    percentages lies there), within 95 +- 5 points."""
    rows = [talk_run(stats, d) for d in sorted(REFERENCE)]
    rows = [s for s in rows if s is not None]
    if any("pct_factorable_46" not in s["per_seed"] for s in rows):
        return claims.not_run("the statistics predate the per-seed share of factorable order-4/6 frequencies: rerun "
                              "the figure")
    values = [v for s in rows for v in s["per_seed"]["pct_factorable_46"]]
    n = sum(v is not None for v in values)
    if n == 0:
        return claims.not_run("no solved seed of an Adam run at the talk's q = 512, wd = 5e-5")
    m, lo, hi = claims.mean_interval(values)
    lo, hi = max(lo, 0.0), min(hi, 100.0)
    return claims.score(m, (lo, hi), n, f"slide 3: 95% (tolerance 5 points); moduli {[s['d'] for s in rows]}",
                        claims.near(m, lo, hi, 95.0, 5.0))


def score_weight_decay(stats: dict) -> dict:
    groups: dict = {}
    for s in stats["runs"].values():
        if s.get("optimizer", "adam") == "adam":
            groups.setdefault((s["d"], s["q"], s.get("lr"), tuple(s.get("datasets", ()))), []).append(s)
    groups = {k: sorted(g, key=lambda s: s["weight_decay"]) for k, g in groups.items()
              if len({s["weight_decay"] for s in g}) > 1}
    if not groups:
        return claims.not_run("no (d, q) trained at two weight decays among runs (the sweep is config/cogo_paper.yaml)")
    ok, parts = 0, []
    for (d, q, _, _), g in sorted(groups.items()):
        m0, lo0, _ = claims.mean_interval(g[0]["per_seed"]["mean_order"])
        m1, _, hi1 = claims.mean_interval(g[-1]["per_seed"]["mean_order"])
        ok += claims.exceeds(m0, lo0, m1, hi1) == "reproduced"
        parts.append(f"d={d} q={q}: wd {g[0]['weight_decay']:g} {m0:.2f} vs {g[-1]['weight_decay']:g} {m1:.2f}")
    n = len(groups)
    seeds = min(len(g[i]["per_seed"]["mean_order"]) for g in groups.values() for i in (0, -1))  # per compared run
    return claims.score(ok / n, (float("nan"),) * 2, seeds,
                        f"mean order at the smallest vs the largest wd: {'; '.join(parts)}", claims.share_holds(ok, n, of="(d, q) groups"))
