//! The `tickloop herdr` commands that drive Herdr: `install` (write the
//! plugin folder and `herdr plugin link` it), `open` (a Tick view in a plugin
//! pane, or focus the pane already showing it), `monitor` (the Monitor as an
//! overlay or popup) and `restore` (the `[[startup]]` hook: reopen the views
//! that were showing when Herdr stopped).

use crate::herdr::{self, HerdrEnv, HerdrError};
use crate::manifest::{self, Manifest};
use crate::state::{self, ViewRecord};
use crate::{Ctx, Error};
use serde_json::{json, Value};
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
    /// Herdr said it was linked already.
    pub already_linked: bool,
    /// Something the user should know (the `tickloop` Herdr will run).
    pub warning: Option<String>,
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

/// `tickloop herdr install`: writes the plugin folder and links it into
/// the user's Herdr. Idempotent.
pub fn install() -> Result<Installed, Error> {
    let env = HerdrEnv::from_env();
    herdr::resolve_bin(&env.bin)?;
    let dir = plugin_dir()?;
    write_plugin_dir(&dir)?;
    let already_linked = match env.run_json(&[
        "plugin".into(),
        "link".into(),
        dir.to_string_lossy().into_owned(),
    ]) {
        Ok(_) => false,
        Err(HerdrError::Herdr { code, message })
            if code.contains("already") || message.contains("already") =>
        {
            true
        }
        Err(e) => return Err(e.into()),
    };
    Ok(Installed {
        dir,
        already_linked,
        warning: tickloop_on_path_warning(),
    })
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
    let answer = match env.socket.as_deref() {
        Some(socket) => herdr::request(socket, "pane.get", json!({ "pane_id": pane_id })),
        None => env.run_json(&["pane".into(), "get".into(), pane_id.into()]),
    };
    match answer {
        Ok(_) => Ok(true),
        Err(HerdrError::Herdr { .. }) => Ok(false),
        Err(e) => Err(e),
    }
}

/// Focuses `pane_id` (socket `pane.focus`: Herdr's CLI `pane focus` moves by
/// direction only).
pub fn focus_pane(env: &HerdrEnv, pane_id: &str) -> Result<(), HerdrError> {
    herdr::request(env.socket()?, "pane.focus", json!({ "pane_id": pane_id }))?;
    Ok(())
}

/// The `plugin pane open` arguments for `entrypoint`.
pub fn pane_open_args(
    entrypoint: &str,
    placement: Placement,
    direction: Option<Direction>,
    env: &[(&str, String)],
) -> Vec<String> {
    let mut args: Vec<String> = [
        "plugin",
        "pane",
        "open",
        "--plugin",
        manifest::PLUGIN_ID,
        "--entrypoint",
        entrypoint,
        "--placement",
        placement.as_str(),
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    if let Some(d) = direction {
        args.extend(["--direction".into(), d.as_str().into()]);
    }
    if placement == Placement::Popup {
        args.extend([
            "--width".into(),
            POPUP_SIZE.into(),
            "--height".into(),
            POPUP_SIZE.into(),
        ]);
    }
    for (k, v) in env {
        args.extend(["--env".into(), format!("{k}={v}")]);
    }
    args
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

/// [`open`] for a full instance id, inside Herdr `env`.
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
    let vars = [
        ("TICKLOOP_INSTANCE", instance.to_string()),
        (
            "TICKLOOP_RUNTIME_DIR",
            ctx.runtime.to_string_lossy().into_owned(),
        ),
    ];
    let args = pane_open_args(manifest::VIEW_ENTRY, placement, direction, &vars);
    let answer = env.run_json(&args)?;
    let pane_id = herdr::opened_pane_id(&answer)?;
    if let Some(pane) = &pane_id {
        let placement_name = placement.as_str().to_string();
        state::update(&ctx.runtime, |views| {
            match views
                .iter_mut()
                .find(|v| v.herdr_socket == key && v.instance == instance)
            {
                // The view may have registered itself (with its pid) already.
                Some(v) if v.pane_id == *pane => v.placement = placement_name,
                Some(v) => {
                    v.pane_id = pane.clone();
                    v.placement = placement_name;
                    v.pid = None;
                }
                None => views.push(ViewRecord {
                    instance: instance.to_string(),
                    herdr_socket: key.clone(),
                    pane_id: pane.clone(),
                    placement: placement_name,
                    pid: None,
                }),
            }
        })?;
    }
    Ok(Shown {
        instance: instance.to_string(),
        pane_id,
        placement: placement.as_str().into(),
        focused: false,
    })
}

/// `tickloop herdr monitor`: opens the Monitor as an overlay (or a popup)
/// over the Tick in focus: `instance` when given, else the Tick shown in the
/// pane this runs from (a plugin action runs with the focused pane's id).
pub fn monitor(ctx: &Ctx, popup: bool, instance: Option<&str>) -> Result<Shown, Error> {
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
    }
    let placement = if popup {
        Placement::Popup
    } else {
        Placement::Overlay
    };
    let args = pane_open_args(manifest::MONITOR_ENTRY, placement, None, &vars);
    let answer = env.run_json(&args)?;
    let pane_id = herdr::opened_pane_id(&answer)?;
    Ok(Shown {
        instance: focus.unwrap_or_default(),
        pane_id,
        placement: placement.as_str().into(),
        focused: false,
    })
}

/// `tickloop herdr restore` (the plugin's `[[startup]]` hook): reopens the
/// views of this Herdr whose view process is gone while their Tick still
/// runs, and forgets those whose Tick is gone.
pub fn restore(ctx: &Ctx) -> Result<Vec<Shown>, Error> {
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
    let running = |id: &str| {
        list.as_array().is_some_and(|items| {
            items
                .iter()
                .any(|i| i["id"] == id && i["state"].as_str() == Some("running"))
        })
    };
    let mut shown = Vec::new();
    for record in records {
        if !running(&record.instance) {
            state::forget(&ctx.runtime, &key, &record.instance, &record.pane_id)?;
            continue;
        }
        if record.pid.is_some_and(state::pid_alive) && pane_exists(&env, &record.pane_id)? {
            continue;
        }
        let placement = match Placement::parse(&record.placement) {
            Some(Placement::Popup | Placement::Overlay) | None => Placement::Split,
            Some(p) => p,
        };
        shown.push(open_resolved(ctx, &env, &record.instance, placement, None)?);
    }
    Ok(shown)
}
