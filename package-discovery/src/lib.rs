//! Package discovery (`tickloop-packages`): finds Tick packages, each a folder
//! with a `SKILL.md`, for the CLI (`tickloop packages`, `open --package`) and
//! the MCP bridge (TickManage) alike, neither owning it; [`shipped`] holds
//! the packages embedded in the executable.
//!
//! A package is a directory holding `SKILL.md` (and usually the Tick's
//! program). `SKILL.md` starts with front matter between two `---` lines, in a
//! small YAML subset, then prose written for the agent:
//!
//! ```text
//! ---
//! name: logwatch
//! description: Watches one log file; state is a summary, `lines` returns detail.
//! launch: ["{dir}/logwatch.py"]
//! prerequisites:
//!   commands: [python3]
//!   env: []
//! login: nothing to log in to
//! ---
//! # Prose for the agent ...
//! ```
//!
//! * `name` (required): 1–64 of `A-Z a-z 0-9 . _ -`; what `open --package` takes.
//! * `description` (required): one or two sentences.
//! * `launch` (required): the command, a list (`[a, "b c"]` or `- item` lines;
//!   a plain string is split on whitespace). `{dir}` is replaced by the
//!   package's absolute directory; the caller's extra arguments are appended.
//! * `prerequisites` (optional): `commands` that must be on `PATH`, `env`
//!   variables that must be set and non-empty (login tokens, ...).
//! * `login` (optional): what a person does when a prerequisite is missing.
//!
//! Unknown keys are ignored. Packages are searched, in this order (see
//! [`search_dirs`]):
//!
//! 1. the user's packages, `CONFIG/tickloop/packages` (`dirs::config_dir()`,
//!    `~/.config/tickloop/packages` on Linux);
//! 2. the entries of `TICKLOOP_PACKAGES_PATH`, a `:`-separated list of
//!    directories whose subfolders are packages;
//! 3. the shipped packages, embedded in the executable and installed into
//!    `DATA/tickloop/packages/<version>` on first use ([`crate::shipped`]).
//!
//! The first package of a name wins; the ones it hides are listed in its
//! [`Package::shadows`].

pub mod shipped;

use serde_json::{json, Value};
use std::path::{Path, PathBuf};

/// The file that makes a folder a package.
pub const SKILL_FILE: &str = "SKILL.md";
/// The environment variable overriding the package search path.
pub const PATH_VAR: &str = "TICKLOOP_PACKAGES_PATH";

/// Why a package could not be read, found or launched.
#[derive(Debug, thiserror::Error)]
pub enum PackageError {
    #[error("cannot read {path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path}: {message}")]
    Invalid { path: PathBuf, message: String },
    #[error("no package named {name:?} (searched: {searched}); `tickloop packages` lists them")]
    NotFound { name: String, searched: String },
    #[error("package {name}: missing prerequisites: {missing}{login}")]
    MissingPrerequisites {
        name: String,
        missing: Missing,
        login: String,
    },
    #[error(transparent)]
    Shipped(#[from] crate::shipped::ShippedError),
}

/// What a package needs before it can be launched.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Prerequisites {
    /// Commands that must be found on `PATH` (or exist, when they hold a `/`).
    pub commands: Vec<String>,
    /// Environment variables that must be set and non-empty.
    pub env: Vec<String>,
}

/// The prerequisites that are not met right now.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Missing {
    pub commands: Vec<String>,
    pub env: Vec<String>,
}

impl Missing {
    pub fn is_empty(&self) -> bool {
        self.commands.is_empty() && self.env.is_empty()
    }
}

impl std::fmt::Display for Missing {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut parts = Vec::new();
        for c in &self.commands {
            parts.push(format!("command `{c}` not found on PATH"));
        }
        for e in &self.env {
            parts.push(format!("environment variable {e} not set"));
        }
        f.write_str(&parts.join("; "))
    }
}

