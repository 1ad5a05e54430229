"""all-mpnet-base-v2 written out as an ONNX graph, so that onnxruntime runs it (docs/models.md).

No exporter is involved (an export needs PyTorch): the graph is built node by node from the
verified safetensors weights with the `onnx` package, once, when the model is assembled. It is
the network of `MPNetEncoder.reference_hidden` (the NumPy reference) in float32, with no
quantisation (int8 weights moved the vectors to a cosine of 0.90, measured). The relative
position bias and the padding mask are computed outside the graph, in NumPy, and fed as one
input, as are the positions:

    inputs  input_ids [batch, tokens] int64, positions [batch, tokens] int64,
            bias [batch, heads, tokens, tokens] float32 (relative position bias + mask)
    output  hidden [batch, tokens, 768] float32 (the last hidden states)
"""

from __future__ import annotations

from pathlib import Path

OPSET = 20           # LayerNormalization (17) and Gelu (20) as single operators
IR_VERSION = 10


class _Graph:
    """Nodes and weights of a graph under construction, each node named after its position."""

    def __init__(self, onnx, np):
        self.onnx, self.np = onnx, np
        self.nodes, self.weights = [], []

    def weight(self, name: str, array) -> str:
        self.weights.append(self.onnx.numpy_helper.from_array(self.np.ascontiguousarray(array), name))
        return name

    def op(self, kind: str, inputs: list[str], outputs: int = 1, **attributes) -> str | list[str]:
        n = len(self.nodes)
        names = [f"{kind.lower()}_{n}" + (f"_{i}" if outputs > 1 else "") for i in range(outputs)]
        self.nodes.append(self.onnx.helper.make_node(kind, inputs, names, name=f"n{n}", **attributes))
        return names if outputs > 1 else names[0]


def build(weights: dict, path: Path, *, layers: int, heads: int, dim: int, eps: float) -> None:
    """Write the float32 graph of MPNet with these `weights` (safetensors names) to `path`."""
    import numpy as np
    import onnx

    g = _Graph(onnx, np)
    head = dim // heads

    def norm(x: str, prefix: str) -> str:
        return g.op("LayerNormalization", [x, g.weight(prefix + ".w", weights[prefix + ".weight"]),
                                           g.weight(prefix + ".b", weights[prefix + ".bias"])], axis=-1, epsilon=eps)

    def linear(x: str, name: str, matrix, bias) -> str:   # x @ matrix + bias; matrix [in, out]
        return g.op("Add", [g.op("MatMul", [x, g.weight(name + ".W", matrix)]), g.weight(name + ".B", bias)])

    def dense(x: str, prefix: str) -> str:
        return linear(x, prefix, weights[prefix + ".weight"].T, weights[prefix + ".bias"])

    x = g.op("Add", [g.op("Gather", [g.weight("word", weights["embeddings.word_embeddings.weight"]), "input_ids"]),
                     g.op("Gather", [g.weight("position", weights["embeddings.position_embeddings.weight"]),
                                     "positions"])])
    x = norm(x, "embeddings.LayerNorm")
    split_heads = g.weight("split_heads", np.array([0, 0, 3, heads, head], np.int64))   # 0: keep that dimension
    join_heads = g.weight("join_heads", np.array([0, 0, dim], np.int64))
    first_axis = g.weight("first_axis", np.array([0], np.int64))
    scale = g.weight("scale", np.array(1.0 / head ** 0.5, np.float32))
    for n in range(layers):
        p = f"encoder.layer.{n}."
        qkv = linear(x, p + "qkv",
                     np.concatenate([weights[p + f"attention.attn.{c}.weight"].T for c in "qkv"], axis=1),
                     np.concatenate([weights[p + f"attention.attn.{c}.bias"] for c in "qkv"]))
        qkv = g.op("Transpose", [g.op("Reshape", [qkv, split_heads])], perm=[2, 0, 3, 1, 4])  # [3, b, h, t, d]
        q, k, v = (g.op("Squeeze", [part, first_axis]) for part in g.op("Split", [qkv], outputs=3, axis=0,
                                                                       num_outputs=3))
        scores = g.op("MatMul", [q, g.op("Transpose", [k], perm=[0, 1, 3, 2])])
        attention = g.op("Softmax", [g.op("Add", [g.op("Mul", [scores, scale]), "bias"])], axis=-1)
        context = g.op("Reshape", [g.op("Transpose", [g.op("MatMul", [attention, v])], perm=[0, 2, 1, 3]),
                                   join_heads])
        x = norm(g.op("Add", [dense(context, p + "attention.attn.o"), x]), p + "attention.LayerNorm")
        up = g.op("Gelu", [dense(x, p + "intermediate.dense")])
        x = norm(g.op("Add", [dense(up, p + "output.dense"), x]), p + "output.LayerNorm")
    g.nodes.append(onnx.helper.make_node("Identity", [x], ["hidden"], name="output"))

    tensor = onnx.helper.make_tensor_value_info
    graph = onnx.helper.make_graph(
        g.nodes, "all-mpnet-base-v2",
        [tensor("input_ids", onnx.TensorProto.INT64, ["batch", "tokens"]),
         tensor("positions", onnx.TensorProto.INT64, ["batch", "tokens"]),
         tensor("bias", onnx.TensorProto.FLOAT, ["batch", heads, "tokens", "tokens"])],
        [tensor("hidden", onnx.TensorProto.FLOAT, ["batch", "tokens", dim])], g.weights)
    model = onnx.helper.make_model(graph, opset_imports=[onnx.helper.make_opsetid("", OPSET)])
    model.ir_version = IR_VERSION
    onnx.checker.check_model(model, full_check=False)
    onnx.save(model, str(path))
