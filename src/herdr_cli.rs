//! `tickloop herdr ...` (docs/herdr.md) and `open --view
//! herdr`: the command line of the `view-herdr` library — arguments, what is
//! printed (JSON when stdout is not a terminal, a line of text on one) and
//! the contract's errors. An agent's CLI may not open views in the person's
//! Herdr (`open`, `monitor`, `open --view herdr`): a Tick's pane is a view
//! that types as the person (refused like an agent's `attach`), and every
//! placement of the Monitor takes the person's focus (an overlay covers the
//! tab, a popup takes every key), where one `y` approves.

use crate::output::{print_json, CliError};
use anyhow::Result;
use clap::{Subcommand, ValueEnum};
use serde_json::Value;
use tickloop_proto::wire::ClientKind;
use view_herdr::commands::{self, Direction, Placement, Restored, Shown};
use view_herdr::pane::PaneOutcome;
use view_herdr::{Ctx, Error};

#[derive(Subcommand)]
pub enum HerdrCommand {
    /// Link Tickloop's plugin into Herdr (`herdr plugin link`); safe to repeat.
    Install,
    /// Show instance ID in a Herdr pane (inside Herdr), or focus the pane already showing it.
    Open {
        id: String,
        /// Where the pane goes.
        #[arg(long, value_enum, default_value_t = PlacementArg::Split)]
        placement: PlacementArg,
        /// Which side a split opens on.
        #[arg(long, value_enum)]
        direction: Option<DirectionArg>,
    },
    /// Pop the Monitor as a Herdr overlay over the Tick in focus (or ID).
    Monitor {
        /// The Tick to show the Monitor over (default: the one in the focused pane).
        id: Option<String>,
        /// A floating popup instead of an overlay.
        #[arg(long)]
        popup: bool,
        /// Open on the Tick's activity (what agents did with it); Esc there shows the list.
        #[arg(long)]
        activity: bool,
    },
    /// The view inside a Herdr pane (what the plugin's `view` entry runs; $TICKLOOP_INSTANCE).
    #[command(hide = true)]
    Pane,
    /// Reopen the views showing when Herdr stopped (the plugin's startup hook).
    #[command(hide = true)]
    Restore,
}

#[derive(Clone, Copy, ValueEnum)]
pub enum PlacementArg {
    Split,
    Tab,
    Zoomed,
    Overlay,
    Popup,
}

impl From<PlacementArg> for Placement {
    fn from(p: PlacementArg) -> Self {
        match p {
            PlacementArg::Split => Placement::Split,
            PlacementArg::Tab => Placement::Tab,
            PlacementArg::Zoomed => Placement::Zoomed,
            PlacementArg::Overlay => Placement::Overlay,
            PlacementArg::Popup => Placement::Popup,
        }
    }
}

#[derive(Clone, Copy, ValueEnum)]
pub enum DirectionArg {
    Right,
    Down,
}

impl From<DirectionArg> for Direction {
    fn from(d: DirectionArg) -> Self {
        match d {
            DirectionArg::Right => Direction::Right,
            DirectionArg::Down => Direction::Down,
        }
    }
}

/// The views `open --view` can show a new instance in.
#[derive(Clone, Copy, ValueEnum)]
pub enum OpenView {
    /// A Herdr pane (inside Herdr).
    Herdr,
}

fn cli_error(e: Error) -> anyhow::Error {
    CliError::new(e.kind(), e.user_message(), 1).into()
}

fn print(value: &Value, json: bool, text: String) {
    if json {
        print_json(value);
    } else {
        println!("{text}");
    }
}

fn shown_text(shown: &Shown) -> String {
    let pane = shown.pane_id.as_deref().unwrap_or("a popup");
    if shown.focused {
        format!(
            "{} is already shown in pane {pane}: focused it",
            shown.instance
        )
    } else {
        format!("{} shown in {pane} ({})", shown.instance, shown.placement)
    }
}

/// Where Herdr's refusals are logged: `RUNTIME/herdr.log`.
pub fn log_herdr_errors(ctx: &Ctx) {
    view_herdr::herdr::log_to(ctx.runtime.join("herdr.log"));
}

/// Refuses an agent's CLI (`kind`) a view in the person's Herdr: `what`
/// it asked for.
fn refuse_agents_view(kind: ClientKind, what: &str) -> Result<()> {
    crate::actor::persons_view(
        kind,
        what,
        "a Herdr pane would also take the person's focus; `tickloop screen ID` reads a Tick, \
         and the person shows it with `tickloop herdr open ID` in their own pane",
    )
    .map_err(Into::into)
}

