//! Fuzz target `report`: see `aptitude_fuzz::report`.

#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| aptitude_fuzz::report(data));
