"""The Tensor API surface: creation, metadata, conversion, printing, indexing, promotion."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import minitorch_compile as mtc


def test_creation_signatures_match_torch():
    assert mtc.zeros(2, 3).shape == (2, 3) == mtc.zeros((2, 3)).shape == mtc.zeros([2, 3]).shape
    assert mtc.ones(mtc.Size([4])).tolist() == [1.0] * 4
    assert mtc.full((2,), 7).dtype is mtc.int64
    assert mtc.full((2,), 7.0).dtype is mtc.float32
    assert mtc.full((2,), True).dtype is mtc.bool
    assert mtc.arange(5).tolist() == [0, 1, 2, 3, 4] and mtc.arange(5).dtype is mtc.int64
    assert mtc.arange(0, 1, 0.25).tolist() == [0.0, 0.25, 0.5, 0.75]
    assert mtc.arange(1, 4, dtype=mtc.float64).dtype is mtc.float64
    assert mtc.randn(3, 4, requires_grad=True).requires_grad
    x = mtc.rand(100)
    assert 0 <= x.min().item() and x.max().item() < 1
    assert mtc.zeros_like(x).shape == x.shape and mtc.ones_like(x, dtype=mtc.int64).dtype is \
        mtc.int64
    assert mtc.full_like(x, 3.0).sum().item() == 300.0
    assert mtc.empty(0).numel() == 0


def test_tensor_infers_dtypes_like_torch():
    assert mtc.tensor([1, 2]).dtype is mtc.int64
    assert mtc.tensor([1, 2.5]).dtype is mtc.float32
    assert mtc.tensor([True, False]).dtype is mtc.bool
    assert mtc.tensor(np.zeros(2)).dtype is mtc.float64  # numpy dtype kept
    assert mtc.tensor([]).dtype is mtc.float32
    assert mtc.tensor(3.0).ndim == 0
    assert mtc.tensor([[1, 2], [3, 4]], dtype=mtc.float64).dtype is mtc.float64


def test_from_numpy_shares_memory_and_tensor_copies():
    a = np.arange(4.0)
    shared, copied = mtc.from_numpy(a), mtc.tensor(a)
    a[0] = 100.0
    assert shared[0].item() == 100.0 and copied[0].item() == 0.0
    with pytest.raises(TypeError, match="can't convert np.ndarray of type"):
        mtc.from_numpy(np.zeros(2, dtype=np.complex64))


def test_manual_seed_is_reproducible():
    mtc.manual_seed(123)
    a = mtc.randn(5)
    mtc.manual_seed(123)
    assert mtc.equal(a, mtc.randn(5))


def test_metadata():
    x = mtc.zeros(2, 3, 4)
    assert x.size() == (2, 3, 4) and isinstance(x.size(), mtc.Size)
    assert x.size(-1) == 4 and x.dim() == x.ndim == 3 and x.numel() == 24 and len(x) == 2
    assert x.stride() == (12, 4, 1)
    assert x.transpose(0, 2).stride() == (1, 4, 12)
    assert x.is_contiguous() and not x.transpose(0, 1).is_contiguous()
    assert x.device == mtc.device("cpu") and x.dtype is mtc.float32
    assert x.is_leaf and not x.requires_grad and x.grad is None and x.grad_fn is None
    with pytest.raises(IndexError, match="Dimension out of range"):
        x.size(3)


def test_size_is_a_tuple_subclass_that_keeps_its_type():
    s = mtc.zeros(2, 3, 4).size()
    assert s[:-1] + (2, 5) == (2, 3, 2, 5)
    assert isinstance(s[:-1] + (2, 5), mtc.Size) and isinstance(s[1:], mtc.Size)
    assert s.numel() == 24 and repr(s) == "mtc.Size([2, 3, 4])"
    assert isinstance(s[0], int)


def test_conversion_and_scalars():
    x = mtc.tensor([1.7, -2.2])
    assert x.long().tolist() == [1, -2] and x.int().dtype is mtc.int32
    assert x.double().dtype is mtc.float64 and x.to(mtc.float64).dtype is mtc.float64
    assert x.to(x.dtype) is x and x.to("cpu") is x
    assert x.to(mtc.zeros(1, dtype=mtc.int64)).dtype is mtc.int64
    assert x.bool().tolist() == [True, True]
    assert mtc.tensor(2.5).item() == 2.5 and float(mtc.tensor([3.0])) == 3.0
    assert int(mtc.tensor(4)) == 4 and [10, 20, 30][mtc.tensor(1)] == 20
    with pytest.raises(RuntimeError, match="cannot be converted to Scalar"):
        x.item()
    with pytest.raises(RuntimeError, match="ambiguous"):
        bool(x)
    assert bool(mtc.tensor([1.0])) and not bool(mtc.tensor(0))
    y = mtc.randn(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="Use tensor.detach"):
        y.numpy()
    assert isinstance(y.detach().numpy(), np.ndarray)
    assert x.clone().tolist() == x.tolist() and x.contiguous() is x


def test_to_npu_and_back():
    x = mtc.randn(3, requires_grad=True)
    n = x.to("npu")
    assert n.device.type == "npu" and n.is_npu and n.grad_fn is not None
    n.cos().sum().backward()
    assert x.grad.device.type == "cpu"
    np.testing.assert_allclose(x.grad.numpy(), -np.sin(x.detach().numpy()), rtol=1e-6)
    assert "device='npu:0'" in repr(n.detach())


def test_repr_like_torch():
    assert repr(mtc.tensor([1.0, 2.0, 3.0])) == "tensor([1., 2., 3.])"
    assert repr(mtc.tensor([0.5, -1.25])) == "tensor([ 0.5000, -1.2500])"
    assert repr(mtc.tensor([1, 2])) == "tensor([1, 2])"
    assert repr(mtc.tensor([True])) == "tensor([True])"
    assert repr(mtc.tensor([True, False])) == "tensor([ True, False])"  # padded as torch's
    assert repr(mtc.tensor(2.0)) == "tensor(2.)"
    assert repr(mtc.tensor([1.0], dtype=mtc.float64)) == "tensor([1.], dtype=mtc.float64)"
    x = mtc.tensor([1.0], requires_grad=True)
    assert repr(x) == "tensor([1.], requires_grad=True)"
    assert repr(x * 2) == "tensor([2.], grad_fn=<MulBackward0>)"
    assert repr(mtc.empty(2, 3, device="meta")) == "tensor(..., size=(2, 3), device='meta')"


def test_operators():
    a, b = mtc.tensor([1.0, 2.0]), mtc.tensor([3.0, 4.0])
    assert (a + b).tolist() == [4.0, 6.0] and (a - b).tolist() == [-2.0, -2.0]
    assert (a * b).tolist() == [3.0, 8.0] and (b / a).tolist() == [3.0, 2.0]
    assert (a ** 2).tolist() == [1.0, 4.0] and (2 ** a).tolist() == [2.0, 4.0]
    assert (1 - a).tolist() == [0.0, -1.0] and (1 / a).tolist() == [1.0, 0.5]
    assert (-a).tolist() == [-1.0, -2.0] and abs(-a).tolist() == [1.0, 2.0]
    assert (a @ b).item() == 11.0 and (b // a).tolist() == [3.0, 2.0]
    assert (a < b).dtype is mtc.bool and (a == a).all().item()
    assert ((a > 1) & (b > 3)).tolist() == [False, True]
    assert (~(a > 1)).tolist() == [True, False]
    c = a.clone()
    c += 1
    assert c.tolist() == [2.0, 3.0] and c._version == 1


@pytest.mark.parametrize("left,right,expected", [
    (mtc.int64, 2.5, mtc.float32),
    (mtc.int64, 2, mtc.int64),
    (mtc.float32, 2.0, mtc.float32),
    (mtc.bool, 1, mtc.int64),
    (mtc.bool, True, mtc.bool),
    (mtc.float16, mtc.int64, mtc.float16),
    (mtc.int32, mtc.int64, mtc.int64),
    (mtc.float32, mtc.float64, mtc.float64),
])
def test_type_promotion(left, right, expected):
    x = mtc.ones(3, dtype=left)
    other = mtc.ones(3, dtype=right) if isinstance(right, mtc.dtype) else right
    assert (x + other).dtype is expected


def test_zero_dim_tensors_promote_below_dimensioned_ones():
    assert (mtc.ones(3) + mtc.tensor(1.0, dtype=mtc.float64)).dtype is mtc.float32
    assert (mtc.ones(3, dtype=mtc.int64) + mtc.tensor(1.0, dtype=mtc.float64)).dtype is \
        mtc.float64
    assert (mtc.ones(3, dtype=mtc.int64) / 2).dtype is mtc.float32


def test_indexing_ints_slices_none_ellipsis():
    a = np.arange(24.0).reshape(2, 3, 4).astype(np.float32)
    x = mtc.tensor(a)
    cases = [0, -1, (1, 2), (slice(None), 1), (Ellipsis, 0), (None, 0), (0, None, Ellipsis),
             (slice(1, None), slice(None, None, 2)), (Ellipsis,), (slice(None), None, 1, 2),
             (1, Ellipsis, slice(1, 3)), slice(-5, 10)]
    for idx in cases:
        np.testing.assert_array_equal(x[idx].numpy(), a[idx], err_msg=str(idx))
    with pytest.raises(IndexError, match="too many indices"):
        x[0, 0, 0, 0]
    with pytest.raises(IndexError, match="index 5 is out of bounds for dimension 0"):
        x[5]
    np.testing.assert_array_equal(x[mtc.tensor([1, 0])].numpy(), a[[1, 0]])  # tests/test_indexing
    with pytest.raises(IndexError, match="must be long, int, byte or bool"):
        x[mtc.tensor([0.0])]


@given(st.lists(st.integers(1, 4), min_size=1, max_size=3), st.data())
def test_indexing_matches_numpy_for_random_slices(shape, data):
    a = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)
    idx = []
    for s in shape:
        if data.draw(st.booleans()):
            idx.append(None)  # a new axis; consumes no dimension
        if data.draw(st.booleans()):
            idx.append(data.draw(st.integers(-s, s - 1)))
        else:
            idx.append(slice(data.draw(st.integers(-s - 1, s + 1) | st.none()),
                             data.draw(st.integers(-s - 1, s + 1) | st.none()),
                             data.draw(st.integers(1, 3) | st.none())))
    np.testing.assert_array_equal(mtc.tensor(a)[tuple(idx)].numpy(), a[tuple(idx)])


def test_indexing_gradients_and_setitem():
    x = mtc.arange(6.0).view(2, 3).requires_grad_()
    (x[1, 1:] * 3).sum().backward()
    assert x.grad.tolist() == [[0.0, 0.0, 0.0], [0.0, 3.0, 3.0]]
    y = mtc.zeros(2, 3)
    y[0] = 5.0
    y[:, 2] = mtc.tensor([7.0, 8.0])
    assert y.tolist() == [[5.0, 5.0, 7.0], [0.0, 0.0, 8.0]]


def test_signatures_take_torch_keywords():
    x = mtc.randn(2, 3)
    assert mtc.cat(tensors=[x, x], dim=0).shape == (4, 3)
    assert x.sum(dim=-1, keepdim=True).shape == (2, 1)
    assert x.view(*(3, 2)).shape == (3, 2) and x.view(6).shape == (6,)
    assert mtc.equal(mtc.sub(x, 1), x.sub(1))
    assert mtc.allclose(mtc.add(input=x, other=x, alpha=2), x * 3)
    assert x.permute(1, 0).shape == (3, 2) == x.permute((1, 0)).shape
    assert x.expand(4, 2, 3).shape == (4, 2, 3) and x.unsqueeze(0).expand(5, -1, -1).shape == \
        (5, 2, 3)
    assert mtc.stack([x, x], dim=1).shape == (2, 2, 3)
    assert x.flatten().shape == (6,) and x.reshape(-1, 2).shape == (3, 2)
    v, i = x.max(dim=1)
    assert v.shape == (2,) and i.dtype is mtc.int64
    assert x.var(dim=1, unbiased=False).shape == (2,)
    assert len(x.split(2, dim=1)) == 2 and len(x.chunk(3, 1)) == 3


def test_view_requires_compatible_strides():
    x = mtc.randn(3, 4).t()
    with pytest.raises(RuntimeError, match="Use .reshape"):
        x.view(12)
    assert x.reshape(12).shape == (12,)


def test_pickle_roundtrip():
    import pickle

    x = mtc.randn(3, requires_grad=True)
    y = pickle.loads(pickle.dumps(x))
    assert mtc.equal(x.detach(), y.detach()) and y.requires_grad
