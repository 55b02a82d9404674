"""An attention atlas per run: the attention of the run's fixed probe sequences at every recorded epoch, as the
trajectory records it (one query over the key positions: the circuit model's query, a transformer's CLS query
in its last layer, averaged over heads), and, for a transformer, per layer and head, recomputed from its weight
snapshots (:func:`.snapshots.head_attention`; the last layer's mean over heads is compared with the recorded
attention at the same epochs). The interactive view (``.html``) has a slider over the epochs and menus for the
run, the seed and the attention (recorded, or one layer's head), and draws the probes x key positions map at
the chosen epoch; below the slider's scale, each seed's transition (its first epoch with test accuracy above
``threshold``) is marked. The static figure draws one seed's recorded maps at a few log-spaced epochs per run."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import xarray as xr
from matplotlib.figure import Figure

from .. import snapshots
from ..analysis.eureka import eureka_epochs
from ..plumbing.store import read_dataset
from ..stats import log_spaced_indices
from . import style, views
from .reading import recorded_attention

NAME = "attention_atlas"
PAPER = "Across the sources: attention over training"  # the report's category
CONFIG = """
description: >-
  Attention of each run's fixed probe sequences at every recorded epoch (one query over the keys), as an
  interactive atlas (slider over epochs, run and seed menus, each seed's transition marked) and a static
  grid of one seed's maps at a few epochs.
required: [runs]
properties:
  runs:
    description: "Runs whose trajectory records probe attention."
    type: array
    minItems: 1
    items:
      type: string
      x-ref: run
      x-reads: [trajectory, weights]
      x-requires: {properties: {records: {contains: {const: attention}}}}
      x-requires-message: "must record probe attention (a model whose RECORDS hold 'attention')"
  threshold: {description: "A seed's transition: its first epoch with test accuracy above this.", type: number, exclusiveMinimum: 0, maximum: 1, default: 0.9}
  seed: {description: "The seed the static figure draws (the view offers every seed).", type: integer, minimum: 0, default: 0}
  n_epochs: {description: "Epochs per run in the static figure, log-spaced over the recorded ones.", type: integer, minimum: 1, default: 5}
  heads: {description: "For a transformer run, also each layer's and head's attention, recomputed from its weight snapshots.", type: boolean, default: true}
"""
EXTRA_OUTPUTS = [".html"]  # the interactive atlas


@dataclass(frozen=True)
class Params:
    runs: tuple[str, ...]
    threshold: float = 0.9
    seed: int = 0
    n_epochs: int = 5
    heads: bool = True


RECORDED = "rec"  # the view's code of the recorded attention; a head's: "<layer>.<head>", both counted from 1


def build(cfg, params: Params, paths, outputs: dict[str, str]) -> tuple[Figure, dict]:
    atlases, heads = {}, {}
    for run in params.runs:
        traj = read_dataset(paths.trajectory(run), rule="train")
        atlases[run] = read_atlas(traj, params.threshold)
        if params.heads and traj.attrs.get("model_kind") in snapshots.HEAD_KINDS:  # read the weights only then
            weights = read_dataset(paths.weights(run), rule="train")
            if snapshots.has_heads(weights):
                heads[run] = snapshots.head_attention(weights, traj, run)
    stats = {run: {"recorded_epochs": [int(e) for e in a.epoch.values], "seeds": [int(s) for s in a.seed.values],
                   "probes": int(a.sizes["probe"]), "positions": int(a.sizes["position"]),
                   "transition_epoch": [None if np.isnan(e) else int(e) for e in a.transition.values],
                   "max_weight_first": float(a.attention.isel(epoch=0).max("position").median()),
                   "max_weight_last": float(a.attention.isel(epoch=-1).max("position").median())}
             for run, a in atlases.items()}
    for run, h in heads.items():
        stats[run]["heads"] = head_stats(h, atlases[run])
    if ".html" in outputs:
        stats["view_bytes"] = write_view(atlases, params.threshold, outputs[".html"], heads)
    stats["summary"] = "; ".join(
        f"{run}: {len(s['recorded_epochs'])} recorded epochs, median largest weight per probe "
        f"{s['max_weight_first']:.2f} -> {s['max_weight_last']:.2f}" + (
            f"; {s['heads']['layers']} layer(s) x {s['heads']['heads']} heads recomputed at "
            f"{len(s['heads']['snapshot_epochs'])} weight snapshots (the last layer's mean over heads within "
            f"{s['heads']['recomputed_minus_recorded']:.1e} of the recorded attention)" if "heads" in s else "")
        for run, s in stats.items() if isinstance(s, dict))
    return plot(atlases, params.seed, params.n_epochs), stats


def read_atlas(traj: xr.Dataset, threshold: float) -> xr.Dataset:
    """The recorded attention (seed, epoch, probe, position), the key positions' tokens per probe
    (``token``: 'CLS' where the model prepends one) and each seed's ``transition`` epoch (NaN: never)."""
    att = recorded_attention(traj)
    probe_x = traj.probe_x.values
    n_pos, n_tok = att.sizes["position"], probe_x.shape[1]
    cls = n_pos == n_tok + 1
    tokens = np.array([[("CLS" if cls and p == 0 else str(int(row[p - cls]))) for p in range(n_pos)] for row in probe_x])
    transition = eureka_epochs(traj.test_acc.values, traj.epoch.values, threshold)
    return xr.Dataset({"attention": att, "token": (("probe", "position"), tokens),
                       "transition": ("seed", transition)})


def head_stats(h: xr.DataArray, atlas: xr.Dataset) -> dict:
    """Sizes of a run's recomputed per-head attention and the largest absolute difference between its last layer's
    mean over heads and the recorded attention at the epochs both hold (NaN where none)."""
    common = sorted(set(h.epoch.values.tolist()) & set(atlas.epoch.values.tolist()))
    diff = (float(np.abs(h.isel(layer=-1).mean("head").sel(epoch=common).values
                         - atlas.attention.sel(epoch=common).values).max()) if common else float("nan"))
    return {"layers": int(h.sizes["layer"]), "heads": int(h.sizes["head"]),
            "snapshot_epochs": [int(e) for e in h.epoch.values], "recomputed_minus_recorded": diff}


def plot(atlases: dict[str, xr.Dataset], seed: int, n_epochs: int) -> Figure:
    ncols = max(min(n_epochs, a.sizes["epoch"]) for a in atlases.values())
    fig, axes = style.figure(ncols=ncols, nrows=len(atlases), width=1.9, height=1.7)
    for r, (run, a) in enumerate(atlases.items()):
        s = seed if seed in a.seed.values else int(a.seed.values[0])
        picks = log_spaced_indices(a.sizes["epoch"], min(n_epochs, a.sizes["epoch"]))
        for c, k in enumerate(picks):
            ax = axes[r][c]
            im = ax.imshow(a.attention.sel(seed=s).isel(epoch=k).values, vmin=0, vmax=1, cmap="viridis",
                           aspect="auto", interpolation="nearest")
            ax.set_title(f"{run}, seed {s}\nepoch {int(a.epoch.values[k])}", fontsize=7)
            ax.set_xlabel("key position", fontsize=7)
            ax.tick_params(labelsize=6)
        axes[r][0].set_ylabel("probe", fontsize=7)
        for c in range(len(picks), ncols):
            axes[r][c].axis("off")
    fig.colorbar(im, ax=axes[:, -1].tolist(), fraction=0.05, label="attention weight")
    return fig


def atlas_rows(atlases: dict[str, xr.Dataset], keep: int, heads: dict[str, xr.DataArray] | None = None
               ) -> tuple[list[dict], list[dict], list[dict], list[dict]]:
    """The view's four tables on about ``keep`` log-spaced epochs per run and attention (each seed's transition
    epoch kept too), the attention ``view`` being :data:`RECORDED` or a head's "<layer>.<head>" (from ``heads``):
    ``cells``, one row per (run, view, seed, k, probe), the run as its index ``r`` in ``atlases``, with ``w`` the
    weights over the key positions in hundredths, space-separated (a third of the size of one row per cell); ``epochs`` (key 'run|view|k', epoch);
    ``marks`` (run, view, seed, k of the transition, epoch); ``counts`` (key 'run|view', n: the kept epochs)."""
    cells, epochs_rows, marks, counts = [], [], [], []
    for r, (run, a) in enumerate(atlases.items()):
        h = (heads or {}).get(run)
        maps = {RECORDED: a.attention.transpose("seed", "epoch", "probe", "position")}
        if h is not None:
            maps.update({f"{i + 1}.{j + 1}": h.isel(layer=i, head=j).transpose("seed", "epoch", "probe", "position")
                         for i in range(h.sizes["layer"]) for j in range(h.sizes["head"])})
        for view, att in maps.items():
            _view_rows(run, r, view, att, a.transition.values, keep, cells, epochs_rows, marks, counts)
    return cells, epochs_rows, marks, counts


def _view_rows(run, r, view, att: xr.DataArray, transition: np.ndarray, keep: int, cells, epochs_rows, marks, counts):
    epochs = att.epoch.values
    nearest = {int(np.searchsorted(epochs, t)) for t in transition[np.isfinite(transition)]}
    idx = sorted(set(views.thin_epochs(epochs, keep).tolist()) | {min(i, len(epochs) - 1) for i in nearest})
    w = np.rint(100 * att.values[:, idx]).astype(int)  # (seed, k, probe, position)
    kept = epochs[idx]
    epochs_rows += [{"key": f"{run}|{view}|{k}", "epoch": int(e)} for k, e in enumerate(kept)]
    counts.append({"key": f"{run}|{view}", "n": len(idx)})
    for j, s in enumerate(att.seed.values):
        for k in range(len(idx)):
            for p in range(w.shape[2]):
                cells.append({"r": r, "view": view, "seed": int(s), "k": k, "probe": p,
                              "w": " ".join(map(str, w[j, k, p]))})
        if np.isfinite(transition[j]):
            k = int(np.searchsorted(kept, transition[j]))
            marks.append({"run": run, "view": view, "seed": int(s), "k": min(k, len(idx) - 1),
                          "epoch": int(transition[j])})


def tokens_rows(atlases: dict[str, xr.Dataset]) -> list[dict]:
    """(key 'run|probe|position', token): what each key position of each probe holds (for the tooltip)."""
    return [{"key": f"{run}|{p}|{q}", "token": a.token.values[p, q]}
            for run, a in atlases.items() for p in range(a.sizes["probe"]) for q in range(a.sizes["position"])]


def view_label(view: str) -> str:
    """The attention menu's words for a view's code."""
    if view == RECORDED:
        return "recorded: last layer, mean over heads"
    layer, head = view.split(".")
    return f"layer {layer}, head {head} (weight snapshots)"


def write_view(atlases: dict[str, xr.Dataset], threshold: float, path: str,
               heads: dict[str, xr.DataArray] | None = None) -> int:
    """The atlas as one self-contained Vega-Lite page (altair): a slider ``k`` over the kept epochs' indices,
    menus ``run``, ``seed`` and ``view`` (the attention: recorded, or a head recomputed from the weight snapshots,
    ``heads``); the map of the chosen cell with the chosen epoch above it; below, a strip of the indices with each
    seed's transition ticked (the chosen seed's long) and the slider's position as a rule. A slider beyond a run's
    last kept epoch shows that last epoch. Epochs are halved until the page fits :data:`.views.MAX_VIEW_BYTES`.
    Returns the size."""
    keep = 40
    some_heads = bool(heads)
    while True:
        size = views.write_view(_chart(atlases, threshold, keep, heads), path,
                                "Attention atlas: the probes' attention over training", (
            "Move the slider to step through the epochs (up to "
            f"{keep} per run, log-spaced, each seed's transition among them); choose the run, the seed and the "
            "attention in the menus"
            + (": the recorded attention (the last layer's mean over heads, at every recorded epoch) or one "
               "layer's head, recomputed from the weight snapshots (a transformer's only; at the snapshots' epochs)"
               if some_heads else "")
            + ". Each row is one fixed probe sequence, each column a key position (CLS first for a "
            "transformer; hover for the token and the weight). Red ticks under the slider's scale: each seed's "
            f"first recorded epoch with test accuracy above {threshold:g} (the chosen seed's long); the black rule: "
            "the slider."))
        if size <= views.MAX_VIEW_BYTES or keep <= 5:
            return size
        keep //= 2


def _chart(atlases: dict[str, xr.Dataset], threshold: float, keep: int, heads: dict[str, xr.DataArray] | None = None):
    import altair as alt

    cells, epochs_rows, marks, counts = atlas_rows(atlases, keep, heads)
    runs = list(atlases)
    seeds = sorted({int(s) for a in atlases.values() for s in a.seed.values})
    view_codes = list(dict.fromkeys(r["view"] for r in cells))
    k_max = max(r["n"] for r in counts) - 1
    k = alt.param(name="k", value=0, bind=alt.binding_range(min=0, max=k_max, step=1, name="epoch (index) "))
    run = alt.param(name="run", value=runs[0], bind=alt.binding_select(options=runs, name="run "))
    seed = alt.param(name="seed", value=seeds[0], bind=alt.binding_select(options=seeds, name="seed "))
    view = alt.param(name="view", value=RECORDED, bind=alt.binding_select(
        options=view_codes, labels=[view_label(v) for v in view_codes], name="attention "))
    table = views.inline_csv(cells, ("r", "view", "seed", "k", "probe", "w"))
    epoch_of = alt.LookupData(views.inline_csv(epochs_rows, ("key", "epoch")), key="key", fields=["epoch"])
    count_of = alt.LookupData(views.inline_csv(counts, ("key", "n")), key="key", fields=["n"])
    token_of = alt.LookupData(views.inline_csv(tokens_rows(atlases), ("key", "token")),
                              key="key", fields=["token"])
    # the slider's index, held at the last kept epoch of the chosen run and attention
    at = "min(k, toNumber(datum.n) - 1)"
    chosen = f"toNumber(datum.seed) == seed && toNumber(datum.k) == {at}"
    heat = (alt.Chart(table).transform_filter(f"toNumber(datum.r) == indexof({runs!r}, run) && datum.view == view")
            .transform_calculate(rv="run + '|' + datum.view").transform_lookup(lookup="rv", from_=count_of)
            .transform_filter(chosen)
            .transform_calculate(w="split(datum.w, ' ')").transform_flatten(["w"])
            .transform_window(position="row_number()", groupby=["probe"])
            .transform_calculate(position="datum.position - 1", value="toNumber(datum.w) / 100")
            # apart: within one calculate, altair's fields run in order, so a key built there from
            # "datum.position - 1" took the already lowered position and named the token one column to the left
            .transform_calculate(key="run + '|' + datum.probe + '|' + datum.position")
            .transform_lookup(lookup="key", from_=token_of)
            .mark_rect().encode(
                x=alt.X("position:O", title="key position"), y=alt.Y("probe:O", title="probe sequence"),
                color=alt.Color("value:Q", title="attention", scale=alt.Scale(domain=[0, 1], scheme="viridis")),
                tooltip=["probe:O", "position:O", "token:N", alt.Tooltip("value:Q", format=".2f")])
            .properties(width=360, height=220))
    label = (alt.Chart(alt.Data(values=[{}])).transform_calculate(rv="run + '|' + view")
             .transform_lookup(lookup="rv", from_=count_of, default="0")
             .transform_calculate(key=f"run + '|' + view + '|' + {at}")
             .transform_lookup(lookup="key", from_=epoch_of)
             .transform_calculate(text="toNumber(datum.n) > 0 ? 'epoch ' + datum.epoch + ' (run ' + run + ', seed ' "
                                       "+ seed + ')' : 'run ' + run + ' has no attention heads: choose the recorded "
                                       "attention'")
             .mark_text(align="left", fontSize=12, x=0).encode(text="text:N").properties(width=360, height=16))
    ticks = (alt.Chart(views.inline_csv(marks, ("run", "view", "seed", "k", "epoch")) if marks else alt.Data(values=[]))
             .transform_filter("datum.run == run && datum.view == view").mark_tick(color="red", thickness=2).encode(
                 x=alt.X("k:Q", title="epoch index (red: each seed's transition)", scale=alt.Scale(domain=[0, k_max])),
                 size=alt.condition("toNumber(datum.seed) == seed", alt.value(22), alt.value(8)),
                 tooltip=["seed:N", "epoch:N"]))
    cursor = (alt.Chart(alt.Data(values=[{}])).transform_calculate(rv="run + '|' + view")
              .transform_lookup(lookup="rv", from_=count_of, default="1")
              .transform_calculate(at="min(k, toNumber(datum.n) - 1)")  # held where the map is held
              .mark_rule(color="black", strokeWidth=2).encode(x=alt.X("at:Q", scale=alt.Scale(domain=[0, k_max]))))
    strip = alt.layer(ticks, cursor).properties(width=360, height=30)
    return alt.vconcat(label, heat, strip).add_params(k, run, seed, view)
