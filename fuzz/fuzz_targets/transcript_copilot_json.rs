//! Fuzz target `transcript_copilot_json`: see `aptitude_fuzz::transcript_copilot_json`.

#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| aptitude_fuzz::transcript_copilot_json(data));
