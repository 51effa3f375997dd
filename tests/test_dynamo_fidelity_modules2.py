"""More programs of torch's ``test/dynamo/test_modules.py`` (parameters, ``super()``, module
dicts, attribute lookup, a graph break inside ``forward``) and ``test_optimizers.py``, ported as
in ``test_dynamo_fidelity_modules.py`` (whose ``COMMON`` prelude and ``module_program`` they
use), with torch 2.13's counts except for ``DIFFERS``.
"""

from .dynamo_fidelity import Program, fidelity_tests, one, ramp
from .test_dynamo_fidelity_modules import module_program

P = Program

PROGRAMS = {
    "parameters_requires_grad": module_program("""
def requires_grad1(module, recurse=False):
    requires_grad = any(p.requires_grad for p in module.parameters(recurse))
    return requires_grad

class ParametersModule1(lib.nn.Module):
    def __init__(self):
        super().__init__()
        self.linear1 = lib.nn.Linear(10, 10)
        self.scale = lib.nn.Parameter(rand(1, 10))

    def forward(self, x):
        if not requires_grad1(self):
            return F.relu(self.linear1(x)) * self.scale
        else:
            return x + 1
""", "ParametersModule1()", "test_modules.py::ParametersModule1"),
    "parameters_dtype_of_next": module_program("""
class ParametersModule3(lib.nn.Module):
    def __init__(self):
        super().__init__()
        self.linear1 = lib.nn.Linear(10, 10)
        self.scale = lib.nn.Parameter(rand(1, 10))

    def forward(self, x):
        ones = lib.ones(10, dtype=next(self.parameters()).dtype)
        return F.relu(self.linear1(x)) * self.scale + ones
""", "ParametersModule3()", "test_modules.py::ParametersModule3"),
    "parameters_not_recursive": module_program("""
class ParametersModule4(lib.nn.Module):
    def __init__(self):
        super().__init__()
        self.linear1 = lib.nn.Linear(10, 10)
        self.scale = lib.nn.Parameter(rand(1, 10))

    def forward(self, x):
        ones = lib.ones(10, dtype=next(self.parameters(recurse=False)).dtype)
        return F.relu(self.linear1(x)) * self.scale + ones
""", "ParametersModule4()", "test_modules.py::ParametersModule4"),
    "parameters_counted_once": module_program("""
class ParametersModule5(lib.nn.Module):
    def __init__(self):
        super().__init__()
        self.linear1 = lib.nn.Linear(10, 10)
        self.scale = lib.nn.Parameter(rand(10, 10))
        self.scale_dup = self.scale

    def forward(self, x):
        counter = 0
        for param in self.parameters():
            counter += 1
        return x * self.scale * counter
""", "ParametersModule5()", "test_modules.py::ParametersModule5",
        calls=lambda lib: one(lib, 10, 10)),
    "super_forward": module_program("""
class SuperModule(BasicModule):
    def forward(self, x):
        x = super().forward(x)
        return x + 10.0
""", "SuperModule()", "test_modules.py::SuperModule"),
    "class_forward_called": module_program("""
class SuperModule2(BasicModule):
    def forward(self, x):
        return BasicModule.forward(self, x)
""", "SuperModule2()", "test_modules.py::SuperModule2"),
    "super_classmethod": module_program("""
class ComplicatedSuperParent(lib.nn.Module):
    @classmethod
    def custom_add(cls, x):
        x = x + x
        return x

class SuperChildCallsClassMethod(ComplicatedSuperParent):
    @classmethod
    def child_func(cls, x):
        x = super().custom_add(x)
        return x

    def forward(self, x):
        x = self.child_func(x)
        return x
""", "SuperChildCallsClassMethod()", "test_modules.py::SuperChildCallsClassMethod"),
    "hasattr_module": module_program("""
class HasAttrModule(lib.nn.Module):
    def __init__(self):
        super().__init__()
        self.scale = lib.nn.Parameter(rand(1, 10))

    def forward(self, x):
        x = F.relu(x)
        if hasattr(self, "scale"):
            x *= self.scale
        if hasattr(self, "scale2"):
            x *= self.scale2
        return x
""", "HasAttrModule()", "test_modules.py::HasAttrModule"),
    "enumerate_values": module_program("""
class _Block(lib.nn.Module):
    def forward(self, x):
        return 1.5 * lib.cat(x, 1)

class EnumValues(lib.nn.ModuleDict):
    def __init__(self, num_layers=3):
        super().__init__()
        for i in range(num_layers):
            self.add_module(f"denselayer{i + 1:d}", _Block())

    def forward(self, init_features):
        features = [init_features]
        for idx, layer in enumerate(self.values()):
            new_features = layer(features)
            features.append(new_features)
        return lib.cat(features, 1)
""", "EnumValues()", "test_modules.py::EnumValues", calls=lambda lib: one(lib, 2, 3, 4, 4)),
    "access_by_keys": module_program("""
class _Block(lib.nn.Module):
    def forward(self, x):
        return 1.5 * lib.cat(x, 1)

class AccessByKeys(lib.nn.ModuleDict):
    def __init__(self, num_layers=3):
        super().__init__()
        for i in range(num_layers):
            self.add_module(f"denselayer{i + 1:d}", _Block())

    def forward(self, init_features):
        features = [init_features]
        for k in self.keys():
            new_features = self[k](features)
            features.append(new_features)
        return lib.cat(features, 1)
""", "AccessByKeys()", "test_modules.py::AccessByKeys", calls=lambda lib: one(lib, 2, 3, 4, 4)),
    "call_forward_directly": module_program("""
class CallForwardDirectly(lib.nn.Module):
    def __init__(self):
        super().__init__()
        self.layer1 = BasicModule()
        self.layer2 = lib.nn.Linear(10, 10)

    def forward(self, x):
        x = self.layer1.forward(x)
        x = self.layer2.forward(x)
        return x
""", "CallForwardDirectly()", "test_modules.py::CallForwardDirectly"),
    "module_name_string": module_program("""
class ModuleNameString(lib.nn.Module):
    def __init__(self):
        super().__init__()
        self.linear1 = lib.nn.Linear(10, 10)

    def forward(self, x):
        if self.__class__.__name__ == "ABC":
            return 10
        if self.linear1.__class__.__name__ == "Linear":
            return F.relu(self.linear1(x) + 10)
        return 11
""", "ModuleNameString()", "test_modules.py::ModuleNameString"),
    "self_mutating_module": module_program("""
class SelfMutatingModule(lib.nn.Module):
    def __init__(self, layer):
        super().__init__()
        self.layer = layer
        self.counter = 0

    def forward(self, x):
        result = self.layer(x) + self.counter
        self.counter += 1
        return F.relu(result)
""", "SelfMutatingModule(lib.nn.Linear(10, 10))", "test_modules.py::SelfMutatingModule",
        calls=lambda lib: one(lib, 4, 10) * 3),
    "module_attribute_precedence": module_program("""
class ModuleAttributePrecedenceBase(lib.nn.Module):
    def linear(self, x, flag=None):
        if flag:
            return x * 2.0
        return x * 3.0

class ModuleAttributePrecedence(ModuleAttributePrecedenceBase):
    def __init__(self):
        super().__init__()
        self.activation = lib.nn.ReLU()
        self.linear = lib.nn.Linear(10, 10)
        self.initializer = lib.ones([10, 10])
        self.scale = 0.5

    def activation(self, x):
        return x * 1.2

    def initializer(self):
        return lib.zeros([10, 10])

    def scale(self):
        return 2.0

    def forward(self, x):
        return self.activation(self.linear(self.initializer + x)) * self.scale
""", "ModuleAttributePrecedence()", "test_modules.py::ModuleAttributePrecedence",
        calls=lambda lib: one(lib, 10, 10)),
    "named_parameters_across_a_break": module_program("""
class ModuleForwardHasGraphBreak(lib.nn.Module):
    def __init__(self):
        super().__init__()
        self.layer1 = BasicModule()
        self.layer2 = BasicModule()
        self.layer3 = lib.nn.Sequential(BasicModule(), BasicModule())
        self.layer4 = lib.nn.ModuleList([lib.nn.Linear(10, 10), lib.nn.ReLU(),
                                         lib.nn.Linear(10, 10), lib.nn.ReLU()])
        self.layer5 = lib.nn.ModuleDict({"0": lib.nn.Linear(10, 10)})
        self.scale = rand(1, 10)

    def forward(self, x):
        x = self.layer1(x)
        params1 = dict(self.named_parameters())
        params2 = list(self.parameters())
        buffers1 = dict(self.named_buffers())
        buffers2 = list(self.buffers())
        modules1 = dict(self.named_modules())
        modules2 = list(self.modules())
        lib._dynamo.graph_break()
        y = modules2
        y = modules1
        y = buffers2
        y = buffers1
        y = params2
        y = params1
        x = (self.layer2(x) + y["layer3.1.linear1.weight"] + y["layer4.2.weight"]
             + y["layer5.0.weight"])
        return x * self.scale
""", "ModuleForwardHasGraphBreak()", "test_modules.py::ModuleForwardHasGraphBreak",
        calls=lambda lib: one(lib, 10, 10)),
    "guard_name_is_valid": module_program("""
class ModuleGuardNameIsValid(lib.nn.ModuleDict):
    def __init__(self):
        super().__init__()
        for i in range(2):
            self.add_module(f"l@yer-{i + 1:d}", BasicModule())

    def forward(self, x):
        for layer in self.values():
            x = layer(x)
        return x
""", "ModuleGuardNameIsValid()", "test_modules.py::ModuleGuardNameIsValid"),
    "sequential_duplicated_module": module_program("""
class SequentialWithDuplicatedModule(lib.nn.Module):
    def __init__(self):
        super().__init__()
        self.relu = lib.nn.ReLU()
        self.layer = lib.nn.Sequential(lib.nn.Linear(10, 20), self.relu, lib.nn.Linear(20, 20),
                                       self.relu, lib.nn.Linear(20, 10), self.relu)

    def forward(self, x):
        return self.layer(x)
""", "SequentialWithDuplicatedModule()", "test_modules.py::SequentialWithDuplicatedModule"),
    "sequential_ordered_dict": module_program("""
class SequentialWithDuplicatedModule2(lib.nn.Module):
    def __init__(self):
        super().__init__()
        self.relu = lib.nn.ReLU()
        self.layer = lib.nn.Sequential(collections.OrderedDict([
            ("linear1", lib.nn.Linear(10, 20)), ("relu1", self.relu),
            ("linear2", lib.nn.Linear(20, 20)), ("relu2", self.relu),
            ("linear3", lib.nn.Linear(20, 10)), ("relu3", self.relu)]))

    def forward(self, x):
        return self.layer(x)
""", "SequentialWithDuplicatedModule2()", "test_modules.py::SequentialWithDuplicatedModule2"),
    "module_comparison": module_program("""
class ModuleComparison(lib.nn.Module):
    def __init__(self):
        super().__init__()
        self.layer0 = lib.nn.Linear(10, 10)
        self.layer1 = lib.nn.Linear(10, 10)
        self.layer2 = lib.nn.Linear(10, 10)

    @property
    def encoder_layers(self):
        return [self.layer0, self.layer1, self.layer2]

    def forward(self, x):
        for layer in self.encoder_layers:
            output = layer(x)
            if layer is None or layer == self.layer0:
                output = F.relu6(output)
            else:
                output = F.relu(output)
        return output
""", "ModuleComparison()", "test_modules.py::ModuleComparison"),
    "module_with_int_attr": module_program("""
class ModuleWithIntAttr(lib.nn.Module):
    def __init__(self):
        super().__init__()
        self.layer = lib.nn.Linear(4, 4)
        self.step = 10

    def forward(self, x):
        x = x + 1
        return self.layer(x) + self.step
""", "ModuleWithIntAttr()", "test_modules.py::ModuleWithIntAttr",
        calls=lambda lib: one(lib, 3, 4)),
    # ------------------------------------------------ test_optimizers.py
    "optimizing_over_tensor_with_requires_grad": P("""
        def f(batch, model, optimizer):
            optimizer.zero_grad()
            out = model(**batch)
            target = lib.tensor([0, 7])
            loss = lib.nn.CrossEntropyLoss()(out, target)
            loss.backward()
            optimizer.step()
            return loss
        """, lambda lib: [({"x": ramp(lib, 2, 1, 4), "y": Y[0]}, NET[0], OPT[0])
                          for _ in range(2)] if _make_opt(lib) else [],
        "test_optimizers.py::test_optimizing_over_tensor_with_requires_grad"),
    "custom_optimizer_init_group": P("""
        def f():
            return opt.step(), p
        """, lambda lib: [(), ()], "test_optimizers.py::test_init_group",
        prelude="""
class MyOptimizer(lib.optim.Optimizer):
    def __init__(self, params):
        super().__init__(params, {})

    def _init_group(self, params, group):
        any_complex = False
        for p in group["params"]:
            params.append(p)
            any_complex |= p.is_complex()
        return any_complex

    def step(self):
        for group in self.param_groups:
            params = []
            any_complex = self._init_group(params, group)
            if any_complex:
                params[0] -= 1
            else:
                params[0] += 1

p = lib.nn.Parameter(lib.arange(25.).reshape(5, 5) * 0.1, requires_grad=False)
opt = MyOptimizer([p])
"""),
    "sgd_step_unwrapped_no_grad": P("""
        def f():
            with lib.no_grad():
                step_fn(opt)
            return model[0].weight, model[1].bias
        """, lambda lib: [(), ()], "after test_optimizers.py::test_sgd (get_optimizer_step: "
        "the step unwrapped, under no_grad)",
        prelude="""
inp = lib.ones([10, 10])
model = lib.nn.Sequential(*[lib.nn.Linear(10, 10) for _ in range(2)])
with lib.no_grad():
    for i, q in enumerate(model.parameters()):
        q.copy_((lib.arange(q.numel()).float() * 0.001 - 0.02 * i).reshape(q.shape))
model(inp).sum().backward()
opt = lib.optim.SGD(model.parameters(), lr=0.01)
step_fn = opt.step.__wrapped__
"""),
}

