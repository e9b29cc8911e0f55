//! The result file reader, `results::parse` (what `results::load` calls on
//! a file's text), on any UTF-8 text. Besides not panicking: a result it
//! accepts, written again as `write_atomic` writes it, is read back.
#![no_main]

use libfuzzer_sys::fuzz_target;
use std::path::Path;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let path = Path::new("fuzz.json");
    if let Ok(result) = scalebench::results::parse(text, path) {
        let again = serde_json::to_string(&result).expect("a result serialises");
        if let Err(e) = scalebench::results::parse(&again, path) {
            panic!("{e}: {again}");
        }
    }
});
