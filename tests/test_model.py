import math

import numpy as np
import pytest
import torch

from pipeline_lib.models.circuit import CircuitModel


def paper_forward(m: CircuitModel, s: int, seq) -> np.ndarray:
    """The circuits paper's equations for one sequence and one seed, written out in float64."""
    P = {n: getattr(m, n)[s].detach().double().numpy() for n in m.param_names()}
    W_U = P["W_E"] if m.tied_unembed else P["W_U"]
    rms = lambda v: v / np.sqrt(np.mean(v**2) + 1e-6)  # noqa: E731
    z = [rms(P["W_E"][tok] + P["P"][t]) for t, tok in enumerate(seq)]
    logits_att = np.array([zt @ P["w_Q"] / m.tau for zt in z])
    s_att = np.exp(logits_att - logits_att.max())
    s_att /= s_att.sum()
    z_A = sum(s_att[t] * (P["W_V"] @ z[t]) for t in range(len(seq)))
    zbar = rms(z_A)
    gelu = lambda u: 0.5 * u * (1 + np.vectorize(math.erf)(u / math.sqrt(2)))  # noqa: E731
    z_O = zbar + P["W_2"].T @ gelu(P["W_1"] @ zbar)
    return W_U @ z_O


@pytest.mark.parametrize("tied", [False, True])
@pytest.mark.parametrize("vocab,p", [(4, 4), (6, 3)])
def test_forward_equals_paper_equations(tied, vocab, p):
    m = CircuitModel(n_seeds=3, vocab=vocab, T=7, d=8, tau=1.7, tied_unembed=tied)
    m.init_seeds([0, 5, 9])
    x = torch.randint(0, p, (5, 7), generator=torch.Generator().manual_seed(0))
    fast, ref = m(x).detach(), m.forward_reference(x).detach()
    for s in range(3):
        for b in range(5):
            expected = paper_forward(m, s, x[b].tolist())
            np.testing.assert_allclose(fast[s, b].numpy(), expected, atol=2e-5)
            np.testing.assert_allclose(ref[s, b].numpy(), expected, atol=2e-5)


def test_per_seed_inputs_match_shared_inputs():
    m = CircuitModel(2, 4, 6, 8)
    m.init_seeds([0, 1])
    x = torch.randint(0, 4, (10, 6))
    torch.testing.assert_close(m(x), m(x.expand(2, 10, 6).clone()))


def test_internals_are_named_and_consistent():
    m = CircuitModel(2, 4, 6, 8)
    m.init_seeds([0, 1])
    x = torch.randint(0, 4, (10, 6))
    out = m.internals(x)
    assert out.attention.shape == (2, 10, 6) and out.z_A.shape == (2, 10, 8) and out.logits.shape == (2, 10, 4)
    torch.testing.assert_close(out.attention.sum(-1), torch.ones(2, 10))
    torch.testing.assert_close(m.attention(x), out.attention)
    torch.testing.assert_close(out.logits, m(x), atol=1e-5, rtol=1e-5)


def test_default_temperature_is_sqrt_d_and_tied_has_no_W_U():
    m = CircuitModel(1, 4, 3, 16, tied_unembed=True)
    assert m.tau == pytest.approx(4.0)
    assert m.W_U is None and "W_U" not in m.param_names()


def test_seed_initialisation_depends_only_on_the_seed():
    a, b = CircuitModel(3, 4, 5, 8), CircuitModel(1, 4, 5, 8)
    a.init_seeds([2, 7, 11])
    b.init_seeds([7])
    for n in a.param_names():
        torch.testing.assert_close(getattr(a, n)[1], getattr(b, n)[0], rtol=0, atol=0)
    assert not torch.equal(a.W_E[0], a.W_E[1])


class ReferenceCodeModel(torch.nn.Module):
    """The paper's code's model (facebookresearch/pal, softmax_model.Model) written with its torch
    modules, weights copied from seed s of ``m``."""

    def __init__(self, m: CircuitModel, s: int):
        super().__init__()
        d, h, V, dt = m.d, m.h, m.V, m.W_E.dtype
        self.d = d
        self.token_emb, self.pos_emb = torch.nn.Embedding(V, d, dtype=dt), torch.nn.Embedding(m.T, d, dtype=dt)
        self.query = torch.nn.Linear(d, 1, bias=False, dtype=dt)
        self.value = torch.nn.Linear(d, d, bias=False, dtype=dt)
        self.fc1, self.fc2 = torch.nn.Linear(d, h, dtype=dt), torch.nn.Linear(h, d, dtype=dt)
        with torch.no_grad():
            self.token_emb.weight.copy_(m.W_E[s]), self.pos_emb.weight.copy_(m.P[s])
            self.query.weight.copy_(m.w_Q[s][None]), self.value.weight.copy_(m.W_V[s])
            self.fc1.weight.copy_(m.W_1[s]), self.fc1.bias.copy_(m.b_1[s])
            self.fc2.weight.copy_(m.W_2[s].T), self.fc2.bias.copy_(m.b_2[s])

    @staticmethod
    def rms(v):  # RMSNorm(eps=1e-5): the epsilon added to the root
        return v / ((v**2).mean(dim=-1, keepdim=True).sqrt() + 1e-5)

    def forward(self, x):
        out = self.token_emb(x) + self.pos_emb.weight
        keys = self.rms(out)
        attn = torch.softmax(self.query.weight @ keys.transpose(-1, -2) / math.sqrt(self.d), dim=-1)
        out = (attn @ self.value(keys)).squeeze(1)
        out = out + self.fc2(torch.nn.functional.gelu(self.fc1(self.rms(out))))
        return out @ self.token_emb.weight.T  # output.weight = token_emb.weight


