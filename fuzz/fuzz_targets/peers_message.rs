#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| tern_fuzz::peers_message::peers_message(data));