/// Runs `tickloop herdr COMMAND`, as `kind` (who runs it).
pub fn run(command: HerdrCommand, ctx: Ctx, kind: ClientKind, json: bool) -> Result<i32> {
    log_herdr_errors(&ctx);
    match &command {
        HerdrCommand::Open { id, .. } => {
            refuse_agents_view(kind, &format!("show {id} in the person's Herdr"))?
        }
        HerdrCommand::Monitor { popup, .. } => refuse_agents_view(
            kind,
            &format!(
                "pop the Monitor {} in the person's Herdr",
                if *popup {
                    "as a popup"
                } else {
                    "over their panes"
                }
            ),
        )?,
        _ => {}
    }
    match command {
        HerdrCommand::Install => {
            let done = commands::install().map_err(cli_error)?;
            for warning in &done.warnings {
                eprintln!("tickloop: warning: {warning}");
            }
            let value = serde_json::json!({
                "plugin_dir": done.dir,
                "linked": true,
                "changed": done.changed,
                "enabled": done.enabled,
            });
            let what = if done.changed {
                "is now linked"
            } else {
                "was already linked (nothing changed)"
            };
            print(
                &value,
                json,
                format!(
                    "Tickloop's Herdr plugin {what} from {}{}",
                    done.dir.display(),
                    if done.enabled { "" } else { " (disabled)" }
                ),
            );
            Ok(0)
        }
        HerdrCommand::Open {
            id,
            placement,
            direction,
        } => {
            let shown = commands::open(&ctx, &id, placement.into(), direction.map(Into::into))
                .map_err(cli_error)?;
            print(&shown.to_json(), json, shown_text(&shown));
            Ok(0)
        }
        HerdrCommand::Monitor {
            id,
            popup,
            activity,
        } => {
            let shown =
                commands::monitor(&ctx, popup, id.as_deref(), activity).map_err(cli_error)?;
            let text = format!(
                "the Monitor is shown in {}",
                shown.pane_id.as_deref().unwrap_or("a popup")
            );
            print(&shown.to_json(), json, text);
            Ok(0)
        }
        HerdrCommand::Restore => {
            let done = commands::restore(&ctx).map_err(cli_error)?;
            let value = Value::Array(done.iter().map(Restored::to_json).collect());
            let reopened = done
                .iter()
                .filter(|r| matches!(r, Restored::Reopened { .. }))
                .count();
            let text = format!(
                "reopened {reopened} Tick view(s), {} forgotten",
                done.iter()
                    .filter(|r| matches!(r, Restored::Forgotten { .. }))
                    .count()
            );
            print(&value, json, text);
            Ok(0)
        }
        HerdrCommand::Pane => {
            let (instance, outcome) = view_herdr::pane::run(&ctx).map_err(cli_error)?;
            match outcome {
                PaneOutcome::Detached | PaneOutcome::Closed => {
                    eprintln!("tickloop: detached from {instance}")
                }
                // The reason was said before waiting for a key.
                PaneOutcome::Ended { .. } => {}
            }
            Ok(0)
        }
    }
}

/// Checks, before `open --view herdr` starts anything, that it can show it
/// (inside Herdr, and as the person: `kind` is who runs it).
pub fn check_open_view(view: Option<OpenView>, kind: ClientKind) -> Result<()> {
    if let Some(OpenView::Herdr) = view {
        refuse_agents_view(
            kind,
            "show what it opens in the person's Herdr (`--view herdr`)",
        )?;
        view_herdr::herdr::HerdrEnv::inside().map_err(|e| cli_error(e.into()))?;
    }
    Ok(())
}

/// Shows the instance `open` printed as `opened` in `view`, adding
/// `"view": {...}` to it. A failure leaves the instance running and says so.
pub fn show_opened(view: Option<OpenView>, ctx: &Ctx, opened: &mut Value) -> Result<()> {
    let Some(OpenView::Herdr) = view else {
        return Ok(());
    };
    let id = opened["id"].as_str().unwrap_or_default().to_string();
    log_herdr_errors(ctx);
    let env = view_herdr::herdr::HerdrEnv::inside().map_err(|e| cli_error(e.into()))?;
    match commands::open_resolved(ctx, &env, &id, Placement::Split, None) {
        Ok(shown) => {
            opened["view"] = shown.to_json();
            Ok(())
        }
        Err(e) => Err(CliError::new(
            e.kind(),
            format!(
                "{id} is running, but showing it in Herdr failed: {}; show it later with `tickloop herdr open {id}`",
                e.user_message()
            ),
            1,
        )
        .into()),
    }
}
