//! The integration tests: one binary, a module per concern, all driving
//! the scalebench binary (`common::bin`) and sharing `common`. One binary
//! links the crate once instead of once per file. Run one concern with
//! `cargo test --test integration fs::`, one test by its full name.

// Tests print diagnostics for a person reading a failure; a closed pipe
// there is no concern (clippy.toml disallows these macros in the tool).
#![allow(clippy::disallowed_macros)]

mod common;

mod ansible;
mod bad_input;
mod bigfile;
mod browser;
mod classifier;
mod cli;
mod compare;
mod debian_kernels;
mod drift;
mod emulation;
mod fs;
mod guests;
mod heavy;
mod hosts;
mod kernels;
mod load;
mod mail;
mod monitor;
mod net;
mod not_built;
mod outputs;
mod pgbench;
mod profile;
mod reference;
mod report;
mod serve;
mod serve_abuse;
mod shortconn;
mod sigkill;
mod signals;
mod static_build;
mod store;
mod store_tls;
mod suites;
mod sysrecord;
mod testbed;
mod tuning;
mod workloads;
