//! `tickloop herdr pane`: what the plugin's `view` entry runs inside a Herdr
//! pane. It attaches the plain view (`view_monitor::attach_view`, which reads
//! the pane's size at start and on every SIGWINCH, forwards keys and detaches
//! on ctrl+\ or SIGHUP/SIGTERM) to `$TICKLOOP_INSTANCE`, registers itself in
//! the views state file, and runs the [`Reporter`] beside it while shown.
//!
//! When the Tick ends the pane stays, saying why, until a key is pressed, so
//! Herdr's sidebar can show the Tick as ended, with its reason. On every exit the reporter
//! stops and `pane.release_agent` gives Herdr's authority back; the Tick is
//! never touched.

use crate::herdr::HerdrEnv;
use crate::report::{self, ReportTarget, Reporter, TickStatus};
use crate::state::{self, ViewRecord};
use crate::{Ctx, Error};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use view_monitor::attach_view::{self, AttachOptions, AttachOutcome};

/// How the pane's view ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PaneOutcome {
    /// Detached by the user (the record is forgotten).
    Detached,
    /// Closed by Herdr (a signal; the record stays for `restore`).
    Closed,
    /// The Tick ended.
    Ended { reason: String },
}

/// Runs the view of `$TICKLOOP_INSTANCE` in this pane until it detaches.
pub fn run(ctx: &Ctx) -> Result<(String, PaneOutcome), Error> {
    let id = std::env::var("TICKLOOP_INSTANCE")
        .ok()
        .filter(|v| !v.is_empty())
        .ok_or_else(|| {
            Error::Usage(
                "TICKLOOP_INSTANCE is not set: this is what the Tickloop plugin's Herdr pane runs; use `tickloop herdr open ID`".into(),
            )
        })?;
    // `HOST:KIND:NAME`: a Tick of another machine, shown over ssh.
    let remote = tickloop_client::ssh::split_host_id(&id);
    let there = remote
        .as_ref()
        .map_or(id.as_str(), |(_, there)| there.as_str());
    let list = crate::list_on(ctx, remote.as_ref().map(|(host, _)| host))?;
    let (raw, socket) = attach_view::resolve(&ctx.runtime, there, &list)?;
    let instance = match &remote {
        Some((host, _)) => format!("{}:{raw}", host.label()),
        None => raw.clone(),
    };
    let remote = remote.map(|(host, _)| (host, raw.clone()));
    let env = HerdrEnv::from_env();

    // Whether a signal (Herdr closing the pane) ended the view; the attach
    // view handles the same signals and detaches.
    let signaled = Arc::new(AtomicBool::new(false));
    for sig in [libc::SIGHUP, libc::SIGTERM, libc::SIGINT, libc::SIGQUIT] {
        signal_hook::flag::register(sig, Arc::clone(&signaled))
            .map_err(|e| Error::Usage(format!("cannot handle signals: {e}")))?;
    }

    let target = match (&env.socket, &env.pane_id) {
        (Some(socket), Some(pane_id)) => Some(ReportTarget {
            socket: socket.clone(),
            pane_id: pane_id.clone(),
            instance: instance.clone(),
            runtime: ctx.runtime.clone(),
            exe: ctx.exe.clone(),
            remote: remote.clone(),
        }),
        _ => None,
    };
    let key = env
        .socket
        .as_deref()
        .map(|p| p.to_string_lossy().into_owned())
        .unwrap_or_default();
    if let Some(pane_id) = &env.pane_id {
        register(ctx, &key, &instance, pane_id)?;
    }
    let reporter = target.clone().map(Reporter::spawn);

    // In a popup (no pane id) every key reaches the view, Herdr's prefix
    // too: the status line always says how to close it.
    let prefix = view_monitor::prefix::PrefixKey::choose(None).map_err(|e| {
        view_monitor::attach_view::AttachError::BadKey(format!(
            "{e} (TICKLOOP_DETACH_KEY or the config file)"
        ))
    })?;
    let status = env
        .pane_id
        .is_none()
        .then(|| format!("{instance} · {} d closes this popup", prefix.name()));
    let opts = AttachOptions {
        runtime: ctx.runtime.clone(),
        socket,
        instance: raw,
        status,
        prefix,
        ssh: remote.map(|(host, _)| host),
        kind: tickloop_proto::wire::ClientKind::Herdr,
    };
    let attached = attach_view::run(&opts);
    let last = reporter.and_then(Reporter::stop);

    let outcome = match attached {
        Ok(AttachOutcome::Ended { reason }) => PaneOutcome::Ended { reason },
        // Herdr closing the pane hangs up its terminal and signals its
        // processes, in either order (the kernel signals only the session
        // leader): either one means the user did not detach.
        Ok(AttachOutcome::Hangup) => PaneOutcome::Closed,
        Ok(AttachOutcome::Detached) if signaled.load(Ordering::SeqCst) => PaneOutcome::Closed,
        Ok(AttachOutcome::Detached) => PaneOutcome::Detached,
        Err(e) => {
            let keep = signaled.load(Ordering::SeqCst);
            finish(ctx, &key, &instance, &env, target.as_ref(), keep);
            return Err(e.into());
        }
    };
    if let (PaneOutcome::Ended { reason }, Some(target)) = (&outcome, &target) {
        if last.as_ref().and_then(|s| s.ended.as_ref()).is_none() {
            let status = TickStatus {
                title: last.map(|s| s.title).unwrap_or_else(|| instance.clone()),
                seq: None,
                calls_in_flight: 0,
                updated: None,
                ended: Some(reason.clone()),
                awaiting_approval: Vec::new(),
            };
            // A refusal is logged with its request; the pane goes on.
            let _ = report::report(target, &status);
        }
    }
    if let PaneOutcome::Ended { reason } = &outcome {
        eprintln!("tickloop: {instance} ended: {reason}");
        wait_for_key(&signaled);
    }
    let keep = outcome == PaneOutcome::Closed || signaled.load(Ordering::SeqCst);
    finish(ctx, &key, &instance, &env, target.as_ref(), keep);
    Ok((instance, outcome))
}

