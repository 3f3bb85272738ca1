//! libFuzzer target: tickloop_fuzz::attach_lines (see its documentation).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| tickloop_fuzz::attach_lines(data));
