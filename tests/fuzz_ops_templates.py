"""The step templates of ``fuzz_ops_programs.py``, one table per family of ops.

A template is a function of the ``Generator``: it picks its operands (``g.pick()``), dims
(``g.dim(a)``) and, where it needs them, new inputs (``g.index``, ``g.weight``), and returns
the step's text — an expression, or statements assigning ``{out}``.  It raises ``Skip`` when
it does not apply; a step eager mode refuses is dropped by the generator.
"""

from __future__ import annotations

from .fuzz_ops_programs import Skip


def _fmt(*templates):
    """Templates over one float value ``a``, a second value ``b`` and a dim ``d``."""
    def make(tmpl):
        def step(g):
            a, b = g.pick(), g.pick()
            return tmpl.format(a=a, b=b, d=g.dim(a), k=g.draw_int(1, 3))
        step.__name__ = tmpl
        return step
    return [make(t) for t in templates]


POINTWISE = _fmt(
    "{a}.cos()", "({a} * 0.5).exp()", "{a}.relu()", "{a}.sigmoid()", "-{a}", "{a}.abs().sqrt()",
    "F.silu({a})", "F.gelu({a})", "F.leaky_relu({a}, 0.1)", "F.elu({a})", "F.softplus({a})",
    "F.mish({a})", "F.hardtanh({a})", "F.hardswish({a})", "F.logsigmoid({a})", "F.selu({a})",
    "F.celu({a})", "F.softshrink({a})", "F.hardshrink({a})", "F.threshold({a}, 0.1, 2.0)",
    "F.relu6({a})", "F.hardsigmoid({a})", "{a}.erf()", "mtc.erfinv({a}.tanh() * 0.9)",
    "mtc.lgamma({a}.abs() + 0.5)", "mtc.digamma({a}.abs() + 0.5)", "mtc.logit({a}.sigmoid())",
    "mtc.sign({a})", "{a}.clamp_min(0.1)", "{a}.clamp(-0.5, 0.5)", "mtc.remainder({a}, 0.7)",
    "mtc.fmod({a}, 0.7)", "mtc.expm1({a})", "({a}.abs() + 1).log2()", "mtc.signbit({a})",
    "mtc.isfinite({a} / {b})", "{a}.tanh()", "({a} * 3).to(mtc.int64)", "{a}.to(mtc.float64)",
    "({a} > 0)", "{a}.to(mtc.float32)",
)
BINARY = _fmt(
    "({a} + {b})", "({a} - {b})", "({a} * {b})", "({a} / ({b}.abs() + 1))",
    "mtc.maximum({a}, {b})", "mtc.minimum({a}, {b})", "mtc.where({a} > {b}, {a}, {b})",
    "{a}.masked_fill({b} > 0, 0.5)", "mtc.atan2({a}, {b})", "mtc.hypot({a}, {b})",
    "mtc.logaddexp({a}, {b})", "{a}.lerp({b}, 0.3)", "({a}.abs() + 0.5).pow({b})",
    "{a}.pow(2)", "{a}.addcmul({b}, {b}, value=0.5)", "{a}.addcdiv({b}, {b}.abs() + 1)",
    "mtc.where({a} > 0, {a}, 0.0)",
)
REDUCE = _fmt(
    "{a}.sum({d})", "{a}.sum({d}, keepdim=True)", "{a}.amax({d})", "{a}.amin({d}, keepdim=True)",
    "{a}.mean({d})", "{a}.var({d})", "{a}.std({d}, keepdim=True)", "{a}.logsumexp({d})",
    "{a}.prod({d})", "{a}.argmax({d})", "{a}.argmin({d}, keepdim=True)", "{a}.argmax()",
    "mtc.softmax({a}, {d})", "mtc.log_softmax({a}, {d})", "F.softmin({a}, {d})",
    "{a}.max({d}).values", "{a}.min({d}).indices", "{a}.norm(dim={d})", "{a}.sum()",
    "mtc.var_mean({a}, {d})[1]", "({a} > 0).sum({d})", "({a} > 0).any({d})",
    "({a} > {b}).all()",
)
SCAN_SORT = _fmt(
    "{a}.cumsum({d})", "{a}.cumprod({d})", "{a}.sort({d}).values",
    "{a}.sort({d}, descending=True).indices", "{a}.argsort({d})", "{a}.topk({k}, {d}).values",
    "{a}.topk({k}, {d}, largest=False).indices", "{a}.kthvalue({k}, {d}).values",
    "{a}.median({d}).values", "mtc.bucketize({a}, {b}.flatten().sort().values)",
    "mtc.searchsorted({b}.flatten().sort().values, {a}.flatten())",
    "({a} > 0).to(mtc.int64).cumsum({d})",
)
VIEWS = _fmt(
    "{a}.t()", "{a}.transpose(0, -1)", "{a}.unsqueeze(0)", "{a}[1:]", "{a}[..., ::2]",
    "{a}.reshape(-1)", "{a}.expand(2, *{a}.shape)", "{a}[0]", "{a}.contiguous()",
    "{a}[:, None]", "{a}.flip({d})", "{a}.movedim(0, -1)", "{a}.narrow({d}, 0, 1)",
)
JOIN = _fmt(
    "mtc.cat(({a}, {b}), {d})", "mtc.stack(({a}, {b}), {d})", "mtc.cat(({a}, {a}.cos()), {d})",
    "mtc.cat(({a}[:1] * 2, {a}), 0)", "{a}.split(2, {d})[0]", "{a}.chunk(2, {d})[-1]",
    "{a}.repeat(2, *([1] * ({a}.ndim - 1)))", "{a}.tile((2,))", "{a}.roll(1, {d})",
    "{a}.tril()", "{a}.triu(1)", "{a}.tril(-1)", "mtc.diag({a})", "{a}.unbind({d})[0]",
    "{a}.repeat_interleave(2, {d})", "mtc.hstack(({a}, {b}))", "mtc.vstack(({a}, {a}))",
)
LINALG = _fmt(
    "({a} @ {a}.transpose(-1, -2))", "mtc.outer({a}.flatten(), {b}.flatten())",
    "mtc.einsum('ij,kj->ik', {a}, {b})", "mtc.einsum('ij->j', {a})",
    "mtc.einsum('bij,bkj->bik', {a}, {b})", "mtc.einsum('...i,...i->...', {a}, {b})",
    "mtc.tensordot({a}, {b}, dims=1)", "mtc.bmm({a}, {a}.transpose(1, 2))",
    "mtc.baddbmm({a}[..., :1], {a}, {a}.transpose(1, 2), beta=0.5)",
    "mtc.addmm({a}[:1, :1], {a}, {a}.t(), alpha=2)",
    "F.linear({a}, {b})", "F.scaled_dot_product_attention({a}, {b}, {a})",
    "F.scaled_dot_product_attention({a}, {a}.cos(), {a}, is_causal=True)",
)
NN = _fmt(
    "F.layer_norm({a}, {a}.shape[-1:])", "F.rms_norm({a}, {a}.shape[-1:])",
    "F.batch_norm({a}, None, None, training=True)", "F.normalize({a}, dim={d})",
    "F.cosine_similarity({a}, {b}, dim={d})", "F.glu({a}, {d})", "F.pad({a}, (1, 2))",
    "F.pad({a}, (1, 0, 0, 2), value=0.5)", "F.pad({a}, (1, 1), mode='reflect')",
    "F.pad({a}, (2, 1), mode='replicate')", "F.pad({a}, (1, 1, 1, 0), mode='circular')",
    "F.max_pool1d({a}, 2)", "F.max_pool1d({a}, 3, 1, 1)", "F.avg_pool1d({a}, 2, 1)",
    "F.max_pool2d({a}, 2)", "F.max_pool2d({a}, 3, 2, 1)", "F.avg_pool2d({a}, 2, 1, 1)",
    "F.adaptive_avg_pool2d({a}, (2, 1))", "F.adaptive_avg_pool1d({a}, 3)",
    "F.group_norm({a}, 1)", "F.dropout({a}, 0.0)",
)
LOSSES = _fmt(
    "F.mse_loss({a}, {b})", "F.l1_loss({a}, {b}, reduction='none')",
    "F.smooth_l1_loss({a}, {b}, beta=0.5)", "F.huber_loss({a}, {b}, reduction='sum')",
    "F.kl_div(F.log_softmax({a}, -1), F.softmax({b}, -1), reduction='batchmean')",
    "F.binary_cross_entropy({a}.sigmoid(), {b}.sigmoid())",
    "F.binary_cross_entropy_with_logits({a}, {b}.sigmoid(), reduction='none')",
    "F.cross_entropy({a}, {b}.softmax(1))", "F.softmax({a}, -1).log().mean()",
)



