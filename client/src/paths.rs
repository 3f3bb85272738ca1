//! Where Tickloop keeps its sockets: the private runtime directory.
//!
//! The directory is `$TICKLOOP_RUNTIME_DIR`, else the user's runtime
//! directory (`dirs::runtime_dir()`) + `/tickloop`, else `/tmp/tickloop-$UID`.
//! It is created with mode 0700 (a directory of ours with a looser mode is
//! tightened; one owned by someone else is refused) and holds:
//!
//! * `tickhost.sock`, `tickhost.pid`, `tickhost.log` — the daemon's;
//! * `i/` (0700) — one folder per instance, `i/<kind>-<name>/` (0700;
//!   `kind` is `hosted`, `shell` or `artifact`), holding the same file
//!   names for every instance ([`InstanceFiles`]): no NAME, dots and all,
//!   can reach another instance's files. The socket path is as long as the
//!   `l/<kind>-<name>.sock` of the layout before (which [`crate::legacy_layout`]
//!   moves here once).
//!
//! Also here: instance ids (`hosted:NAME`, `shell:NAME`, `artifact:NAME`) and NAME validation,
//! since folder names are made from them.

use std::fs;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// The longest path a Unix socket address can hold (`sun_path` is 108 bytes,
/// one of which is the terminating NUL).
pub const MAX_SOCKET_PATH: usize = 107;

/// The longest instance NAME.
pub const MAX_NAME: usize = 64;

/// Why the runtime directory or one of its paths cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum PathsError {
    #[error("cannot create the runtime directory {path}: {source}; set TICKLOOP_RUNTIME_DIR to a directory you can write")]
    Create {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot use the runtime directory {path}: {source}")]
    Inspect {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(
        "the runtime directory {path} is not a directory; remove it or set TICKLOOP_RUNTIME_DIR"
    )]
    NotADirectory { path: PathBuf },
    #[error("the runtime directory {path} belongs to uid {owner}, not to you (uid {uid}); set TICKLOOP_RUNTIME_DIR to a directory of yours")]
    WrongOwner { path: PathBuf, owner: u32, uid: u32 },
    #[error("the socket path {path} is {len} bytes, longer than the {MAX_SOCKET_PATH} a Unix socket allows; set TICKLOOP_RUNTIME_DIR to a shorter directory or use a shorter name")]
    SocketPathTooLong { path: PathBuf, len: usize },
}

/// The three kinds of instance, which prefix their ids.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum InstanceKind {
    /// A Tick: `hosted:NAME`.
    Hosted,
    /// A plain terminal program: `shell:NAME`.
    Shell,
    /// A Tick written as a file, run again on each save: `artifact:NAME`.
    Artifact,
}

impl InstanceKind {
    /// Every kind.
    pub const ALL: [InstanceKind; 3] = [
        InstanceKind::Hosted,
        InstanceKind::Shell,
        InstanceKind::Artifact,
    ];

    /// The id prefix (and file name prefix): `hosted`, `shell` or `artifact`.
    pub fn prefix(self) -> &'static str {
        match self {
            InstanceKind::Hosted => "hosted",
            InstanceKind::Shell => "shell",
            InstanceKind::Artifact => "artifact",
        }
    }

    /// The kind of an `open`: `--shell`, `--artifact`, or neither.
    pub fn of_open(shell: bool, artifact: bool) -> Self {
        if shell {
            InstanceKind::Shell
        } else if artifact {
            InstanceKind::Artifact
        } else {
            InstanceKind::Hosted
        }
    }

    /// Whether it speaks the Tick protocol (`hosted:` and `artifact:`).
    pub fn is_tick(self) -> bool {
        self != InstanceKind::Shell
    }

    /// The full id of NAME of this kind.
    pub fn id(self, name: &str) -> String {
        format!("{}:{name}", self.prefix())
    }
}

