//! Fuzz target `transcript_gemini_document`: see `aptitude_fuzz::transcript_gemini_document`.

#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| aptitude_fuzz::transcript_gemini_document(data));
