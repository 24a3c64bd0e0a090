//! Fuzz target `transcript_claude_session`: see `aptitude_fuzz::transcript_claude_session`.

#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| aptitude_fuzz::transcript_claude_session(data));
