//! The Tick under check ([`Probe`]): opened in the private tickhost as
//! `tickloop open` would, what the rules learnt of it so far, and the
//! requests they make of that tickhost.

use super::args::Rng;
use super::finding::{fail, Finding};
use anyhow::{Context, Result};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use tickloop_client::Client;
use tickloop_proto::wire::{
    ApprovalPolicy, CallOutcome, ClientKind, ClientReply, ClientRequest, OpenRequest,
};

/// How long an ended session may take to show as ended in `list`.
pub const END_VISIBLE: Duration = Duration::from_secs(5);

/// The Tick under check, and what the rules learnt of it so far.
pub struct Probe {
    /// The private runtime directory.
    pub dir: PathBuf,
    pub allow_mutating: bool,
    /// The Tick's command, as opened (the termination rules start it again).
    pub argv: Vec<String>,
    /// The seed of the argument generator, and the generator.
    pub seed: u64,
    pub rng: Rng,
    /// The last call made of the Tick (`TOOL ARGS`), for a rule to name
    /// when the session ends after it.
    pub last_call: Option<String>,
    /// The largest state data read so far (encoded bytes), and when.
    pub largest_state: Option<(String, usize)>,
    /// Reads the host refused (a read below the seq floor): when, and why.
    pub read_failures: Vec<(String, String)>,
    pub instance: String,
    /// How long open took (describe and the first read).
    pub init_time: Duration,
    pub descriptor: Value,
    pub tools: Vec<Value>,
    pub revision: String,
    /// Every sequential read's seq, with when it was made.
    pub seqs: Vec<(String, u64)>,
    /// The first read's state, and how long it took.
    pub first_read: Option<Value>,
    /// The `ended` of the instance's list entry when the session rule
    /// looked (`None`: still running).
    pub ended: Option<Value>,
    /// The host ended the session for a seq violation: what it said.
    pub seq_violation: Option<String>,
}