/// `hosted:NAME` / `shell:NAME` split into its kind and NAME; `None` for
/// anything else (including a bad NAME).
pub fn parse_id(id: &str) -> Option<(InstanceKind, &str)> {
    let (prefix, name) = id.split_once(':')?;
    let kind = match prefix {
        "hosted" => InstanceKind::Hosted,
        "shell" => InstanceKind::Shell,
        "artifact" => InstanceKind::Artifact,
        _ => return None,
    };
    validate_name(name).ok()?;
    Some((kind, name))
}

/// Checks an instance NAME: 1–64 of `A-Z a-z 0-9 . _ -`. The error says
/// what is wrong, for the client.
pub fn validate_name(name: &str) -> Result<(), String> {
    if name.is_empty() {
        return Err("an instance name cannot be empty; use 1-64 of A-Z a-z 0-9 . _ -".into());
    }
    if name.len() > MAX_NAME {
        return Err(format!(
            "the instance name {name:?} is {} characters; use at most {MAX_NAME} of A-Z a-z 0-9 . _ -",
            name.len()
        ));
    }
    if let Some(bad) = name.chars().find(|c| !is_name_char(*c)) {
        return Err(format!(
            "the instance name {name:?} contains {bad:?}; use only A-Z a-z 0-9 . _ -"
        ));
    }
    if name == "." || name == ".." {
        return Err(format!(
            "the instance name {name:?} is reserved; use another"
        ));
    }
    Ok(())
}

fn is_name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-')
}

/// The default NAME for a program: its file name without the extension,
/// other characters replaced by `_`, cut to leave room for a `-N` suffix;
/// `tick` when nothing is left.
pub fn default_name(program: &str) -> String {
    let stem = Path::new(program)
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut name: String = stem
        .chars()
        .map(|c| if is_name_char(c) { c } else { '_' })
        .take(MAX_NAME - 6)
        .collect();
    if name.is_empty() || name == "." || name == ".." {
        name = "tick".into();
    }
    name
}

/// `base`, or the first of `base-2`, `base-3`, ... for which `taken` is false.
pub fn unique_name(base: &str, taken: impl Fn(&str) -> bool) -> String {
    if !taken(base) {
        return base.to_string();
    }
    (2u64..)
        .map(|n| format!("{base}-{n}"))
        .find(|candidate| !taken(candidate))
        .unwrap_or_else(|| base.to_string())
}

/// The folder of one instance, `i/<kind>-<name>/`, and its files.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InstanceFiles {
    /// The folder itself.
    pub folder: PathBuf,
    /// The launcher's socket, `sock`.
    pub socket: PathBuf,
    /// The launcher's record (`wire::LauncherRecord`), `record.json`.
    pub record: PathBuf,
    /// The launcher's stderr, `launcher.log`.
    pub log: PathBuf,
    /// The last screen of an ended instance (`wire::ScreenReply`),
    /// `screen.json`, kept until the instance is forgotten.
    pub screen: PathBuf,
    /// The activity record of an ended instance (`wire::ActivityRecord`),
    /// `activity.json`, kept like its last screen.
    pub activity: PathBuf,
    /// The approval log, `approvals.jsonl`: one `wire::ApprovalLogEntry` a line.
    pub approvals: PathBuf,
}

/// The socket's name in an instance's folder.
pub const SOCKET_FILE: &str = "sock";
/// The record's name in an instance's folder.
pub const RECORD_FILE: &str = "record.json";

impl InstanceFiles {
    /// The files of the instance folder `folder`.
    pub fn in_folder(folder: &Path) -> Self {
        InstanceFiles {
            folder: folder.to_path_buf(),
            socket: folder.join(SOCKET_FILE),
            record: folder.join(RECORD_FILE),
            log: folder.join("launcher.log"),
            screen: folder.join("screen.json"),
            activity: folder.join("activity.json"),
            approvals: folder.join("approvals.jsonl"),
        }
    }

