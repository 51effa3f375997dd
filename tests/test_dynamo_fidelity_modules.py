"""Programs of torch's ``test/dynamo/test_modules.py`` (its ``nn.Module`` classes, called from
a compiled function; more, and ``test_optimizers.py``'s, in ``..._modules2.py``), ported as
written — ``torch`` spelled ``lib``, ``torch.randn`` replaced by deterministic ramps, the
parameters set by ``init`` — with the class or test each comes from as its ``cite``.

Each runs compiled and eagerly under mtc (values equal) and its counts — graphs over the calls,
explain's counts, ops per graph — are torch 2.13's (``TORCH_COUNTS``, re-measured when torch
is installed), except for ``DIFFERS``.
"""

from .dynamo_fidelity import Program, fidelity_tests, one

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
}

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
}

DIFFERS = {
    "module_list_many_loops": ((1, 1, 0, (40,)),
                               "`self.layers[::-1]` makes a new ModuleList: torch's graph also "
                               "records its Module.__init__'s torch._C._log_api_usage_once call "
                               "(41 ops), mtc's holds the same 40 tensor ops"),
}

test_compiled_equals_eager_with_torchs_counts, test_torch_counts_are_the_table = \
    fidelity_tests(PROGRAMS, TORCH_COUNTS, DIFFERS)
