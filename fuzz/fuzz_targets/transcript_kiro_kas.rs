//! Fuzz target `transcript_kiro_kas`: see `aptitude_fuzz::transcript_kiro_kas`.

#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| aptitude_fuzz::transcript_kiro_kas(data));
