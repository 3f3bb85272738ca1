//! `tickloop new NAME [--lang python|rust]`: writes a new Tick package, a
//! folder `NAME` with its `SKILL.md` and a program that passes `tickloop
//! check` as made (Python on the `tickloop_tick` module, written beside
//! the program; or Rust on `tickloop-tick`).
//! Nothing is written when `NAME` exists or is not a valid name: the folder
//! is made under a temporary name and renamed into place at the end.

use crate::output::CliError;
use anyhow::{Context, Result};
use serde_json::{json, Value};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

/// Which language the new Tick is written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Lang {
    /// One executable `NAME.py` on the `tickloop_tick` module (written
    /// beside it), standard library only.
    Python,
    /// A Cargo project on the `tickloop-tick` crate, with a ratatui screen.
    Rust,
}

const PY_PROGRAM: &str = include_str!("new_templates/python.py");
const PY_SKILL: &str = include_str!("new_templates/python.SKILL.md");
/// The Python module the program imports, written beside it.
pub const PY_MODULE: &str = include_str!("../python/tickloop_tick.py");
const RS_MAIN: &str = include_str!("new_templates/rust.main.rs");
const RS_CARGO: &str = include_str!("new_templates/rust.Cargo.toml");
const RS_SKILL: &str = include_str!("new_templates/rust.SKILL.md");

/// The `tickloop-tick` this build of tickloop goes with.
const TICK_VERSION: &str = env!("CARGO_PKG_VERSION");
/// Where that crate was when this tickloop was built (a checkout).
const CHECKOUT_TICK: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tick");

/// What to make.
pub struct Options {
    pub name: String,
    pub lang: Lang,
    /// The directory the folder goes in.
    pub parent: PathBuf,
    /// A path to a `tickloop-tick` checkout to depend on (Rust). Default:
    /// the checkout this tickloop was built from, while it is there, else
    /// the crates.io release of this version.
    pub tick_path: Option<PathBuf>,
}

fn bad(message: String) -> anyhow::Error {
    CliError::new("bad_request", message, 2).into()
}

/// `my-tick` → `My Tick`.
fn title_of(name: &str) -> String {
    name.split(['-', '_', '.'])
        .filter(|w| !w.is_empty())
        .map(|w| {
            let mut c = w.chars();
            c.next()
                .map(|f| f.to_uppercase().collect::<String>() + c.as_str())
                .unwrap_or_default()
        })
        .collect::<Vec<_>>()
        .join(" ")
}

fn fill(template: &str, name: &str, title: &str, tick_dep: &str) -> String {
    template
        .replace("{{NAME}}", name)
        .replace("{{TITLE}}", title)
        .replace("{{TICK_DEP}}", tick_dep)
}

