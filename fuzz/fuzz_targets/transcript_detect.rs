//! Fuzz target `transcript_detect`: see `aptitude_fuzz::transcript_detect`.

#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| aptitude_fuzz::transcript_detect(data));
