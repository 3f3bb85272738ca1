//! A test that installs: `tickloop` as a new user gets it, run by name from
//! another directory, with only the install root's `bin` (and the system
//! folders holding `python3` and `sh`) on PATH, and private HOME, XDG and
//! runtime directories, so nothing touches the real user's.
//!
//! The install is the built `tickloop` (`CARGO_BIN_EXE_tickloop`) copied
//! into `ROOT/bin`, which is what `cargo install --path . --root ROOT` puts
//! there: a real `cargo install` compiles the whole workspace again (a
//! release build, or a debug build without the test features), too slow for
//! the suite on two cores. With `TICKLOOP_TEST_CARGO_INSTALL=1` the test runs
//! `cargo install --path . --root ROOT --debug --offline` instead (into
//! `target/install-test`, a target directory of its own, so it never waits
//! for the lock of the build running the tests).
//!
//! Checked: the shipped packages are listed and open with nothing next to
//! the repository (installed into the data directory, executables with
//! their mode), a user package shadows a shipped one, `packages --path`,
//! the completion scripts (bash completing a live instance id), `man`,
//! `--version` and `version --json`, and `doctor --json`.

mod common;

use common::{wait_for, Host, MARK_VAR};
use serde_json::Value;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// An installed `tickloop` and the private world it runs in.
struct Installed {
    host: Host,
    root: tempfile::TempDir,
    home: PathBuf,
    elsewhere: PathBuf,
}

impl Installed {
    fn new() -> Installed {
        let host = Host::new();
        let root = tempfile::tempdir().expect("install root");
        let bin = root.path().join("bin");
        if std::env::var("TICKLOOP_TEST_CARGO_INSTALL").as_deref() == Ok("1") {
            let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
            let status = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
                .args(["install", "--path", ".", "--debug", "--offline", "--root"])
                .arg(root.path())
                .env("CARGO_TARGET_DIR", manifest.join("target/install-test"))
                .current_dir(manifest)
                .status()
                .expect("run cargo install");
            assert!(status.success(), "cargo install failed: {status}");
        } else {
            std::fs::create_dir_all(&bin).expect("mkdir bin");
            std::fs::copy(common::tickloop_bin(), bin.join("tickloop")).expect("copy tickloop");
            // `cargo install --path .` installs the package's second binary
            // beside it: the shipped package `board` runs it.
            std::fs::copy(
                env!("CARGO_BIN_EXE_tickloop-board"),
                bin.join("tickloop-board"),
            )
            .expect("copy tickloop-board");
        }
        let mode = std::fs::metadata(bin.join("tickloop"))
            .expect("installed")
            .permissions()
            .mode();
        assert!(mode & 0o111 != 0, "installed tickloop is not executable");
        let home = host.scratch().join("home");
        let elsewhere = host.scratch().join("elsewhere");
        for dir in [&home, &elsewhere] {
            std::fs::create_dir_all(dir).expect("mkdir");
        }
        Installed {
            host,
            root,
            home,
            elsewhere,
        }
    }

    /// PATH: the root's bin, then the folders of python3 and sh.
    fn path(&self) -> String {
        let mut dirs = vec![self.root.path().join("bin")];
        for tool in ["python3", "sh", "bash"] {
            let found = std::env::var_os("PATH")
                .and_then(|path| std::env::split_paths(&path).find(|d| d.join(tool).is_file()));
            if let Some(dir) = found.filter(|d| !dirs.contains(d)) {
                dirs.push(dir);
            }
        }
        std::env::join_paths(dirs)
            .expect("join PATH")
            .to_string_lossy()
            .into_owned()
    }

    fn data_home(&self) -> PathBuf {
        self.home.join(".local/share")
    }

    fn config_home(&self) -> PathBuf {
        self.home.join(".config")
    }

    /// `PROGRAM ARGS` in the other directory, with nothing of this
    /// process's environment but the private one.
    fn command(&self, program: &str, args: &[&str]) -> Command {
        let mut cmd = Command::new(program);
        cmd.args(args)
            .env_clear()
            .env("PATH", self.path())
            .env("HOME", &self.home)
            .env("XDG_DATA_HOME", self.data_home())
            .env("XDG_CONFIG_HOME", self.config_home())
            .env("TICKLOOP_RUNTIME_DIR", self.host.runtime())
            .env(MARK_VAR, self.host.runtime())
            .current_dir(&self.elsewhere)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        cmd
    }

