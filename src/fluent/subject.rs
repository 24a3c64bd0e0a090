//! What `expect(&…)` accepts: anything that holds what an agent did. A parsed
//! [`Transcript`], a list of tool calls (`Vec<ToolCall>`, `&[ToolCall]`, upstream's shape),
//! the calls `prompt(…).run()` returns ([`super::ToolCalls`]) and the output of
//! `run_full()` ([`super::ExecutionOutput`]) all are; upstream's own examples pass both
//! its shapes to one `expect`, so both must compile.

use std::ops::Deref;
use std::sync::Arc;

use crate::agent::Agent;
use crate::transcript::{ToolCall, Transcript};

/// The transcript an expectation reads: borrowed from the subject, or shared.
#[derive(Debug, Clone)]
pub struct TranscriptRef<'a>(Held<'a>);

#[derive(Debug, Clone)]
enum Held<'a> {
    Borrowed(&'a Transcript),
    Shared(Arc<Transcript>),
}

impl<'a> TranscriptRef<'a> {
    /// A transcript the subject holds.
    pub fn borrowed(transcript: &'a Transcript) -> Self {
        TranscriptRef(Held::Borrowed(transcript))
    }

    /// A transcript shared with (or made for) the subject.
    pub fn shared(transcript: Arc<Transcript>) -> Self {
        TranscriptRef(Held::Shared(transcript))
    }
}

impl Deref for TranscriptRef<'_> {
    type Target = Transcript;

    fn deref(&self) -> &Transcript {
        match &self.0 {
            Held::Borrowed(t) => t,
            Held::Shared(t) => t,
        }
    }
}

/// What an agent did, as `expect` reads it.
pub trait Subject {
    /// The transcript the assertions read: its calls, final answer, and whether it is
    /// complete (a transcript that lost calls makes `not_called` an error, never a pass).
    fn transcript(&self) -> TranscriptRef<'_>;

    /// The agent that grades `stdout` reviews when the expectation names none: the
    /// agent that ran, for output that came from a run.
    fn grader(&self) -> Option<Arc<dyn Agent>> {
        None
    }

    /// The prompt the agent was given, shown to the judge as context.
    fn task(&self) -> Option<&str> {
        None
    }
}

impl Subject for Transcript {
    fn transcript(&self) -> TranscriptRef<'_> {
        TranscriptRef::borrowed(self)
    }
}

/// A bare list of calls is a complete transcript of those calls, with no final answer
/// ([`Transcript::of_calls`]).
impl Subject for [ToolCall] {
    fn transcript(&self) -> TranscriptRef<'_> {
        TranscriptRef::shared(Arc::new(Transcript::of_calls(self.to_vec(), None)))
    }
}

/// As for `[ToolCall]`.
impl Subject for Vec<ToolCall> {
    fn transcript(&self) -> TranscriptRef<'_> {
        self.as_slice().transcript()
    }
}

impl<S: Subject + ?Sized> Subject for &S {
    fn transcript(&self) -> TranscriptRef<'_> {
        (**self).transcript()
    }

    fn grader(&self) -> Option<Arc<dyn Agent>> {
        (**self).grader()
    }

    fn task(&self) -> Option<&str> {
        (**self).task()
    }
}
