//! Fuzz target `transcript_pi_json`: see `aptitude_fuzz::transcript_pi_json`.

#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| aptitude_fuzz::transcript_pi_json(data));
