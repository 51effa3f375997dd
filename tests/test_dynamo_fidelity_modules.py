"""Programs of torch's ``test/dynamo/test_modules.py`` (its ``nn.Module`` classes, called from
a compiled function) and ``test_optimizers.py``, ported as written — ``torch`` spelled ``lib``,
``torch.randn`` replaced by deterministic ramps, the parameters set by ``init`` — with the
class or test each comes from as its ``cite``.

Each runs compiled and eagerly under mtc (values equal) and its counts — graphs over the calls,
explain's counts, ops per graph — are torch 2.13's (``TORCH_COUNTS``, re-measured when torch
is installed), except for ``DIFFERS``.
"""

from .dynamo_fidelity import Program, fidelity_tests, one, ramp

P = Program

COMMON = """
F = lib.nn.functional

def rand(*shape, scale=0.1, shift=-0.3):
    n = 1
    for s in shape:
        n *= s
    return (lib.arange(n).float() * scale + shift).reshape(*shape)

def init(m):
    with lib.no_grad():
        for i, p in enumerate(m.parameters()):
            p.copy_(rand(*p.shape, scale=0.01 * (i + 1), shift=-0.2))
    return m

class BasicModule(lib.nn.Module):
    def __init__(self):
        super().__init__()
        self.linear1 = lib.nn.Linear(10, 10)
        self.scale = rand(1, 10)

    def forward(self, x):
        return F.relu(self.linear1(x)) * self.scale
"""


def module_program(cls_source: str, make: str, cite: str, call: str = "m(x)",
                   calls=None, **kw) -> Program:
    """``f(x)`` calls the module ``m = make`` (defined in the prelude with ``cls_source``)."""
    return P(f"""
        def f(x):
            return {call}
        """, calls or (lambda lib: one(lib, 4, 10)), cite,
        prelude=COMMON + cls_source + f"\nm = init({make})\n", **kw)


