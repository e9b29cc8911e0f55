//! The fork helper program; see `src/bench/forker.rs`. Built by `build.rs`
//! with plain `rustc`, once dynamically and once statically linked.

#[path = "../src/harness/rawclock.rs"]
#[allow(dead_code)]
mod rawclock;

#[path = "../src/bench/forker.rs"]
mod forker;

fn main() {
    forker::main()
}
