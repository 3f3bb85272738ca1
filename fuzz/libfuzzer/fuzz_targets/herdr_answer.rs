//! libFuzzer target: tickloop_fuzz::herdr_answer (see its documentation).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| tickloop_fuzz::herdr_answer(data));
