//! A whole `scalebench run`: options, the plan made of them (benchmark
//! series, workloads, tuning profiles, hosts), its execution with the
//! harness's tools, the result files' whole life and the report at the
//! end.

pub mod series;
pub mod session;
pub mod why;
