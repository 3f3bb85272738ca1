//! The `tickloop herdr` commands that drive Herdr: `install` (write the
//! plugin folder and `herdr plugin link` it), `open` (a Tick view in a plugin
//! pane, or focus the pane already showing it), `monitor` (the Monitor as an
//! overlay or popup) and `restore` (the `[[startup]]` hook: reopen the views
//! that were showing when Herdr stopped).

use crate::herdr::{self, HerdrEnv, HerdrError, PanePlace};
use crate::manifest::{self, Manifest};
use crate::requests::{PaneClose, PaneFocus, PaneGet, PaneTarget, PluginPaneOpen};
use crate::state::{self, ViewRecord};
use crate::{Ctx, Error};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Where a plugin pane goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Placement {
    Split,
    Tab,
    Zoomed,
    Overlay,
    Popup,
}

impl Placement {
    /// Herdr's name of it.
    pub fn as_str(self) -> &'static str {
        match self {
            Placement::Split => "split",
            Placement::Tab => "tab",
            Placement::Zoomed => "zoomed",
            Placement::Overlay => "overlay",
            Placement::Popup => "popup",
        }
    }

    /// Herdr's name read back (state records).
    pub fn parse(name: &str) -> Option<Placement> {
        [
            Placement::Split,
            Placement::Tab,
            Placement::Zoomed,
            Placement::Overlay,
            Placement::Popup,
        ]
        .into_iter()
        .find(|p| p.as_str() == name)
    }
}

/// Which side a split opens on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    Right,
    Down,
}

impl Direction {
    pub fn as_str(self) -> &'static str {
        match self {
            Direction::Right => "right",
            Direction::Down => "down",
        }
    }
}

/// The size given to popups (Herdr's default is half the screen).
const POPUP_SIZE: &str = "90%";

/// What `install` did.
#[derive(Debug, Clone)]
pub struct Installed {
    /// The plugin folder linked.
    pub dir: PathBuf,
    /// Whether Herdr's registry changed (`false`: it was linked from this
    /// folder already and nothing was done).
    pub changed: bool,
    /// Whether the plugin is enabled in Herdr (a user who disabled it keeps
    /// it disabled).
    pub enabled: bool,
    /// Something the user should know (the `tickloop` Herdr will run, a
    /// disabled plugin).
    pub warnings: Vec<String>,
}

/// The plugin folder: `DATA_DIR/tickloop/herdr-plugin`.
pub fn plugin_dir() -> Result<PathBuf, Error> {
    dirs::data_dir()
        .map(|d| d.join("tickloop").join("herdr-plugin"))
        .ok_or_else(|| {
            Error::Install(
                "cannot find your data directory (set HOME or XDG_DATA_HOME) for the plugin folder"
                    .into(),
            )
        })
}

/// Writes (or refreshes) the plugin folder from the embedded manifest.
pub fn write_plugin_dir(dir: &Path) -> Result<(), Error> {
    let problems = Manifest::shipped()?.problems();
    if !problems.is_empty() {
        return Err(Error::Install(format!(
            "the shipped Herdr manifest is invalid: {}",
            problems.join("; ")
        )));
    }
    let io = |what: &str, e: std::io::Error| Error::Install(format!("cannot {what}: {e}"));
    std::fs::create_dir_all(dir).map_err(|e| io(&format!("create {}", dir.display()), e))?;
    let file = dir.join(manifest::MANIFEST_FILE);
    if std::fs::read_to_string(&file).ok().as_deref() != Some(manifest::MANIFEST) {
        std::fs::write(&file, manifest::MANIFEST)
            .map_err(|e| io(&format!("write {}", file.display()), e))?;
    }
    Ok(())
}

/// The Tickloop plugin as `herdr plugin list --json` shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LinkedPlugin {
    pub root: PathBuf,
    pub enabled: bool,
}

