//! Fuzz target `transcript_kiro_session`: see `aptitude_fuzz::transcript_kiro_session`.

#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| aptitude_fuzz::transcript_kiro_session(data));
