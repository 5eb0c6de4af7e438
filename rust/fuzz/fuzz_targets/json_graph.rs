//! JSON object graphs (`ffi.FromJSONGraph` / `ffi.ToJSONGraph`): arbitrary
//! text is parsed as JSON and loaded as a graph, which either fails with an
//! error or gives a value; that value is saved, and the saved graph loads
//! back to a value that saves to the same graph text.

#![no_main]

use libfuzzer_sys::fuzz_target;
use tether_core::serialization::{json, json_graph};
use tether_core::structural::equal::structural_equal;
use tether_core::Any;

fuzz_target!(|data: &[u8]| {
    let Ok(graph) = json::parse(data) else { return };
    let Ok(value) = json_graph::from_json_graph(&graph) else { return };
    let none = Any::from(());
    let saved = json_graph::to_json_graph(&value, &none).expect("a loaded value saves");
    let text = json::stringify(&saved, 0).expect("a saved graph stringifies");
    let reloaded = json_graph::from_json_graph(&json::parse(&text).expect("saved graph text parses")).expect("a saved graph loads");
    let text2 = json::stringify(&json_graph::to_json_graph(&reloaded, &none).expect("a reloaded value saves"), 0).expect("stringifies");
    assert_eq!(text, text2, "save/load/save is not stable");
    if let Ok(eq) = structural_equal(&value, &reloaded, false, false) {
        assert!(eq, "a reloaded value is not structurally equal to the loaded one");
    }
});
