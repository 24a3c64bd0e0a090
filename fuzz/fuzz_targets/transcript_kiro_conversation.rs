//! Fuzz target `transcript_kiro_conversation`: see `aptitude_fuzz::transcript_kiro_conversation`.

#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| aptitude_fuzz::transcript_kiro_conversation(data));
