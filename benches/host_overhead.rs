//! Host overhead benchmark: what tickhost and the launcher add on the agent's
//! path, measured side by side in one run.
//!
//! 1. `tick/read` round trip to the same Tick (`tests/ticks/note.py`): over a
//!    direct pipe (the raw limit), through tickhost and the launcher on one
//!    persistent client connection, and as a whole `tickloop read` process.
//! 2. Update flood: `benches/ticks/flood.py` emits updates as fast as it can
//!    for a while with a `watch` attached; reports updates/s absorbed, the
//!    launcher's and tickhost's CPU, and their RSS sampled over time (flat
//!    memory is the target).
//!
//! Run: `cargo bench --bench host_overhead` (options after `--`:
//! `--samples N` (default 2000), `--process-samples N` (100), `--flood-s S` (10)).
//! The last line of stdout is one JSON object with every figure.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use tickloop_client::Client;
use tickloop_proto::wire::{ClientKind, ClientReply, ClientRequest};

const TICKLOOP: &str = env!("CARGO_BIN_EXE_tickloop");

struct Options {
    samples: usize,
    process_samples: usize,
    flood_seconds: f64,
}

fn parse_options() -> Options {
    let mut options = Options {
        samples: 2000,
        process_samples: 100,
        flood_seconds: 10.0,
    };
    let args: Vec<String> = std::env::args().collect();
    let mut index = 1;
    while index < args.len() {
        let value = args.get(index + 1).cloned().unwrap_or_default();
        match args[index].as_str() {
            "--samples" => options.samples = value.parse().unwrap_or(options.samples),
            "--process-samples" => {
                options.process_samples = value.parse().unwrap_or(options.process_samples)
            }
            "--flood-s" => options.flood_seconds = value.parse().unwrap_or(options.flood_seconds),
            _ => {
                index += 1;
                continue;
            }
        }
        index += 2;
    }
    options
}

fn repo_path(relative: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(relative)
}

/// Percentiles of a set of durations, in microseconds.
fn summary(mut samples: Vec<Duration>) -> Value {
    samples.sort();
    let at = |q: f64| {
        let index = ((samples.len() as f64 - 1.0) * q).round() as usize;
        samples[index].as_secs_f64() * 1e6
    };
    json!({"n": samples.len(), "p50_us": at(0.5), "p99_us": at(0.99), "min_us": at(0.0), "max_us": at(1.0)})
}

