//! aptitude's integration tests: one binary, a module per feature.

#![expect(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test fails loudly on any unexpected error"
)]

mod act;
mod action;
// `agent_versions`, not `versions`: libtest starts tests in name order, and these four
// (40–160 s each, two releases of an agent installed and run) started last left three
// of the four test threads idle for the last ~70 s of the suite.
mod agent_versions;
mod agents;
mod architecture;
mod bisect;
mod cassettes;
mod certify;
mod claims;
mod cli;
mod conversation;
mod corpus;
mod diff;
mod docs;
mod drift;
mod evidence;
mod exec_record;
mod fluent;
mod fuzz_regressions;
mod gateway;
mod github;
mod hooks;
mod hostile;
mod hostile_transcripts;
mod inert;
mod init;
mod judge;
mod kiro;
mod labels;
mod mcp;
mod memfence;
mod merge;
mod otlp;
mod recorded;
mod repeats;
mod reports;
mod reuse;
mod routing;
mod run;
mod sandbox;
mod skills;
mod suite;
mod support;
mod upstream;
mod upstream_habits;
mod variants;
mod wire;
mod witness;
