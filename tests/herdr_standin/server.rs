//! The stand-in Herdr server for Tickloop's Herdr tests: a Unix socket that
//! answers as Herdr 0.8.0 does and is as strict as it.
//!
//! Every request line is validated against Herdr's own JSON Schema
//! (`view-herdr/herdr-api.schema.json`, the file `herdr api schema --json`
//! prints); a line that fails is refused the way Herdr refuses it (`id` "",
//! `invalid_request`, "invalid request: ...") and recorded in
//! [`StandIn::refused`], which every test checks is empty at its end. Every
//! answer the stand-in gives is validated against the schema's success or
//! error response too. The methods Tickloop uses behave as Herdr's do
//! (`plugin.pane.open`'s placement rules and error codes; `pane.close`
//! sends SIGHUP to the pane's processes after the pane is gone; reports on
//! unknown panes are `pane_not_found`); any other valid method is answered
//! `unsupported_by_standin`, so a test fails rather than pass on a guess.
//!
//! Plugin panes run their manifest's argv in a real terminal: a private
//! tmux server per pane, with the environment Herdr gives. The pane closes
//! when its command exits (the tmux pane stays, showing `ATTACH-EXIT N`, for
//! the test to read). [`StandIn::restart`] does what a Herdr server restart
//! does: every pane's processes get SIGHUP, the panes come back at their ids
//! as plain shells in their last directory, and the plugin's `[[startup]]`
//! command runs.

use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixListener;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex, MutexGuard};

/// Herdr's schema, as shipped with Tickloop.
const SCHEMA: &str = include_str!("../../view-herdr/herdr-api.schema.json");

/// A pane of the stand-in.
#[derive(Debug, Clone)]
pub struct Pane {
    pub pane_id: String,
    pub workspace_id: String,
    pub tab_id: String,
    pub cwd: PathBuf,
    /// `Some((entrypoint, placement))` for a plugin pane; `None` for a shell.
    pub plugin: Option<(String, String)>,
    /// The manifest argv it runs (plugin panes).
    pub command: Vec<String>,
    /// The environment Herdr gave it.
    pub env: BTreeMap<String, String>,
    /// Its tmux server (`tmux -L NAME`), when it runs something.
    pub tmux_socket: Option<String>,
    /// Closed by a request or a restart (its command's exit is seen through
    /// the marker file).
    pub closed: bool,
    /// The last `pane.report_agent` params, until released.
    pub agent: Option<Value>,
    /// The merged `pane.report_metadata` values.
    pub title: Option<String>,
    pub display_agent: Option<String>,
    pub tokens: BTreeMap<String, String>,
    pub state_labels: BTreeMap<String, String>,
}

/// Tells the stand-ins of one test process apart (their tmux names).
static STANDINS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

struct State {
    /// `herdr-standin-PID-K`: the prefix of this stand-in's tmux servers.
    name: String,
    dir: PathBuf,
    bin: PathBuf,
    path_var: String,
    socket: PathBuf,
    panes: Vec<Pane>,
    popups: Vec<Pane>,
    next_pane: usize,
    next_tab: usize,
    requests: Vec<Value>,
    refused: Vec<String>,
    fail_next: BTreeMap<String, String>,
    focused: Option<String>,
}

/// The stand-in Herdr server (see the module documentation).
pub struct StandIn {
    state: Arc<Mutex<State>>,
    pub socket: PathBuf,
}

fn validator(which: &str) -> jsonschema::Validator {
    let mut root: Value = serde_json::from_str(SCHEMA).expect("Herdr's schema is JSON");
    root["$ref"] = json!(format!("#/schemas/{which}"));
    jsonschema::validator_for(&root).expect("Herdr's schema compiles")
}

fn first_error(validator: &jsonschema::Validator, value: &Value) -> Option<String> {
    validator
        .iter_errors(value)
        .next()
        .map(|e| format!("{e} at `{}`", e.instance_path()))
}

