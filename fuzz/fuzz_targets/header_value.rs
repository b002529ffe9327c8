#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| tern_fuzz::config::header_value(data));