/// Makes the package; returns what `new` prints.
pub fn run(options: Options) -> Result<Value> {
    let name = options.name.as_str();
    let name_ok = match options.lang {
        Lang::Python => tickloop_packages::valid_name(name) && !name.starts_with('.'),
        // A Cargo package name: a letter, then letters, digits, - or _.
        Lang::Rust => {
            name.len() <= 64
                && name.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
                && name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        }
    };
    if !name_ok {
        return Err(bad(format!(
            "{name:?} is not a valid Tick name: use 1-64 of A-Z a-z 0-9 - _{}, starting with a letter",
            if options.lang == Lang::Python { " ." } else { "" }
        )));
    }
    if options.lang == Lang::Python && name == "tickloop_tick" {
        return Err(bad(
            "\"tickloop_tick\" is the name of the Python module a new Tick runs on (written beside it); pick another NAME".to_string(),
        ));
    }
    let target = options.parent.join(name);
    if target.symlink_metadata().is_ok() {
        return Err(bad(format!(
            "{} already exists; `tickloop new` makes a new folder and never writes into one, so pick another NAME or move it away",
            target.display()
        )));
    }
    let title = title_of(name);
    let lowered = name.to_ascii_lowercase();
    let tick_dep = match &options.tick_path {
        Some(path) => {
            let path = std::path::absolute(path)
                .with_context(|| format!("cannot make {} absolute", path.display()))?;
            if !path.join("Cargo.toml").is_file() {
                return Err(bad(format!(
                    "--tick-path {} holds no Cargo.toml; give the tickloop-tick crate's folder (tick/ in a Tickloop checkout)",
                    path.display()
                )));
            }
            format!("tickloop-tick = {{ path = {:?} }}", path.to_string_lossy())
        }
        None if Path::new(CHECKOUT_TICK).join("Cargo.toml").is_file() => {
            format!("tickloop-tick = {{ path = {CHECKOUT_TICK:?} }}")
        }
        None => format!("tickloop-tick = \"{TICK_VERSION}\""),
    };
    let mut files: Vec<(PathBuf, String, bool)> = Vec::new();
    match options.lang {
        Lang::Python => {
            let program = fill(PY_PROGRAM, &lowered, &title, "");
            files.push((format!("{name}.py").into(), program, true));
            files.push(("tickloop_tick.py".into(), PY_MODULE.to_string(), false));
            files.push(("SKILL.md".into(), fill(PY_SKILL, name, &title, ""), false));
        }
        Lang::Rust => {
            let main = fill(RS_MAIN, &lowered, &title, "");
            // The binary keeps the package's name as given.
            let main = main.replace(
                &format!("target/debug/{lowered}"),
                &format!("target/debug/{name}"),
            );
            files.push((
                "Cargo.toml".into(),
                fill(RS_CARGO, name, &title, &tick_dep),
                false,
            ));
            files.push(("src/main.rs".into(), main, false));
            files.push(("SKILL.md".into(), fill(RS_SKILL, name, &title, ""), false));
            files.push((".gitignore".into(), "/target\n".into(), false));
        }
    }
    let staging = options
        .parent
        .join(format!(".{name}.tickloop-new-{}", std::process::id()));
    let written = write_all(&staging, &files).and_then(|()| {
        std::fs::rename(&staging, &target)
            .with_context(|| format!("cannot move {} into place", target.display()))
    });
    if let Err(e) = written {
        let _ = std::fs::remove_dir_all(&staging);
        return Err(e);
    }
    let next = match options.lang {
        Lang::Python => vec![
            format!(
                "tickloop check -- {}",
                target.join(format!("{name}.py")).display()
            ),
            format!(
                "tickloop open -- {}",
                target.join(format!("{name}.py")).display()
            ),
        ],
        Lang::Rust => vec![
            format!("cd {} && cargo build", target.display()),
            format!(
                "tickloop check -- {}",
                target.join("target/debug").join(name).display()
            ),
        ],
    };
    Ok(json!({
        "name": name,
        "lang": match options.lang { Lang::Python => "python", Lang::Rust => "rust" },
        "dir": target,
        "files": files.iter().map(|(p, _, _)| p.to_string_lossy().into_owned()).collect::<Vec<_>>(),
        "next": next,
    }))
}

fn write_all(dir: &Path, files: &[(PathBuf, String, bool)]) -> Result<()> {
    for (relative, text, executable) in files {
        let path = dir.join(relative);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)
                .with_context(|| format!("cannot create {}", parent.display()))?;
        }
        std::fs::write(&path, text).with_context(|| format!("cannot write {}", path.display()))?;
        if *executable {
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755))
                .with_context(|| format!("cannot make {} executable", path.display()))?;
        }
    }
    Ok(())
}

/// What `new` prints on a terminal.
pub fn text(value: &Value) -> String {
    let mut out = format!(
        "made {} ({}) in {}\nnext:\n",
        value["name"].as_str().unwrap_or_default(),
        value["lang"].as_str().unwrap_or_default(),
        value["dir"].as_str().unwrap_or_default()
    );
    for step in value["next"].as_array().into_iter().flatten() {
        out.push_str(&format!("  {}\n", step.as_str().unwrap_or_default()));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn titles_and_templates() {
        assert_eq!(title_of("my-first_tick"), "My First Tick");
        let filled = fill(RS_CARGO, "demo", "Demo", "tickloop-tick = \"0.1.0\"");
        let parsed: toml::Table = toml::from_str(&filled).expect("Cargo.toml is TOML");
        assert!(parsed["dependencies"].get("tickloop-tick").is_some());
        assert!(!fill(RS_MAIN, "demo", "Demo", "").contains("{{"));
        assert!(!fill(PY_PROGRAM, "demo", "Demo", "").contains("{{"));
    }
}
