//! Fuzz target `transcript_aider_chat`: see `aptitude_fuzz::transcript_aider_chat`.

#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| aptitude_fuzz::transcript_aider_chat(data));
