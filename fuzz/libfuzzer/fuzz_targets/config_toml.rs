//! libFuzzer target: tickloop_fuzz::config_toml (see its documentation).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| tickloop_fuzz::config_toml(data));
