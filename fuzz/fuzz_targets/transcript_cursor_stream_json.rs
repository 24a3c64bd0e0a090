//! Fuzz target `transcript_cursor_stream_json`: see `aptitude_fuzz::transcript_cursor_stream_json`.

#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| aptitude_fuzz::transcript_cursor_stream_json(data));
