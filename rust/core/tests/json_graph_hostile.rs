//! Malformed JSON graphs are refused with the error kind and a message
//! naming the node and the field at fault: wrong node shapes and kinds,
//! dangling, negative and 64-bit-overflowing indices, None and wrongly
//! typed data, self-references and longer cycles; integers at the 64-bit
//! edges load as integers (a BigInt beyond them), never as floats; a field
//! typed with a class takes only its instances; a chain 10^6 nodes deep
//! loads without native recursion.

use tether_core::abi::type_index as ti;
use tether_core::serialization::{json, json_graph};
use tether_core::Any;

fn load(text: &str) -> Result<Any, tether_core::Error> {
    json_graph::from_json_graph(&json::parse(text.as_bytes()).expect("test graphs are valid JSON"))
}

fn refused(text: &str) -> (String, String) {
    let e = load(text).expect_err("the graph is malformed");
    (e.kind().to_string(), e.message().to_string())
}

fn graph(root: i64, nodes: &str) -> String {
    format!(r#"{{"root_index": {root}, "nodes": [{nodes}]}}"#)
}

fn value_error(msg: &str) -> (String, String) {
    ("ValueError".into(), format!("Invalid JSON Object Graph: {msg}"))
}

#[test]
fn node_shapes_and_kinds() {
    assert_eq!(refused(&graph(0, "5")), value_error("node 0 must be an object with `type` and `data`, got an integer"));
    assert_eq!(refused(&graph(0, r#"{"data": 1}"#)), value_error("node 0: field `type` is missing"));
    assert_eq!(refused(&graph(0, r#"{"type": 7, "data": 1}"#)), value_error("node 0: field `type` must be a string, got an integer"));
    assert_eq!(
        refused(&graph(0, r#"{"type": "no.such.Type", "data": 1}"#)),
        ("RuntimeError".into(), "Check failed: (it != type_key2index_.end()) is false: Cannot find type `no.such.Type`".into())
    );
    assert_eq!(refused(&graph(0, r#"{"type": "int"}"#)), value_error("node 0 (`int`): field `data` is missing"));
    assert_eq!(refused(&graph(0, r#"{"type": "int", "data": null}"#)), value_error("node 0 (`int`): field `data` is None"));
    assert_eq!(refused(&graph(0, r#"{"type": "int", "data": 1.5}"#)), value_error("node 0 (`int`): field `data` must be an integer, got a float"));
    assert_eq!(refused(&graph(0, r#"{"type": "bool", "data": 1}"#)), value_error("node 0 (`bool`): field `data` must be a bool, got an integer"));
    assert_eq!(refused(&graph(0, r#"{"type": "ffi.String", "data": [1]}"#)), value_error("node 0 (`ffi.String`): field `data` must be a string, got an array"));
    assert_eq!(
        refused(&graph(0, r#"{"type": "ffi.Array", "data": {"a": 1}}"#)),
        value_error("node 0 (`ffi.Array`): field `data` must be an array of integers, got an object")
    );
    assert_eq!(
        refused(&graph(0, r#"{"type": "Device", "data": [1, 4294967296]}"#)),
        value_error("node 0 (`Device`): field `data[1]` 4294967296 is out of the 32-bit range")
    );
}

#[test]
fn a_string_node_holds_utf8_text() {
    // JSON text is bytes here; a str node's data must decode, as the saver
    // writes it back as text (a bytes node carries base64).
    let mut bad = br#"{"root_index": 0, "nodes": [{"type": "ffi.String", "data": "#.to_vec();
    bad.extend_from_slice(b"\"\xff\xfe\"}]}");
    let e = json_graph::from_json_graph(&json::parse(&bad).expect("the parser takes the bytes")).expect_err("not UTF-8");
    assert_eq!((e.kind(), e.message()), ("ValueError", "Invalid JSON Object Graph: node 0 (`ffi.String`): field `data` must be UTF-8 text"));
    assert_eq!(load(&graph(0, r#"{"type": "ffi.String", "data": "ok"}"#)).unwrap().get::<String>().unwrap(), "ok");
}

#[test]
fn dangling_negative_and_oversized_indices() {
    let n = r#"{"type": "int", "data": 1}"#;
    assert_eq!(
        refused(&graph(1, &format!(r#"{n}, {{"type": "ffi.Array", "data": [0, 2]}}"#))),
        value_error("node 1 (`ffi.Array`): field `data[1]` refers to node 2, which does not exist (the graph has 2 nodes)")
    );
    assert_eq!(
        refused(&graph(1, &format!(r#"{n}, {{"type": "ffi.List", "data": [-1]}}"#))),
        value_error("node 1 (`ffi.List`): field `data[0]` refers to node -1, which does not exist (the graph has 2 nodes)")
    );
    for big in ["2147483648", "4611686018427387904", "9223372036854775807"] {
        assert_eq!(
            refused(&graph(1, &format!(r#"{n}, {{"type": "ffi.Map", "data": [0, {big}]}}"#))),
            value_error(&format!("node 1 (`ffi.Map`): field `data[1]` refers to node {big}, which does not exist (the graph has 2 nodes)"))
        );
    }
    // Beyond 64 bits an index is not an integer the graph can use.
    assert_eq!(
        refused(&graph(1, &format!(r#"{n}, {{"type": "ffi.Array", "data": [18446744073709551615]}}"#))),
        value_error("node 1 (`ffi.Array`): field `data[0]` must be an integer, got an integer beyond 64 bits")
    );
    assert_eq!(
        refused(&graph(1, &format!(r#"{n}, {{"type": "ffi.Array", "data": [null]}}"#))),
        value_error("node 1 (`ffi.Array`): field `data[0]` must be an integer, got None")
    );
    assert_eq!(refused(&graph(3, n)), value_error("invalid node index 3"));
    assert_eq!(
        refused(r#"{"root_index": 18446744073709551615, "nodes": []}"#),
        ("ValueError".into(), "Invalid JSON Object Graph, expected `root_index` integer field".into())
    );
}

#[test]
fn self_references_and_cycles() {
    assert_eq!(
        refused(&graph(0, r#"{"type": "ffi.List", "data": [0]}"#)),
        value_error("node 0 (`ffi.List`): field `data[0]` refers to the node itself")
    );
    // 0 -> 1 -> 2 -> 0
    let ring = r#"{"type": "ffi.Array", "data": [1]}, {"type": "ffi.Array", "data": [2]}, {"type": "ffi.Array", "data": [0]}"#;
    assert_eq!(
        refused(&graph(0, ring)),
        value_error("node 2 (`ffi.Array`): field `data[0]` refers to node 0, which contains this node (a cycle)")
    );
    // A node shared by two parents is not a cycle.
    let shared = load(&graph(2, r#"{"type": "int", "data": 4}, {"type": "ffi.Array", "data": [0, 0]}, {"type": "ffi.Array", "data": [1, 1, 0]}"#)).unwrap();
    assert_eq!(json::stringify(&shared, 0).unwrap(), b"[[4,4],[4,4],4]");
}

#[test]
fn integers_at_the_64_bit_edges_stay_integers() {
    for text in ["2147483648", "4611686018427387904", "9223372036854775807", "-9223372036854775808"] {
        let v = load(&graph(0, &format!(r#"{{"type": "int", "data": {text}}}"#))).unwrap();
        assert_eq!(v.type_index(), ti::kTVMFFIInt);
        assert_eq!(v.get::<i64>().unwrap().to_string(), text);
    }
    for text in ["18446744073709551615", "-9223372036854775809", "340282366920938463463374607431768211456"] {
        let v = load(&graph(0, &format!(r#"{{"type": "int", "data": {text}}}"#))).unwrap();
        assert_eq!(v.type_index(), ti::kTVMFFIBigInt, "{text} is a BigInt, not a float");
        assert_eq!(json::stringify(&v, 0).unwrap(), text.as_bytes());
    }
    // A float node keeps a float; a BigInt cannot be one without losing digits.
    assert_eq!(
        refused(&graph(0, r#"{"type": "float", "data": 18446744073709551615}"#)),
        value_error("node 0 (`float`): field `data` must be a number, got an integer beyond 64 bits")
    );
}

#[test]
fn a_million_deep_chain_loads_and_a_cycle_at_its_bottom_is_found() {
    const DEPTH: usize = 1_000_000;
    let mut nodes = String::from(r#"{"type": "int", "data": 1}"#);
    for i in 0..DEPTH {
        nodes.push_str(&format!(r#", {{"type": "ffi.Array", "data": [{i}]}}"#));
    }
    let v = load(&graph(DEPTH as i64, &nodes)).unwrap();
    let text = json::stringify(&v, 0).unwrap();
    assert_eq!(text.len(), 2 * DEPTH + 1);
    // The innermost node now points at the root: a cycle 10^6 long.
    let cyclic = nodes.replacen(r#"{"type": "ffi.Array", "data": [0]}"#, &format!(r#"{{"type": "ffi.Array", "data": [{DEPTH}]}}"#), 1);
    assert_eq!(
        refused(&graph(DEPTH as i64, &cyclic)),
        value_error(&format!("node 1 (`ffi.Array`): field `data[0]` refers to node {DEPTH}, which contains this node (a cycle)"))
    );
}

#[test]
fn natively_typed_object_fields_take_only_instances_of_their_class() {
    use tether_core::dataclass::{self, FieldKind, FieldSpec};
    let spec = |name: &str, kind| FieldSpec { name: name.into(), kind, flags: 0, frozen: false };
    let base = dataclass::register_type("test.json_graph_hostile.Base", ti::kTVMFFIObject, vec![spec("a", FieldKind::Int)]).unwrap();
    dataclass::register_type("test.json_graph_hostile.Sub", base, vec![]).unwrap();
    dataclass::register_type("test.json_graph_hostile.Other", ti::kTVMFFIObject, vec![spec("a", FieldKind::Int)]).unwrap();
    dataclass::register_type("test.json_graph_hostile.Holder", ti::kTVMFFIObject, vec![spec("item", FieldKind::Object(base))]).unwrap();
    let holder = |item: &str| {
        graph(1, &format!(r#"{{"type": "{item}", "data": {{"a": 1}}}}, {{"type": "test.json_graph_hostile.Holder", "data": {{"item": 0}}}}"#))
    };
    for ok in ["test.json_graph_hostile.Base", "test.json_graph_hostile.Sub"] {
        let v = load(&holder(ok)).unwrap();
        assert_eq!(v.type_key(), "test.json_graph_hostile.Holder");
    }
    let (kind, message) = refused(&holder("test.json_graph_hostile.Other"));
    assert_eq!(kind, "TypeError");
    assert_eq!(
        message,
        "Invalid JSON Object Graph: node 1 (`test.json_graph_hostile.Holder`): field `data.item` must be a `test.json_graph_hostile.Base`, got `test.json_graph_hostile.Other`"
    );
    let with_int = graph(1, r#"{"type": "int", "data": 3}, {"type": "test.json_graph_hostile.Holder", "data": {"item": 0}}"#);
    assert_eq!(
        refused(&with_int),
        (
            "TypeError".into(),
            "Invalid JSON Object Graph: node 1 (`test.json_graph_hostile.Holder`): field `data.item` must be a `test.json_graph_hostile.Base`, got an integer".into()
        )
    );
    // None is the field's own setter's to judge (an Object slot takes it).
    let with_none = graph(1, r#"{"type": "None"}, {"type": "test.json_graph_hostile.Holder", "data": {"item": 0}}"#);
    assert!(load(&with_none).is_ok());
}