impl StandIn {
    /// Starts serving on `dir/herdr.sock`; panes get `bin` (the stand-in
    /// CLI and `tickloop`) first on PATH, as Herdr's do when Tickloop was
    /// installed on it. The caller's pane `w1:p0` (a shell) exists.
    pub fn start(dir: &Path, bin: &Path) -> StandIn {
        let socket = dir.join("herdr.sock");
        let listener = UnixListener::bind(&socket).expect("bind the stand-in Herdr socket");
        let k = STANDINS.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let state = Arc::new(Mutex::new(State {
            name: format!("herdr-standin-{}-{k}", std::process::id()),
            dir: dir.to_path_buf(),
            bin: bin.to_path_buf(),
            path_var: format!(
                "{}:{}",
                bin.display(),
                std::env::var("PATH").unwrap_or_default()
            ),
            socket: socket.clone(),
            panes: vec![Pane {
                pane_id: "w1:p0".into(),
                workspace_id: "w1".into(),
                tab_id: "w1:t1".into(),
                cwd: dir.to_path_buf(),
                plugin: None,
                command: Vec::new(),
                env: BTreeMap::new(),
                tmux_socket: None,
                closed: false,
                agent: None,
                title: None,
                display_agent: None,
                tokens: BTreeMap::new(),
                state_labels: BTreeMap::new(),
            }],
            popups: Vec::new(),
            next_pane: 1,
            next_tab: 2,
            requests: Vec::new(),
            refused: Vec::new(),
            fail_next: BTreeMap::new(),
            focused: Some("w1:p0".into()),
        }));
        let shared = Arc::clone(&state);
        std::thread::spawn(move || {
            let requests = validator("request");
            let success = validator("success_response");
            let error = validator("error_response");
            // One connection at a time, as Herdr's main loop handles them.
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { continue };
                let mut line = String::new();
                if BufReader::new(&stream).read_line(&mut line).is_err() {
                    continue;
                }
                let answer = {
                    let mut st = match shared.lock() {
                        Ok(st) => st,
                        Err(poisoned) => poisoned.into_inner(),
                    };
                    let answer = st.answer(line.trim(), &requests);
                    let check = if answer.get("error").is_some() {
                        &error
                    } else {
                        &success
                    };
                    if let Some(problem) = first_error(check, &answer) {
                        st.refused.push(format!(
                            "the stand-in's own answer {answer} is not Herdr's shape: {problem}"
                        ));
                    }
                    answer
                };
                let _ = writeln!(stream, "{answer}");
            }
        });
        StandIn { state, socket }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        match self.state.lock() {
            Ok(st) => st,
            Err(poisoned) => poisoned.into_inner(),
        }
    }

    /// Every request received (valid or not), in order.
    pub fn requests(&self) -> Vec<Value> {
        self.lock().requests.clone()
    }

    /// What was refused as invalid (and answers of the wrong shape).
    pub fn refused(&self) -> Vec<String> {
        self.lock().refused.clone()
    }

    /// [`Self::refused`], emptied (for a test of the stand-in itself).
    pub fn take_refused(&self) -> Vec<String> {
        std::mem::take(&mut self.lock().refused)
    }

    /// The plugin panes opened (not popups), in order, and the popups after.
    pub fn plugin_panes(&self) -> Vec<Pane> {
        let st = self.lock();
        st.panes
            .iter()
            .filter(|p| p.plugin.is_some())
            .chain(st.popups.iter())
            .cloned()
            .collect()
    }

    /// The panes Herdr has now (open ones).
    pub fn pane(&self, pane_id: &str) -> Option<Pane> {
        let mut st = self.lock();
        st.refresh_exits();
        st.panes
            .iter()
            .find(|p| p.pane_id == pane_id && !p.closed)
            .cloned()
    }

    /// Every open pane id.
    pub fn open_panes(&self) -> Vec<String> {
        let mut st = self.lock();
        st.refresh_exits();
        st.panes
            .iter()
            .filter(|p| !p.closed)
            .map(|p| p.pane_id.clone())
            .collect()
    }

    /// Makes the next `method` request fail with Herdr's error `code`.
    pub fn fail_next(&self, method: &str, code: &str) {
        self.lock()
            .fail_next
            .insert(method.to_string(), code.to_string());
    }

    /// A Herdr server restart: every pane's processes get SIGHUP, then the
    /// open panes come back at their ids as plain shells in their last
    /// directory (popups are gone). Returns the plugin's `[[startup]]`
    /// command output (run as Herdr runs it: in the plugin folder, with
    /// the plugin's environment and no pane).
    ///
    /// `env` is what the user's environment adds (Herdr's server was
    /// started from it).
    pub fn restart(&self, user_env: &[(&str, &Path)]) -> std::process::Output {
        let startup = {
            let mut st = self.lock();
            st.refresh_exits();
            for pane in st.panes.iter().chain(st.popups.iter()) {
                if let Some(socket) = &pane.tmux_socket {
                    kill_tmux(socket);
                }
            }
            st.popups.clear();
            let mut back = Vec::new();
            for pane in st.panes.iter_mut() {
                pane.tmux_socket = None;
                pane.agent = None;
                if pane.closed || pane.pane_id == "w1:p0" {
                    continue;
                }
                pane.plugin = None;
                pane.command = Vec::new();
                back.push(pane.pane_id.clone());
            }
            for pane_id in back {
                let Some(i) = st.panes.iter().position(|p| p.pane_id == pane_id) else {
                    continue;
                };
                let pane = st.panes[i].clone();
                let socket = format!("{}-shell-{i}", st.name);
                // A plain shell, idle (what Herdr starts in a restored pane).
                let line = "exec sleep 100000";
                if st
                    .spawn_tmux(&socket, &pane.cwd, &BTreeMap::new(), line)
                    .is_ok()
                {
                    st.panes[i].tmux_socket = Some(socket);
                }
            }
            st.plugin_env("tickloop", None)
        };
        let (root, env) = startup;
        let manifest: toml::Table = std::fs::read_to_string(root.join("herdr-plugin.toml"))
            .ok()
            .and_then(|t| toml::from_str(&t).ok())
            .expect("the linked plugin's manifest");
        let argv: Vec<String> = manifest["startup"][0]["command"]
            .as_array()
            .expect("a [[startup]] command")
            .iter()
            .map(|a| a.as_str().unwrap_or_default().to_string())
            .collect();
        let path_var = self.lock().path_var.clone();
        Command::new(&argv[0])
            .args(&argv[1..])
            .current_dir(&root)
            .envs(env)
            .env("PATH", path_var)
            .envs(user_env.iter().map(|(k, v)| (*k, *v)))
            .env_remove("HERDR_PANE_ID")
            .output()
            .expect("running the startup command")
    }

    /// Stops every pane's tmux.
    pub fn shutdown(&self) {
        let st = self.lock();
        for pane in st.panes.iter().chain(st.popups.iter()) {
            if let Some(socket) = &pane.tmux_socket {
                kill_tmux(socket);
            }
        }
    }
}

