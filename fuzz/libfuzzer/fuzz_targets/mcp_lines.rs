//! libFuzzer target: tickloop_fuzz::mcp_lines (see its documentation).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| tickloop_fuzz::mcp_lines(data));
