//! Fuzz target `transcript_codex_rollout`: see `aptitude_fuzz::transcript_codex_rollout`.

#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| aptitude_fuzz::transcript_codex_rollout(data));
