//! Fuzz target `transcript_qwen_session`: see `aptitude_fuzz::transcript_qwen_session`.

#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| aptitude_fuzz::transcript_qwen_session(data));