def reference_code_forward(m: CircuitModel, s: int, x: torch.Tensor) -> torch.Tensor:
    with torch.no_grad():
        return ReferenceCodeModel(m, s)(x)


def test_paper_code_architecture_equals_the_reference_code_forward_pass():
    m = CircuitModel(n_seeds=3, vocab=4, T=8, d=6, tied_unembed=True, architecture="paper_code").double()
    m.init_seeds([0, 3, 8])
    assert {"b_1", "b_2"} <= set(m.param_names()) and "W_U" not in m.param_names()
    x = torch.randint(0, 4, (9, 8), generator=torch.Generator().manual_seed(1))
    fast, ref = m(x).detach(), m.forward_reference(x).detach()
    for s in range(3):
        expected = reference_code_forward(m, s, x)
        torch.testing.assert_close(fast[s], expected, rtol=1e-10, atol=1e-10)
        torch.testing.assert_close(ref[s], expected, rtol=1e-10, atol=1e-10)
    # and it is another function than the paper's equations on the same weights
    text = CircuitModel(n_seeds=3, vocab=4, T=8, d=6, tied_unembed=True).double()
    text.load_arrays({n: getattr(m, n).detach().numpy() for n in text.param_names()})
    assert (text(x) - fast).abs().max() > 1e-3


def test_paper_code_draws_its_biases_after_the_shared_parameters():
    text = CircuitModel(2, 4, 5, 8)
    code = CircuitModel(2, 4, 5, 8, architecture="paper_code")
    text.init_seeds([4, 6])
    code.init_seeds([4, 6])
    for n in text.param_names():  # the same initial weights: the arms differ only in the forward pass
        torch.testing.assert_close(getattr(code, n), getattr(text, n), rtol=0, atol=0)
    assert code.b_1.abs().max() <= 1 / math.sqrt(8) and code.b_2.abs().max() <= 1 / math.sqrt(32)
    assert code.b_1.std() > 0.1 / math.sqrt(8)
    with pytest.raises(ValueError, match="architecture"):
        CircuitModel(1, 4, 5, 8, architecture="paper")


def test_paper_code_training_equals_the_reference_code_trained_seed_by_seed():
    """Adam, full batch, as the paper's code trains: our seed-batched engine vs one ReferenceCodeModel
    per seed with torch.optim.Adam and F.cross_entropy."""
    from pipeline_lib.engine import train_seeds
    from pipeline_lib.plumbing.config import AttentionConfig, OptimizerConfig, ScheduleConfig, TrainingPlan

    torch.manual_seed(0)
    m = CircuitModel(2, 4, 8, 6, tied_unembed=True, architecture="paper_code").double()
    m.init_seeds([1, 2])
    refs = [ReferenceCodeModel(m, s) for s in range(2)]
    x = torch.randint(0, 4, (64, 8), generator=torch.Generator().manual_seed(3))
    y = x[:, :5].sum(1) % 4
    never = ScheduleConfig(dense_until=0, log_points=0, every=0)
    plan = TrainingPlan(name="reference", epochs=5, slots=({"run_seed": 1}, {"run_seed": 2}),
                        optimizer=OptimizerConfig(lr=1e-2), sweep=(), batch_size="full", attention=AttentionConfig(),
                        record_attention=never, record_weights=never, step_attention_epochs=0, log_every=10)
    data = {"x_train": x, "y_train": y, "x_test": x[:8], "y_test": y[:8], "probe_x": x[:2]}
    train_seeds(m, data, plan, torch.device("cpu"))
    for s, ref in enumerate(refs):
        opt = torch.optim.Adam(ref.parameters(), lr=1e-2)
        for _ in range(5):
            opt.zero_grad()
            torch.nn.functional.cross_entropy(ref(x), y).backward()
            opt.step()
        torch.testing.assert_close(m.W_E[s], ref.token_emb.weight, rtol=1e-9, atol=1e-9)
        torch.testing.assert_close(m.b_1[s], ref.fc1.bias, rtol=1e-9, atol=1e-9)
        torch.testing.assert_close(m(x)[s], ref(x), rtol=1e-9, atol=1e-9)
