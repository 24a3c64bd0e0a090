//! aptitude: unit tests for AI coding agents.
//!
//! The pipeline, one module per stage (data flows one way):
//!
//! ```text
//! spec ──► transcript ──► assertions ──► results ──► report
//! (what to test)  (what happened)  (verdicts)   (one model)  (how it is shown)
//! ```
//!
//! [`cli`] parses arguments and is the one place that maps errors to exit codes.

pub mod assertions;
pub mod cli;
pub mod report;
pub mod results;
pub mod runner;
pub mod spec;
pub mod tools;
pub mod transcript;