NET, OPT, Y = [None], [None], [None]


def _make_opt(lib) -> bool:
    """test_optimizing_over_tensor_with_requires_grad's objects for ``lib`` (fresh per run)."""
    from .dynamo_fidelity import ramp as r

    class Net(lib.nn.Module):
        def forward(self, x, y):
            return lib.flatten(lib.bmm(x, y), 1)

    Y[0] = r(lib, 2, 4, 8, scale=0.02).requires_grad_()
    NET[0] = Net()
    OPT[0] = lib.optim.Adam([Y[0]], lr=0.1)
    return True


TORCH_COUNTS = {
    'parameters_requires_grad': (1, 1, 0, (1,)),
    'parameters_dtype_of_next': (1, 1, 0, (5,)),
    'parameters_not_recursive': (1, 1, 0, (5,)),
    'parameters_counted_once': (1, 1, 0, (2,)),
    'super_forward': (1, 1, 0, (4,)),
    'class_forward_called': (1, 1, 0, (3,)),
    'super_classmethod': (1, 1, 0, (1,)),
    'hasattr_module': (1, 1, 0, (2,)),
    'enumerate_values': (1, 1, 0, (7,)),
    'access_by_keys': (1, 1, 0, (7,)),
    'call_forward_directly': (1, 1, 0, (4,)),
    'module_name_string': (1, 1, 0, (3,)),
    'self_mutating_module': (3, 1, 0, (3, 3, 3)),
    'module_attribute_precedence': (1, 1, 0, (4,)),
    'named_parameters_across_a_break': (2, 2, 1, (3, 7)),
    'guard_name_is_valid': (1, 1, 0, (6,)),
    'sequential_duplicated_module': (1, 1, 0, (6,)),
    'sequential_ordered_dict': (1, 1, 0, (6,)),
    'module_comparison': (1, 1, 0, (6,)),
    'module_with_int_attr': (1, 1, 0, (3,)),
    'optimizing_over_tensor_with_requires_grad': (2, 2, 1, (4, 19)),
    'custom_optimizer_init_group': (1, 1, 0, (1,)),
    'sgd_step_unwrapped_no_grad': (1, 1, 0, (4,)),
}

DIFFERS = {
    "optimizing_over_tensor_with_requires_grad": ((2, 2, 1, (4, 18)),
                                                  "the same breaks and graphs; mtc's Adam "
                                                  "writes torch's update with other ops (sub + "
                                                  "add_ for lerp_, mul + add_ for addcmul_)"),
    "sgd_step_unwrapped_no_grad": ((1, 1, 0, (6,)),
                                   "torch wraps Optimizer.step twice (profile_hook_step around "
                                   "_use_grad), so `opt.step.__wrapped__` is still _use_grad: "
                                   "its breaks make the step a frame of its own, whose graph has "
                                   "no grad-mode switch; mtc's step is wrapped once, so "
                                   "__wrapped__ is the bare step, inlined in f's `with "
                                   "no_grad()` (its two _set_grad_enabled nodes)"),
}

test_compiled_equals_eager_with_torchs_counts, test_torch_counts_are_the_table = \
    fidelity_tests(PROGRAMS, TORCH_COUNTS, DIFFERS)
