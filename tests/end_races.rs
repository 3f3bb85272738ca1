//! Races at the end (issue 39): `screen`, `read`, `activity` and `attach`
//! asked at the instant an instance ends answer what it kept (its last
//! screen, its last state, its activity), never an error. Programs that
//! exit 0-50 ms after they are up (a `--shell` program, and a Tick,
//! counted from its initialization) are asked at once, over and over.
//!
//! `cargo test` runs 40 rounds; `TICKLOOP_END_RACE_ROUNDS=1000 cargo test
//! --release --test end_races -- --nocapture` is the long form (it prints
//! its counts; `TICKLOOP_END_RACE_SEED` replays a run).

mod common;

use common::*;

/// A small deterministic generator (xorshift).
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }
}

fn env_u64(name: &str) -> Option<u64> {
    std::env::var(name).ok().and_then(|v| v.parse().ok())
}

/// `tickloop attach ID` in a terminal (`script`), to its end: the view's
/// exit code and what it said.
fn attach(host: &Host, id: &str) -> Out {
    run_prepared(host.in_a_terminal(&format!("attach {id}")), &["attach", id])
}

/// What went wrong with one answer, if anything.
fn check(out: &Out, what: &str, id: &str, shown: Option<&str>) -> Option<String> {
    if out.code != 0 {
        return Some(format!(
            "{what} {id} exited {}: {}{}",
            out.code,
            out.stderr.trim(),
            out.stdout.trim()
        ));
    }
    let ended = out.stderr.contains("has ended") || out.stdout.contains("has ended");
    match shown {
        Some(text) if ended && !out.stdout.contains(text) => Some(format!(
            "{what} {id}: the kept answer lacks {text:?}: {} (stderr: {})",
            out.stdout,
            out.stderr.trim()
        )),
        _ => None,
    }
}

#[test]
fn what_is_asked_as_an_instance_ends_is_answered_from_what_it_kept() {
    let rounds = env_u64("TICKLOOP_END_RACE_ROUNDS").unwrap_or(40);
    let seed = env_u64("TICKLOOP_END_RACE_SEED").unwrap_or_else(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(1)
            | 1
    });
    println!("end races: {rounds} rounds, seed {seed} (TICKLOOP_END_RACE_SEED replays it)");
    let mut rng = Rng(seed);
    let host = Host::new();
    let counter = tick("counter.py");
    let mut errors = Vec::new();
    let mut asked = 0;
    let mut answered_ended = 0;
    for round in 0..rounds {
        let ms = rng.below(51);
        let name = format!("e{round}");
        let tick_round = round % 2 == 1;
        let opened = if tick_round {
            host.run(&[
                "open",
                "--id",
                &name,
                "--",
                &counter,
                "--exit-after",
                &ms.to_string(),
            ])
        } else {
            let script = format!("echo M-{round}; sleep {}", ms as f64 / 1000.0);
            host.run(&["open", "--shell", "--id", &name, "--", "sh", "-c", &script])
        };
        if opened.code != 0 {
            errors.push(format!("open {name}: {opened:#?}"));
            continue;
        }
        let id = opened.json()["id"].as_str().unwrap_or_default().to_string();
        let shown = if tick_round {
            "value: 0".to_string()
        } else {
            format!("M-{round}")
        };
        // One question first, at once; then the others.
        let mut questions = vec!["screen", "activity", "attach"];
        if tick_round {
            questions.push("read");
        }
        let first = rng.below(questions.len() as u64) as usize;
        questions.rotate_left(first);
        for question in questions {
            let out = match question {
                "attach" => attach(&host, &id),
                other => host.run(&[other, &id]),
            };
            asked += 1;
            answered_ended += usize::from(out.stderr.contains("has ended"));
            let wanted = matches!(question, "screen" | "attach").then_some(shown.as_str());
            errors.extend(check(&out, question, &id, wanted));
            if question == "read" && out.code == 0 && out.json()["seq"].as_u64().is_none() {
                errors.push(format!("read {id} has no seq: {}", out.stdout));
            }
        }
        host.wait_ended(&id);
        // Forgotten, so the next rounds start from an empty list.
        host.run(&["close", &id]);
    }
    println!(
        "end races: {rounds} rounds, {asked} questions ({answered_ended} answered from what an ended instance kept), {} errors",
        errors.len()
    );
    assert!(errors.is_empty(), "{errors:#?}");
}
