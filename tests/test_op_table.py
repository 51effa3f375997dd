"""The op table is complete: every op has every rule its category needs.

One test per (op, rule), generated from ``OP_TABLE`` itself, so a new declaration is checked
the moment it is added — and fails until it has an OpInfo (``tests/opinfo.py``) as well:

* primitive ops (everything but composites) have a CPU kernel and a meta rule (the Meta key);
* differentiable ops have a derivative formula for every input that can be floating point,
  naming only what ``autograd.graph`` can save; the rest say ``differentiable=False``;
* composite ops have a decomposition and nothing else (their rules come from the ops they
  decompose into);
* in-place variants mirror their functional op;
* every schema prints back to itself through ``parse_schema``.
"""

import inspect

import pytest

from minitorch_compile import DispatchKey
from minitorch_compile.ops import CATEGORIES, OP_TABLE
from minitorch_compile.ops.schema import parse_schema
from minitorch_compile.ops.table import COMPOSITE, POINTWISE

from .opinfo import OPINFOS

ALL_OPS = sorted(OP_TABLE)
PRIMITIVES = [n for n in ALL_OPS if OP_TABLE[n].category != COMPOSITE]
COMPOSITES = [n for n in ALL_OPS if OP_TABLE[n].category == COMPOSITE]
FUNCTIONAL = [n for n in ALL_OPS if OP_TABLE[n].functional is None]
INPLACE = [n for n in ALL_OPS if OP_TABLE[n].functional is not None]
DIFFERENTIABLE = [n for n in PRIMITIVES if OP_TABLE[n].differentiable]

# Tensor arguments that hold indices or masks: never floating point, so never differentiated.
INTEGER_ARGS = {"indices", "condition", "mask", "index"}


def test_table_is_populated_and_keys_are_qualified_names():
    assert len(OP_TABLE) > 100
    for name, d in OP_TABLE.items():
        assert d.name == name == d.overload.schema.qualified_name
        assert d.overload.opdef is d
        assert d.category in CATEGORIES


@pytest.mark.parametrize("name", ALL_OPS)
def test_schema_round_trips_through_parse_and_str(name):
    schema = OP_TABLE[name].overload.schema
    text = str(schema)
    again = parse_schema(text)
    assert str(again) == text
    assert again == schema


@pytest.mark.parametrize("name", PRIMITIVES)
def test_primitive_has_cpu_kernel_and_meta_rule(name):
    d = OP_TABLE[name]
    kernels = d.overload.kernels
    assert DispatchKey.CPU in kernels, f"{name}: no CPU kernel"
    assert DispatchKey.NPU in kernels, f"{name}: no NPU kernel"
    assert d.meta is not None and DispatchKey.Meta in kernels, f"{name}: no meta rule"
    assert DispatchKey.Autograd in kernels, f"{name}: no Autograd kernel"
    assert d.overload.composite is None and d.decomposition is None


@pytest.mark.parametrize("name", PRIMITIVES)
def test_pointwise_ops_declare_a_promotion_kind(name):
    d = OP_TABLE[name]
    if d.category == POINTWISE and d.kernel is not None and name != "_to_copy":
        assert d.promotion is not None, f"{name}: pointwise op without a promotion kind"


@pytest.mark.parametrize("name", COMPOSITES)
def test_composite_has_only_a_decomposition(name):
    d = OP_TABLE[name]
    assert callable(d.decomposition), f"{name}: composite without a decomposition"
    assert d.overload.composite is d.decomposition
    assert d.kernel is None and d.meta is None and d.derivatives is None, \
        f"{name}: a composite's rules come from its decomposition; it declares no others"


def _tensor_inputs(schema):
    return [a.name for a in schema.arguments if a.type.base == "Tensor"]


