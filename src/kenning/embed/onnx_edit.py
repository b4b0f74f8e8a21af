"""One edit of an ONNX model's bytes: look rows up in a quantized table before dequantizing.

The int8 MiniLM export stores its word-embedding table as int8 rows and one float scale per
row, dequantized by ``Mul(Cast(table), scale)`` and then read by ``Gather(·, input_ids)``.
onnxruntime folds that dequantization at load, so a process holds the whole table in float32
(30,522 x 384 x 4 bytes = 47 MB) to read a few hundred rows per call. :func:`gather_first`
rewrites the graph to ``Mul(Cast(Gather(table, ids)), Gather(scale, ids))``: every element is
the same ``float(q) * scale`` in float32, computed for the rows read instead of for all of
them, so the model's outputs are bitwise the same and the table stays int8 (12 MB).

The edit works on protobuf's wire format directly (kenning does not depend on the ``onnx``
package); fields it does not touch are copied byte for byte. Pure: bytes in, bytes out.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Final

__all__ = ["gather_first"]

# Field numbers from onnx.proto.
_MODEL_GRAPH: Final = 7
_GRAPH_NODE: Final = 1
_GRAPH_INITIALIZER: Final = 5
_GRAPH_VALUE_INFO: Final = 13
_NODE_INPUT: Final = 1
_NODE_OUTPUT: Final = 2
_NODE_NAME: Final = 3
_NODE_OP_TYPE: Final = 4
_NODE_ATTRIBUTE: Final = 5
_NODE_DOMAIN: Final = 7
_TENSOR_DIMS: Final = 1
_TENSOR_DATA_TYPE: Final = 2
_TENSOR_NAME: Final = 8
_TENSOR_DATA_LOCATION: Final = 14
_EXTERNAL: Final = 1  # TensorProto.EXTERNAL
_VALUE_INFO_NAME: Final = 1
_ATTRIBUTE_NAME: Final = 1
_ATTRIBUTE_I: Final = 3
_ATTRIBUTE_TYPE: Final = 20
_ATTRIBUTE_INT: Final = 2  # AttributeProto.INT
_FLOAT: Final = 1  # TensorProto.FLOAT
_UINT8: Final = 2
_INT8: Final = 3

_VARINT: Final = 0
_I64: Final = 1
_LEN: Final = 2
_I32: Final = 5


def _varint(data: memoryview, i: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        byte = data[i]
        i += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if byte < 0x80:
            return value, i


def _fields(data: memoryview) -> Iterator[tuple[int, int, int | memoryview, memoryview]]:
    """Each field as (number, wire type, value, its raw bytes), as views (no copies)."""
    i = 0
    while i < len(data):
        start = i
        key, i = _varint(data, i)
        number, wire = key >> 3, key & 7
        value: int | memoryview
        if wire == _VARINT:
            value, i = _varint(data, i)
        elif wire == _LEN:
            size, i = _varint(data, i)
            value = data[i : i + size]
            i += size
        elif wire == _I64:
            value, i = data[i : i + 8], i + 8
        elif wire == _I32:
            value, i = data[i : i + 4], i + 4
        else:
            raise ValueError(f"unsupported protobuf wire type {wire}")
        yield number, wire, value, data[start:i]


def _encode_varint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def _len_field(number: int, payload: bytes | memoryview) -> bytes:
    return _encode_varint(number << 3 | _LEN) + _encode_varint(len(payload)) + payload


def _int_field(number: int, value: int) -> bytes:
    return _encode_varint(number << 3 | _VARINT) + _encode_varint(value)


@dataclass
class _Node:
    raw: memoryview
    op: str = ""
    domain: str = ""
    inputs: list[str] = field(default_factory=list)
    outputs: list[str] = field(default_factory=list)
    attributes: list[memoryview] = field(default_factory=list)  # each AttributeProto


def _node(raw: memoryview) -> _Node:
    node = _Node(raw)
    for number, _, value, _ in _fields(raw):
        if not isinstance(value, memoryview):
            continue
        if number == _NODE_INPUT:
            node.inputs.append(value.tobytes().decode())
        elif number == _NODE_OUTPUT:
            node.outputs.append(value.tobytes().decode())
        elif number == _NODE_OP_TYPE:
            node.op = value.tobytes().decode()
        elif number == _NODE_DOMAIN:
            node.domain = value.tobytes().decode()
        elif number == _NODE_ATTRIBUTE:
            node.attributes.append(value)
    return node


def _attribute_ints(node: _Node) -> dict[str, int]:
    out: dict[str, int] = {}
    for attribute in node.attributes:
        name, number_value = "", None
        for number, _, value, _ in _fields(attribute):
            if number == _ATTRIBUTE_NAME and isinstance(value, memoryview):
                name = value.tobytes().decode()
            elif number == _ATTRIBUTE_I and isinstance(value, int):
                number_value = value
        out[name] = -1 if number_value is None else number_value
    return out


def _tensor_shape(raw: memoryview) -> tuple[str, int, list[int], bool]:
    """An initializer's name, data type, dims, and whether its data lives in another file."""
    name, dtype, dims, external = "", 0, [], False
    for number, wire, value, _ in _fields(raw):
        if number == _TENSOR_NAME and isinstance(value, memoryview):
            name = value.tobytes().decode()
        elif number == _TENSOR_DATA_TYPE and isinstance(value, int):
            dtype = value
        elif number == _TENSOR_DIMS:
            if isinstance(value, int):
                dims.append(value)
            elif wire == _LEN and isinstance(value, memoryview):  # packed
                i = 0
                while i < len(value):
                    dim, i = _varint(value, i)
                    dims.append(dim)
        elif number == _TENSOR_DATA_LOCATION and value == _EXTERNAL:
            external = True
    return name, dtype, dims, external


