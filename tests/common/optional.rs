//! Tests that need a program this machine may lack (a real Herdr, the MCP
//! Inspector through npx, Claude Code): they run under `libtest-mimic`
//! (`harness = false`), so that when the program is missing cargo reports
//! them as *ignored*, with the reason printed, and never as passed.

use libtest_mimic::{Arguments, Trial};

/// One test of such a file: its name, and its body (which panics on failure,
/// like any `#[test]`).
pub struct Case {
    pub name: &'static str,
    pub body: fn(),
}

/// Runs `cases` as the file's tests. With `missing` set (why they cannot
/// run here), every case is reported ignored and the reason goes to stderr,
/// where cargo shows it whether or not tests pass.
pub fn run(cases: Vec<Case>, missing: Option<String>) -> ! {
    let args = Arguments::from_args();
    if let Some(why) = &missing {
        eprintln!("\n*** IGNORED (not run, not passed): {why} ***\n");
    }
    let trials = cases
        .into_iter()
        .map(|case| {
            let body = case.body;
            Trial::test(case.name, move || {
                std::panic::catch_unwind(body).map_err(|panic| {
                    panic
                        .downcast_ref::<String>()
                        .cloned()
                        .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                        .unwrap_or_else(|| "the test panicked".to_string())
                        .into()
                })
            })
            .with_ignored_flag(missing.is_some())
        })
        .collect();
    libtest_mimic::run(&args, trials).exit()
}
