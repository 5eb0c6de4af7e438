//! JSON text (`ffi.json.Parse` / `ffi.json.Stringify`): arbitrary bytes
//! parse or fail with an error, and what parsed prints to text that parses
//! back to a value printing the same text (compact and indented).

#![no_main]

use libfuzzer_sys::fuzz_target;
use tether_core::serialization::json;

fuzz_target!(|data: &[u8]| {
    let Ok(value) = json::parse(data) else { return };
    for indent in [0usize, 2] {
        let text = json::stringify(&value, indent).expect("a parsed value stringifies");
        let again = json::parse(&text).unwrap_or_else(|e| panic!("stringified text does not parse: {}: {:?}", e.message(), String::from_utf8_lossy(&text)));
        let text2 = json::stringify(&again, indent).expect("a reparsed value stringifies");
        assert_eq!(text, text2, "stringify is not stable across a parse round trip");
    }
});