    /// The files beside the launcher socket `socket` (its folder's).
    pub fn of_socket(socket: &Path) -> Self {
        Self::in_folder(socket.parent().unwrap_or(Path::new("/")))
    }

    /// Creates the folder (0700, and its missing parents) when absent.
    pub fn create_folder(&self) -> std::io::Result<()> {
        fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(&self.folder)
    }

    /// Removes the folder and everything in it; one already gone is fine.
    pub fn remove(&self) {
        let _ = fs::remove_dir_all(&self.folder);
    }

    /// Removes the socket and the record, keeping the log (for a failed open).
    pub fn remove_but_log(&self) {
        for path in [&self.socket, &self.record] {
            let _ = fs::remove_file(path);
        }
    }
}

/// The folder name of instance `kind:name`, `<kind>-<name>`: the kinds'
/// prefixes differ before their `-`, so two ids never share a folder.
pub fn folder_name(kind: InstanceKind, name: &str) -> String {
    format!("{}-{name}", kind.prefix())
}

/// The instance id of a folder name (the reverse of [`folder_name`]);
/// `None` for a name no instance has.
pub fn id_of_folder(folder: &str) -> Option<String> {
    let (prefix, name) = folder.split_once('-')?;
    let id = format!("{prefix}:{name}");
    parse_id(&id)?;
    Some(id)
}

/// The runtime directory (created and checked by [`RuntimeDir::ensure`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RuntimeDir {
    root: PathBuf,
}

impl RuntimeDir {
    /// Where the runtime directory is, without touching the file system.
    pub fn locate() -> PathBuf {
        locate_with(
            std::env::var_os("TICKLOOP_RUNTIME_DIR").map(PathBuf::from),
            dirs::runtime_dir(),
            current_uid(),
        )
    }

    /// The runtime directory at its usual place, created and checked.
    pub fn ensure_default() -> Result<Self, PathsError> {
        Self::ensure(&Self::locate())
    }

    /// `root` as the runtime directory: created (0700) when absent, its mode
    /// tightened to 0700 when looser, refused when it is not ours; `i/` too.
    pub fn ensure(root: &Path) -> Result<Self, PathsError> {
        let dir = RuntimeDir {
            root: root.to_path_buf(),
        };
        ensure_private_dir(&dir.root)?;
        ensure_private_dir(&dir.instances_dir())?;
        dir.check_socket_path(&dir.socket())?;
        Ok(dir)
    }

    /// The runtime directory `root`, trusted as it is (no checks).
    pub fn at(root: &Path) -> Self {
        RuntimeDir {
            root: root.to_path_buf(),
        }
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// `tickhost.sock`.
    pub fn socket(&self) -> PathBuf {
        self.root.join("tickhost.sock")
    }

    /// `tickhost.pid` (also the daemon's single-instance lock).
    pub fn pid_file(&self) -> PathBuf {
        self.root.join("tickhost.pid")
    }

    /// `tickhost.log`.
    pub fn log_file(&self) -> PathBuf {
        self.root.join("tickhost.log")
    }

    /// `i/`, the instances' folders.
    pub fn instances_dir(&self) -> PathBuf {
        self.root.join("i")
    }

    /// `l/`, where the layout before one folder per instance kept each
    /// instance's files side by side (read once and moved, by
    /// [`crate::legacy_layout`]).
    pub fn legacy_launchers_dir(&self) -> PathBuf {
        self.root.join("l")
    }

    /// The files of instance `kind:name`; errors when its socket path would
    /// be too long.
    pub fn instance_files(
        &self,
        kind: InstanceKind,
        name: &str,
    ) -> Result<InstanceFiles, PathsError> {
        let folder = self.instances_dir().join(folder_name(kind, name));
        let files = InstanceFiles::in_folder(&folder);
        self.check_socket_path(&files.socket)?;
        Ok(files)
    }

    /// The folders of `i/` that are an instance's, with their ids, sorted.
    pub fn instance_folders(&self) -> Vec<(String, InstanceFiles)> {
        let Ok(entries) = fs::read_dir(self.instances_dir()) else {
            return Vec::new();
        };
        let mut found: Vec<(String, InstanceFiles)> = entries
            .filter_map(|e| {
                let e = e.ok()?;
                let id = id_of_folder(e.file_name().to_str()?)?;
                e.file_type()
                    .ok()?
                    .is_dir()
                    .then(|| (id, InstanceFiles::in_folder(&e.path())))
            })
            .collect();
        found.sort_by(|a, b| a.0.cmp(&b.0));
        found
    }

    /// Errors when `path` cannot be a Unix socket address.
    pub fn check_socket_path(&self, path: &Path) -> Result<(), PathsError> {
        let len = path.as_os_str().len();
        if len > MAX_SOCKET_PATH {
            return Err(PathsError::SocketPathTooLong {
                path: path.to_path_buf(),
                len,
            });
        }
        Ok(())
    }
}

/// The choice of [`RuntimeDir::locate`], from its inputs.
fn locate_with(env: Option<PathBuf>, runtime: Option<PathBuf>, uid: u32) -> PathBuf {
    if let Some(dir) = env.filter(|d| !d.as_os_str().is_empty()) {
        return absolute(&dir);
    }
    if let Some(dir) = runtime {
        return dir.join("tickloop");
    }
    PathBuf::from(format!("/tmp/tickloop-{uid}"))
}

fn absolute(path: &Path) -> PathBuf {
    std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf())
}

