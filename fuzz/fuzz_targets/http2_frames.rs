#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| tern_fuzz::http2::http2_frames(data));
