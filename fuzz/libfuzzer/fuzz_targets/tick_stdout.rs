//! libFuzzer target: tickloop_fuzz::tick_stdout (see its documentation).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| tickloop_fuzz::tick_stdout(data));
