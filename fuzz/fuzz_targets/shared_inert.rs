//! Fuzz target `shared_inert`: see `aptitude_fuzz::shared_inert`.

#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| aptitude_fuzz::shared_inert(data));
