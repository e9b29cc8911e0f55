//! scalebench: does an operating system stay fast as load grows?
//!
//! Data flows one way: [`cli`] turns arguments into typed options, [`run`]
//! makes a plan of them and executes it with the [`harness`]'s tools —
//! [`bench`]marks and [`workloads`], each given a [`ctx::Ctx`] — recording
//! every sample into a [`results`] file; [`analysis`] turns samples into
//! verdicts and [`report`] writes them for people and programs. OS
//! specifics live in [`sys`] only. [`hosts`] reaches the machines (or
//! namespaces) a run's client and server run on; [`testbed`] makes network
//! namespaces that stand in for hosts; [`tuning`] applies tuning profiles.
//! Each module imports only the floors below it: `docs/architecture.md`.

#![deny(missing_docs)]

pub mod analysis;
pub mod bench;
pub mod cli;
pub mod ctx;
pub mod dashboard;
pub mod harness;
pub mod hosts;
pub mod net;
pub mod report;
pub mod results;
pub mod run;
pub mod stop;
pub mod store;
pub mod sys;
pub mod systems;
pub mod testbed;
pub mod tuning;
pub mod values;
pub mod workloads;