    /// `tickloop ARGS`, found on PATH; returns (exit code, stdout).
    fn run(&self, args: &[&str]) -> (i32, String) {
        let out = self
            .command("tickloop", args)
            .output()
            .unwrap_or_else(|e| panic!("running tickloop {args:?}: {e}"));
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        eprintln!(
            "tickloop {args:?}: {}\n{stdout}{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
        (out.status.code().unwrap_or(-1), stdout)
    }

    /// `tickloop ARGS`, expected to exit 0 and print one JSON value.
    fn json(&self, args: &[&str]) -> Value {
        let (code, stdout) = self.run(args);
        assert_eq!(code, 0, "tickloop {args:?} exited {code}: {stdout}");
        serde_json::from_str(stdout.trim())
            .unwrap_or_else(|e| panic!("tickloop {args:?} printed no JSON ({e}): {stdout}"))
    }
}

fn names(list: &Value) -> Vec<&str> {
    list.as_array()
        .expect("an array")
        .iter()
        .filter_map(|p| p["name"].as_str())
        .collect()
}

#[test]
fn an_installed_tickloop_lists_and_opens_the_shipped_packages_from_anywhere() {
    let t = Installed::new();
    let shipped = t
        .data_home()
        .join("tickloop/packages")
        .join(env!("CARGO_PKG_VERSION"));

    let list = t.json(&["packages"]);
    let found = names(&list);
    assert!(
        found.contains(&"counter") && found.contains(&"logwatch") && found.contains(&"board"),
        "{list}"
    );
    for p in list.as_array().into_iter().flatten() {
        assert_eq!(p["source"], "shipped", "{p}");
        assert!(
            p["dir"]
                .as_str()
                .is_some_and(|d| Path::new(d).starts_with(&shipped)),
            "{p}"
        );
        assert_eq!(
            p["ready"], true,
            "python3 is on PATH, tickloop-board beside tickloop: {p}"
        );
    }
    let script = shipped.join("counter/counter.py");
    let mode = std::fs::metadata(&script)
        .expect("installed")
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o755, "{}", script.display());

    let (code, where_) = t.run(&["packages", "--path", "counter"]);
    assert_eq!(code, 0);
    let dir = PathBuf::from(where_.trim());
    assert_eq!(dir, shipped.join("counter"));
    assert!(dir.join("SKILL.md").is_file());
    let (code, _) = t.run(&["packages", "--path", "no-such-package"]);
    assert_eq!(code, 1);

    let opened = t.json(&["open", "--package", "counter"]);
    assert_eq!(opened["id"], "hosted:counter", "{opened}");
    wait_for("the counter to answer a read", || {
        let (code, stdout) = t.run(&["read", "hosted:counter"]);
        (code == 0 && stdout.contains("\"data\"")).then_some(())
    });

    // The bash completion offers the live instance's id.
    let (code, bash) = t.run(&["completions", "bash"]);
    assert_eq!(code, 0);
    assert!(bash.contains("_tickloop_with_ids"), "{bash}");
    let script_file = t.host.scratch().join("tickloop.bash");
    std::fs::write(&script_file, &bash).expect("write the script");
    let probe = format!(
        "source '{}'\nCOMP_LINE='tickloop attach hos'\nCOMP_POINT=${{#COMP_LINE}}\nCOMP_WORDS=(tickloop attach hos)\nCOMP_CWORD=2\n_tickloop_with_ids tickloop hos attach\nprintf '%s\\n' \"${{COMPREPLY[@]}}\"\n",
        script_file.display()
    );
    let out = t
        .command("bash", &["-c", &probe])
        .output()
        .expect("run bash");
    let offered = String::from_utf8_lossy(&out.stdout);
    assert!(
        offered.lines().any(|l| l == "hosted:counter"),
        "bash offered {offered:?} (stderr {})",
        String::from_utf8_lossy(&out.stderr)
    );

    let closed = t.json(&["close", "hosted:counter"]);
    assert!(closed.is_object(), "{closed}");
    t.json(&["shutdown"]);

    // With tickhost gone, completing ids prints nothing and starts nothing.
    let (code, ids) = t.run(&["__complete-ids"]);
    assert_eq!((code, ids.as_str()), (0, ""));
    assert!(
        !t.host.runtime().join("tickhost.sock").exists(),
        "completing started tickhost"
    );

    // A user package of the same name wins, and says what it shadows.
    let mine = t.config_home().join("tickloop/packages/counter");
    std::fs::create_dir_all(&mine).expect("mkdir");
    std::fs::write(
        mine.join("SKILL.md"),
        "---\nname: counter\ndescription: My own counter.\nlaunch: [sh]\n---\nMine.\n",
    )
    .expect("write SKILL.md");
    let list = t.json(&["packages"]);
    let counter = list
        .as_array()
        .into_iter()
        .flatten()
        .find(|p| p["name"] == "counter")
        .expect("counter listed");
    assert_eq!(counter["source"], "user", "{counter}");
    assert_eq!(counter["description"], "My own counter.");
    assert_eq!(
        counter["shadows"][0].as_str().map(PathBuf::from),
        Some(shipped.join("counter")),
        "{counter}"
    );
    let (_, path) = t.run(&["packages", "--path", "counter"]);
    assert_eq!(PathBuf::from(path.trim()), mine);
}

