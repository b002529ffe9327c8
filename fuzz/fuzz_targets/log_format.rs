#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| tern_fuzz::log_format::log_format(data));
