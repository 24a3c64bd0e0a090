//! Fuzz target `shared_cut`: see `aptitude_fuzz::shared_cut`.

#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| aptitude_fuzz::shared_cut(data));
