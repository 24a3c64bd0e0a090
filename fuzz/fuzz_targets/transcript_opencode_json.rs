//! Fuzz target `transcript_opencode_json`: see `aptitude_fuzz::transcript_opencode_json`.

#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| aptitude_fuzz::transcript_opencode_json(data));
