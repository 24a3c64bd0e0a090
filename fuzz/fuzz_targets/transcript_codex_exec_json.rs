//! Fuzz target `transcript_codex_exec_json`: see `aptitude_fuzz::transcript_codex_exec_json`.

#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| aptitude_fuzz::transcript_codex_exec_json(data));
