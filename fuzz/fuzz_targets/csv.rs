//! The CSV sample reader, `report::csvin::parse`, on any UTF-8 text.
//! Besides not panicking: what it accepts is at least one sample, each n
//! and ns finite and not negative.
#![no_main]

use libfuzzer_sys::fuzz_target;
use std::path::Path;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(samples) = scalebench::report::csvin::parse(text, Path::new("fuzz.csv")) {
        assert!(!samples.is_empty());
        for s in &samples {
            assert!(s.n.is_finite() && s.n >= 0.0, "n {}", s.n);
            assert!(s.ns.is_finite() && s.ns >= 0.0, "ns {}", s.ns);
        }
    }
});
