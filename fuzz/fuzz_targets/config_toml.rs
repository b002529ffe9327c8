#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| tern_fuzz::config::config_toml(data));