def _ints(*templates):
    """Templates over an integer value ``i``, a bool value ``m`` and a float value ``a``."""
    def make(tmpl):
        def step(g):
            return tmpl.format(i=g.pick("i"), j=g.pick("i"), m=g.pick("b"), n=g.pick("b"),
                               a=g.pick(), d=g.dim(g.pick("i")))
        step.__name__ = tmpl
        return step
    return [make(t) for t in templates]


INTS = _ints(
    "({i} + {j})", "({i} * 3 - {j})", "({i} // 2)", "({i} % 3)", "{i}.abs()", "-{i}",
    "{i}.cumsum({d})", "{i}.sum({d})", "{i}.amax({d})", "{i}.argmax({d})", "{i}.sort({d}).values",
    "mtc.where({m}, {i}, 0)", "({m} & {n})", "({m} | ~{n})", "({m} ^ {n})", "{m}.sum({d})",
    "({i} ^ 5)", "({i} & {j})", "({i} + {a})", "({i} > 0).to(mtc.int64)", "{i}.to(mtc.float64)",
    "mtc.maximum({i}, {j})", "({i} == {j})", "{m}.to(mtc.float32) * {a}", "{i}.prod({d})",
    "mtc.where({m}, {a}, {i})", "{i}.clamp(-1, 2)", "{i}.float().mean({d})",
)
def _mutate(*templates):
    """In-place ops on a value that is not a view, input or not (an input that requires grad:
    eager's error).  Not on views of inputs: AOT misses eager's error there (the strict xfail
    in ``test_inductor_fuzz_fixes.py``), which would stop every slow run at the same bug."""
    def make(tmpl):
        def step(g):
            a, i = g.pick("f", view=False), g.pick("i", view=False)
            return tmpl.format(a=a, i=i, m=g.pick("b"))
        step.__name__ = tmpl
        return step
    return [make(t) for t in templates]