/// Whether `pid` runs (a zombie does not).
fn running(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().next())
            .is_some_and(|state| state != "Z" && state != "X"),
        Err(_) => false,
    }
}

/// Closes a pane's terminal as Herdr does: its processes get SIGHUP (tmux's
/// kill-server hangs up its panes), and after 250 ms SIGTERM, after 250 ms
/// more SIGKILL, until they are gone.
fn kill_tmux(socket: &str) {
    let pids: Vec<i32> = Command::new("tmux")
        .args(["-L", socket, "list-panes", "-a", "-F", "#{pane_pid}"])
        .output()
        .map(|o| {
            String::from_utf8_lossy(&o.stdout)
                .lines()
                .filter_map(|l| l.trim().parse().ok())
                .collect()
        })
        .unwrap_or_default();
    let _ = Command::new("tmux")
        .args(["-L", socket, "kill-server"])
        .output();
    // The pane's command line (`sh -c ...`) and what it runs, by session.
    let session_of = |pid: i32| -> Option<i32> {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        let (_, rest) = stat.rsplit_once(')')?;
        rest.split_whitespace().nth(3)?.parse().ok()
    };
    let members = |sessions: &[i32]| -> Vec<i32> {
        std::fs::read_dir("/proc")
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
            .filter(|pid| session_of(*pid).is_some_and(|s| sessions.contains(&s)))
            .filter(|pid| running(*pid))
            .collect()
    };
    for signal in [libc::SIGTERM, libc::SIGKILL] {
        for _ in 0..25 {
            if members(&pids).is_empty() {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        for pid in members(&pids) {
            // SAFETY: kill(2) on a process of the stand-in's own pane.
            unsafe { libc::kill(pid, signal) };
        }
    }
}

fn pane_not_found(id: &str, pane_id: &str) -> Value {
    error(id, "pane_not_found", &format!("pane {pane_id} not found"))
}

fn error(id: &str, code: &str, message: &str) -> Value {
    json!({"id": id, "error": {"code": code, "message": message}})
}

fn ok(id: &str, result: Value) -> Value {
    json!({"id": id, "result": result})
}

impl State {
    /// The file a pane's command line touches when its command exits (one
    /// per tmux server, so a restored pane starts fresh).
    fn marker(&self, tmux_socket: &str) -> PathBuf {
        self.dir.join("closed").join(tmux_socket)
    }

    /// Plugin panes whose command exited are closed (Herdr closes a pane
    /// when its process exits).
    fn refresh_exits(&mut self) {
        let dir = self.dir.clone();
        for pane in self.panes.iter_mut() {
            if let (false, Some(socket)) = (pane.closed, &pane.tmux_socket) {
                if dir.join("closed").join(socket).exists() {
                    pane.closed = true;
                }
            }
        }
    }

    fn registry(&self) -> Value {
        std::fs::read_to_string(self.dir.join("plugins.json"))
            .ok()
            .and_then(|t| serde_json::from_str(&t).ok())
            .unwrap_or_else(|| json!({}))
    }

    fn save_registry(&self, registry: &Value) {
        let _ = std::fs::write(self.dir.join("plugins.json"), registry.to_string());
    }

    /// A plugin's root and the environment Herdr gives its commands.
    fn plugin_env(
        &self,
        plugin_id: &str,
        entrypoint: Option<&str>,
    ) -> (PathBuf, BTreeMap<String, String>) {
        let root = PathBuf::from(
            self.registry()[plugin_id]["root"]
                .as_str()
                .unwrap_or_default(),
        );
        let state_dir = self.dir.join("state").join(plugin_id);
        let config_dir = self.dir.join("config").join(plugin_id);
        let _ = std::fs::create_dir_all(&state_dir);
        let _ = std::fs::create_dir_all(&config_dir);
        let mut env = BTreeMap::new();
        let mut set = |k: &str, v: String| {
            env.insert(k.to_string(), v);
        };
        set("HERDR_ENV", "1".into());
        set("HERDR_SOCKET_PATH", self.socket.display().to_string());
        set(
            "HERDR_BIN_PATH",
            self.bin.join("herdr").display().to_string(),
        );
        set("HERDR_PLUGIN_ID", plugin_id.into());
        if let Some(e) = entrypoint {
            set("HERDR_PLUGIN_ENTRYPOINT_ID", e.into());
        }
        set("HERDR_PLUGIN_ROOT", root.display().to_string());
        set("HERDR_PLUGIN_CONFIG_DIR", config_dir.display().to_string());
        set("HERDR_PLUGIN_STATE_DIR", state_dir.display().to_string());
        set("COLORTERM", "truecolor".into());
        (root, env)
    }

    fn spawn_tmux(
        &self,
        socket: &str,
        cwd: &Path,
        env: &BTreeMap<String, String>,
        line: &str,
    ) -> Result<(), String> {
        let mut cmd = Command::new("tmux");
        cmd.args(["-L", socket, "-f", "/dev/null", "start-server", ";"])
            .args(["set-option", "-g", "default-terminal", "tmux-256color", ";"])
            .args(["new-session", "-d", "-x", "100", "-y", "30", "-c"])
            .arg(cwd);
        for (k, v) in env {
            cmd.args(["-e", &format!("{k}={v}")]);
        }
        cmd.args(["sh", "-c", line]);
        // Herdr's panes inherit its server's environment, not the caller's
        // (and tmux takes PATH from its client's environment, not `-e`).
        cmd.env("PATH", &self.path_var).env_remove("TMUX");
        for (k, _) in std::env::vars() {
            if k.starts_with("HERDR_") {
                cmd.env_remove(k);
            }
        }
        let out = cmd.output().map_err(|e| e.to_string())?;
        if out.status.success() {
            Ok(())
        } else {
            Err(String::from_utf8_lossy(&out.stderr).into_owned())
        }
    }

    fn pane_info(&self, pane: &Pane) -> Value {
        let agent_status = match &pane.agent {
            Some(a) => a["state"].clone(),
            None => json!("unknown"),
        };
        let mut info = json!({
            "pane_id": pane.pane_id,
            "terminal_id": format!("term-{}", pane.pane_id.replace(':', "-")),
            "workspace_id": pane.workspace_id,
            "tab_id": pane.tab_id,
            "focused": self.focused.as_deref() == Some(pane.pane_id.as_str()),
            "agent_status": agent_status,
            "revision": self.requests.len(),
            "cwd": pane.cwd.display().to_string(),
            "tokens": pane.tokens,
            "state_labels": pane.state_labels,
        });
        if let Some(a) = &pane.agent {
            info["agent"] = a["agent"].clone();
        }
        if let Some(t) = &pane.title {
            info["title"] = json!(t);
        }
        if let Some(d) = &pane.display_agent {
            info["display_agent"] = json!(d);
        }
        info
    }

    fn installed_plugin(&self, plugin_id: &str, entry: &Value) -> Value {
        let root = entry["root"].as_str().unwrap_or_default();
        let manifest: Option<toml::Table> =
            std::fs::read_to_string(Path::new(root).join("herdr-plugin.toml"))
                .ok()
                .and_then(|t| toml::from_str(&t).ok());
        let field = |k: &str| {
            manifest
                .as_ref()
                .and_then(|m| m.get(k))
                .and_then(|v| v.as_str())
                .unwrap_or_default()
                .to_string()
        };
        json!({
            "plugin_id": plugin_id,
            "name": field("name"),
            "version": field("version"),
            "min_herdr_version": field("min_herdr_version"),
            "manifest_path": format!("{root}/herdr-plugin.toml"),
            "plugin_root": root,
            "enabled": entry["enabled"].as_bool().unwrap_or(true),
        })
    }

    fn open_pane_index(&mut self, pane_id: &str) -> Option<usize> {
        self.refresh_exits();
        self.panes
            .iter()
            .position(|p| p.pane_id == pane_id && !p.closed)
    }

    #[allow(clippy::too_many_lines)] // one arm per Herdr request, as Herdr answers them
    fn answer(&mut self, line: &str, requests: &jsonschema::Validator) -> Value {
        let request: Value = match serde_json::from_str(line) {
            Ok(v) => v,
            Err(e) => {
                self.refused.push(format!("not JSON: {line}"));
                return error("", "invalid_request", &format!("invalid request: {e}"));
            }
        };
        self.requests.push(request.clone());
        if let Some(problem) = first_error(requests, &request) {
            self.refused.push(format!("{request} -> {problem}"));
            return error(
                "",
                "invalid_request",
                &format!("invalid request: {problem}"),
            );
        }
        let id = request["id"].as_str().unwrap_or_default().to_string();
        let method = request["method"].as_str().unwrap_or_default().to_string();
        let p = &request["params"];
        if let Some(code) = self.fail_next.remove(&method) {
            return error(
                &id,
                &code,
                &format!("the stand-in was told to fail {method}"),
            );
        }
        // The methods about one pane answer `pane_not_found` for a pane Herdr
        // does not have (closed, or never there).
        const PANE_METHODS: [&str; 6] = [
            "pane.get",
            "pane.focus",
            "pane.close",
            "pane.report_agent",
            "pane.release_agent",
            "pane.report_metadata",
        ];
        let pane = if PANE_METHODS.contains(&method.as_str()) {
            let pane_id = p["pane_id"].as_str().unwrap_or_default();
            match self.open_pane_index(pane_id) {
                Some(i) => Some(i),
                None => return pane_not_found(&id, pane_id),
            }
        } else {
            None
        };
        match method.as_str() {
            "ping" => ok(
                &id,
                json!({"type": "pong", "version": "0.8.0", "protocol": 20}),
            ),
            "pane.get" => {
                let i = pane.expect("a pane method");
                ok(
                    &id,
                    json!({"type": "pane_info", "pane": self.pane_info(&self.panes[i])}),
                )
            }
            "pane.list" => {
                self.refresh_exits();
                let panes: Vec<Value> = self
                    .panes
                    .iter()
                    .filter(|p| !p.closed)
                    .map(|p| self.pane_info(p))
                    .collect();
                ok(&id, json!({"type": "pane_list", "panes": panes}))
            }
            "pane.focus" => {
                let i = pane.expect("a pane method");
                self.focused = Some(self.panes[i].pane_id.clone());
                ok(&id, json!({"type": "ok"}))
            }
            "pane.close" => {
                let i = pane.expect("a pane method");
                // Gone from the layout first, then its processes get
                // SIGHUP (tmux's kill-server hangs up its panes).
                self.panes[i].closed = true;
                if let Some(socket) = self.panes[i].tmux_socket.clone() {
                    kill_tmux(&socket);
                }
                ok(&id, json!({"type": "ok"}))
            }
            "pane.report_agent" => {
                let i = pane.expect("a pane method");
                self.panes[i].agent = Some(p.clone());
                ok(&id, json!({"type": "ok"}))
            }
            "pane.release_agent" => {
                let i = pane.expect("a pane method");
                self.panes[i].agent = None;
                ok(&id, json!({"type": "ok"}))
            }
            "pane.report_metadata" => {
                let i = pane.expect("a pane method");
                let pane = &mut self.panes[i];
                if let Some(t) = p["title"].as_str() {
                    pane.title = Some(t.into());
                }
                if let Some(d) = p["display_agent"].as_str() {
                    pane.display_agent = Some(d.into());
                }
                if p["clear_state_labels"] == true {
                    pane.state_labels.clear();
                }
                if let Some(labels) = p["state_labels"].as_object() {
                    for (k, v) in labels {
                        if !["idle", "working", "blocked", "done", "unknown"].contains(&k.as_str())
                        {
                            return error(
                                &id,
                                "invalid_params",
                                &format!("state_labels key {k} is not a state"),
                            );
                        }
                        pane.state_labels
                            .insert(k.clone(), v.as_str().unwrap_or_default().into());
                    }
                }
                if let Some(tokens) = p["tokens"].as_object() {
                    for (k, v) in tokens {
                        match v.as_str() {
                            Some(v) => {
                                pane.tokens.insert(k.clone(), v.to_string());
                            }
                            None => {
                                pane.tokens.remove(k);
                            }
                        }
                    }
                }
                ok(&id, json!({"type": "ok"}))
            }
            "plugin.link" => {
                let path = p["path"].as_str().unwrap_or_default();
                let manifest: Option<toml::Table> =
                    std::fs::read_to_string(Path::new(path).join("herdr-plugin.toml"))
                        .ok()
                        .and_then(|t| toml::from_str(&t).ok());
                let Some(plugin_id) = manifest
                    .as_ref()
                    .and_then(|m| m.get("id"))
                    .and_then(|v| v.as_str())
                    .map(str::to_string)
                else {
                    return error(&id, "invalid_plugin_manifest", "cannot read the manifest");
                };
                let mut registry = self.registry();
                let entry =
                    json!({"root": path, "enabled": p["enabled"].as_bool().unwrap_or(true)});
                registry[&plugin_id] = entry.clone();
                self.save_registry(&registry);
                ok(
                    &id,
                    json!({"type": "plugin_linked", "plugin": self.installed_plugin(&plugin_id, &entry)}),
                )
            }
            "plugin.list" => {
                let registry = self.registry();
                let plugins: Vec<Value> = registry
                    .as_object()
                    .into_iter()
                    .flatten()
                    .filter(|(k, _)| p["plugin_id"].as_str().is_none_or(|want| want == *k))
                    .map(|(k, v)| self.installed_plugin(k, v))
                    .collect();
                ok(&id, json!({"type": "plugin_list", "plugins": plugins}))
            }
            "plugin.enable" | "plugin.disable" => {
                let plugin_id = p["plugin_id"].as_str().unwrap_or_default();
                let mut registry = self.registry();
                if registry.get(plugin_id).is_none() {
                    return error(&id, "plugin_not_found", "plugin not found");
                }
                let enabled = method == "plugin.enable";
                registry[plugin_id]["enabled"] = json!(enabled);
                self.save_registry(&registry);
                let kind = if enabled {
                    "plugin_enabled"
                } else {
                    "plugin_disabled"
                };
                ok(
                    &id,
                    json!({"type": kind, "plugin": self.installed_plugin(plugin_id, &registry[plugin_id])}),
                )
            }
            "plugin.pane.open" => self.plugin_pane_open(&id, p),
            other => error(
                &id,
                "unsupported_by_standin",
                &format!("the stand-in Herdr does not emulate {other}; teach it before using it"),
            ),
        }
    }

    /// `plugin.pane.open`, with Herdr 0.8.0's checks in Herdr's order.
    #[allow(clippy::too_many_lines)] // Herdr 0.8.0's checks, in its order
    fn plugin_pane_open(&mut self, id: &str, p: &Value) -> Value {
        let plugin_id = p["plugin_id"].as_str().unwrap_or_default().to_string();
        let registry = self.registry();
        let Some(entry) = registry.get(&plugin_id).cloned() else {
            return error(id, "plugin_not_found", "plugin not found");
        };
        let root = PathBuf::from(entry["root"].as_str().unwrap_or_default());
        let Some(manifest) = std::fs::read_to_string(root.join("herdr-plugin.toml"))
            .ok()
            .and_then(|t| toml::from_str::<toml::Table>(&t).ok())
        else {
            return error(
                id,
                "plugin_manifest_unavailable",
                &format!("plugin {plugin_id} manifest is unavailable"),
            );
        };
        if entry["enabled"] == false {
            return error(
                id,
                "plugin_disabled",
                &format!("plugin {plugin_id} is disabled"),
            );
        }
        let entrypoint = p["entrypoint"].as_str().unwrap_or_default().to_string();
        let Some(pane_entry) = manifest
            .get("panes")
            .and_then(|v| v.as_array())
            .and_then(|panes| {
                panes
                    .iter()
                    .find(|e| e.get("id").and_then(|v| v.as_str()) == Some(entrypoint.as_str()))
            })
            .cloned()
        else {
            return error(
                id,
                "plugin_pane_not_found",
                &format!("plugin pane entrypoint '{entrypoint}' not found"),
            );
        };
        let placement = p["placement"]
            .as_str()
            .map(str::to_string)
            .or_else(|| {
                pane_entry
                    .get("placement")
                    .and_then(|v| v.as_str())
                    .map(str::to_string)
            })
            .unwrap_or_else(|| "overlay".into());
        let has = |k: &str| !p[k].is_null();
        if placement != "popup" && (has("width") || has("height")) {
            return error(
                id,
                "invalid_params",
                "width and height are only supported when placement is popup",
            );
        }
        match placement.as_str() {
            "overlay" | "popup"
                if has("workspace_id") || has("target_pane_id") || has("direction") =>
            {
                return error(
                    id,
                    "invalid_params",
                    "overlay and popup plugin panes target the active pane",
                )
            }
            "split" | "zoomed" if has("workspace_id") => {
                return error(
                    id,
                    "invalid_params",
                    "split and zoomed plugin panes target an existing pane; use target_pane_id",
                )
            }
            "tab" if has("target_pane_id") || has("direction") => {
                return error(
                    id,
                    "invalid_params",
                    "tab plugin panes support workspace_id but not target_pane_id or direction",
                )
            }
            _ => {}
        }
        // The pane it goes beside: the target, else the focused one (when
        // the focused pane closed, Herdr focused another).
        self.refresh_exits();
        let focused = self
            .focused
            .clone()
            .filter(|f| self.panes.iter().any(|p| &p.pane_id == f && !p.closed))
            .or_else(|| {
                self.panes
                    .iter()
                    .find(|p| !p.closed)
                    .map(|p| p.pane_id.clone())
            })
            .unwrap_or_else(|| "w1:p0".into());
        let anchor_id = p["target_pane_id"]
            .as_str()
            .map(str::to_string)
            .unwrap_or(focused);
        let Some(anchor) = self.open_pane_index(&anchor_id) else {
            return pane_not_found(id, &anchor_id);
        };
        let (workspace_id, tab_id) = if placement == "tab" {
            let ws = p["workspace_id"]
                .as_str()
                .unwrap_or(&self.panes[anchor].workspace_id)
                .to_string();
            let tab = format!("{ws}:t{}", self.next_tab);
            self.next_tab += 1;
            (ws, tab)
        } else {
            (
                self.panes[anchor].workspace_id.clone(),
                self.panes[anchor].tab_id.clone(),
            )
        };
        let n = self.next_pane;
        self.next_pane += 1;
        let popup = placement == "popup";
        let pane_id = if popup {
            format!("popup-{n}")
        } else {
            format!("w1:p{n}")
        };
        let (_, mut env) = self.plugin_env(&plugin_id, Some(&entrypoint));
        env.insert(
            "HERDR_PLUGIN_CONTEXT_JSON".into(),
            json!({"workspace_id": workspace_id, "tab_id": tab_id, "invocation_source": "api"})
                .to_string(),
        );
        env.insert("HERDR_WORKSPACE_ID".into(), workspace_id.clone());
        env.insert("HERDR_TAB_ID".into(), tab_id.clone());
        if !popup {
            env.insert("HERDR_PANE_ID".into(), pane_id.clone());
        }
        for (k, v) in p["env"].as_object().into_iter().flatten() {
            env.insert(k.clone(), v.as_str().unwrap_or_default().to_string());
        }
        let command: Vec<String> = pane_entry
            .get("command")
            .and_then(|v| v.as_array())
            .map(|a| {
                a.iter()
                    .map(|s| s.as_str().unwrap_or_default().to_string())
                    .collect()
            })
            .unwrap_or_default();
        let cwd = p["cwd"]
            .as_str()
            .map(PathBuf::from)
            .unwrap_or_else(|| root.clone());
        let _ = std::fs::create_dir_all(self.dir.join("closed"));
        let socket = format!("{}-{n}", self.name);
        let marker = self.marker(&socket);
        let argv = command
            .iter()
            .map(|a| format!("'{}'", a.replace('\'', r"'\''")))
            .collect::<Vec<_>>()
            .join(" ");
        let line = format!(
            "{argv}; code=$?; touch '{}'; echo \"ATTACH-EXIT $code\"; exec sleep 100000",
            marker.display()
        );
        if let Err(e) = self.spawn_tmux(&socket, &cwd, &env, &line) {
            return error(id, "plugin_pane_open_failed", &e);
        }
        let pane = Pane {
            pane_id: pane_id.clone(),
            workspace_id,
            tab_id,
            cwd,
            plugin: Some((entrypoint.clone(), placement.clone())),
            command,
            env,
            tmux_socket: Some(socket),
            closed: false,
            agent: None,
            title: None,
            display_agent: None,
            tokens: BTreeMap::new(),
            state_labels: BTreeMap::new(),
        };
        if popup {
            self.popups.push(pane);
            return ok(id, json!({"type": "ok"}));
        }
        if p["focus"] == true {
            self.focused = Some(pane_id.clone());
        }
        let info = self.pane_info(&pane);
        self.panes.push(pane);
        ok(
            id,
            json!({"type": "plugin_pane_opened", "plugin_pane": {
                "plugin_id": plugin_id, "entrypoint": entrypoint, "pane": info}}),
        )
    }
}