/// Tickloop's entry in `herdr plugin list --json` (works with or without a
/// running Herdr server), if linked.
pub fn linked_plugin(env: &HerdrEnv) -> Result<Option<LinkedPlugin>, HerdrError> {
    let answer = env.run_json(&[
        "plugin".into(),
        "list".into(),
        "--json".into(),
        "--plugin".into(),
        manifest::PLUGIN_ID.into(),
    ])?;
    let result = answer.get("result").unwrap_or(&answer);
    if result.get("type").and_then(Value::as_str) != Some("plugin_list") {
        return Err(HerdrError::BadAnswer(format!(
            "`herdr plugin list --json` did not answer a plugin list: {answer}"
        )));
    }
    let entry = result
        .get("plugins")
        .and_then(Value::as_array)
        .and_then(|plugins| {
            plugins
                .iter()
                .find(|p| p["plugin_id"].as_str() == Some(manifest::PLUGIN_ID))
        });
    Ok(entry.map(|p| LinkedPlugin {
        root: PathBuf::from(p["plugin_root"].as_str().unwrap_or_default()),
        enabled: p["enabled"].as_bool().unwrap_or(true),
    }))
}

/// `tickloop herdr install`: writes the plugin folder and links it into
/// the user's Herdr, unless Herdr has it linked from that folder already.
/// A plugin the user disabled stays disabled (and the answer says so).
pub fn install() -> Result<Installed, Error> {
    let env = HerdrEnv::from_env();
    herdr::resolve_bin(&env.bin)?;
    let dir = plugin_dir()?;
    write_plugin_dir(&dir)?;
    let before = linked_plugin(&env)?;
    let same_dir =
        |root: &Path| std::fs::canonicalize(root).ok() == std::fs::canonicalize(&dir).ok();
    let mut warnings: Vec<String> = tickloop_on_path_warning().into_iter().collect();
    let (changed, enabled) = match &before {
        Some(linked) if same_dir(&linked.root) => (false, linked.enabled),
        Some(linked) => {
            // Linked from elsewhere: relink here, keeping it as enabled or
            // disabled as the user left it.
            let mut args = vec!["plugin".to_string(), "link".into(), path_arg(&dir)];
            if !linked.enabled {
                args.push("--disabled".into());
            }
            env.run_json(&args)?;
            warnings.push(format!(
                "the Tickloop plugin was linked from {}; it is now linked from {}",
                linked.root.display(),
                dir.display()
            ));
            (true, linked.enabled)
        }
        None => {
            env.run_json(&["plugin".into(), "link".into(), path_arg(&dir)])?;
            (true, true)
        }
    };
    if !enabled {
        warnings.push(
            "the Tickloop plugin is disabled in Herdr (you disabled it; install leaves it so): run `herdr plugin enable tickloop` to use it".into(),
        );
    }
    Ok(Installed {
        dir,
        changed,
        enabled,
        warnings,
    })
}

fn path_arg(dir: &Path) -> String {
    dir.to_string_lossy().into_owned()
}

/// A warning when the `tickloop` Herdr will run (the plugin's commands are
/// resolved on PATH) is missing or is not this executable.
fn tickloop_on_path_warning() -> Option<String> {
    let me = std::env::current_exe()
        .ok()
        .and_then(|p| std::fs::canonicalize(p).ok())?;
    match herdr::find_on_path(Path::new("tickloop")) {
        None => Some(format!(
            "`tickloop` is not on PATH, and the plugin's panes run `tickloop`: put {} on the PATH Herdr is started with",
            me.display()
        )),
        Some(found) if std::fs::canonicalize(&found).ok().as_deref() != Some(me.as_path()) => {
            Some(format!(
                "the `tickloop` on PATH ({}) is not this one ({}); Herdr's panes will run the one on PATH",
                found.display(),
                me.display()
            ))
        }
        Some(_) => None,
    }
}

/// What `open` did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shown {
    pub instance: String,
    /// The pane (none for a popup).
    pub pane_id: Option<String>,
    pub placement: String,
    /// An existing pane was focused instead of opening one.
    pub focused: bool,
}

impl Shown {
    pub fn to_json(&self) -> Value {
        json!({
            "instance": self.instance,
            "pane_id": self.pane_id,
            "placement": self.placement,
            "focused": self.focused,
        })
    }
}