MUTATE = _mutate(
    "{{out}} = {a}.masked_fill_({m}, 0.5)", "{{out}} = {a}.add_(1)",
    "{{out}} = {i}.mul_(2)", "{{out}} = {a}.clamp_(-0.5, 0.5)",
    "{{out}} = {a}\n{a}[0] = 2.0", "{{out}} = {a}.relu_()",
)


# ------------------------------------------------------------------ templates needing inputs

def t_index_select(g):
    a = g.pick()
    d = g.dim(a)
    return f"{a}.index_select({d}, {g.index(g.sizes_of(a, d), (g.draw_int(1, 4),))})"


def t_getitem(g):
    a = g.pick()
    i = g.index(g.sizes_of(a, 0), (g.draw_int(1, 3),) * g.draw_int(1, 2), wrap=True)
    return g.choice([f"{a}[{i}]", f"{a}[{i}] * 2", f"{a}[{i}].sum(0)"])


def t_getitem_dim1(g):
    a = g.pick()
    if g.ndim(a) < 2:
        raise Skip
    return f"{a}[:, {g.index(g.sizes_of(a, 1), (g.draw_int(1, 4),), wrap=True)}]"


def _like(g, a, d, unique=False):
    """An index shaped like ``a`` (no larger at any variant), values in range of dim ``d``."""
    shape = [g.draw_int(1, g.min_size(a, k)) if g.min_size(a, k) else 0
             for k in range(g.ndim(a))]
    if 0 in shape:
        raise Skip
    return g.index(g.sizes_of(a, d), shape, unique_dim=d if unique else None)


def t_gather(g):
    a = g.pick()
    d = g.dim(a)
    kind = g.choice(["index", "argmax", "take"])
    if kind == "index":
        return f"{a}.gather({d}, {_like(g, a, d)})"
    if kind == "argmax":
        return f"{a}.gather({d}, {a}.argmax({d}, keepdim=True))"
    return f"mtc.take({a}, {g.index([env[a].numel() for env in g.envs], (3,))})"


def t_embedding(g):
    a = g.pick()
    if g.ndim(a) != 2:
        raise Skip
    return f"F.embedding({g.index(g.sizes_of(a, 0), (g.draw_int(1, 3), g.draw_int(1, 3)))}, {a})"


def t_scatter(g):
    a = g.pick()
    d = g.dim(a)
    kind = g.choice(["scatter", "scatter_value", "scatter_add", "amax", "sum", "prod", "mean"])
    i = _like(g, a, d, unique=kind in ("scatter", "scatter_value"))
    if kind == "scatter":
        return f"{a}.scatter({d}, {i}, {a}.cos())"
    if kind == "scatter_value":
        return f"{a}.scatter({d}, {i}, 0.5)"
    if kind == "scatter_add":
        return f"{a}.scatter_add({d}, {i}, {a} * 2)"
    inc = g.choice([True, False])
    return f"{a}.scatter_reduce({d}, {i}, {a}.sin(), {kind!r}, include_self={inc})"


def t_index_put(g):
    a = g.pick()
    acc = g.choice([True, False])
    n = g.draw_int(1, min(3, g.min_size(a, 0))) if g.ndim(a) and g.min_size(a, 0) else 0
    if not n:
        raise Skip
    i = g.index(g.sizes_of(a, 0), (n,), wrap=True, unique_dim=None if acc else 0)
    v = g.choice(["{a}[0] * 2", "mtc.tensor(0.5)", "{a}[:1].cos()"]).format(a=a)
    return g.choice([f"{a}.index_put(({i},), {v}, accumulate={acc})",
                     f"{{out}} = {a}.clone()\n{{out}}[{i}] = {v}" if not acc else
                     f"{{out}} = {a} * 1\n{{out}}[{i}] += 1.0"])


