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

pub mod agent;
pub mod agent_kind;
pub mod assertions;
pub mod cli;
pub mod cut;
pub mod events;
pub mod files;
pub mod fingerprint;
pub mod fluent;
pub mod github;
pub mod judge;
pub mod redact;
pub mod repeat;
pub mod report;
pub mod results;
pub mod reuse;
pub mod runner;
pub mod shard;
pub mod spec;
pub mod stats;
pub mod suggest;
pub mod text;
pub mod tools;
pub mod transcript;
pub mod variants;
pub mod workspace;