def _make_node(
    op: str, inputs: list[str], outputs: list[str], name: str, *, attributes: list[memoryview]
) -> bytes:
    parts = [_len_field(_NODE_INPUT, x.encode()) for x in inputs]
    parts += [_len_field(_NODE_OUTPUT, x.encode()) for x in outputs]
    parts.append(_len_field(_NODE_NAME, name.encode()))
    parts.append(_len_field(_NODE_OP_TYPE, op.encode()))
    parts += [_len_field(_NODE_ATTRIBUTE, a) for a in attributes]
    return b"".join(parts)


def _to_float() -> memoryview:
    return memoryview(
        _len_field(_ATTRIBUTE_NAME, b"to")
        + _int_field(_ATTRIBUTE_I, _FLOAT)
        + _int_field(_ATTRIBUTE_TYPE, _ATTRIBUTE_INT)
    )


def gather_first(model: bytes) -> bytes:
    """Rewrite each ``Gather(Mul(Cast(q), scale), ids)`` of *model* (an ONNX ``ModelProto``'s
    bytes) to ``Mul(Cast(Gather(q, ids)), Gather(scale, ids))``.

    It applies where ``q`` is an int8 or uint8 initializer of shape ``[rows, width]``,
    ``scale`` a float initializer of shape ``[rows, 1]``, the Cast is to float, the Gather
    reads axis 0, and the dequantized table has no other reader. Returns *model* itself when
    nothing matches, so any other model loads as it is, and also when a tensor's data lives in
    an external file (the edited copy is meant to be loaded from another folder).

    Raises:
        ValueError: *model* is not protobuf wire format.
    """
    view = memoryview(model)
    graph_raw = next(
        (v for n, _, v, _ in _fields(view) if n == _MODEL_GRAPH and isinstance(v, memoryview)),
        None,
    )
    if graph_raw is None:
        return model
    nodes: list[_Node] = []
    tensors: dict[str, tuple[int, list[int]]] = {}
    for number, _, value, _ in _fields(graph_raw):
        if number == _GRAPH_NODE and isinstance(value, memoryview):
            nodes.append(_node(value))
        elif number == _GRAPH_INITIALIZER and isinstance(value, memoryview):
            name, dtype, dims, external = _tensor_shape(value)
            if external:
                return model
            tensors[name] = (dtype, dims)
    edit = _Edit()
    for g in range(len(nodes)):
        _rewrite(nodes, tensors, g, edit)
    if not edit.replaced:
        return model
    graph = _graph(graph_raw, edit)
    return b"".join(
        _len_field(_MODEL_GRAPH, graph) if number == _MODEL_GRAPH else raw
        for number, _, _, raw in _fields(view)
    )