#[test]
fn an_installed_tickloop_prints_completions_man_page_and_versions() {
    let t = Installed::new();
    for (shell, marker) in [
        ("bash", "complete -F _tickloop_with_ids"),
        ("zsh", "_tickloop_ids"),
        ("fish", "__complete-ids"),
    ] {
        let (code, script) = t.run(&["completions", shell]);
        assert_eq!(code, 0);
        assert!(script.contains(marker), "{shell}: {script}");
        assert!(script.contains("doctor"), "{shell} completes subcommands");
    }
    let syntax = t
        .command("bash", &["-n"])
        .stdin(Stdio::piped())
        .spawn()
        .and_then(|mut child| {
            use std::io::Write;
            let (_, bash) = t.run(&["completions", "bash"]);
            child
                .stdin
                .take()
                .expect("stdin")
                .write_all(bash.as_bytes())?;
            child.wait_with_output()
        })
        .expect("bash -n");
    assert!(syntax.status.success(), "{syntax:?}");

    let (code, man) = t.run(&["man"]);
    assert_eq!(code, 0);
    assert!(man.contains(".TH tickloop 1"), "{man}");
    assert!(man.contains("doctor"));

    let (code, version) = t.run(&["--version"]);
    assert_eq!(code, 0);
    let version = version.trim();
    assert!(
        version.starts_with(&format!(
            "tickloop {} (wire tickloop-",
            env!("CARGO_PKG_VERSION")
        )) && version.contains(", commit "),
        "{version}"
    );
    let json = t.json(&["version", "--json"]);
    assert_eq!(json["version"], env!("CARGO_PKG_VERSION"));
    assert!(json["wire_version"]
        .as_str()
        .is_some_and(|w| version.contains(w)));
    assert!(json["commit"].as_str().is_some_and(|c| !c.is_empty()));
    assert_eq!(json["protocols"]["tick"], serde_json::json!([3]));
    let mcp = json["protocols"]["mcp"].as_array().expect("mcp versions");
    assert!(
        mcp.iter().any(|v| v == "2025-06-18"),
        "MCP versions: {mcp:?}"
    );
}

#[test]
fn doctor_reports_json_on_a_pipe_and_fails_only_when_something_is_broken() {
    let t = Installed::new();
    let report = t.json(&["doctor"]);
    assert_eq!(report["ok"], true, "{report:#}");
    let checks = report["checks"].as_array().expect("checks");
    let named = |name: &str| {
        checks
            .iter()
            .find(|c| c["check"] == name)
            .unwrap_or_else(|| panic!("no {name} check: {report:#}"))
    };
    assert_eq!(named("tickhost")["status"], "ok");
    assert!(named("tickhost")["detail"]
        .as_str()
        .is_some_and(|d| d.contains("not running")));
    assert_eq!(named("tickloop on PATH")["status"], "ok");
    assert_eq!(named("package counter")["status"], "ok");
    // Without TERM: a warning, with what to do, and still exit 0.
    let terminal = named("terminal");
    assert_eq!(terminal["status"], "warning");
    assert!(terminal["fix"].as_str().is_some_and(|f| !f.is_empty()));
    // doctor started nothing.
    assert!(!t.host.runtime().join("tickhost.sock").exists());

    // A running tickhost is reported with its version.
    t.json(&["list"]);
    let report = t.json(&["doctor", "--json"]);
    let tickhost = report["checks"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|c| c["check"] == "tickhost")
        .expect("tickhost check");
    assert!(
        tickhost["detail"]
            .as_str()
            .is_some_and(|d| d.contains("running, wire version tickloop-")),
        "{tickhost}"
    );
    t.json(&["shutdown"]);

    // A runtime directory that is a file is broken: exit 1, and the fix.
    let file = t.host.scratch().join("not-a-dir");
    std::fs::write(&file, "x").expect("write");
    let out = t
        .command("tickloop", &["doctor", "--json"])
        .env("TICKLOOP_RUNTIME_DIR", &file)
        .output()
        .expect("run doctor");
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let report: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(report["ok"], false);
    let runtime = report["checks"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|c| c["check"] == "runtime directory")
        .expect("runtime check");
    assert_eq!(runtime["status"], "error", "{runtime}");
    assert!(runtime["fix"].as_str().is_some_and(|f| !f.is_empty()));
}
