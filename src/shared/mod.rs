//! Helpers below every stage: safe file reads, cuts that never show part of a secret,
//! text formatting, secret redaction and "did you mean" suggestions. Nothing here names a
//! stage.

pub mod cut;
pub mod files;
pub mod redact;
pub mod suggest;
pub mod text;
