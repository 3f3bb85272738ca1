//! The far side of a connection over ssh: `tickloop __relay`, which the
//! local side's ssh starts on this machine (see `tickloop_client::ssh`).
//! It connects to this user's tickhost (starting it as a local CLI would)
//! or to one launcher's attach socket, greets on stdout with this build,
//! and copies bytes both ways between ssh's stdio and that socket.

use serde_json::{json, Value};
use std::io::{Read, Write};
use std::os::fd::AsFd;
use std::os::unix::net::UnixStream;
use std::path::Path;
use tickloop_client::paths::{parse_id, RuntimeDir};
use tickloop_client::ssh::{RelayTo, NOT_RUNNING};
use tickloop_proto::wire::ClientKind;

/// The relay, `tickloop __relay --to TO [--wire W] [--env]`, on the far
/// side of ssh: connects to TO (starting tickhost when needed), greets on
/// stdout, then copies stdin to the socket and the socket to stdout until
/// either side ends. Never touches an instance by itself: when ssh goes
/// away, the socket is closed as a local client closing would close it.
/// `packages`: what [`RelayTo::Packages`] prints (the binary discovers them;
/// this library does not).
pub fn relay(
    runtime: &Path,
    exe: &Path,
    to: &RelayTo,
    peer_wire: Option<&str>,
    want_env: bool,
    packages: &dyn Fn() -> Value,
) -> i32 {
    let mut body = json!({
        "wire": tickloop_proto::wire::wire_version(),
        "build": tickloop_client::ssh::this_build(),
    });
    let mut stdout = match std::io::stdout().as_fd().try_clone_to_owned() {
        Ok(fd) => std::fs::File::from(fd),
        Err(_) => return 1,
    };
    let greet = |stdout: &mut std::fs::File, body: &Value| {
        let mut line = serde_json::to_vec(&json!({ tickloop_client::ssh::GREETING_KEY: body }))
            .unwrap_or_default();
        line.push(b'\n');
        stdout.write_all(&line).and_then(|()| stdout.flush())
    };
    if peer_wire.is_some_and(|w| w != tickloop_proto::wire::wire_version()) {
        // The peer names the mismatch (it has both versions); nothing else.
        let _ = greet(&mut stdout, &body);
        return 0;
    }
    if *to == RelayTo::Packages {
        let mut line = serde_json::to_vec(&packages()).unwrap_or_default();
        line.push(b'\n');
        let sent = greet(&mut stdout, &body)
            .and_then(|()| stdout.write_all(&line))
            .and_then(|()| stdout.flush());
        return if sent.is_ok() { 0 } else { 1 };
    }
    let socket = match connect_target(runtime, exe, to) {
        Ok(socket) => socket,
        Err(message) => {
            body["error"] = Value::String(message);
            let _ = greet(&mut stdout, &body);
            return 1;
        }
    };
    if let Some(home) = dirs::home_dir() {
        body["home"] = Value::String(home.to_string_lossy().into_owned());
    }
    if want_env {
        body["env"] = Value::Array(
            tickloop_client::caller_env()
                .into_iter()
                .map(|(k, v)| json!([k, v]))
                .collect(),
        );
    }
    if greet(&mut stdout, &body).is_err() {
        return 1;
    }
    let Ok(mut to_socket) = socket.try_clone() else {
        return 1;
    };
    let stdin = std::io::stdin().as_fd().try_clone_to_owned();
    std::thread::spawn(move || {
        if let Ok(fd) = stdin {
            let _ = pump(&mut std::fs::File::from(fd), &mut to_socket);
        }
        // ssh's side ended: the socket's peer sees this client leave.
        let _ = to_socket.shutdown(std::net::Shutdown::Write);
    });
    let mut from_socket = &socket;
    let _ = pump(&mut from_socket, &mut stdout);
    let _ = socket.shutdown(std::net::Shutdown::Both);
    0
}

/// Copies `from` to `to` until `from` ends or either fails, with plain
/// reads and writes (each chunk written as soon as it is read).
fn pump(from: &mut impl Read, to: &mut impl Write) -> std::io::Result<()> {
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = match from.read(&mut buf) {
            Ok(0) => return Ok(()),
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        to.write_all(&buf[..n])?;
        to.flush()?;
    }
}

/// Connects to what `to` names on this machine.
fn connect_target(runtime: &Path, exe: &Path, to: &RelayTo) -> Result<UnixStream, String> {
    let dir = RuntimeDir::at(runtime);
    match to {
        RelayTo::Tickhost => {
            if let Ok(stream) = UnixStream::connect(dir.socket()) {
                return Ok(stream);
            }
            // Started (and its version checked) as a local CLI would.
            let client = tickloop_client::Client::connect_or_start(runtime, exe, ClientKind::Cli)
                .map_err(|e| format!("cannot reach tickhost: {e}"))?;
            drop(client);
            UnixStream::connect(dir.socket()).map_err(|e| format!("cannot reach tickhost: {e}"))
        }
        RelayTo::RunningTickhost => {
            UnixStream::connect(dir.socket()).map_err(|e| format!("{NOT_RUNNING} ({e})"))
        }
        RelayTo::View(id) => {
            let (kind, name) =
                parse_id(id).ok_or_else(|| format!("no instance {id}: not an instance id"))?;
            let files = dir
                .instance_files(kind, name)
                .map_err(|e| format!("no instance {id}: {e}"))?;
            UnixStream::connect(&files.socket)
                .map_err(|e| format!("no instance {id} running here ({e})"))
        }
        RelayTo::Packages => Err("packages has no socket".into()),
    }
}