/// One Tick package.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Package {
    pub name: String,
    pub description: String,
    /// The package's folder (absolute when found through [`discover`]).
    pub dir: PathBuf,
    /// The launch command as written (`{dir}` not yet replaced).
    pub launch: Vec<String>,
    pub prerequisites: Prerequisites,
    pub login: Option<String>,
    /// Who approves its mutating calls unless `open` says (front matter
    /// `approve: auto|ask|deny`).
    pub approve: Option<tickloop_proto::wire::ApprovalPolicy>,
    /// The prose after the front matter.
    pub body: String,
    /// Where it was found (set by [`discover_in`]).
    pub source: Source,
    /// The folders of packages of the same name it hides (searched later).
    pub shadows: Vec<PathBuf>,
}

impl Package {
    /// The prerequisites missing in this process's environment.
    pub fn missing(&self) -> Missing {
        Missing {
            commands: self
                .prerequisites
                .commands
                .iter()
                .filter(|c| find_command(c).is_none())
                .cloned()
                .collect(),
            env: self
                .prerequisites
                .env
                .iter()
                .filter(|v| std::env::var_os(v).is_none_or(|value| value.is_empty()))
                .cloned()
                .collect(),
        }
    }

    /// The argv to run: `launch` with `{dir}` replaced, then `extra`. A
    /// program named without a `/` that sits beside the running executable
    /// (an executable shipped with `tickloop`, like `tickloop-board`) is
    /// given by that absolute path; otherwise it is left to `PATH`.
    pub fn argv(&self, extra: &[String]) -> Vec<String> {
        let dir = self.dir.to_string_lossy();
        let mut argv: Vec<String> = self
            .launch
            .iter()
            .map(|arg| arg.replace("{dir}", &dir))
            .chain(extra.iter().cloned())
            .collect();
        if let Some(program) = argv.first_mut() {
            if let Some(beside) = beside_this_executable(program) {
                *program = beside.to_string_lossy().into_owned();
            }
        }
        argv
    }

    /// The argv to run, or which prerequisites are missing.
    pub fn launch_argv(&self, extra: &[String]) -> Result<Vec<String>, PackageError> {
        let missing = self.missing();
        if !missing.is_empty() {
            return Err(PackageError::MissingPrerequisites {
                name: self.name.clone(),
                missing,
                login: self
                    .login
                    .as_ref()
                    .map(|l| format!(" ({l})"))
                    .unwrap_or_default(),
            });
        }
        Ok(self.argv(extra))
    }

    /// What `tickloop packages` prints for this package.
    pub fn to_json(&self) -> Value {
        let missing = self.missing();
        json!({
            "name": self.name,
            "description": self.description,
            "dir": self.dir,
            "launch": self.argv(&[]),
            "prerequisites": {
                "commands": self.prerequisites.commands,
                "env": self.prerequisites.env,
            },
            "login": self.login,
            "ready": missing.is_empty(),
            "missing": {"commands": missing.commands, "env": missing.env},
            "skill": self.dir.join(SKILL_FILE),
            "source": self.source.as_str(),
            "shadows": self.shadows,
        })
    }
}

/// `tickloop packages` on a terminal: one line per package, then what is missing.
pub fn listing_text(packages: &[Package]) -> String {
    if packages.is_empty() {
        return format!(
            "no packages found (searched: {}; set {PATH_VAR} to a :-separated list of directories)\n",
            search_path()
                .iter()
                .map(|d| d.display().to_string())
                .collect::<Vec<_>>()
                .join(":")
        );
    }
    let width = packages
        .iter()
        .map(|p| p.name.len())
        .max()
        .unwrap_or(4)
        .max(4);
    let mut out = format!("{:width$}  {:5}  DESCRIPTION\n", "NAME", "READY");
    for p in packages {
        let missing = p.missing();
        let ready = if missing.is_empty() { "yes" } else { "no" };
        out.push_str(&format!(
            "{:width$}  {ready:5}  {}\n",
            p.name, p.description
        ));
        if !missing.is_empty() {
            out.push_str(&format!("{:width$}         missing: {missing}\n", ""));
        }
        if p.source != Source::Shipped || !p.shadows.is_empty() {
            out.push_str(&format!(
                "{:width$}         {} package in {}\n",
                "",
                p.source.as_str(),
                p.dir.display()
            ));
        }
        for hidden in &p.shadows {
            out.push_str(&format!(
                "{:width$}         shadows {}\n",
                "",
                hidden.display()
            ));
        }
    }
    out
}