@pytest.mark.parametrize("name", DIFFERENTIABLE)
def test_differentiable_op_has_a_formula_for_every_floating_input(name):
    d = OP_TABLE[name]
    schema = d.overload.schema
    assert d.derivatives, (f"{name}: differentiable op without derivatives (declare "
                           "differentiable=False if it has none)")
    wanted = set(_tensor_inputs(schema)) - INTEGER_ARGS
    # a key may name several inputs ("input, weight, bias": one formula, a gradient each)
    keys = [n.strip() for key in d.derivatives for n in key.split(",")]
    assert len(keys) == len(set(keys)), f"{name}: an input has two formulas"
    assert set(keys) == wanted, \
        f"{name}: derivatives for {sorted(d.derivatives)}, tensor inputs {sorted(wanted)}"


@pytest.mark.parametrize("name", DIFFERENTIABLE)
def test_derivative_formulas_name_only_savable_values(name):
    """A formula's parameters are ``grad``/``grads``, outputs, arguments, ``<arg>_sizes``,
    ``<arg>_strides`` or ``<arg>_dtype``."""
    schema = OP_TABLE[name].overload.schema
    args = set(schema.arg_names)
    known = ({"grad", "grads", "result", "grad_input_mask"} | args
             | {f"{a}_sizes" for a in args}
             | {f"{a}_strides" for a in args} | {f"{a}_dtype" for a in args}
             | {r.name for r in schema.returns if r.name})
    for inp, fn in OP_TABLE[name].derivatives.items():
        params = list(inspect.signature(fn).parameters)
        assert params and params[0] in ("grad", "grads"), f"{name}[{inp}]: grad comes first"
        unknown = set(params) - known
        assert not unknown, f"{name}[{inp}]: formula names unknown values {sorted(unknown)}"


@pytest.mark.parametrize("name", [n for n in ALL_OPS if not OP_TABLE[n].differentiable])
def test_non_differentiable_ops_declare_no_derivatives(name):
    assert not OP_TABLE[name].derivatives


@pytest.mark.parametrize("name", INPLACE)
def test_inplace_variant_mirrors_its_functional_op(name):
    d = OP_TABLE[name]
    f = d.functional.opdef
    assert name == f.name.split(".")[0] + "_" + (
        "." + f.overload.schema.overload_name if f.overload.schema.overload_name else "")
    assert f.inplace is d.overload
    schema = d.overload.schema
    assert schema.is_mutable and schema.arguments[0].type.is_write
    assert [a.name for a in schema.arguments] == [a.name for a in f.overload.schema.arguments]
    assert d.derivatives is f.derivatives and d.promotion == f.promotion
    for key in (DispatchKey.CPU, DispatchKey.Meta, DispatchKey.Autograd):
        assert key in d.overload.kernels


@pytest.mark.parametrize("name", FUNCTIONAL)
def test_every_op_has_an_opinfo(name):
    assert name in OPINFOS, (f"{name} has no OpInfo: add one to tests/opinfo.py so its "
                             "values, dtypes, meta rule and gradients are tested")


def test_every_opinfo_names_a_table_op():
    assert sorted(set(OPINFOS) - set(OP_TABLE)) == []


# backward ops whose derivative (torch's) takes some inputs for the functions of another they
# are — native_layer_norm_backward's mean and rstd, of input — so a finite difference that
# holds them fixed disagrees; the forward op's second-order check covers them
DERIVATIVE_OF_A_FUNCTION_OF_ITS_INPUTS = {"native_layer_norm_backward",
                                          "native_batch_norm_backward"}


@pytest.mark.parametrize("name", sorted(OPINFOS))
def test_opinfo_gradcheck_flag_agrees_with_the_table(name):
    """An OpInfo may skip gradient checks only for ops the table calls non-differentiable,
    ops with no floating output (creation), or random composites."""
    info, d = OPINFOS[name], OP_TABLE[name]
    if name in DERIVATIVE_OF_A_FUNCTION_OF_ITS_INPUTS:
        return
    if d.category != COMPOSITE and d.differentiable:
        assert info.grad, f"{name} is differentiable: its OpInfo must gradient-check it"
    if not d.differentiable:
        assert not info.grad

