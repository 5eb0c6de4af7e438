"""tether.serialization as tvm_ffi's: JSON graph strings written and read
by the same snippets in both runtimes (parity.py), then tying: objects read
back from a graph are ordinary tied objects, shared nodes one wrapper."""

import gc
import json

import tether
from tether.serialization import from_json_graph_str, to_json_graph_str
from parity import assert_same_records

SCENARIOS = r'''
import json
ser = tvm_ffi.serialization
to, back = ser.to_json_graph_str, ser.from_json_graph_str
values = {
    "int": 5, "neg": -3, "float": 2.5, "str": "hello", "long str": "x" * 40, "bytes": b"ab\x00",
    "none": None, "bool": True, "list": [1, "a", [2.5, None]], "map": {"k": [1, 2], "j": {"x": 1}},
    "shape": tvm_ffi.Shape((2, 3)), "List": tvm_ffi.List([1, 2]), "Dict": tvm_ffi.Dict({"a": [1]}),
}
for name, v in values.items():
    run(f"to {name}", lambda v=v: to(v))
    # (long strings come back as tether.String in tvm_ffi, as str in tether)
    run(f"round trip {name}", lambda v=v: (lambda r: [show(r), "str" if isinstance(r, str) else type(r).__name__,
                                                      tvm_ffi.structural_equal(r, v)])(back(to(v))))
shared = tvm_ffi.convert([1, 2])
run("shared nodes", lambda: to([shared, shared, [shared]]))
run("shared read back", lambda: (lambda r: [r[0].same_as(r[1]), r[2][0].same_as(r[0])])(back(to([shared, shared, [shared]]))))
run("metadata", lambda: json.loads(to([1], {"version": "1", "n": 2})))
run("metadata none", lambda: json.loads(to([1], None)))
run("bad json", lambda: back("{not json"))
run("bad graph", lambda: back('{"root_index": 5, "nodes": []}'))
run("unknown type", lambda: back('{"root_index": 0, "nodes": [{"type": "no.such.Type", "data": 1}]}'))
run("not serializable", lambda: to(lambda: 1))
run("module names", lambda: sorted(n for n in dir(ser) if not n.startswith("_") and callable(getattr(ser, n))
                                    and getattr(getattr(ser, n), "__module__", "").endswith("serialization")))
'''


def test_serialization_api_matches_tvm_ffi():
    assert_same_records(SCENARIOS)


def test_objects_read_back_are_tied():
    echo = tether.get_global_func("testing.echo")
    inner = tether.convert([1, 2])
    text = to_json_graph_str([inner, inner, {"k": inner}])
    out = from_json_graph_str(text)
    first = out[0]
    assert out[0] is first and out[1] is first and out[2]["k"] is first
    assert echo(out) is out
    # the wrapper survives a drop and re-fetch while the graph holds it
    ident = id(first)
    del first
    gc.collect()
    assert id(out[1]) == ident
    # a new read is a new graph: equal, not the same objects
    again = from_json_graph_str(text)
    assert again is not out and not again[0].same_as(out[0])
    assert tether.structural_equal(again, out)


def test_metadata_is_stored_and_must_be_a_dict_of_json_values():
    text = to_json_graph_str(tether.convert([1]), {"tool": "tether", "n": 3})
    assert json.loads(text)["metadata"] == {"tool": "tether", "n": 3}
    assert list(from_json_graph_str(text)) == [1]


def test_pickle_goes_through_the_same_format():
    import pickle

    value = tether.convert({"a": [1, "b"]})
    restored = pickle.loads(pickle.dumps(value))
    assert tether.structural_equal(restored, value)
    assert to_json_graph_str(restored) == to_json_graph_str(value)



DTYPES = [
    "bool", "int8", "int64", "uint1", "uint16", "float16", "float32", "bfloat16", "int32x4", "float32x8",
    "float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz", "float8_e8m0fnu",
    "float6_e2m3fn", "float6_e3m2fn", "float4_e2m1fn", "handle", "void",
]


def test_every_dtype_survives_a_json_graph_round_trip_equal_to_itself():
    """Each dtype comes back from a JSON graph (alone, and inside a
    container) as a dtype equal to the original, with the same fields and
    spelling — void included, which the core writes as the empty string."""
    for name in DTYPES:
        d = tether.dtype(name)
        for value, pick in ((d, lambda r: r), ([d, 1], lambda r: r[0])):
            back = pick(from_json_graph_str(to_json_graph_str(value)))
            assert isinstance(back, tether.dtype), name
            assert (back.type_code, back.bits, back.lanes) == (d.type_code, d.bits, d.lanes), name
            assert back == d and str(back) == str(d), (name, str(back))
