//! libFuzzer target: tickloop_fuzz::pty_bytes (see its documentation).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| tickloop_fuzz::pty_bytes(data));
