#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| tern_fuzz::h1::head_rewrite(data));
