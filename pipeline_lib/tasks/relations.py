"""Three-token relation sequences (x1, x2, x3) of the talk's Theorems 3 and 4 ("Exploring Training Mechanism in
Transformers via the Lens of Training Dynamics", slides "You only learn what you see in the training set" and
"Chain-of-thoughts reasoning"): the model reads (x1, x2) and predicts x3 over all M tokens.

``kind: reversal`` (Theorem 3, the reversal curse): entities A_i, B_i (i < ``n_items``) and two relation tokens.
Training holds A_i -> B_i for every i and its reverse B_i <- A_i for every i outside ``n_test_items`` held-out
items; the test set is the reverse of the held-out items, never seen in training.

``kind: chain`` (Theorem 4, the necessity of chain-of-thought): entities A_i, B_i, C_i and two relation tokens.
Training holds both steps A_i -> B_i and B_i -> C_i for every i and the direct A_i ~> C_i for every i outside the
held-out items; the test set is the direct A_i ~> C_i of the held-out items.

Which items are held out is drawn with the dataset's ``seed``. Per sample, ``statement`` names its kind of
sequence (forward / reverse; step1 / step2 / direct), ``item`` its index i and ``held_out`` whether i is held out.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import xarray as xr

from . import TaskData

NAME = "relations"
MODELS = ["scan_snap"]
CONFIG = """
properties:
  kind: {description: "reversal: A -> B and B <- A (Theorem 3); chain: A -> B, B -> C and A ~> C (Theorem 4).", type: string, enum: [reversal, chain], default: reversal}
  n_items: {description: "Pairs (reversal) or triples (chain) of entities; M = 2 n_items + 2 or 3 n_items + 2 tokens.", type: integer, minimum: 2, default: 100}
  n_test_items: {description: "Held-out items: their reverse (reversal) or direct (chain) sequence is the test set, never trained on.", type: integer, minimum: 1, default: 50}
"""
SHAPE = {"n_train": "(3 if kind == 'chain' else 2) * n_items - n_test_items", "n_test": "n_test_items",
         "tokens": "(3 if kind == 'chain' else 2) * n_items + 2", "T": "2",
         "classes": "(3 if kind == 'chain' else 2) * n_items + 2"}
CHECKS = [["n_test_items", "n_test_items < n_items",
           "n_test_items={n_test_items} leaves no item whose held-out sequence is trained on of the {n_items}; "
           "allowed n_test_items < n_items"]]
STATEMENTS = {"reversal": ("forward", "reverse"), "chain": ("step1", "step2", "direct")}


@dataclass(frozen=True)
class Params:
    kind: str = "reversal"
    n_items: int = 100
    n_test_items: int = 50
    seed: int = 0


def sequences(params: Params) -> dict[str, np.ndarray]:
    """Every sequence of the task, held out or not: ``x`` (n, 2) = (x1, x2), ``y`` (n,) = x3, ``statement`` (n,)
    an index into :data:`STATEMENTS` [kind], ``item`` (n,), and ``held_out`` (n_items,) the held-out items."""
    n = params.n_items
    ent = np.arange(n)
    rng = np.random.default_rng(params.seed)
    held = np.zeros(n, dtype=bool)
    held[rng.choice(n, params.n_test_items, replace=False)] = True
    if params.kind == "reversal":
        a, b, fwd, back = ent, n + ent, 2 * n, 2 * n + 1
        x1, x2, y = [a, b], [np.full(n, fwd), np.full(n, back)], [b, a]
    else:
        a, b, c, step, direct = ent, n + ent, 2 * n + ent, 3 * n, 3 * n + 1
        x1, x2, y = [a, b, a], [np.full(n, step), np.full(n, step), np.full(n, direct)], [b, c, c]
    return {"x": np.stack([np.concatenate(x1), np.concatenate(x2)], 1).astype(np.int64),
            "y": np.concatenate(y).astype(np.int64),
            "statement": np.repeat(np.arange(len(y)), n), "item": np.tile(ent, len(y)), "held_out": held}


def generate(params: Params) -> xr.Dataset:
    s = sequences(params)
    last = len(STATEMENTS[params.kind]) - 1  # the held-out statement: reverse or direct
    test = (s["statement"] == last) & s["held_out"][s["item"]]
    train = ~test
    M = int(s["x"].max()) + 1
    attrs = {"task": NAME, "kind": params.kind, "n_items": params.n_items, "n_test_items": params.n_test_items,
             "seed": params.seed, "n_classes": M, "M": M, "T": 2}
    ds = TaskData(s["x"][train], s["y"][train], s["x"][test], s["y"][test], attrs).to_dataset()
    order = np.concatenate([np.flatnonzero(train), np.flatnonzero(test)])
    names = np.array(STATEMENTS[params.kind], dtype=object)
    ds = ds.assign_coords(statement=("sample", names[s["statement"][order]]), item=("sample", s["item"][order]),
                          held_out=("sample", s["held_out"][s["item"][order]]))
    ds["x"].attrs["description"] = "(x1, x2): an entity and a relation token"
    ds["y"].attrs["description"] = "x3: the related entity"
    ds["statement"].attrs["description"] = f"the kind of sequence: {', '.join(STATEMENTS[params.kind])}"
    ds["held_out"].attrs["description"] = "the item's " + ("reverse" if params.kind == "reversal" else "direct") + \
        " sequence is the test set (never trained on)"
    return ds


def probe_targets(ds: xr.Dataset, split: str, n: int) -> dict[str, np.ndarray]:
    """No probe targets: the theorems are read off the model's next-token probabilities (analysis
    ``next_token``)."""
    return {}