/// The socket path as the state file keys it.
fn socket_key(env: &HerdrEnv) -> String {
    env.socket
        .as_deref()
        .map(|p| p.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// Whether Herdr still has `pane_id` (`pane.get` on the socket, else
/// `herdr pane get`). Herdr's refusals mean no; failing to reach it is an
/// error.
pub fn pane_exists(env: &HerdrEnv, pane_id: &str) -> Result<bool, HerdrError> {
    Ok(pane_info(env, pane_id)?.is_some())
}

/// Herdr's `pane.get` of `pane_id`: where it is, or `None` when Herdr has
/// no such pane.
pub fn pane_info(env: &HerdrEnv, pane_id: &str) -> Result<Option<PanePlace>, HerdrError> {
    let answer = match env.socket.as_deref() {
        Some(socket) => herdr::send(socket, &PaneGet(PaneTarget::new(pane_id))),
        None => env.run_json(&["pane".into(), "get".into(), pane_id.into()]),
    };
    match answer {
        Ok(answer) => {
            let result = answer.get("result").unwrap_or(&answer);
            Ok(result
                .get("pane")
                .and_then(PanePlace::from_info)
                .or(Some(PanePlace {
                    pane_id: pane_id.to_string(),
                    ..PanePlace::default()
                })))
        }
        Err(HerdrError::Herdr { code, .. }) if code == "pane_not_found" => Ok(None),
        Err(e) => Err(e),
    }
}

/// Focuses `pane_id` (socket `pane.focus`: Herdr's CLI `pane focus` moves by
/// direction only).
pub fn focus_pane(env: &HerdrEnv, pane_id: &str) -> Result<(), HerdrError> {
    herdr::send(env.socket()?, &PaneFocus(PaneTarget::new(pane_id)))?;
    Ok(())
}

/// Where a new pane goes, besides its placement.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Anchor {
    /// The pane a split or zoomed pane opens beside (the caller's, or the
    /// one being restored).
    pub pane_id: Option<String>,
    /// The workspace a tab opens in.
    pub workspace_id: Option<String>,
}

impl Anchor {
    /// The caller's pane and workspace (`HERDR_PANE_ID`,
    /// `HERDR_WORKSPACE_ID`).
    pub fn caller(env: &HerdrEnv) -> Anchor {
        Anchor {
            pane_id: env.pane_id.clone(),
            workspace_id: std::env::var("HERDR_WORKSPACE_ID")
                .ok()
                .filter(|v| !v.is_empty()),
        }
    }
}

/// The `plugin.pane.open` request for `entrypoint`, following Herdr's rules
/// for each placement (see [`PluginPaneOpen`]).
pub fn pane_open_request(
    entrypoint: &str,
    placement: Placement,
    direction: Option<Direction>,
    anchor: &Anchor,
    env: &[(&str, String)],
    focus: bool,
) -> PluginPaneOpen {
    let (target_pane_id, workspace_id, direction) = match placement {
        Placement::Split | Placement::Zoomed => (
            anchor.pane_id.clone(),
            None,
            direction.map(Direction::as_str),
        ),
        Placement::Tab => (None, anchor.workspace_id.clone(), None),
        Placement::Overlay | Placement::Popup => (None, None, None),
    };
    let size = (placement == Placement::Popup).then(|| POPUP_SIZE.to_string());
    PluginPaneOpen {
        plugin_id: manifest::PLUGIN_ID.into(),
        entrypoint: entrypoint.into(),
        placement: placement.as_str(),
        direction,
        target_pane_id,
        workspace_id,
        env: env
            .iter()
            .map(|(k, v)| (k.to_string(), v.clone()))
            .collect::<BTreeMap<_, _>>(),
        focus,
        width: size.clone(),
        height: size,
    }
}

/// Sends `request` and returns the pane Herdr opened (none for a popup).
fn open_pane(env: &HerdrEnv, request: &PluginPaneOpen) -> Result<Option<PanePlace>, Error> {
    let answer = herdr::send(env.socket()?, request)?;
    Ok(herdr::opened_pane(&answer)?)
}

/// `tickloop herdr open ID`: focuses the pane already showing ID in this
/// Herdr, or opens a plugin pane whose view attaches to it.
pub fn open(
    ctx: &Ctx,
    id: &str,
    placement: Placement,
    direction: Option<Direction>,
) -> Result<Shown, Error> {
    let env = HerdrEnv::inside()?;
    let instance = crate::resolve_instance(ctx, id)?;
    open_resolved(ctx, &env, &instance, placement, direction)
}

/// [`open`] for a full instance id, inside Herdr `env`, beside the caller's
/// pane.
pub fn open_resolved(
    ctx: &Ctx,
    env: &HerdrEnv,
    instance: &str,
    placement: Placement,
    direction: Option<Direction>,
) -> Result<Shown, Error> {
    let key = socket_key(env);
    if placement != Placement::Popup {
        if let Some(record) = state::find(&ctx.runtime, &key, instance) {
            // No pid yet: the view is starting.
            let view_alive = record.pid.is_none_or(state::pid_alive);
            if view_alive && pane_exists(env, &record.pane_id)? {
                focus_pane(env, &record.pane_id)?;
                return Ok(Shown {
                    instance: instance.to_string(),
                    pane_id: Some(record.pane_id),
                    placement: record.placement,
                    focused: true,
                });
            }
        }
    }
    open_view(
        ctx,
        env,
        instance,
        placement,
        direction,
        &Anchor::caller(env),
        true,
    )
}

/// Opens a view pane of `instance` and records it.
fn open_view(
    ctx: &Ctx,
    env: &HerdrEnv,
    instance: &str,
    placement: Placement,
    direction: Option<Direction>,
    anchor: &Anchor,
    focus: bool,
) -> Result<Shown, Error> {
    let key = socket_key(env);
    let mut vars = vec![
        ("TICKLOOP_INSTANCE", instance.to_string()),
        (
            "TICKLOOP_RUNTIME_DIR",
            ctx.runtime.to_string_lossy().into_owned(),
        ),
    ];
    // A Tick of another machine: the pane's view reaches it with the same
    // ssh command as this one.
    if tickloop_client::ssh::split_host_id(instance).is_some() {
        for name in ["TICKLOOP_SSH", "TICKLOOP_REMOTE_TICKLOOP"] {
            if let Some(value) = std::env::var(name).ok().filter(|v| !v.is_empty()) {
                vars.push((name, value));
            }
        }
    }
    let request = pane_open_request(
        manifest::VIEW_ENTRY,
        placement,
        direction,
        anchor,
        &vars,
        focus,
    );
    let opened = open_pane(env, &request)?;
    if let Some(place) = &opened {
        let placement_name = placement.as_str().to_string();
        state::update(&ctx.runtime, |views| {
            let record = ViewRecord {
                instance: instance.to_string(),
                herdr_socket: key.clone(),
                pane_id: place.pane_id.clone(),
                placement: placement_name.clone(),
                pid: None,
                workspace_id: place.workspace_id.clone(),
                tab_id: place.tab_id.clone(),
            };
            match views
                .iter_mut()
                .find(|v| v.herdr_socket == key && v.instance == instance)
            {
                // The view may have registered itself (with its pid) already.
                Some(v) if v.pane_id == place.pane_id => {
                    v.placement = placement_name;
                    v.workspace_id = record.workspace_id;
                    v.tab_id = record.tab_id;
                }
                Some(v) => *v = record,
                None => views.push(record),
            }
        })?;
    }
    Ok(Shown {
        instance: instance.to_string(),
        pane_id: opened.map(|p| p.pane_id),
        placement: placement.as_str().into(),
        focused: false,
    })
}

/// `tickloop herdr monitor`: opens the Monitor as an overlay (or a popup)
/// over the Tick in focus: `instance` when given, else the Tick shown in the
/// pane this runs from (a plugin action runs with the focused pane's id).
/// With `activity`, the Monitor opens on that Tick's activity (what agents
/// did with it).
pub fn monitor(
    ctx: &Ctx,
    popup: bool,
    instance: Option<&str>,
    activity: bool,
) -> Result<Shown, Error> {
    let env = HerdrEnv::inside()?;
    let focus = match instance {
        Some(id) => Some(crate::resolve_instance(ctx, id)?),
        None => env.pane_id.as_deref().and_then(|pane| {
            let key = socket_key(&env);
            state::read(&ctx.runtime)
                .into_iter()
                .find(|v| v.herdr_socket == key && v.pane_id == pane)
                .map(|v| v.instance)
        }),
    };
    let mut vars = vec![(
        "TICKLOOP_RUNTIME_DIR",
        ctx.runtime.to_string_lossy().into_owned(),
    )];
    if let Some(id) = &focus {
        vars.push(("TICKLOOP_INSTANCE", id.clone()));
        if activity {
            vars.push(("TICKLOOP_ACTIVITY", "1".to_string()));
        }
    }
    let placement = if popup {
        Placement::Popup
    } else {
        Placement::Overlay
    };
    let request = pane_open_request(
        manifest::MONITOR_ENTRY,
        placement,
        None,
        &Anchor::default(),
        &vars,
        true,
    );
    let opened = open_pane(&env, &request)?;
    Ok(Shown {
        instance: focus.unwrap_or_default(),
        pane_id: opened.map(|p| p.pane_id),
        placement: placement.as_str().into(),
        focused: false,
    })
}

/// What `restore` did with one record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Restored {
    /// The view was reopened where Herdr brought its pane back.
    Reopened {
        shown: Shown,
        /// The plain shell Herdr brought back in its place was closed.
        closed_shell: bool,
    },
    /// Still showing: nothing to do.
    Showing { instance: String, pane_id: String },
    /// Forgotten: the Tick ended, or the user closed the pane (Herdr did not
    /// bring it back).
    Forgotten { instance: String, why: String },
}

