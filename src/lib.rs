//! aptitude: unit tests for AI coding agents.
//!
//! The pipeline, one module per stage (data flows one way):
//!
//! ```text
//! spec ──► workspace ──► agent ──► transcript ──► assertions ──► results ──► report
//! (what to test) (where)  (run it)  (what happened)  (verdicts)  (one model) (how it is shown)
//! ```
//!
//! [`judge`] grades `stdout` reviews with an LLM through the agent adapters. [`runner`]
//! schedules tests (each run of a repeated test) through these stages and emits
//! [`events`]; it never prints. [`repeat`] decides a repeated test from its runs (k of n,
//! flaky, figures from [`stats`]); [`variants`] sets a test's variants side by side. [`text`] holds the text formatting shared by the
//! assertions and the reporters, below both.
//!
//! [`cli`] parses arguments and is the one place that maps errors to exit codes.
//!
//! [`fluent`] runs agents and checks what they did from Rust tests (`prompt("…").run()`,
//! `expect(&output)`); its main items are re-exported here, as upstream aptitude
//! (`tatimblin/aptitude`) has them, so that code written for it compiles.

pub mod agent;
pub mod assertions;
pub mod cli;
pub mod fluent;
pub mod gateway;
pub mod report;
pub mod run;
pub mod sandbox;
pub mod shared;
pub mod spec;
pub mod transcript;
pub mod verdict;
pub mod workspace;

// Upstream aptitude's crate-root API (`tatimblin/aptitude` 0.4.0 `src/lib.rs`), so that
// code written for it compiles: see [`fluent`] and [`fluent::upstream`].
pub use agent::AgentKind as AgentType;
pub use fluent::review::{self, ReviewConfig, ReviewResult};
pub use fluent::{
    AgentHarness, ExecutionConfig, ExecutionOutput, Expectation as ExecutionExpectation,
    NormalizedResult, PromptBuilder, StdoutAssertion, Tool, ToolExpectation as ToolAssertion,
    expect, expect_tools, params_match, parse_session, prompt,
};
pub use transcript::ToolCall;