def t_index_add(g):
    a = g.pick()
    d = g.dim(a)
    kind = g.choice(["index_add", "index_copy", "index_fill"])
    k = g.draw_int(1, 3)
    i = g.index(g.sizes_of(a, d), (k,), unique_dim=None if kind == "index_add" else 0)
    if kind == "index_fill":
        return f"{a}.index_fill({d}, {i}, -1.0)"
    src = f"{a}.index_select({d}, {i}).cos()" if kind == "index_add" else \
        f"{a}.narrow({d}, 0, {k}).sin()"
    return f"{a}.{kind}({d}, {i}, {src})"


def t_data_dependent(g):
    a, b = g.pick(), g.pick()
    return g.choice([f"{a}.masked_select({b} > 0)", f"{a}[{a} > 0]", f"{a}.nonzero()",
                     f"F.one_hot(({a} > 0).to(mtc.int64), 2)"])


def t_conv(g):
    a = g.pick()
    nd = g.ndim(a) - 2
    if nd not in (1, 2):
        raise Skip
    c = g.fixed(a, 1)
    groups = g.choice([x for x in (1, 2) if c % x == 0])
    cout = groups * g.draw_int(1, 2)
    k = [g.draw_int(1, min(3, g.min_size(a, 2 + j) + 2)) for j in range(nd)]
    transposed = g.choice([False, True])
    if transposed:
        w = g.weight((c, cout // groups, *k))
        return f"F.conv_transpose{nd}d({a}, {w}, stride={g.draw_int(1, 2)}, groups={groups})"
    w = g.weight((cout, c // groups, *k))
    b = g.weight((cout,)) if g.choice([True, False]) else "None"
    pad = g.choice([0, 1, "'same'"])
    stride = 1 if pad == "'same'" else g.draw_int(1, 2)
    return f"F.conv{nd}d({a}, {w}, {b}, stride={stride}, padding={pad}, groups={groups})"


def t_norm_layers(g):
    a = g.pick()
    if g.ndim(a) < 2:
        raise Skip
    c = g.fixed(a, 1)
    w, b = g.weight((c,)), g.weight((c,))
    kind = g.choice(["batch_norm", "group_norm", "layer_norm", "batch_norm_running"])
    if kind == "group_norm":
        return f"F.group_norm({a}, {g.choice([x for x in (1, 2, c) if c % x == 0])}, {w}, {b})"
    if kind == "layer_norm":
        last = g.fixed(a, -1)
        return f"F.layer_norm({a}, ({last},), {g.weight((last,))}, None)"
    if kind == "batch_norm":
        return f"F.batch_norm({a}, None, None, {w}, {b}, training=True)"
    rm, rv = g.weight((c,)), f"{g.weight((c,))}.abs()"
    return f"F.batch_norm({a}, {rm}.detach(), {rv}.detach(), {w}, {b}, training=False)"


def t_class_losses(g):
    a = g.pick()
    if g.ndim(a) != 2:
        raise Skip
    c = g.fixed(a, 1)
    rows = g.sizes_of(a, 0)
    target = g.index([c] * 3, ("N",) if rows == list(g.sizes) else (g.fixed(a, 0),))
    red = g.choice(["mean", "sum", "none"])
    return g.choice([f"F.cross_entropy({a}, {target}, reduction={red!r})",
                     f"F.nll_loss(F.log_softmax({a}, 1), {target}, reduction={red!r})",
                     f"F.cross_entropy({a}, {target}, label_smoothing=0.1)",
                     f"F.cross_entropy({a}, {target}, ignore_index=0)"])


def t_prelu(g):
    a = g.pick()
    if g.ndim(a) < 2:
        raise Skip
    return f"F.prelu({a}, {g.weight((g.fixed(a, 1),))})"


NEEDS_INPUTS = [t_index_select, t_getitem, t_getitem_dim1, t_gather, t_embedding, t_scatter,
                t_index_put, t_index_add, t_data_dependent, t_conv, t_norm_layers,
                t_class_losses, t_prelu]

TABLES = {"pointwise": POINTWISE, "binary": BINARY, "reduce": REDUCE, "scan": SCAN_SORT,
          "views": VIEWS, "join": JOIN, "linalg": LINALG, "nn": NN, "losses": LOSSES,
          "indexing": NEEDS_INPUTS, "ints": INTS, "mutate": MUTATE}
# drawn per step: indexing twice as often as the rest (the new lowering's breadth)
FAMILIES = ["pointwise", "binary", "reduce", "scan", "views", "join", "linalg", "nn", "losses",
            "indexing", "indexing", "ints", "mutate"]
