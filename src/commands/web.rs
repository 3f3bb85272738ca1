//! `web`: the person's Ticks in a browser (`tickloop-web`): serve, or ask
//! the running server to log every browser out (`--revoke`) or for a new
//! one-time login URL (`--login`). All three are the person's: an agent's
//! CLI is refused (exit 3) before anything starts.

use crate::cli::WebArgs;
use crate::output::CliError;
use crate::target::Target;
use anyhow::Result;
use serde_json::json;
use tickloop_web::{ControlError, WebError, WebOptions};

/// `web [--listen ADDR:PORT] [--read-only] [--tls-cert F --tls-key F]
/// [--insecure-listen] [--allow-origin O]... | --revoke | --login`.
pub fn run(target: &Target, args: WebArgs, json: bool) -> Result<i32> {
    let kind = target.kind()?;
    // The page is the person's: an agent neither serves it, nor takes a
    // login link into it, nor logs the person out of it. Nothing starts and
    // no link is minted.
    let (what, instead) = if args.login {
        (
            "take a login link of the person's `tickloop web`",
            "the person opens the page themselves",
        )
    } else if args.revoke {
        (
            "log the person's browsers out of `tickloop web`",
            "ask the person, who runs `tickloop web --revoke`",
        )
    } else {
        (
            "start `tickloop web`",
            "`tickloop list`, `screen` and `approvals` read the same, and `input`, `keys` \
             and `run` wait for the person",
        )
    };
    crate::actor::persons_view(kind, what, instead)?;
    let not_running = |e: ControlError| match e {
        ControlError::Refused(message) => CliError::new("refused", message, 3),
        ControlError::Unreachable(message) => CliError::new("unreachable", message, 1),
    };
    if args.revoke {
        let sessions = tickloop_web::revoke(&target.runtime, kind).map_err(not_running)?;
        if json {
            crate::output::print_json(&json!({"revoked": true, "sessions": sessions}));
        } else {
            crate::output::out(&format!(
                "revoked: {sessions} browser sessions logged out, every unused login link void\n"
            ));
        }
        return Ok(0);
    }
    if args.login {
        let url = tickloop_web::login(&target.runtime, kind).map_err(not_running)?;
        if json {
            crate::output::print_json(&json!({"login_url": url}));
        } else {
            crate::output::out(&format!(
                "open this link to log in (it works once):\n  {url}\n"
            ));
        }
        return Ok(0);
    }
    let usage = |message: String| CliError::new("bad_request", message, 2);
    let listen = tickloop_web::listen::parse(&args.listen).map_err(|e| usage(e.to_string()))?;
    let allow_origins = args
        .allow_origin
        .iter()
        .map(|o| tickloop_web::origin::parse_allowed(o))
        .collect::<Result<Vec<_>, _>>()
        .map_err(usage)?;
    let options = WebOptions {
        runtime: target.runtime.clone(),
        exe: target.exe.clone(),
        listen,
        read_only: args.read_only,
        tls: args.tls_cert.zip(args.tls_key),
        insecure_listen: args.insecure_listen,
        allow_origins,
    };
    let served = tickloop_web::run(options, |started| {
        if let Some(warning) = &started.warning {
            eprintln!("{warning}");
        }
        if json {
            crate::output::print_json(&serde_json::to_value(started).unwrap_or_default());
        } else {
            let mode = if started.read_only {
                " (read-only)"
            } else {
                ""
            };
            crate::output::out(&format!(
                "tickloop web: serving {}{mode}\nopen this link to log in (it works once; \
                 `tickloop web --login` makes another):\n  {}\nctrl+c stops it\n",
                started.url, started.login_url
            ));
        }
    });
    match served {
        Ok(()) => Ok(0),
        Err(e @ WebError::Listen(_)) => Err(usage(e.to_string()).into()),
        Err(e) => Err(CliError::new("bad_request", e.to_string(), 1).into()),
    }
}
