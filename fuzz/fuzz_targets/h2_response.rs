#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| tern_fuzz::h2_response::h2_response(data));
