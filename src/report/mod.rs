//! Reporters: how results are shown. Every reporter renders from the one results model
//! ([`crate::results`]); none of them re-runs or re-judges anything.
//!
//! The live terminal reporter ([`live`]) follows run events; the file formats (JSON, HTML,
//! Markdown, JUnit) render a finished run's results and are listed in [`FILE_FORMATS`]: a new
//! format is its module, one entry there, and the flag that names its file.

pub mod baseline;
pub mod html;
pub mod json;
pub mod junit;
pub mod live;
pub mod markdown;
pub mod terminal;

use crate::results::Results;

/// What a file format may be told besides the results.
#[derive(Debug, Clone, Default)]
pub struct RenderOptions {
    /// Upper bound on the Markdown summary, in characters.
    pub markdown_max_chars: usize,
}

/// A report written to a file from a finished run's results.
#[derive(Debug, Clone, Copy)]
pub struct FileFormat {
    /// Its name, as in its flag (`--html FILE`): `json`, `html`, `markdown`, `junit`.
    pub name: &'static str,
    /// Renders the whole file; the error says why it could not (in words, lowercase).
    pub render: fn(&Results, &RenderOptions) -> Result<String, String>,
}

/// Every file format, in the order they are written.
pub const FILE_FORMATS: &[FileFormat] =
    &[json::FORMAT, html::FORMAT, markdown::FORMAT, junit::FORMAT];

/// The file format called `name`.
pub fn file_format(name: &str) -> Option<&'static FileFormat> {
    FILE_FORMATS.iter().find(|f| f.name == name)
}