/// Where a package was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Source {
    /// The user's folder, `CONFIG/tickloop/packages`.
    User,
    /// An entry of `TICKLOOP_PACKAGES_PATH`.
    #[default]
    Path,
    /// The packages shipped in the executable.
    Shipped,
}

impl Source {
    pub fn as_str(self) -> &'static str {
        match self {
            Source::User => "user",
            Source::Path => "path",
            Source::Shipped => "shipped",
        }
    }
}

/// The user's package folder, `CONFIG/tickloop/packages`.
pub fn user_dir() -> Option<PathBuf> {
    dirs::config_dir().map(|config| config.join("tickloop").join("packages"))
}

/// The directories searched for packages, in order, with their source (see
/// the module docs); installs the shipped packages when needed, and says why
/// it could not.
pub fn search_dirs() -> (Vec<(PathBuf, Source)>, Option<PackageError>) {
    let mut dirs = Vec::new();
    if let Some(user) = user_dir() {
        dirs.push((user, Source::User));
    }
    if let Some(list) = std::env::var_os(PATH_VAR) {
        dirs.extend(
            std::env::split_paths(&list)
                .filter(|p| !p.as_os_str().is_empty())
                .map(|p| (p, Source::Path)),
        );
    }
    match crate::shipped::ensure_installed() {
        Ok(shipped) => {
            dirs.push((shipped, Source::Shipped));
            (dirs, None)
        }
        Err(e) => (dirs, Some(PackageError::Shipped(e))),
    }
}

/// The directories searched for packages, in order (see the module docs).
pub fn search_path() -> Vec<PathBuf> {
    search_dirs().0.into_iter().map(|(dir, _)| dir).collect()
}

/// Every package in `search_path()`, first of a name wins, sorted by name;
/// plus the problems of folders whose `SKILL.md` could not be read.
pub fn discover() -> (Vec<Package>, Vec<PackageError>) {
    let (dirs, problem) = search_dirs();
    let (packages, mut problems) = discover_in(&dirs);
    problems.extend(problem);
    (packages, problems)
}

/// Every package in `dirs` (see [`discover`]): the first of a name wins and
/// records the folders of those it hides.
pub fn discover_in(dirs: &[(PathBuf, Source)]) -> (Vec<Package>, Vec<PackageError>) {
    let mut packages: Vec<Package> = Vec::new();
    let mut problems = Vec::new();
    for (dir, source) in dirs {
        let Ok(entries) = std::fs::read_dir(dir) else {
            continue;
        };
        let mut folders: Vec<PathBuf> = entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.join(SKILL_FILE).is_file())
            .collect();
        folders.sort();
        for folder in folders {
            match load(&folder) {
                Ok(mut package) => match packages.iter_mut().find(|p| p.name == package.name) {
                    Some(winner) => winner.shadows.push(package.dir),
                    None => {
                        package.source = *source;
                        packages.push(package);
                    }
                },
                Err(e) => problems.push(e),
            }
        }
    }
    packages.sort_by(|a, b| a.name.cmp(&b.name));
    (packages, problems)
}

/// The package called `name` in `search_path()`.
pub fn find(name: &str) -> Result<Package, PackageError> {
    let (dirs, problem) = search_dirs();
    let (packages, _) = discover_in(&dirs);
    if let Some(package) = packages.into_iter().find(|p| p.name == name) {
        return Ok(package);
    }
    // A shipped package that could not be installed: that is why.
    match problem {
        Some(shipped @ PackageError::Shipped(_)) if crate::shipped::names().contains(&name) => {
            Err(shipped)
        }
        problem => Err(PackageError::NotFound {
            name: name.to_string(),
            searched: if dirs.is_empty() {
                "no directories".to_string()
            } else {
                dirs.iter()
                    .map(|(d, _)| d.display().to_string())
                    .collect::<Vec<_>>()
                    .join(":")
            } + &problem.map(|p| format!("; {p}")).unwrap_or_default(),
        }),
    }
}

