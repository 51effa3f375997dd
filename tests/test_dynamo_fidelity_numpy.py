"""numpy inside compiled code (torch's ``config.trace_numpy``, ``test/dynamo/test_unspec.py``,
``test_functions.py`` and ``test_misc.py``'s numpy tests): ``t.numpy()`` and numpy calls on
its result are traced as tensor ops; arrays go back to tensors with ``from_numpy`` /
``as_tensor`` and leave the frame as real ndarrays (numpy scalars where numpy gives them).

Each program runs compiled and eagerly under mtc — values, dtypes and types (ndarray vs numpy
scalar) equal — and its counts are torch 2.13's (``TORCH_COUNTS``, re-measured when torch is
installed), except for ``DIFFERS``.  ``TORCH_WRONG``: torch 2.13's compiled values differ
from eager numpy's there (``torch._numpy`` computes a different dtype or returns a 0-d array
where numpy returns a scalar); mtc's match eager.
"""

from .dynamo_fidelity import Program, fidelity_tests, one

P = Program


def two_by_three(lib):
    return one(lib, 2, 3)


def ints(lib):
    return [((lib.arange(6) - 2).reshape(2, 3).int(),)]


PROGRAMS = {
    "np_ufunc_chain": P("""
        def f(x):
            a = x.numpy()
            return np.exp(np.sin(a)) * 2 - np.sqrt(np.abs(a))
        """, two_by_three, "after test_misc.py::test_numpy_ufunc"),
    "np_reductions_with_axis": P("""
        def f(x):
            a = x.numpy()
            return np.mean(a, axis=0), a.sum(axis=1, keepdims=True), np.sum(a, axis=(0, 1))
        """, two_by_three, "after test_misc.py (np.mean(a, axis=0))"),
    "np_max_min": P("""
        def f(x):
            a = (x * 3).numpy()
            return a.max(axis=0), np.min(a, axis=1), np.amax(a, keepdims=True)
        """, two_by_three, "after test_misc.py (reductions)"),
    "np_shape_attributes": P("""
        def f(x):
            a = x.numpy()
            n, m = a.shape
            return x * (n + m + a.ndim + a.size), a.dtype, len(a)
        """, two_by_three, "after test_functions.py::test_numpy_size"),
    "np_transpose_reshape": P("""
        def f(x):
            a = x.numpy()
            return a.T + 1, a.reshape(3, 2) * 2, np.transpose(a), a.reshape(-1)
        """, two_by_three, "after test_misc.py (a.T, reshape)"),
    "np_astype_float64": P("""
        def f(x):
            a = x.numpy()
            b = a.astype(np.float64) / 3
            return b, (a * 10).astype(np.int32) // 3
        """, two_by_three, "after test_misc.py (astype)"),
    "np_where_comparison": P("""
        def f(x):
            a = x.numpy()
            return np.where(a > 0, a, 0.0), (a > 0).sum(axis=0)
        """, two_by_three, "after test_misc.py (np.where)"),
    "np_matmul": P("""
        def f(x):
            a = x.numpy()
            return a @ a.T, np.matmul(a.T, a)
        """, two_by_three, "after test_misc.py (a @ b)"),
    "np_concatenate_stack": P("""
        def f(x):
            a = x.numpy()
            return np.concatenate([a, a * 2], axis=0), np.stack([a, a + 1], axis=1)
        """, two_by_three, "after test_misc.py (np.concatenate)"),
    "np_from_numpy_roundtrip": P("""
        def f(x):
            a = np.cos(x.numpy())
            return lib.from_numpy(a) + x
        """, two_by_three, "after test_misc.py::test_numpy_torch_operators (from_numpy)"),
    "np_as_tensor": P("""
        def f(x):
            a = x.numpy() * 2
            return lib.as_tensor(a).sum(0) + 1
        """, two_by_three, "after test_misc.py (torch.as_tensor of an ndarray)"),
    "np_returned_ndarray": P("""
        def f(x):
            y = x.relu()
            return y.numpy() * 2 + 1, y
        """, two_by_three, "after test_misc.py::test_return_numpy_ndarray"),
    "np_getitem": P("""
        def f(x):
            a = x.numpy()
            return a[0] * 2, a[:, 1] + 1, a[1, ::2]
        """, two_by_three, "after test_misc.py (indexing an ndarray)"),
    "np_maximum": P("""
        def f(x):
            a = x.numpy()
            return np.maximum(a, a * -2), np.minimum(a, -a)
        """, two_by_three, "after test_misc.py (binary ufuncs)"),
    "np_float_of_mean_breaks": P("""
        def f(x):
            a = (x + 1).numpy()
            m = float(np.mean(a))
            return x * m
        """, two_by_three, "after test_functions.py (float() of a numpy result)"),
    "np_unsupported_call_breaks": P("""
        def f(x):
            a = x.cos().numpy()
            order = np.argsort(a, axis=1)
            return lib.from_numpy(order) * 2
        """, two_by_three, "after test_misc.py (a numpy function torch._numpy lacks)"),
    "np_inplace_write_breaks": P("""
        def f(x):
            y = x * 2
            a = y.numpy()
            a += 1
            return y + 1
        """, two_by_three, "after test_misc.py::test_numpy_inplace (a += 1 writes y)"),
    "np_sum_scalar": P("""
        def f(x):
            a = x.numpy()
            return a.sum(), a.mean()
        """, two_by_three, "after test_misc.py (a numpy scalar returned)"),
    "np_int_true_divide": P("""
        def f(x):
            a = x.numpy()
            return a / 2, np.sin(a), a + 1.5
        """, ints, "after test_misc.py (numpy's int -> float64 promotion)"),
    "np_int_mean": P("""
        def f(x):
            a = x.numpy()
            return np.mean(a, axis=0), a.sum(axis=1)
        """, ints, "after test_misc.py (np.mean of ints is float64)"),
}

