//! Networking: event backends ([`backend`]), HTTP parsing ([`http`]), the
//! event-driven server ([`server`]), a blocking benchmark client
//! ([`client`]), the load generator ([`load`]; spread over several
//! processes by `harness::spread`), the SMTP sink and sender ([`smtp`]),
//! latency histograms ([`hist`]), failed calls counted across a server's
//! processes ([`errcount`]) and raw socket helpers ([`sock`]).

pub mod backend;
pub mod client;
pub mod engine;
pub mod errcount;
pub mod files;
pub mod forking;
pub mod hist;
pub mod http;
pub mod load;
pub mod nginx;
pub mod output;
pub mod server;
pub mod smtp;
pub mod sock;
#[cfg(target_os = "linux")]
pub mod uring;
pub mod workers;

pub use backend::Backend;
