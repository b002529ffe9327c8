#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| tern_fuzz::client_hello::client_hello(data));