impl Restored {
    pub fn to_json(&self) -> Value {
        match self {
            Restored::Reopened {
                shown,
                closed_shell,
            } => {
                let mut v = shown.to_json();
                v["restored"] = json!("reopened");
                v["closed_shell"] = json!(closed_shell);
                v
            }
            Restored::Showing { instance, pane_id } => {
                json!({"instance": instance, "pane_id": pane_id, "restored": "showing"})
            }
            Restored::Forgotten { instance, why } => {
                json!({"instance": instance, "restored": "forgotten", "why": why})
            }
        }
    }
}

/// `tickloop herdr restore` (the plugin's `[[startup]]` hook): puts back the
/// views of this Herdr that were showing when it stopped. After a restart
/// Herdr brings each pane back, at its id, tab and place, as a plain shell
/// in the pane's last directory. For each record whose Tick still runs and
/// whose view is gone:
///
/// - Herdr brought its pane back: the view opens beside it (one split) and
///   the plain shell is closed when it is told apart as the view's (its
///   directory is the plugin folder, where view panes run), so the view
///   takes its place.
/// - Herdr did not bring it back: the user closed it, so it is forgotten,
///   as a detach would.
pub fn restore(ctx: &Ctx) -> Result<Vec<Restored>, Error> {
    let env = HerdrEnv::inside()?;
    let key = socket_key(&env);
    let records: Vec<ViewRecord> = state::read(&ctx.runtime)
        .into_iter()
        .filter(|v| v.herdr_socket == key)
        .collect();
    if records.is_empty() {
        return Ok(Vec::new());
    }
    let list = crate::list(ctx)?;
    let entries = tickloop_proto::wire::ListEntry::all(&list).unwrap_or_default();
    let running = |id: &str| {
        entries
            .iter()
            .any(|i| i.id == id && i.state == tickloop_proto::wire::InstanceState::Running)
    };
    let plugin_dir = std::env::var("HERDR_PLUGIN_ROOT")
        .ok()
        .map(PathBuf::from)
        .or_else(|| plugin_dir().ok());
    let mut done = Vec::new();
    for record in records {
        let forget = |why: &str| -> Result<Restored, Error> {
            state::forget(&ctx.runtime, &key, &record.instance, &record.pane_id)?;
            Ok(Restored::Forgotten {
                instance: record.instance.clone(),
                why: why.to_string(),
            })
        };
        if !running(&record.instance) {
            done.push(forget("the Tick is no longer running")?);
            continue;
        }
        let Some(place) = pane_info(&env, &record.pane_id)? else {
            done.push(forget("its pane was closed (Herdr did not bring it back)")?);
            continue;
        };
        if record.pid.is_some_and(state::pid_alive) {
            done.push(Restored::Showing {
                instance: record.instance.clone(),
                pane_id: record.pane_id.clone(),
            });
            continue;
        }
        let placement = match Placement::parse(&record.placement) {
            Some(Placement::Zoomed) => Placement::Zoomed,
            // A tab came back as a tab holding the shell: a split beside it
            // fills the tab once the shell is closed.
            _ => Placement::Split,
        };
        let anchor = Anchor {
            pane_id: Some(place.pane_id.clone()),
            workspace_id: place.workspace_id.clone(),
        };
        let shown = open_view(
            ctx,
            &env,
            &record.instance,
            placement,
            Some(Direction::Right),
            &anchor,
            false,
        )?;
        let is_views_shell = match (&place.cwd, &plugin_dir) {
            (Some(cwd), Some(dir)) => {
                std::fs::canonicalize(cwd).ok() == std::fs::canonicalize(dir).ok()
            }
            _ => false,
        };
        let closed_shell = is_views_shell
            && herdr::send(env.socket()?, &PaneClose(PaneTarget::new(&place.pane_id))).is_ok();
        done.push(Restored::Reopened {
            shown,
            closed_shell,
        });
    }
    Ok(done)
}