@dataclass
class _Edit:
    replaced: dict[int, bytes] = field(default_factory=dict)  # node index -> its new nodes
    dropped: set[int] = field(default_factory=set)  # node indexes no longer in the graph
    gone: set[str] = field(default_factory=set)  # tensors no longer computed


def _rewrite(
    nodes: list[_Node], tensors: dict[str, tuple[int, list[int]]], g: int, edit: _Edit
) -> None:
    """Record the rewrite of ``nodes[g]`` in *edit* if it is a Gather of a dequantized table."""
    gather = nodes[g]
    if gather.op != "Gather" or gather.domain or len(gather.inputs) != 2:
        return
    if _attribute_ints(gather).get("axis", 0) != 0:
        return
    table, ids = gather.inputs
    m = _only_producer(nodes, table, "Mul", 2)
    if m is None:
        return
    cast_out, scale = nodes[m].inputs
    c = _only_producer(nodes, cast_out, "Cast", 1)
    if c is None or _attribute_ints(nodes[c]).get("to") != _FLOAT:
        return
    q = nodes[c].inputs[0]
    q_type, q_dims = tensors.get(q, (0, []))
    s_type, s_dims = tensors.get(scale, (0, []))
    if q_type not in (_INT8, _UINT8) or len(q_dims) != 2:
        return
    if s_type != _FLOAT or s_dims != [q_dims[0], 1]:
        return
    out = gather.outputs[0]
    rows_q, rows_scale, rows_f = f"{out}/rows_q", f"{out}/rows_scale", f"{out}/rows_f"
    edit.replaced[g] = b"".join(
        _len_field(_GRAPH_NODE, node)
        for node in (
            _make_node("Gather", [q, ids], [rows_q], f"{out}/gather_q",
                       attributes=gather.attributes),
            _make_node("Gather", [scale, ids], [rows_scale], f"{out}/gather_scale",
                       attributes=gather.attributes),
            _make_node("Cast", [rows_q], [rows_f], f"{out}/cast", attributes=[_to_float()]),
            _make_node("Mul", [rows_f, rows_scale], [out], f"{out}/dequantize", attributes=[]),
        )
    )  # fmt: skip
    edit.dropped.update((c, m))
    edit.gone.update((cast_out, table))


def _only_producer(nodes: list[_Node], tensor: str, op: str, inputs: int) -> int | None:
    """The index of the *op* node (default domain, *inputs* inputs) that computes *tensor*,
    if *tensor* has exactly one reader; else None."""
    found = None
    readers = 0
    for i, node in enumerate(nodes):
        if tensor in node.outputs:
            found = i
        readers += node.inputs.count(tensor)
    if found is None or readers != 1:
        return None
    node = nodes[found]
    return found if node.op == op and not node.domain and len(node.inputs) == inputs else None


def _graph(graph_raw: memoryview, edit: _Edit) -> bytes:
    """The graph's bytes with *edit* applied; every other field copied as it was."""
    parts: list[bytes | memoryview] = []
    index = 0
    for number, _, value, raw in _fields(graph_raw):
        if number == _GRAPH_NODE:
            if index in edit.replaced:
                parts.append(edit.replaced[index])
            elif index not in edit.dropped:
                parts.append(raw)
            index += 1
        elif (
            number == _GRAPH_VALUE_INFO
            and isinstance(value, memoryview)
            and _names(value) & edit.gone
        ):
            continue  # the shape of a tensor that is no longer computed
        else:
            parts.append(raw)
    return b"".join(parts)


def _names(value_info: memoryview) -> set[str]:
    return {
        v.tobytes().decode()
        for n, _, v, _ in _fields(value_info)
        if n == _VALUE_INFO_NAME and isinstance(v, memoryview)
    }
