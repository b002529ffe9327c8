#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| tern_fuzz::h1::response_head(data));
