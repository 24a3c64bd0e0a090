//! Fuzz target `spec_loader`: see `aptitude_fuzz::spec_loader`.

#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| aptitude_fuzz::spec_loader(data));