/// Reads the package in `folder` (its `SKILL.md`).
pub fn load(folder: &Path) -> Result<Package, PackageError> {
    let path = folder.join(SKILL_FILE);
    let text = std::fs::read_to_string(&path).map_err(|source| PackageError::Io {
        path: path.clone(),
        source,
    })?;
    let dir = std::path::absolute(folder).unwrap_or_else(|_| folder.to_path_buf());
    parse_skill(&text, &dir).map_err(|message| PackageError::Invalid { path, message })
}

/// A value of the front matter.
#[derive(Debug, Clone, PartialEq)]
enum Node {
    Scalar(String),
    List(Vec<String>),
    Map(Vec<(String, Node)>),
}

/// Parses a `SKILL.md` whose package lives in `dir`.
pub fn parse_skill(text: &str, dir: &Path) -> Result<Package, String> {
    let (front, body) = split_front_matter(text)?;
    let entries = parse_block(&front)?;
    let get = |key: &str| entries.iter().find(|(k, _)| k == key).map(|(_, v)| v);
    let scalar = |key: &str| -> Result<Option<String>, String> {
        match get(key) {
            None => Ok(None),
            Some(Node::Scalar(s)) => Ok(Some(s.clone())),
            Some(_) => Err(format!("`{key}` must be a single value")),
        }
    };
    let name = scalar("name")?.ok_or("front matter has no `name`")?;
    if !valid_name(&name) {
        return Err(format!(
            "name {name:?} is not 1-64 of A-Z a-z 0-9 . _ - (it is what `open --package` takes)"
        ));
    }
    let description = scalar("description")?
        .filter(|d| !d.trim().is_empty())
        .ok_or("front matter has no `description`")?;
    let launch = match get("launch") {
        None => return Err("front matter has no `launch` command".into()),
        Some(Node::Scalar(s)) => s.split_whitespace().map(str::to_string).collect(),
        Some(Node::List(items)) => items.clone(),
        Some(Node::Map(_)) => return Err("`launch` must be a list (argv) or a string".into()),
    };
    if launch.is_empty() || launch[0].trim().is_empty() {
        return Err("`launch` is empty".into());
    }
    let mut prerequisites = Prerequisites::default();
    match get("prerequisites") {
        None => {}
        Some(Node::Map(items)) => {
            for (key, value) in items {
                let list = match value {
                    Node::List(l) => l.clone(),
                    Node::Scalar(s) if s.is_empty() => Vec::new(),
                    Node::Scalar(s) => vec![s.clone()],
                    Node::Map(_) => {
                        return Err(format!("`prerequisites.{key}` must be a list"));
                    }
                };
                match key.as_str() {
                    "commands" => prerequisites.commands = list,
                    "env" => prerequisites.env = list,
                    _ => {}
                }
            }
        }
        Some(_) => return Err("`prerequisites` must hold `commands:` and `env:` lists".into()),
    }
    let login = scalar("login")?.filter(|l| !l.trim().is_empty());
    let approve = match scalar("approve")? {
        None => None,
        Some(text) => Some(
            tickloop_proto::wire::ApprovalPolicy::parse(text.trim())
                .ok_or_else(|| format!("`approve` is {text:?}; it takes auto, ask or deny"))?,
        ),
    };
    Ok(Package {
        approve,
        name,
        description,
        dir: dir.to_path_buf(),
        launch,
        prerequisites,
        login,
        body,
        source: Source::default(),
        shadows: Vec::new(),
    })
}

/// Whether `name` is a valid package (and instance) NAME.
pub fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
}

fn split_front_matter(text: &str) -> Result<(Vec<String>, String), String> {
    let mut lines = text.lines();
    match lines.next() {
        Some(first) if first.trim_end() == "---" => {}
        _ => return Err("SKILL.md must start with a `---` line (front matter)".into()),
    }
    let mut front = Vec::new();
    for line in lines.by_ref() {
        if line.trim_end() == "---" {
            let body: Vec<&str> = lines.collect();
            return Ok((front, body.join("\n")));
        }
        front.push(line.to_string());
    }
    Err("the front matter has no closing `---` line".into())
}

fn indent(line: &str) -> usize {
    line.len() - line.trim_start().len()
}

