//! Why publishing on GitHub failed: the environment, the API, the local files. Every one
//! becomes a warning (publishing never changes the exit code), so the messages are whole
//! sentences a user can act on; none holds the token.

use std::path::PathBuf;

/// A GitHub publishing problem.
#[derive(Debug, thiserror::Error)]
pub enum GithubError {
    /// Not inside GitHub Actions.
    #[error(
        "GITHUB_REPOSITORY is not set: --github and `aptitude publish` run inside GitHub Actions"
    )]
    NoRepository,
    /// The event payload file could not be read.
    #[error("can not read GITHUB_EVENT_PATH {path}: {source}")]
    EventRead {
        /// `GITHUB_EVENT_PATH`.
        path: String,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// The event payload is not JSON.
    #[error("GITHUB_EVENT_PATH {path} is not JSON: {source}")]
    EventJson {
        /// `GITHUB_EVENT_PATH`.
        path: String,
        /// The parse error.
        #[source]
        source: serde_json::Error,
    },
    /// No token to call the API with.
    #[error("GITHUB_TOKEN is not set, so no PR comment or check run can be posted")]
    NoToken,
    /// `GITHUB_API_URL` is not a URL octocrab accepts.
    #[error("invalid GITHUB_API_URL {url}: {source}")]
    ApiUrl {
        /// The URL.
        url: String,
        /// Octocrab's error.
        #[source]
        source: Box<octocrab::Error>,
    },
    /// The client could not be built.
    #[error("can not set up the GitHub client: {0}")]
    Client(#[source] Box<octocrab::Error>),
    /// An API call failed: `HTTP status: GitHub's message`, or the transport error.
    #[error("{}", describe(.0))]
    Api(#[source] Box<octocrab::Error>),
    /// A reply without the id asked for.
    #[error("GitHub returned no {0} id")]
    NoId(&'static str),
    /// No commit to attach a check run to.
    #[error("no commit SHA (GITHUB_SHA) to attach the check run to")]
    NoSha,
    /// A request body could not be encoded.
    #[error("{0}")]
    Encode(#[source] serde_json::Error),
    /// A local file (`GITHUB_STEP_SUMMARY`, `GITHUB_OUTPUT`) could not be opened.
    #[error("can not open {}: {source}", path.display())]
    Open {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// A local file could not be written.
    #[error("can not write {}: {source}", path.display())]
    Write {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
}

impl GithubError {
    /// An API call's error.
    pub(super) fn api(e: octocrab::Error) -> Self {
        Self::Api(Box::new(e))
    }
}

/// An API error in a line: status and GitHub's message.
fn describe(e: &octocrab::Error) -> String {
    match e {
        octocrab::Error::GitHub { source, .. } => {
            format!("HTTP {}: {}", source.status_code.as_u16(), source.message)
        }
        other => other.to_string(),
    }
}