/// The real uid of this process.
pub fn current_uid() -> u32 {
    // SAFETY: getuid has no preconditions and cannot fail.
    unsafe { libc::getuid() }
}

/// Creates `path` (and missing parents) with mode 0700, or checks an
/// existing one: ours, a directory, mode tightened to 0700.
fn ensure_private_dir(path: &Path) -> Result<(), PathsError> {
    match fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(path)
    {
        Ok(()) => {}
        Err(source) => {
            return Err(PathsError::Create {
                path: path.to_path_buf(),
                source,
            })
        }
    }
    let meta = fs::metadata(path).map_err(|source| PathsError::Inspect {
        path: path.to_path_buf(),
        source,
    })?;
    if !meta.is_dir() {
        return Err(PathsError::NotADirectory {
            path: path.to_path_buf(),
        });
    }
    let uid = current_uid();
    if meta.uid() != uid {
        return Err(PathsError::WrongOwner {
            path: path.to_path_buf(),
            owner: meta.uid(),
            uid,
        });
    }
    if meta.mode() & 0o777 != 0o700 {
        fs::set_permissions(path, fs::Permissions::from_mode(0o700)).map_err(|source| {
            PathsError::Inspect {
                path: path.to_path_buf(),
                source,
            }
        })?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locate_prefers_env_then_runtime_then_tmp() {
        assert_eq!(
            locate_with(Some("/x/y".into()), Some("/run/user/5".into()), 5),
            PathBuf::from("/x/y")
        );
        assert_eq!(
            locate_with(Some("".into()), Some("/run/user/5".into()), 5),
            PathBuf::from("/run/user/5/tickloop")
        );
        assert_eq!(
            locate_with(None, None, 1000),
            PathBuf::from("/tmp/tickloop-1000")
        );
    }

    #[test]
    fn names_are_checked() {
        assert!(validate_name("counter").is_ok());
        assert!(validate_name("a.b_c-D9").is_ok());
        assert!(validate_name(&"x".repeat(64)).is_ok());
        assert!(validate_name(&"x".repeat(65)).is_err());
        assert!(validate_name("").is_err());
        assert!(validate_name("a b").is_err());
        assert!(validate_name("a/b").is_err());
        assert!(validate_name("é").is_err());
        assert!(validate_name("..").is_err());
    }

    #[test]
    fn ids_parse() {
        assert_eq!(
            parse_id("hosted:counter"),
            Some((InstanceKind::Hosted, "counter"))
        );
        assert_eq!(parse_id("shell:sh"), Some((InstanceKind::Shell, "sh")));
        assert_eq!(parse_id("other:x"), None);
        assert_eq!(parse_id("hosted:"), None);
        assert_eq!(parse_id("counter"), None);
        assert_eq!(InstanceKind::Shell.id("a"), "shell:a");
        assert_eq!(
            parse_id("artifact:dash"),
            Some((InstanceKind::Artifact, "dash"))
        );
    }

    #[test]
    fn default_names_come_from_the_file_stem() {
        assert_eq!(default_name("/usr/bin/python3"), "python3");
        assert_eq!(default_name("tests/ticks/counter.py"), "counter");
        assert_eq!(default_name("my prog.sh"), "my_prog");
        assert_eq!(default_name(""), "tick");
        assert!(default_name(&"y".repeat(200)).len() <= MAX_NAME - 6);
        assert!(validate_name(&default_name("ä.py")).is_ok());
    }

    #[test]
    fn unique_names_count_up() {
        let taken = ["counter", "counter-2"];
        assert_eq!(unique_name("counter", |n| taken.contains(&n)), "counter-3");
        assert_eq!(unique_name("other", |n| taken.contains(&n)), "other");
    }

    #[test]
    fn runtime_dir_is_private_and_tightened() {
        let tmp = std::env::temp_dir().join(format!("tl-paths-{}", std::process::id()));
        let root = tmp.join("rt");
        let dir = RuntimeDir::ensure(&root).expect("create");
        let mode = fs::metadata(&root).expect("meta").mode() & 0o777;
        assert_eq!(mode, 0o700);
        assert!(dir.instances_dir().is_dir());
        fs::set_permissions(&root, fs::Permissions::from_mode(0o755)).expect("chmod");
        RuntimeDir::ensure(&root).expect("again");
        assert_eq!(fs::metadata(&root).expect("meta").mode() & 0o777, 0o700);
        let files = dir
            .instance_files(InstanceKind::Hosted, "counter")
            .expect("files");
        assert_eq!(files.socket, root.join("i/hosted-counter/sock"));
        assert_eq!(files.record, root.join("i/hosted-counter/record.json"));
        assert_eq!(files.log, root.join("i/hosted-counter/launcher.log"));
        assert_eq!(InstanceFiles::of_socket(&files.socket), files);
        let _ = fs::remove_dir_all(&tmp);
    }

    #[test]
    fn no_name_reaches_another_instance_s_folder() {
        let dir = RuntimeDir::at(Path::new("/r"));
        let x = dir.instance_files(InstanceKind::Hosted, "x").expect("x");
        for other in ["x.screen", "x.activity", "x.log", "x.json", "x.sock", "x-2"] {
            for kind in [
                InstanceKind::Hosted,
                InstanceKind::Shell,
                InstanceKind::Artifact,
            ] {
                let files = dir.instance_files(kind, other).expect("files");
                assert_ne!(files.folder, x.folder);
                assert!(!files.folder.starts_with(&x.folder), "{files:?}");
                assert_eq!(
                    id_of_folder(&folder_name(kind, other)),
                    Some(kind.id(other))
                );
            }
        }
        assert_eq!(id_of_folder("hosted-x"), Some("hosted:x".into()));
        assert_eq!(id_of_folder("other-x"), None);
        assert_eq!(id_of_folder("hosted-"), None);
        assert_eq!(id_of_folder(".hosted-x.tmp"), None);
    }

    #[test]
    fn long_socket_paths_are_refused() {
        let dir = RuntimeDir::at(Path::new(&format!("/tmp/{}", "d".repeat(60))));
        let err = dir
            .instance_files(InstanceKind::Hosted, &"n".repeat(64))
            .expect_err("too long");
        assert!(err.to_string().contains("TICKLOOP_RUNTIME_DIR"));
    }
}