/// Parses `key: value` lines at the indentation of the first line; a key
/// with no value takes the more-indented lines under it (a list of `- item`
/// or a map of `key: value`).
fn parse_block(lines: &[String]) -> Result<Vec<(String, Node)>, String> {
    let lines: Vec<&String> = lines
        .iter()
        .filter(|l| !l.trim().is_empty() && !l.trim_start().starts_with('#'))
        .collect();
    let mut out = Vec::new();
    let Some(first) = lines.first() else {
        return Ok(out);
    };
    let base = indent(first);
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        if indent(line) != base {
            return Err(format!("unexpected indentation: {:?}", line.trim()));
        }
        let (key, value) = line
            .trim()
            .split_once(':')
            .ok_or_else(|| format!("expected `key: value`, got {:?}", line.trim()))?;
        let key = key.trim().to_string();
        let value = value.trim();
        i += 1;
        if !value.is_empty() {
            out.push((key, parse_value(value)?));
            continue;
        }
        let mut nested = Vec::new();
        while i < lines.len() && indent(lines[i]) > base {
            nested.push(lines[i].clone());
            i += 1;
        }
        if nested.is_empty() {
            out.push((key, Node::Scalar(String::new())));
        } else if nested.iter().all(|l| l.trim_start().starts_with('-')) {
            let items = nested
                .iter()
                .map(|l| unquote(l.trim_start()[1..].trim()))
                .collect::<Result<Vec<_>, _>>()?;
            out.push((key, Node::List(items)));
        } else {
            out.push((key, Node::Map(parse_block(&nested)?)));
        }
    }
    Ok(out)
}

fn parse_value(value: &str) -> Result<Node, String> {
    if value.starts_with('[') {
        if let Ok(items) = serde_json::from_str::<Vec<String>>(value) {
            return Ok(Node::List(items));
        }
        let inner = value
            .strip_suffix(']')
            .ok_or_else(|| format!("unclosed list: {value}"))?[1..]
            .trim();
        if inner.is_empty() {
            return Ok(Node::List(Vec::new()));
        }
        return inner
            .split(',')
            .map(|item| unquote(item.trim()))
            .collect::<Result<Vec<_>, _>>()
            .map(Node::List);
    }
    unquote(value).map(Node::Scalar)
}

fn unquote(value: &str) -> Result<String, String> {
    if value.len() >= 2 && value.starts_with('"') && value.ends_with('"') {
        return serde_json::from_str(value).map_err(|e| format!("bad quoted string {value}: {e}"));
    }
    if value.len() >= 2 && value.starts_with('\'') && value.ends_with('\'') {
        return Ok(value[1..value.len() - 1].replace("''", "'"));
    }
    Ok(value.to_string())
}

fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    p.metadata()
        .map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        .unwrap_or(false)
}

/// `command` (a bare name) in the directory of the running executable, if
/// an executable file is there.
pub fn beside_this_executable(command: &str) -> Option<PathBuf> {
    if command.is_empty() || command.contains('/') {
        return None;
    }
    let exe = std::env::current_exe().ok()?;
    let candidate = exe.parent()?.join(command);
    is_executable(&candidate).then_some(candidate)
}

/// Where `command` is found: itself when it holds a `/`; else beside the
/// running executable ([`beside_this_executable`]), else on `PATH`.
pub fn find_command(command: &str) -> Option<PathBuf> {
    let executable = is_executable;
    if command.contains('/') {
        let p = PathBuf::from(command);
        return executable(&p).then_some(p);
    }
    if let Some(beside) = beside_this_executable(command) {
        return Some(beside);
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(command))
        .find(|p| executable(p))
}

#[cfg(test)]
mod tests {
    use super::*;

    const SKILL: &str = "---\nname: demo\ndescription: \"A demo: with a colon\"\nlaunch: [\"{dir}/demo.py\", --fast]\nprerequisites:\n  commands:\n    - sh\n    - no-such-command-xyz\n  env: [NO_SUCH_VAR_XYZ]\nlogin: run `demo login`\n---\n# Demo\nProse.\n";

