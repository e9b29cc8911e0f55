//! scalebench: does an operating system stay fast as load grows?
//!
//! Data flows one way: [`cli`] turns arguments into typed options, the
//! [`harness`] runs [`bench`]marks and records every sample into a
//! [`results`] file, [`analysis`] turns samples into verdicts, and
//! [`report`] writes them for people and programs. OS specifics live in
//! [`sys`] only. [`hosts`] reaches the machines (or namespaces) a run's
//! client and server run on; [`testbed`] makes network namespaces that
//! stand in for hosts. [`net`], [`analysis`], [`report`] and [`results`]
//! do not use the harness: the plain data they share with it (the timer
//! kind, profile samples, live counters) lives with them, and the stop
//! flag a ^C sets lives in [`stop`].

#![deny(missing_docs)]

pub mod analysis;
pub mod bench;
pub mod cli;
pub mod ctx;
pub mod harness;
pub mod hosts;
pub mod net;
pub mod report;
pub mod results;
pub mod run;
pub mod stop;
pub mod sys;
pub mod testbed;
pub mod tuning;
pub mod values;
pub mod workloads;
