#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| tern_fuzz::health::health_reply(data));
