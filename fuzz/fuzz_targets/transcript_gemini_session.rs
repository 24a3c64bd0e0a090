//! Fuzz target `transcript_gemini_session`: see `aptitude_fuzz::transcript_gemini_session`.

#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| aptitude_fuzz::transcript_gemini_session(data));