/// Writes this view's pane and pid into its record.
fn register(ctx: &Ctx, key: &str, instance: &str, pane_id: &str) -> Result<(), Error> {
    let pid = std::process::id();
    state::update(&ctx.runtime, |views| {
        match views
            .iter_mut()
            .find(|v| v.herdr_socket == key && v.instance == instance)
        {
            Some(v) => {
                v.pane_id = pane_id.to_string();
                v.pid = Some(pid);
            }
            None => views.push(ViewRecord {
                instance: instance.to_string(),
                herdr_socket: key.to_string(),
                pane_id: pane_id.to_string(),
                placement: "split".into(),
                pid: Some(pid),
                workspace_id: std::env::var("HERDR_WORKSPACE_ID").ok(),
                tab_id: std::env::var("HERDR_TAB_ID").ok(),
            }),
        }
    })?;
    Ok(())
}

/// Gives Herdr's authority back and forgets the record unless Herdr closed
/// the pane (then `restore` may reopen it).
fn finish(
    ctx: &Ctx,
    key: &str,
    instance: &str,
    env: &HerdrEnv,
    target: Option<&ReportTarget>,
    keep: bool,
) {
    if let Some(target) = target {
        report::release(target);
    }
    if let (false, Some(pane_id)) = (keep, &env.pane_id) {
        let _ = state::forget(&ctx.runtime, key, instance, pane_id);
    }
}

/// After the Tick ended: keeps the pane (and its `done` state) until a key
/// is pressed, the terminal goes away or a signal comes.
fn wait_for_key(signaled: &AtomicBool) {
    use std::io::IsTerminal;
    if !std::io::stdin().is_terminal() {
        return;
    }
    eprintln!("tickloop: press Enter to close this pane");
    loop {
        if signaled.load(Ordering::SeqCst) {
            return;
        }
        let mut fds = libc::pollfd {
            fd: libc::STDIN_FILENO,
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one valid pollfd for the call's duration.
        let n = unsafe { libc::poll(&mut fds, 1, 100) };
        if n < 0 {
            if std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            return;
        }
        if n > 0 {
            // Readable, hung up or broken: any of them closes the pane.
            let mut buf = [0u8; 256];
            // SAFETY: reading into a valid buffer of its length.
            unsafe { libc::read(libc::STDIN_FILENO, buf.as_mut_ptr().cast(), buf.len()) };
            return;
        }
    }
}
