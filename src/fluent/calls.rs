//! [`ToolCalls`]: the calls an agent made, as `prompt(…).run()` and `parse_session` return
//! them. It reads as upstream aptitude's `Vec<ToolCall>` (it dereferences to one, iterates,
//! indexes, compares), and keeps the transcript they came from, so that `expect(&calls)`
//! still knows what a bare list can not: that the transcript lost calls, or that its agent
//! can not record some tools (Aider records no shell commands). Without that a `not_called`
//! on such a list would pass on calls that were never seen.

use std::ops::Deref;
use std::path::Path;
use std::sync::Arc;

use super::subject::{Subject, TranscriptRef};
use crate::transcript::{ToolCall, Transcript, TranscriptError};

/// The tool calls of one transcript, in the order they were made.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolCalls {
    transcript: Arc<Transcript>,
}

impl ToolCalls {
    /// The calls of `transcript`.
    pub fn new(transcript: Transcript) -> Self {
        ToolCalls {
            transcript: Arc::new(transcript),
        }
    }

    /// The calls of a shared transcript.
    pub(crate) fn shared(transcript: Arc<Transcript>) -> Self {
        ToolCalls { transcript }
    }

    /// The transcript the calls came from.
    pub fn transcript(&self) -> &Transcript {
        &self.transcript
    }

    /// The calls, as a vector of their own.
    pub fn into_vec(self) -> Vec<ToolCall> {
        self.transcript.tool_calls.clone()
    }
}

impl Deref for ToolCalls {
    type Target = Vec<ToolCall>;

    fn deref(&self) -> &Vec<ToolCall> {
        &self.transcript.tool_calls
    }
}

impl<'a> IntoIterator for &'a ToolCalls {
    type Item = &'a ToolCall;
    type IntoIter = std::slice::Iter<'a, ToolCall>;

    fn into_iter(self) -> Self::IntoIter {
        self.transcript.tool_calls.iter()
    }
}

impl PartialEq<Vec<ToolCall>> for ToolCalls {
    fn eq(&self, other: &Vec<ToolCall>) -> bool {
        self.transcript.tool_calls == *other
    }
}

impl From<ToolCalls> for Vec<ToolCall> {
    fn from(calls: ToolCalls) -> Self {
        calls.into_vec()
    }
}

impl Subject for ToolCalls {
    fn transcript(&self) -> TranscriptRef<'_> {
        TranscriptRef::borrowed(&self.transcript)
    }
}

/// Reads a transcript file and returns its calls (upstream's `parse_session`, which read
/// Claude Code session logs; this reads every format `aptitude transcript` reads,
/// detected from the content: see [`crate::transcript`]).
///
/// # Errors
/// When the file can not be read or matches no known format.
pub fn parse_session(path: impl AsRef<Path>) -> Result<ToolCalls, TranscriptError> {
    crate::transcript::parse_file(path.as_ref()).map(ToolCalls::new)
}