impl Probe {
    /// Starts the private tickhost and opens the Tick there as `tickloop
    /// open` would; `Err(finding)`: the describe rule's failure (it did
    /// not initialize).
    pub fn open(
        exe: &Path,
        dir: &Path,
        argv: &[String],
        allow_mutating: bool,
        seed: u64,
    ) -> Result<std::result::Result<Probe, Finding>> {
        let here = std::env::current_dir().context("cannot read the current directory")?;
        Client::connect_or_start(dir, exe, ClientKind::Cli)
            .context("cannot start the private tickhost")?;
        let open = ClientRequest::Open(OpenRequest {
            name: Some("check".into()),
            program: tickloop_proto::wire::ProgramSpec {
                shell: false,
                argv: argv.to_vec(),
                cwd: here,
                env: tickloop_client::caller_env(),
                history: None,
                approve: Some(ApprovalPolicy::Auto),
                record: None,
                artifact: None,
                watch: Vec::new(),
                ..Default::default()
            },
        });
        let started = Instant::now();
        let opened = client(dir)?.request(open).context("the private tickhost")?;
        let instance = match opened {
            ClientReply::Ok(value) => value["id"].as_str().unwrap_or("hosted:check").to_string(),
            ClientReply::Error(e) => return Ok(Err(initialization_failed(e))),
            ClientReply::Call(_) => anyhow::bail!("tickhost answered open with a call outcome"),
        };
        let init_time = started.elapsed();
        let describe = ClientRequest::Describe {
            instance: instance.clone(),
        };
        let descriptor = match ask(dir, describe)? {
            Ok(d) => d,
            Err(e) => anyhow::bail!("the opened instance has no descriptor: {e}"),
        };
        let tools: Vec<Value> = descriptor["tools"].as_array().cloned().unwrap_or_default();
        let revision = descriptor["revision"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        Ok(Ok(Probe {
            dir: dir.to_path_buf(),
            allow_mutating,
            argv: argv.to_vec(),
            seed,
            rng: Rng::new(seed),
            last_call: None,
            read_failures: Vec::new(),
            largest_state: None,
            instance,
            init_time,
            descriptor,
            tools,
            revision,
            seqs: Vec::new(),
            first_read: None,
            ended: None,
            seq_violation: None,
        }))
    }

    /// A `tick/read`, its seq noted as `when`; `None` without a valid
    /// answer.
    pub fn read(&mut self, when: &str) -> Result<Option<Value>> {
        let request = ClientRequest::Read {
            instance: self.instance.clone(),
        };
        let value = match ask(&self.dir, request)? {
            Ok(value) => Some(value),
            Err(why) => {
                self.read_failures.push((when.to_string(), why));
                None
            }
        };
        if let Some(seq) = value.as_ref().and_then(|v| v["seq"].as_u64()) {
            self.seqs.push((when.to_string(), seq));
        }
        if let Some(data) = value.as_ref().map(|v| &v["data"]) {
            let size = serde_json::to_vec(data).map(|v| v.len()).unwrap_or(0);
            if self
                .largest_state
                .as_ref()
                .is_none_or(|(_, most)| size > *most)
            {
                self.largest_state = Some((when.to_string(), size));
            }
        }
        Ok(value)
    }

    /// A call of `tool`, with a read before and after it: its outcome and
    /// what happened to the state meanwhile.
    pub fn call_between_reads(
        &mut self,
        label: &str,
        tool: &str,
        args: Value,
        revision: &str,
    ) -> Result<(CallOutcome, String)> {
        let before = self.read(&format!("before {label}"))?;
        let outcome = call(&self.dir, &self.instance, tool, args, revision)?;
        let after = self.read(&format!("after {label}"))?;
        let effect = match (before, after) {
            (Some(b), Some(a)) if b["data"] == a["data"] => "state unchanged".to_string(),
            (Some(b), Some(a)) => format!(
                "state changed during the call (seq {} -> {}); the host refused the call before the Tick saw it, so that is the Tick's own activity",
                b["seq"], a["seq"]
            ),
            _ => "state not readable around the call".to_string(),
        };
        Ok((outcome, effect))
    }
}

/// The describe rule's failure when open was refused: any failure fails
/// initialization (spec 4.2); the fix follows the reason.
fn initialization_failed(e: tickloop_proto::wire::ClientError) -> Finding {
    let screen = e
        .data
        .as_ref()
        .and_then(|d| d.get("screen"))
        .map(|s| format!("; its screen began: {s}"))
        .unwrap_or_default();
    let fix = if e.message.contains("recover_with") {
        "make recover_with name a tool with mutates: false, or leave it out"
    } else if e.message.contains("protocol version") {
        "answer tick/describe with \"protocol\": 3"
    } else if e.message.contains("non-protocol output") {
        "write only protocol lines on stdout: logs and debug output go to stderr"
    } else {
        "answer tick/describe and the first tick/read within 10 s, with a descriptor valid by 5.3"
    };
    fail(
        "describe",
        "4.2, 5.3",
        format!("initialization failed: {}{screen}", e.message),
        fix,
    )
}

/// A connection to the private tickhost.
fn client(dir: &Path) -> Result<Client> {
    Client::connect(dir, ClientKind::Cli).context("cannot reach the private tickhost")
}

/// A request whose success is a value; `Err(text)` for a refusal.
pub fn ask(dir: &Path, request: ClientRequest) -> Result<std::result::Result<Value, String>> {
    match client(dir)?
        .request(request)
        .context("the private tickhost")?
    {
        ClientReply::Ok(value) => Ok(Ok(value)),
        ClientReply::Error(e) => Ok(Err(e.message)),
        ClientReply::Call(outcome) => Ok(Err(format!("unexpected call outcome {outcome:?}"))),
    }
}

pub fn call(
    dir: &Path,
    instance: &str,
    tool: &str,
    args: Value,
    revision: &str,
) -> Result<CallOutcome> {
    let request = ClientRequest::Call {
        instance: instance.to_string(),
        call: tickloop_proto::wire::CallRequest {
            tool: tool.to_string(),
            args,
            revision: revision.to_string(),
        },
    };
    // Sent, then no reply from tickhost: the outcome is unknown, as for
    // `tickloop call`.
    let reply = match client(dir)?.request(request) {
        Ok(reply) => reply,
        Err(e) => {
            return Ok(CallOutcome::Unknown {
                reason: format!("tickhost: {e}"),
            })
        }
    };
    Ok(match reply {
        ClientReply::Call(outcome) => outcome,
        ClientReply::Ok(result) => CallOutcome::Result { result },
        ClientReply::Error(e) => CallOutcome::Unknown { reason: e.message },
    })
}

/// The instance's `list` entry.
pub fn entry(dir: &Path, instance: &str) -> Result<Option<Value>> {
    let list = match ask(dir, ClientRequest::List)? {
        Ok(list) => list,
        Err(_) => return Ok(None),
    };
    Ok(list
        .as_array()
        .and_then(|all| all.iter().find(|e| e["id"] == instance).cloned()))
}

/// Polls `list` until the instance is ended, for at most `limit`.
pub fn wait_ended(dir: &Path, instance: &str, limit: Duration) -> Result<bool> {
    let deadline = Instant::now() + limit;
    loop {
        if entry(dir, instance)?.is_some_and(|e| e["state"] == "ended") {
            return Ok(true);
        }
        if Instant::now() >= deadline {
            return Ok(false);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// `list`'s update count of the instance (`None` when it is not listed).
pub fn updates(dir: &Path, instance: &str) -> Result<Option<u64>> {
    Ok(entry(dir, instance)?.and_then(|e| e["updates"].as_u64()))
}
