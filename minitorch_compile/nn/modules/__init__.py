"""The layer classes of ``mtc.nn`` (``torch/nn/modules/__init__.py``), one file per concept."""

from .activation import (
    GELU,
    Hardsigmoid,
    Hardswish,
    Hardtanh,
    LogSoftmax,
    ReLU,
    ReLU6,
    Sigmoid,
    SiLU,
    Softmax,
    Tanh,
)
from .batchnorm import BatchNorm1d, BatchNorm2d
from .container import ModuleDict, ModuleList, Sequential
from .conv import Conv1d, Conv2d, ConvTranspose1d, ConvTranspose2d
from .dropout import Dropout
from .flatten import Flatten
from .linear import Identity, Linear
from .loss import CrossEntropyLoss, L1Loss, MSELoss, NLLLoss
from .module import Module
from .normalization import LayerNorm
from .pooling import (
    AdaptiveAvgPool1d,
    AdaptiveAvgPool2d,
    AvgPool1d,
    AvgPool2d,
    MaxPool1d,
    MaxPool2d,
)
from .sparse import Embedding

__all__ = ["Module", "Linear", "Identity", "ReLU", "GELU", "Tanh", "Sigmoid", "Softmax",
           "LogSoftmax", "Flatten", "Sequential", "ModuleList", "ModuleDict", "LayerNorm",
           "Dropout", "Embedding", "MSELoss", "NLLLoss", "CrossEntropyLoss", "SiLU", "Hardtanh",
           "ReLU6", "Hardswish", "Hardsigmoid", "BatchNorm1d", "BatchNorm2d", "L1Loss",
           "Conv1d", "Conv2d", "ConvTranspose1d", "ConvTranspose2d", "MaxPool1d", "MaxPool2d",
           "AvgPool1d", "AvgPool2d", "AdaptiveAvgPool1d", "AdaptiveAvgPool2d"]

from .activation import (  # noqa: E402 - the further activations
    CELU,
    ELU,
    GLU,
    SELU,
    Hardshrink,
    LeakyReLU,
    LogSigmoid,
    Mish,
    PReLU,
    Softmin,
    Softplus,
    Softshrink,
    Softsign,
    Tanhshrink,
    Threshold,
)
from .container import ParameterDict, ParameterList  # noqa: E402
from .flatten import Unflatten  # noqa: E402
from .instancenorm import InstanceNorm1d, InstanceNorm2d, InstanceNorm3d  # noqa: E402
from .loss import BCELoss, BCEWithLogitsLoss, HuberLoss, KLDivLoss, SmoothL1Loss  # noqa: E402
from .loss_more import (  # noqa: E402 - ranking, embedding and likelihood losses
    CosineEmbeddingLoss,
    GaussianNLLLoss,
    HingeEmbeddingLoss,
    MarginRankingLoss,
    MultiLabelSoftMarginLoss,
    PoissonNLLLoss,
    SoftMarginLoss,
    TripletMarginLoss,
)
from .multihead_attention import MultiheadAttention  # noqa: E402
from .normalization import GroupNorm, RMSNorm  # noqa: E402
from .rnn import GRU, LSTM, RNN, GRUCell, LSTMCell, RNNCell  # noqa: E402
from .simple_layers import (  # noqa: E402 - padding, channel dropout, distances, pixel shuffle
    CircularPad1d,
    CircularPad2d,
    ConstantPad1d,
    ConstantPad2d,
    ConstantPad3d,
    CosineSimilarity,
    Dropout1d,
    Dropout2d,
    Dropout3d,
    PairwiseDistance,
    PixelShuffle,
    PixelUnshuffle,
    ReflectionPad1d,
    ReflectionPad2d,
    ReplicationPad1d,
    ReplicationPad2d,
    Softmax2d,
    ZeroPad1d,
    ZeroPad2d,
    ZeroPad3d,
)
from .transformer import TransformerEncoder, TransformerEncoderLayer  # noqa: E402
from .upsampling import Upsample, UpsamplingBilinear2d, UpsamplingNearest2d  # noqa: E402

__all__ += ["CELU", "ELU", "GLU", "Hardshrink", "LeakyReLU", "LogSigmoid", "Mish", "PReLU", "SELU",
            "Softmin", "Softplus", "Softshrink", "Softsign", "Tanhshrink", "Threshold", "BCELoss",
            "BCEWithLogitsLoss", "HuberLoss", "KLDivLoss", "SmoothL1Loss", "GroupNorm", "RMSNorm",
            "Unflatten", "ParameterList", "ParameterDict", "MultiheadAttention",
            "TransformerEncoderLayer", "TransformerEncoder", "RNN", "LSTM", "GRU", "RNNCell",
            "LSTMCell", "GRUCell", "ConstantPad1d", "ConstantPad2d", "ConstantPad3d", "ZeroPad1d",
            "ZeroPad2d", "ZeroPad3d", "ReflectionPad1d", "ReflectionPad2d", "ReplicationPad1d",
            "ReplicationPad2d", "CircularPad1d", "CircularPad2d", "Dropout1d", "Dropout2d",
            "Dropout3d", "CosineSimilarity", "PairwiseDistance", "PixelShuffle", "PixelUnshuffle",
            "Softmax2d"]
__all__ += ["MarginRankingLoss", "HingeEmbeddingLoss", "SoftMarginLoss", "CosineEmbeddingLoss",
            "TripletMarginLoss", "PoissonNLLLoss", "GaussianNLLLoss", "MultiLabelSoftMarginLoss"]
__all__ += ["Upsample", "UpsamplingNearest2d", "UpsamplingBilinear2d"]
__all__ += ["InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d"]
