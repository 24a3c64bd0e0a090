//! aptitude's integration tests: one binary, a module per feature.

mod cli;
mod corpus;
mod support;