/// `tick/read` over a direct pipe to a fresh note Tick.
fn direct_pipe_reads(samples: usize) -> Value {
    let mut child = Command::new("python3")
        .arg(repo_path("tests/ticks/note.py"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("python3 runs the note Tick");
    let mut stdin = child.stdin.take().expect("piped stdin");
    let mut stdout = BufReader::new(child.stdout.take().expect("piped stdout"));
    let mut line = String::new();
    let mut round_trip = |id: usize| {
        let started = Instant::now();
        writeln!(
            stdin,
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tick/read","params":{{}}}}"#
        )
        .expect("write to the Tick");
        line.clear();
        stdout.read_line(&mut line).expect("read from the Tick");
        started.elapsed()
    };
    for id in 0..100 {
        round_trip(id);
    }
    let timings = (100..100 + samples).map(&mut round_trip).collect();
    drop(stdin);
    let _ = child.wait();
    summary(timings)
}

struct Host {
    runtime: tempfile::TempDir,
}

impl Host {
    fn new() -> Host {
        let runtime = tempfile::Builder::new()
            .prefix("tlbench")
            .tempdir_in("/tmp")
            .expect("a temp dir");
        Host { runtime }
    }

    fn tickloop(&self, args: &[&str]) -> std::process::Output {
        Command::new(TICKLOOP)
            .args(args)
            .env("TICKLOOP_RUNTIME_DIR", self.runtime.path())
            .output()
            .expect("tickloop runs")
    }

    fn open(&self, name: &str, program: &[&str]) -> Value {
        let mut args = vec!["open", "--id", name, "--"];
        args.extend_from_slice(program);
        let output = self.tickloop(&args);
        assert!(
            output.status.success(),
            "open failed: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        serde_json::from_slice(&output.stdout).expect("open prints JSON")
    }

    fn client(&self) -> Client {
        Client::connect(self.runtime.path(), ClientKind::Cli).expect("tickhost answers")
    }

    fn tickhost_pid(&self) -> u32 {
        std::fs::read_to_string(self.runtime.path().join("tickhost.pid"))
            .ok()
            .and_then(|text| text.trim().parse().ok())
            .expect("tickhost.pid")
    }
}

impl Drop for Host {
    fn drop(&mut self) {
        let _ = self.tickloop(&["shutdown"]);
    }
}

fn host_reads(host: &Host, samples: usize) -> Value {
    let mut client = host.client();
    let mut read = || {
        let started = Instant::now();
        let reply = client
            .request(ClientRequest::Read {
                instance: "hosted:note".into(),
            })
            .expect("read through tickhost");
        assert!(
            matches!(reply, ClientReply::Ok(_)),
            "read failed: {reply:?}"
        );
        started.elapsed()
    };
    for _ in 0..100 {
        read();
    }
    summary((0..samples).map(|_| read()).collect())
}

fn process_reads(host: &Host, samples: usize) -> Value {
    let timings = (0..samples)
        .map(|_| {
            let started = Instant::now();
            let output = host.tickloop(&["read", "hosted:note"]);
            assert!(output.status.success());
            started.elapsed()
        })
        .collect();
    summary(timings)
}

/// utime + stime of a process, in seconds.
fn cpu_seconds(pid: u32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let after_name = stat.rsplit(')').next().unwrap_or("");
    let fields: Vec<&str> = after_name.split_whitespace().collect();
    let ticks: f64 = [11, 12]
        .iter()
        .filter_map(|&index| fields.get(index)?.parse::<f64>().ok())
        .sum();
    ticks / 100.0
}

/// (VmRSS, VmHWM) of a process, in KiB.
fn memory_kib(pid: u32) -> (u64, u64) {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find(|line| line.starts_with(name))
            .and_then(|line| line.split_whitespace().nth(1))
            .and_then(|value| value.parse().ok())
            .unwrap_or(0)
    };
    (field("VmRSS:"), field("VmHWM:"))
}

fn flood(host: &Host, seconds: f64) -> Value {
    let flood_tick = repo_path("benches/ticks/flood.py");
    let opened = host.open(
        "flood",
        &[
            "python3",
            flood_tick.to_str().expect("utf-8 path"),
            &seconds.to_string(),
        ],
    );
    let launcher = opened["launcher_pid"].as_u64().expect("launcher_pid") as u32;
    let tickhost = host.tickhost_pid();
    let cpu_before = (cpu_seconds(launcher), cpu_seconds(tickhost));

    // A watcher takes deliveries all along, as an agent would.
    let mut watcher: Child = Command::new(TICKLOOP)
        .args(["watch", "hosted:flood", "--interval", "100"])
        .env("TICKLOOP_RUNTIME_DIR", host.runtime.path())
        .stdout(Stdio::piped())
        .spawn()
        .expect("watch runs");
    let watch_out = watcher.stdout.take().expect("piped");
    let deliveries = std::thread::spawn(move || {
        let mut count = 0u64;
        let mut updates = 0u64;
        for line in BufReader::new(watch_out).lines().map_while(Result::ok) {
            if let Ok(value) = serde_json::from_str::<Value>(&line) {
                count += 1;
                updates += value["updates"].as_u64().unwrap_or(0);
            }
        }
        (count, updates)
    });

    let started = Instant::now();
    let mut rss_samples = Vec::new();
    while started.elapsed().as_secs_f64() < seconds + 1.0 {
        std::thread::sleep(Duration::from_millis(500));
        let (launcher_rss, _) = memory_kib(launcher);
        let (tickhost_rss, _) = memory_kib(tickhost);
        rss_samples.push(
            json!({"t_s": (started.elapsed().as_secs_f64() * 10.0).round() / 10.0,
            "launcher_kib": launcher_rss, "tickhost_kib": tickhost_rss}),
        );
    }
    let cpu_after = (cpu_seconds(launcher), cpu_seconds(tickhost));
    let mut client = host.client();
    let listed = match client.request(ClientRequest::List) {
        Ok(ClientReply::Ok(value)) => value,
        other => panic!("list failed: {other:?}"),
    };
    let updates = listed
        .as_array()
        .and_then(|items| items.iter().find(|item| item["id"] == "hosted:flood"))
        .and_then(|item| item["updates"].as_u64())
        .unwrap_or(0);
    let _ = watcher.kill();
    let _ = watcher.wait();
    let (delivery_lines, delivered_updates) = deliveries.join().unwrap_or((0, 0));
    let peak = (memory_kib(launcher).1, memory_kib(tickhost).1);
    let _ = client.request(ClientRequest::Close {
        instance: "hosted:flood".into(),
    });
    json!({
        "seconds": seconds,
        "updates_absorbed": updates,
        "updates_per_s": updates as f64 / seconds,
        "watch_lines": delivery_lines,
        "watch_updates_counted": delivered_updates,
        "launcher_cpu_s": cpu_after.0 - cpu_before.0,
        "tickhost_cpu_s": cpu_after.1 - cpu_before.1,
        "launcher_peak_rss_kib": peak.0,
        "tickhost_peak_rss_kib": peak.1,
        "rss_samples": rss_samples,
    })
}

fn main() {
    let options = parse_options();
    eprintln!("direct pipe reads ...");
    let direct = direct_pipe_reads(options.samples);
    let host = Host::new();
    host.open(
        "note",
        &[
            "python3",
            repo_path("tests/ticks/note.py")
                .to_str()
                .expect("utf-8 path"),
        ],
    );
    eprintln!("reads through tickhost ...");
    let hosted = host_reads(&host, options.samples);
    eprintln!("tickloop read processes ...");
    let process = process_reads(&host, options.process_samples);
    eprintln!("update flood ({} s) ...", options.flood_seconds);
    let flood = flood(&host, options.flood_seconds);

    let ratio = |a: &Value, b: &Value, key: &str| {
        a[key].as_f64().unwrap_or(0.0) / b[key].as_f64().unwrap_or(1.0)
    };
    println!("tick/read round trip (us)      p50        p99        x direct p50");
    for (name, figures) in [
        ("direct pipe", &direct),
        ("via tickhost+launcher", &hosted),
        ("tickloop read process", &process),
    ] {
        println!(
            "  {name:<26} {:>9.1} {:>10.1} {:>10.2}",
            figures["p50_us"].as_f64().unwrap_or(0.0),
            figures["p99_us"].as_f64().unwrap_or(0.0),
            ratio(figures, &direct, "p50_us")
        );
    }
    println!(
        "update flood: {:.0} updates/s absorbed over {} s; launcher cpu {:.2} s, tickhost cpu {:.2} s; \
         peak RSS launcher {} KiB, tickhost {} KiB; watch: {} lines carrying {} updates",
        flood["updates_per_s"].as_f64().unwrap_or(0.0),
        flood["seconds"],
        flood["launcher_cpu_s"].as_f64().unwrap_or(0.0),
        flood["tickhost_cpu_s"].as_f64().unwrap_or(0.0),
        flood["launcher_peak_rss_kib"],
        flood["tickhost_peak_rss_kib"],
        flood["watch_lines"],
        flood["watch_updates_counted"],
    );
    if let Some(samples) = flood["rss_samples"].as_array() {
        let line: Vec<String> = samples
            .iter()
            .map(|s| format!("{}s:{}/{}", s["t_s"], s["launcher_kib"], s["tickhost_kib"]))
            .collect();
        println!(
            "  RSS over time (launcher/tickhost KiB): {}",
            line.join(" ")
        );
    }
    println!(
        "{}",
        json!({"read": {"direct": direct, "hosted": hosted, "process": process,
            "hosted_over_direct_p50": ratio(&hosted, &direct, "p50_us")}, "flood": flood})
    );
}