    #[test]
    fn parses_front_matter_and_body() {
        let p = parse_skill(SKILL, Path::new("/pkg/demo")).expect("parses");
        assert_eq!(p.name, "demo");
        assert_eq!(p.description, "A demo: with a colon");
        assert_eq!(p.launch, vec!["{dir}/demo.py", "--fast"]);
        assert_eq!(
            p.argv(&["x".into()]),
            vec!["/pkg/demo/demo.py", "--fast", "x"]
        );
        assert_eq!(p.prerequisites.commands, vec!["sh", "no-such-command-xyz"]);
        assert_eq!(p.prerequisites.env, vec!["NO_SUCH_VAR_XYZ"]);
        assert_eq!(p.login.as_deref(), Some("run `demo login`"));
        assert!(p.body.contains("Prose."));
    }

    #[test]
    fn reports_missing_prerequisites() {
        let p = parse_skill(SKILL, Path::new("/pkg/demo")).expect("parses");
        let missing = p.missing();
        assert_eq!(missing.commands, vec!["no-such-command-xyz"]);
        assert_eq!(missing.env, vec!["NO_SUCH_VAR_XYZ"]);
        let err = p.launch_argv(&[]).expect_err("missing");
        let text = err.to_string();
        assert!(text.contains("no-such-command-xyz") && text.contains("NO_SUCH_VAR_XYZ"));
    }

    #[test]
    fn string_launch_and_empty_lists() {
        let text = "---\nname: a\ndescription: d\nlaunch: python3 {dir}/a.py\nprerequisites:\n  commands: []\n  env:\n---\n";
        let p = parse_skill(text, Path::new("/p")).expect("parses");
        assert_eq!(p.launch, vec!["python3", "{dir}/a.py"]);
        assert!(p.missing().is_empty());
    }

    #[test]
    fn refuses_bad_skills() {
        for (text, want) in [
            ("name: a\n", "must start"),
            ("---\nname: a\n", "closing"),
            ("---\ndescription: d\nlaunch: x\n---\n", "no `name`"),
            (
                "---\nname: a b\ndescription: d\nlaunch: x\n---\n",
                "not 1-64",
            ),
            ("---\nname: a\nlaunch: x\n---\n", "no `description`"),
            ("---\nname: a\ndescription: d\n---\n", "no `launch`"),
            ("---\nname: a\ndescription: d\nlaunch: []\n---\n", "empty"),
            (
                "---\nname: a\ndescription: d\nlaunch: x\nbogus line\n---\n",
                "key: value",
            ),
        ] {
            let err = parse_skill(text, Path::new("/p")).expect_err(text);
            assert!(err.contains(want), "{text:?}: {err}");
        }
    }

    #[test]
    fn an_earlier_package_of_a_name_wins_and_records_what_it_shadows() {
        let user = tempfile::tempdir().expect("tempdir");
        let shipped = tempfile::tempdir().expect("tempdir");
        let write = |root: &Path, folder: &str, name: &str, description: &str| {
            let dir = root.join(folder);
            std::fs::create_dir_all(&dir).expect("mkdir");
            std::fs::write(
                dir.join(SKILL_FILE),
                format!("---\nname: {name}\ndescription: {description}\nlaunch: [sh]\n---\n"),
            )
            .expect("write");
            dir
        };
        write(user.path(), "counter", "counter", "mine");
        let hidden = write(shipped.path(), "counter", "counter", "shipped");
        write(shipped.path(), "other", "other", "only shipped");
        let (found, problems) = discover_in(&[
            (user.path().to_path_buf(), Source::User),
            (user.path().join("missing"), Source::Path),
            (shipped.path().to_path_buf(), Source::Shipped),
        ]);
        assert!(problems.is_empty(), "{problems:?}");
        let names: Vec<&str> = found.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(names, vec!["counter", "other"]);
        assert_eq!(found[0].description, "mine");
        assert_eq!(found[0].source, Source::User);
        assert_eq!(found[0].shadows, vec![hidden.clone()]);
        assert_eq!(found[1].source, Source::Shipped);
        let json = found[0].to_json();
        assert_eq!(json["source"], "user");
        assert_eq!(json["shadows"][0], hidden.to_string_lossy().as_ref());
        let text = listing_text(&found);
        assert!(
            text.contains("user package in") && text.contains("shadows"),
            "{text}"
        );
    }
}