# (graphs over all calls, explain graph_count, explain graph_break_count, ops per graph)
TORCH_COUNTS = {
    'np_ufunc_chain': (1, 1, 0, (7,)),
    'np_reductions_with_axis': (1, 1, 0, (4,)),
    'np_max_min': (1, 1, 0, (5,)),
    'np_shape_attributes': (0, 0, -1, ()),
    'np_transpose_reshape': (1, 1, 0, (7,)),
    'np_astype_float64': (1, 1, 0, (6,)),
    'np_where_comparison': (1, 1, 0, (5,)),
    'np_matmul': (1, 1, 0, (5,)),
    'np_concatenate_stack': (1, 1, 0, (5,)),
    'np_from_numpy_roundtrip': (1, 1, 0, (4,)),
    'np_as_tensor': (1, 1, 0, (5,)),
    'np_returned_ndarray': (1, 1, 0, (4,)),
    'np_getitem': (1, 1, 0, (6,)),
    'np_maximum': (1, 1, 0, (5,)),
    'np_float_of_mean_breaks': (2, 2, 1, (3, 1)),
    'np_unsupported_call_breaks': (1, 1, 0, (5,)),
    'np_inplace_write_breaks': (1, 1, 0, (4,)),
    'np_sum_scalar': (1, 1, 0, (3,)),
    'np_int_true_divide': (1, 1, 0, (4,)),
    'np_int_mean': (1, 1, 0, (3,)),
}

DIFFERS = {
    "np_shape_attributes": ((1, 1, 0, (2,)),
                            "torch 2.13 cannot return an ndarray's dtype (np.dtype) from the "
                            "frame and runs it eagerly; mtc returns it as a constant"),
    "np_int_mean": ((1, 1, 0, (4,)),
                    "np.mean of ints computes in float64: mtc's graph casts with a `to` node "
                    "of its own; torch's wrapped torch._numpy call casts inside"),
    "np_int_true_divide": ((1, 1, 0, (5,)),
                           "the cast to numpy's float64 is a node of its own in mtc's graph "
                           "(torch computes a / 2 in float32: TORCH_WRONG)"),
    "np_unsupported_call_breaks": ((2, 2, 1, (2, 2)),
                                   "np.argsort is not in mtc's numpy table (torch._numpy has "
                                   "it): a graph break there"),
    "np_inplace_write_breaks": ((2, 2, 1, (2, 1)),
                                "an in-place write to an ndarray (memory shared with a tensor) "
                                "breaks in mtc; torch traces it"),
}

TORCH_WRONG = {
    "np_int_true_divide": "a / 2 of an int32 array is float32 in torch 2.13's graph (numpy: "
                          "float64)",
    "np_reductions_with_axis": "np.sum(a, axis=(0, 1)) returns a 0-d ndarray (numpy: a numpy "
                               "scalar)",
    "np_sum_scalar": "a.sum() and a.mean() return 0-d ndarrays (numpy: np.float32 scalars)",
}

test_compiled_equals_eager_with_torchs_counts, test_torch_counts_are_the_table = \
    fidelity_tests(PROGRAMS, TORCH_COUNTS, DIFFERS, torch_wrong=TORCH_WRONG)