PROGRAMS = {
    "basic_module": module_program("", "BasicModule()", "test_modules.py::BasicModule"),
    "fn_member": module_program("""
class FnMember(lib.nn.Module):
    def __init__(self):
        super().__init__()
        self.linear1 = lib.nn.Linear(10, 10)
        self.activation = F.relu

    def forward(self, x):
        x = self.linear1(x)
        if self.activation:
            x = self.activation(x)
        return x
""", "FnMember()", "test_modules.py::FnMember"),
    "fn_member_cmp_relu": module_program("""
class FnMemberCmp(lib.nn.Module):
    def __init__(self, activation):
        super().__init__()
        self.linear1 = lib.nn.Linear(10, 10)
        self.activation = activation

    def forward(self, x):
        x = self.linear1(x)
        if self.activation is not None:
            x = self.activation(x)
        if self.activation is None:
            x = lib.sigmoid(x)
        return x
""", "FnMemberCmp(F.relu)", "test_modules.py::FnMemberCmp (test_fn_member_cmp1)"),
    "fn_member_cmp_none": module_program("""
class FnMemberCmp(lib.nn.Module):
    def __init__(self, activation):
        super().__init__()
        self.linear1 = lib.nn.Linear(10, 10)
        self.activation = activation

    def forward(self, x):
        x = self.linear1(x)
        if self.activation is not None:
            x = self.activation(x)
        if self.activation is None:
            x = lib.sigmoid(x)
        return x
""", "FnMemberCmp(None)", "test_modules.py::FnMemberCmp (test_fn_member_cmp2)"),
    "submodule_example": module_program("""
class SubmoduleExample(lib.nn.Module):
    def __init__(self):
        super().__init__()
        self.layer1 = BasicModule()
        self.layer2 = BasicModule()
        self.scale = rand(1, 10)

    def forward(self, x):
        x = self.layer1(x)
        x = self.layer2(x)
        return x * self.scale
""", "SubmoduleExample()", "test_modules.py::SubmoduleExample"),
    "is_training_check": module_program("""
class IsTrainingCheck(lib.nn.Module):
    def __init__(self):
        super().__init__()
        self.linear1 = lib.nn.Linear(10, 10)
        self.linear2 = lib.nn.Linear(10, 10)
        self.train(True)

    def forward(self, x):
        if self.training:
            mod = self.linear1
        else:
            mod = self.linear2
        return F.relu(mod(x))

class IsEvalCheck(IsTrainingCheck):
    def __init__(self):
        super().__init__()
        self.train(False)
""", "IsTrainingCheck()", "test_modules.py::IsTrainingCheck"),
    "is_eval_check": module_program("""
class IsTrainingCheck(lib.nn.Module):
    def __init__(self):
        super().__init__()
        self.linear1 = lib.nn.Linear(10, 10)
        self.linear2 = lib.nn.Linear(10, 10)
        self.train(True)

    def forward(self, x):
        if self.training:
            mod = self.linear1
        else:
            mod = self.linear2
        return F.relu(mod(x))

class IsEvalCheck(IsTrainingCheck):
    def __init__(self):
        super().__init__()
        self.train(False)
""", "IsEvalCheck()", "test_modules.py::IsEvalCheck"),
    "module_method_call": module_program("""
class ModuleMethodCall(lib.nn.Module):
    def __init__(self):
        super().__init__()
        self.layer1 = BasicModule()
        self.layer2 = BasicModule()
        self.scale = rand(1, 10)

    def call_and_scale(self, mod, x):
        x = mod(x)
        return x * self.scale

    def forward(self, x):
        x1 = self.call_and_scale(self.layer1, x)
        x2 = self.call_and_scale(self.layer2, x)
        return x1 + x2
""", "ModuleMethodCall()", "test_modules.py::ModuleMethodCall"),
    "module_static_forward": module_program("""
class ModuleWithStaticForward(lib.nn.Module):
    @staticmethod
    def forward(x):
        return x * lib.sigmoid(x)

class ModuleCallModuleWithStaticForward(lib.nn.Module):
    def __init__(self):
        super().__init__()
        self.mod = ModuleWithStaticForward()

    def forward(self, x):
        return self.mod(x)
""", "ModuleCallModuleWithStaticForward()",
        "test_modules.py::ModuleCallModuleWithStaticForward"),
    "module_static_method_call": module_program("""
class ModuleStaticMethodCall(lib.nn.Module):
    def __init__(self):
        super().__init__()
        self.layer1 = BasicModule()
        self.layer2 = BasicModule()
        self.scale = rand(1, 10)

    @staticmethod
    def call_and_scale(scale, mod, x):
        x = mod(x)
        return x * scale

    def forward(self, x):
        x1 = self.call_and_scale(self.scale, self.layer1, x)
        x2 = self.call_and_scale(self.scale, self.layer2, x)
        return x1 + x2
""", "ModuleStaticMethodCall()", "test_modules.py::ModuleStaticMethodCall"),
    "module_class_method_call": module_program("""
class ModuleClassMethodCall(lib.nn.Module):
    def __init__(self):
        super().__init__()
        self.layer1 = BasicModule()
        self.layer2 = BasicModule()
        self.scale = rand(1, 10)

    @classmethod
    def call_and_scale(cls, scale, mod, x):
        x = mod(x)
        return x * scale

    def forward(self, x):
        x1 = self.call_and_scale(self.scale, self.layer1, x)
        x2 = self.call_and_scale(self.scale, self.layer2, x)
        return x1 + x2
""", "ModuleClassMethodCall()", "test_modules.py::ModuleClassMethodCall"),
    "module_property": module_program("""
class ModuleProperty(lib.nn.Module):
    def __init__(self):
        super().__init__()
        self.scale = rand(1, 10)

    @property
    def scale_alias(self):
        return self.scale

    def forward(self, x):
        return x * self.scale_alias
""", "ModuleProperty()", "test_modules.py::ModuleProperty"),
    "nested_module_list": module_program("""
class NestedModuleList(lib.nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = lib.nn.ModuleList([])
        for _ in range(3):
            self.layers.append(lib.nn.ModuleList([lib.nn.Linear(10, 10), lib.nn.ReLU()]))

    def forward(self, x):
        for layer, act in self.layers:
            x = act(layer(x))
        return x
""", "NestedModuleList()", "test_modules.py::NestedModuleList"),
    "const_loop": module_program("""
class ConstLoop(lib.nn.Module):
    def __init__(self):
        super().__init__()
        self.linear1 = lib.nn.Linear(10, 10)
        self.count = 3

    def forward(self, x):
        for i in range(self.count):
            x = lib.sigmoid(self.linear1(x))
        return x
""", "ConstLoop()", "test_modules.py::ConstLoop"),
    "is_none_layer": module_program("""
class IsNoneLayer(lib.nn.Module):
    def __init__(self):
        super().__init__()
        self.layer1 = lib.nn.Linear(10, 10)
        self.layer2 = None
        self.train(True)

    def forward(self, x):
        if self.layer1 is not None:
            x = self.layer1(x)
        if self.layer2 is not None:
            x = self.layer2(x)
        return x
""", "IsNoneLayer()", "test_modules.py::IsNoneLayer"),
    "layer_list": module_program("""
class LayerList(lib.nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = [lib.nn.Linear(10, 10), lib.nn.ReLU(), lib.nn.Linear(10, 10)]

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


def init_layers(m):
    for layer in m.layers:  # (a plain list: its modules are not m's children)
        init(layer)
    return m
""", "init_layers(LayerList())", "test_modules.py::LayerList"),
    "module_list_many_loops": module_program("""
class ModuleList(lib.nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = lib.nn.ModuleList([lib.nn.Linear(10, 10), lib.nn.ReLU(),
                                         lib.nn.Linear(10, 10), lib.nn.ReLU()])

    def forward(self, x):
        for i in range(len(self.layers)):
            x = self.layers[i](x)
        for layer in self.layers:
            x = layer(x)
        for layer, val in zip(self.layers, (x, x, x, x)):
            x = layer(x) + val
        for layer, val in zip(self.layers, (1, 2, 3, 4)):
            x = layer(x) + val
        for idx, layer in enumerate(self.layers):
            x = layer(x) * idx
        for idx, layer in enumerate(self.layers[::-1]):
            x = layer(x) * idx
        return x
""", "ModuleList()", "test_modules.py::ModuleList"),
    "custom_getitem_module_list": module_program("""
class CustomGetItemModuleList(lib.nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = lib.nn.ModuleList([lib.nn.Linear(10, 10), lib.nn.ReLU(),
                                         lib.nn.Linear(10, 10), lib.nn.ReLU()])

    def __getitem__(self, idx: int):
        return self.layers[idx]

    def __len__(self) -> int:
        return len(self.layers)

    def forward(self, x):
        for i in range(len(self)):
            x = self[i](x)
        return x
""", "CustomGetItemModuleList()", "test_modules.py::CustomGetItemModuleList"),
    "module_dict": module_program("""
class ModuleDict(lib.nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = lib.nn.ModuleDict({"0": lib.nn.Linear(10, 10)})

    def forward(self, x):
        x = self.layers["0"](x)
        return x
""", "ModuleDict()", "test_modules.py::ModuleDict"),
    "custom_getitem_module_dict": module_program("""
class CustomGetItemModuleDict(lib.nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = lib.nn.ModuleDict({"0": lib.nn.Linear(10, 10)})

    def __getitem__(self, key: str):
        return self.layers[key]

    def forward(self, x):
        x = self["0"](x)
        return x
""", "CustomGetItemModuleDict()", "test_modules.py::CustomGetItemModuleDict"),
    "tensor_list": module_program("""
class TensorList(lib.nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = (rand(1, 10), rand(10, 1), rand(1, 10), rand(10, 1))

    def forward(self, x):
        for layer in self.layers:
            x = x * layer
        return x
""", "TensorList()", "test_modules.py::TensorList",
        calls=lambda lib: one(lib, 10, 10)),
    "children": module_program("""
class Children(lib.nn.Module):
    def __init__(self):
        super().__init__()
        self.l1 = lib.nn.Linear(10, 10)
        self.l2 = lib.nn.ReLU()
        self.l3 = lib.nn.Linear(10, 10)
        self.l4 = lib.nn.ReLU()

    def forward(self, x):
        for block in self.children():
            x = block(x)
        return x
""", "Children()", "test_modules.py::Children"),
    "named_children": module_program("""
class NamedChildren(lib.nn.Module):
    def __init__(self):
        super().__init__()
        self.l1 = lib.nn.Linear(10, 10)
        self.l2 = lib.nn.ReLU()
        self.l3 = lib.nn.Linear(10, 10)
        self.l4 = lib.nn.ReLU()

    def forward(self, x):
        for _, block in self.named_children():
            x = block(x)
        return x
""", "NamedChildren()", "test_modules.py::NamedChildren"),
    "int_arg": module_program("""
class IntArg(lib.nn.Module):
    def __init__(self):
        super().__init__()
        self.layer1 = lib.nn.Linear(10, 10)

    def forward(self, x, offset=1):
        x = F.relu(self.layer1(x)) + offset
        return x
""", "IntArg()", "test_modules.py::IntArg"),
    "seq": module_program("""
class Seq(lib.nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = lib.nn.Sequential(lib.nn.Linear(10, 10), lib.nn.ReLU(),
                                        lib.nn.Linear(10, 10), lib.nn.ReLU())

    def forward(self, x):
        return self.layers(x)
""", "Seq()", "test_modules.py::Seq"),
    "cfg_module": module_program("""
class Cfg:
    def __init__(self):
        self.val = 0.5
        self.count = 3

class CfgModule(lib.nn.Module):
    def __init__(self):
        super().__init__()
        self.cfg = Cfg()
        self.layer = lib.nn.Linear(10, 10)

    def forward(self, x):
        for i in range(self.cfg.count):
            x = self.layer(x + self.cfg.val)
        return x
""", "CfgModule()", "test_modules.py::CfgModule"),
    "string_member": module_program("""
class StringMember(lib.nn.Module):
    def __init__(self):
        super().__init__()
        self.linear1 = lib.nn.Linear(10, 10)
        self.mode = "some_string"

    def forward(self, x):
        if self.mode == "some_string":
            return F.relu(self.linear1(x))
""", "StringMember()", "test_modules.py::StringMember"),
    "densenet_blocks": module_program("""
class _Block(lib.nn.Module):
    def forward(self, x):
        return 1.5 * lib.cat(x, 1)

class _DenseBlock(lib.nn.ModuleDict):
    _version = 2

    def __init__(self, num_layers: int = 3):
        super().__init__()
        for i in range(num_layers):
            self.add_module(f"denselayer{i + 1:d}", _Block())

    def forward(self, init_features):
        features = [init_features]
        for layer in self.values():
            new_features = layer(features)
            features.append(new_features)
        return lib.cat(features, 1)

class DenseNetBlocks(lib.nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = _DenseBlock()

    def forward(self, x):
        return self.layers(x)
""", "DenseNetBlocks()", "test_modules.py::DenseNetBlocks",
        calls=lambda lib: one(lib, 2, 3, 4, 4)),
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
    'basic_module': (1, 1, 0, (3,)),
    'fn_member': (1, 1, 0, (2,)),
    'fn_member_cmp_relu': (1, 1, 0, (2,)),
    'fn_member_cmp_none': (1, 1, 0, (2,)),
    'submodule_example': (1, 1, 0, (7,)),
    'is_training_check': (1, 1, 0, (2,)),
    'is_eval_check': (1, 1, 0, (2,)),
    'module_method_call': (1, 1, 0, (9,)),
    'module_static_forward': (1, 1, 0, (2,)),
    'module_static_method_call': (1, 1, 0, (9,)),
    'module_class_method_call': (1, 1, 0, (9,)),
    'module_property': (1, 1, 0, (1,)),
    'nested_module_list': (1, 1, 0, (6,)),
    'const_loop': (1, 1, 0, (6,)),
    'is_none_layer': (1, 1, 0, (1,)),
    'layer_list': (1, 1, 0, (3,)),
    'module_list_many_loops': (1, 1, 0, (41,)),
    'custom_getitem_module_list': (1, 1, 0, (4,)),
    'module_dict': (1, 1, 0, (1,)),
    'custom_getitem_module_dict': (1, 1, 0, (1,)),
    'tensor_list': (1, 1, 0, (4,)),
    'children': (1, 1, 0, (4,)),
    'named_children': (1, 1, 0, (4,)),
    'int_arg': (1, 1, 0, (3,)),
    'seq': (1, 1, 0, (4,)),
    'cfg_module': (1, 1, 0, (6,)),
    'string_member': (1, 1, 0, (2,)),
    'densenet_blocks': (1, 1, 0, (7,)),
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
    "module_list_many_loops": ((1, 1, 0, (40,)),
                               "`self.layers[::-1]` makes a new ModuleList: torch's graph also "
                               "records its Module.__init__'s torch._C._log_api_usage_once call "
                               "(41 ops), mtc's holds the same 40 tensor ops"),
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
