//! Why a report could not be written: typed, the writer's own cause kept.

/// An error of a report writer.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Writing to the output failed.
    #[error(transparent)]
    Io(#[from] std::io::Error),
    /// JSON could not be written.
    #[error(transparent)]
    Json(#[from] serde_json::Error),
    /// CSV could not be written.
    #[error(transparent)]
    Csv(#[from] csv::Error),
    /// The format does not show what was asked of it: what it shows
    /// none of, and the formats that do.
    #[error("this format shows no {what} ({formats} do)")]
    NotShown {
        /// What was asked (`comparison`).
        what: &'static str,
        /// The formats that show it.
        formats: &'static str,
    },
}

/// A result of a report writer.
pub type Result<T, E = Error> = std::result::Result<T, E>;
