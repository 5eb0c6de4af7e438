//! JSON parsing and printing, JSON object graphs (Dict included), the
//! printable form and deep copies, checked against the outputs and
//! messages TVM-FFI gives for the same inputs.

use tether_core::serialization::{deep_copy::deep_copy, json, json_graph, repr::repr_print};
use tether_core::{Any, Array, Dict, List, Map, ObjectRef, Shape};

fn s(v: &str) -> Any {
    Any::string(v).unwrap()
}

fn arr(items: Vec<Any>) -> Any {
    Any::from_object(Array::new(items).unwrap().into_object())
}

fn dict(pairs: Vec<(Any, Any)>) -> Any {
    Any::from_object(Dict::new(pairs).unwrap().into_object())
}

fn stringify(v: &Any, indent: usize) -> String {
    String::from_utf8(json::stringify(v, indent).unwrap()).unwrap()
}

fn parse_error(text: &str) -> String {
    let e = json::parse(text.as_bytes()).unwrap_err();
    assert_eq!(e.kind(), "ValueError");
    e.message().to_string()
}

#[test]
fn json_parse_values_and_errors() {
    let v = json::parse(br#"{"a": [1, 2.5, true, null, "x"]}"#).unwrap();
    assert_eq!(repr_print(&v).unwrap(), r#"{"a": (1, 2.5, True, None, "x")}"#);
    assert_eq!(json::parse(br#""\u00e9\n""#).unwrap().get::<String>().unwrap(), "é\n");
    assert_eq!(json::parse(b"-0").unwrap().get::<i64>().unwrap(), 0);
    assert_eq!(json::parse(b"1.0").unwrap().get::<f64>().unwrap(), 1.0);
    assert_eq!(parse_error("[1, 2"), "Expecting ',' delimiter: line 1 column 6 (char 5)");
    assert_eq!(parse_error(r#"{"a" 1}"#), "Expecting ':' delimiter: line 1 column 6 (char 5)");
    assert_eq!(parse_error("tru"), "Expecting value: line 1 column 1 (char 0)");
    assert_eq!(parse_error("[1e400]"), "Expecting value: line 1 column 2 (char 1)");
    assert_eq!(parse_error("  "), "Expecting value: line 1 column 3 (char 2)");
    assert_eq!(parse_error(r#"{"a":1}x"#), "Extra data: line 1 column 8 (char 7)");
}

#[test]
fn json_stringify_compact_indented_and_errors() {
    let v = arr(vec![Any::from(1i64), Any::from(2.5), Any::from(true), Any::none(), s("x\né")]);
    assert_eq!(stringify(&v, 0), "[1,2.5,true,null,\"x\\né\"]");
    assert_eq!(stringify(&v, 2), "[\n  1,\n  2.5,\n  true,\n  null,\n  \"x\\né\"\n]");
    let m = Any::from_object(Map::new(vec![(s("b"), arr(vec![Any::from(1i64)])), (s("a"), Any::from(2i64))]).unwrap().into_object());
    assert_eq!(stringify(&m, 0), r#"{"b":[1],"a":2}"#);
    assert_eq!(stringify(&m, 2), "{\n  \"b\": [\n    1\n  ],\n  \"a\": 2\n}");
    assert_eq!(stringify(&Any::from(1.0), 0), "1.0");
    assert_eq!(stringify(&Any::from(1e300), 0), "1.0000000000000001e+300");
    assert_eq!(stringify(&Any::from(f64::NAN), 0), "NaN");
    let bad_key = Any::from_object(Map::new(vec![(Any::from(1i64), Any::from(2i64))]).unwrap().into_object());
    assert_eq!(json::stringify(&bad_key, 0).unwrap_err().message(), "Expect key to be string, got `int`");
    let shape = Any::from_object(Shape::new(&[1]).unwrap().into_object());
    assert_eq!(json::stringify(&shape, 0).unwrap_err().message(), "Unsupported type: `ffi.Shape`");
}

#[test]
fn json_graph_round_trips_with_sharing_and_dicts() {
    let inner = arr(vec![Any::from(1i64), s("a")]);
    let d = dict(vec![(s("k"), Any::bytes(b"xy").unwrap())]);
    let v = arr(vec![Any::from(1i64), s("a"), inner, d]);
    let graph = json_graph::to_json_graph(&v, &Any::none()).unwrap();
    // The text TVM-FFI writes for the same value.
    assert_eq!(
        stringify(&graph, 0),
        r#"{"root_index":6,"nodes":[{"type":"int","data":1},{"type":"ffi.String","data":"a"},{"type":"ffi.Array","data":[0,1]},{"type":"ffi.String","data":"k"},{"type":"ffi.Bytes","data":"eHk="},{"type":"ffi.Dict","data":[3,4]},{"type":"ffi.Array","data":[0,1,2,5]}]}"#
    );
    let back = json_graph::from_json_graph(&graph).unwrap();
    assert!(tether_core::structural::equal::structural_equal(&back, &v, false, false).unwrap());
    let items: Vec<Any> = Array::from_object(back.get::<ObjectRef>().unwrap()).unwrap().iter().cloned().collect();
    assert_eq!(items[3].type_key(), "ffi.Dict", "a Dict comes back as a Dict");
    // A Dict containing itself cannot be written.
    let cyc = Dict::new(vec![]).unwrap();
    cyc.set(s("self"), Any::from_object(cyc.clone().into_object())).unwrap();
    let e = json_graph::to_json_graph(&Any::from_object(cyc.clone().into_object()), &Any::none()).unwrap_err();
    assert_eq!(e.message(), "Cycle detected during serialization: a Dict contains itself");
    cyc.clear();
}

#[test]
fn json_graph_reader_errors() {
    let read = |t: &str| json_graph::from_json_graph(&json::parse(t.as_bytes()).unwrap()).unwrap_err().message().to_string();
    assert_eq!(read(r#"{"root_index": 5, "nodes": []}"#), "Invalid JSON Object Graph: invalid node index 5");
    assert_eq!(read(r#"{"nodes": []}"#), "Invalid JSON Object Graph, expected `root_index` integer field");
    assert_eq!(read("[]"), "Invalid JSON Object Graph, expected an object");
    assert_eq!(
        read(r#"{"root_index": 0, "nodes": [{"type": "ffi.Dict", "data": [0]}]}"#),
        "Invalid JSON Object Graph: node 0 (`ffi.Dict`): Map/Dict data must contain an even number of [key, value] entries, got 1"
    );
}

#[test]
fn repr_of_every_builtin_kind() {
    let v = arr(vec![
        Any::from(1i64),
        Any::from(2.5),
        s("a\n"),
        Any::bytes(b"b").unwrap(),
        Any::none(),
        Any::from(true),
        dict(vec![(s("x"), arr(vec![Any::from(1i64)]))]),
        Any::from_object(List::new(vec![]).unwrap().into_object()),
        Any::from_object(Shape::new(&[2, 3]).unwrap().into_object()),
    ]);
    assert_eq!(repr_print(&v).unwrap(), r#"(1, 2.5, "a\n", b"b", None, True, {"x": (1,)}, [], Shape(2, 3))"#);
    // A List met again while it is printed prints as `...`.
    let l = List::new(vec![Any::from(1i64)]).unwrap();
    l.push(Any::from_object(l.clone().into_object())).unwrap();
    assert_eq!(repr_print(&Any::from_object(l.clone().into_object())).unwrap(), "[1, ...]");
    l.clear();
}

#[test]
fn deep_copy_copies_containers_and_keeps_sharing() {
    let shared = Any::from_object(List::new(vec![Any::from(1i64)]).unwrap().into_object());
    let d = dict(vec![(s("a"), shared.clone()), (s("b"), shared.clone()), (s("c"), arr(vec![Any::from(2i64)]))]);
    let c = deep_copy(&d).unwrap();
    assert_eq!(c.type_key(), "ffi.Dict");
    assert!(!c.same_value(&d));
    let cd = Dict::from_object(c.get::<ObjectRef>().unwrap()).unwrap();
    let (a, b) = (cd.get(&s("a")).unwrap(), cd.get(&s("b")).unwrap());
    assert!(!a.same_value(&shared), "the List was copied");
    assert!(a.same_value(&b), "sharing is kept in the copy");
    assert!(tether_core::structural::equal::structural_equal(&c, &d, false, false).unwrap());
    // A List that contains itself copies to a List that contains itself.
    let l = List::new(vec![]).unwrap();
    l.push(Any::from_object(l.clone().into_object())).unwrap();
    let lc = deep_copy(&Any::from_object(l.clone().into_object())).unwrap();
    let lc = List::from_object(lc.get::<ObjectRef>().unwrap()).unwrap();
    assert!(lc.get(0).unwrap().get::<ObjectRef>().unwrap().same_as(&lc.clone().into_object()));
    l.clear();
    lc.clear();
}

#[test]
fn stringify_with_an_absurd_indent_is_a_memory_error_not_an_abort() {
    use tether_core::serialization::json;
    let nested = tether_core::Any::from_object(
        tether_core::Array::new(vec![tether_core::Any::from_object(
            tether_core::Array::new(vec![tether_core::Any::from(1i64)]).unwrap().into_object(),
        )])
        .unwrap()
        .into_object(),
    );
    for indent in [usize::MAX, usize::MAX / 2, 1usize << 50] {
        let err = json::stringify(&nested, indent).expect_err("refused");
        assert!(format!("{err:?}").contains("would not fit in memory"), "{err:?}");
    }
    let text = json::stringify(&nested, 2).expect("a modest indent works");
    assert_eq!(String::from_utf8(text).unwrap(), "[\n  [\n    1\n  ]\n]");
}

#[test]
fn every_dlpack_data_type_survives_a_json_graph_round_trip() {
    use tether_core::abi::DLDataType;
    use tether_core::serialization::json_graph::{from_json_graph, to_json_graph};
    // bool (DLPack's own code and the old 1-bit uint), ints, floats, handle,
    // bfloat, every float8/6/4 variant, and vector lanes.
    let mut types = vec![(6u8, 8u8, 1u16), (1, 1, 1), (0, 32, 1), (1, 64, 1), (2, 16, 1), (2, 64, 4), (3, 64, 1), (4, 16, 1)];
    types.extend((7u8..=17).map(|code| (code, if code >= 17 { 4 } else if code >= 15 { 6 } else { 8 }, 1)));
    for (code, bits, lanes) in types {
        let d = DLDataType { code, bits, lanes };
        let graph = to_json_graph(&Any::data_type(d), &Any::none()).expect("written");
        let back = from_json_graph(&graph).expect("read back");
        let got = back.get::<DLDataType>().expect("a data type");
        assert_eq!((got.code, got.bits, got.lanes), (code, bits, lanes), "code {code} bits {bits} lanes {lanes}");
    }
}

#[test]
fn json_integers_beyond_64_bits_stay_integers() {
    use tether_core::serialization::json;
    let big = "123456789012345678901234567890";
    let v = json::parse(format!("[{big}, -{big}, 9223372036854775807, 1.5]").as_bytes()).expect("parsed");
    let text = String::from_utf8(json::stringify(&v, 0).unwrap()).unwrap();
    assert_eq!(text, format!("[{big},-{big},9223372036854775807,1.5]"));
    let long = "9".repeat(4301);
    let err = json::parse(long.as_bytes()).expect_err("refused");
    assert!(format!("{err:?}").contains("exceeds the limit of 4300 digits"), "{err:?}");
    json::parse("9".repeat(4300).as_bytes()).expect("at the limit it parses");
}

/// With addresses shown (`TVM_FFI_REPR_WITH_ADDR=1`), each container is
/// followed by its own address, a value shared twice prints the same
/// address both times, and a back-reference names the object it closes on.
#[test]
fn repr_with_addresses_names_each_container_and_back_reference() {
    use tether_core::serialization::repr::repr_print_showing_addresses;
    let addr = |v: &Any| format!("0x{:x}", v.object_ptr().unwrap() as usize);
    let inner = arr(vec![Any::from(1i64)]);
    let outer = Any::from_object(List::new(vec![inner.clone(), inner.clone()]).unwrap().into_object());
    let (i, o) = (addr(&inner), addr(&outer));
    assert_eq!(repr_print_showing_addresses(&outer, true).unwrap(), format!("[(1,)@{i}, (1,)@{i}]@{o}"));
    assert_eq!(repr_print_showing_addresses(&outer, false).unwrap(), "[(1,), (1,)]");
    let d = dict(vec![(s("a"), Any::from(1i64))]);
    assert_eq!(repr_print_showing_addresses(&d, true).unwrap(), format!("{{\"a\": 1}}@{}", addr(&d)));
    // Leaves carry no address.
    let shape = Any::from_object(Shape::new(&[2]).unwrap().into_object());
    assert_eq!(repr_print_showing_addresses(&shape, true).unwrap(), "Shape(2)");
    let l = List::new(vec![Any::from(1i64)]).unwrap();
    l.push(Any::from_object(l.clone().into_object())).unwrap();
    let lv = Any::from_object(l.clone().into_object());
    let la = addr(&lv);
    assert_eq!(repr_print_showing_addresses(&lv, true).unwrap(), format!("[1, ...@{la}]@{la}"));
    l.clear();
}
