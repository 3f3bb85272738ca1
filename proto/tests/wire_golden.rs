//! The wire, written down and tested round trip (zellij-style): every
//! message of every Tickloop socket, one per line in
//! `tests/golden/messages.jsonl`, must parse into its type and encode back
//! to exactly the same JSON; and the JSON Schema of all of them (what the
//! wire version digests) must equal `tests/golden/wire-schema.json`.
//!
//! A change to any wire type fails here first. When it is meant, refresh
//! the schema with `TICKLOOP_UPDATE_GOLDEN=1 cargo test -p tickloop-proto --test
//! wire_golden`, and add or fix the message lines by hand: the wire version
//! changes with the schema, so processes of the old build are refused at
//! hello with both versions named.

use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value;
use std::path::PathBuf;
use tickloop_proto::attach::{ToView, ViewEvent, ViewHello};
use tickloop_proto::wire::{
    canonical_json, wire_digest, wire_version, ActivityRecord, ClientRequest, Envelope, Hello,
    HelloReply, LaunchReport, LaunchSpec, LauncherMessage, LauncherRecord, LauncherRequest,
    ListEntry, OpenReply, RunReply, ScreenReply, ServerMessage, TimelineReply, WaitReply,
    WebControl, WebControlReply,
};
use tickloop_proto::wire_schema::wire_schema;

fn golden(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden")
        .join(name)
}

fn round_trip<T: Serialize + DeserializeOwned + PartialEq + std::fmt::Debug>(
    line: usize,
    message: &Value,
) {
    let typed: T = serde_json::from_value(message.clone())
        .unwrap_or_else(|e| panic!("line {line}: {message} does not parse: {e}"));
    let back = serde_json::to_value(&typed).expect("encodes");
    assert_eq!(
        canonical_json(&back),
        canonical_json(message),
        "line {line}: encodes back differently"
    );
    let again: T = serde_json::from_value(back).expect("parses again");
    assert_eq!(again, typed, "line {line}");
}

#[test]
fn every_golden_message_parses_and_encodes_back_the_same() {
    let text = std::fs::read_to_string(golden("messages.jsonl")).expect("messages.jsonl");
    let mut seen = std::collections::BTreeMap::<String, usize>::new();
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        let entry: Value = serde_json::from_str(raw).expect("a JSON line");
        let kind = entry["type"].as_str().expect("a type").to_string();
        let message = &entry["message"];
        match kind.as_str() {
            "Hello" => round_trip::<Hello>(line, message),
            "HelloReply" => round_trip::<HelloReply>(line, message),
            "ClientEnvelope" => round_trip::<Envelope<ClientRequest>>(line, message),
            "ServerMessage" => round_trip::<ServerMessage>(line, message),
            "LauncherEnvelope" => round_trip::<Envelope<LauncherRequest>>(line, message),
            "LauncherMessage" => round_trip::<LauncherMessage>(line, message),
            "LaunchSpec" => round_trip::<LaunchSpec>(line, message),
            "LaunchReport" => round_trip::<LaunchReport>(line, message),
            "LauncherRecord" => round_trip::<LauncherRecord>(line, message),
            "ListEntry" => round_trip::<ListEntry>(line, message),
            "OpenReply" => round_trip::<OpenReply>(line, message),
            "ScreenReply" => round_trip::<ScreenReply>(line, message),
            "WaitReply" => round_trip::<WaitReply>(line, message),
            "RunReply" => round_trip::<RunReply>(line, message),
            "ActivityRecord" => round_trip::<ActivityRecord>(line, message),
            "TimelineReply" => round_trip::<TimelineReply>(line, message),
            "ViewHello" => round_trip::<ViewHello>(line, message),
            "ViewEvent" => round_trip::<ViewEvent>(line, message),
            "ToView" => round_trip::<ToView>(line, message),
            "WebControl" => round_trip::<WebControl>(line, message),
            "WebControlReply" => round_trip::<WebControlReply>(line, message),
            other => panic!("line {line}: unknown type {other}"),
        }
        *seen.entry(kind).or_default() += 1;
    }
    // Every request operation of both request enums is written down.
    let ops = |kind: &str| -> std::collections::BTreeSet<String> {
        text.lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .filter(|e| e["type"] == kind)
            .filter_map(|e| e["message"]["request"]["op"].as_str().map(str::to_string))
            .collect()
    };
    assert_eq!(
        ops("ClientEnvelope"),
        schema_ops("ClientRequest"),
        "every ClientRequest op is written down"
    );
    assert_eq!(
        ops("LauncherEnvelope").len(),
        15,
        "every LauncherRequest op: {:?}",
        ops("LauncherEnvelope")
    );
    assert_eq!(seen.len(), 21, "{seen:?}");
}

/// The `op`s of the variants of `name` (a tagged request enum) in the wire
/// schema.
fn schema_ops(name: &str) -> std::collections::BTreeSet<String> {
    wire_schema()["$defs"][name]["oneOf"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|v| v["properties"]["op"]["const"].as_str().map(str::to_string))
        .collect()
}

/// `ClientRequest::op` names each request as the wire does (tickhost's
/// request table is keyed by it).
#[test]
fn every_client_request_names_its_own_op() {
    let text = std::fs::read_to_string(golden("messages.jsonl")).expect("messages.jsonl");
    for line in text.lines() {
        let entry: Value = serde_json::from_str(line).expect("a JSON line");
        if entry["type"] != "ClientEnvelope" {
            continue;
        }
        let request = &entry["message"]["request"];
        let typed: ClientRequest = serde_json::from_value(request.clone()).expect("parses");
        assert_eq!(Some(typed.op()), request["op"].as_str(), "{line}");
    }
}

#[test]
fn the_wire_schema_is_the_golden_one_and_names_the_version() {
    let schema = canonical_json(&wire_schema());
    let digest = wire_digest(&wire_schema());
    let path = golden("wire-schema.json");
    let digest_path = golden("wire-digest");
    if std::env::var_os("TICKLOOP_UPDATE_GOLDEN").is_some() {
        std::fs::write(&path, format!("{schema}\n")).expect("write the golden schema");
        std::fs::write(&digest_path, &digest).expect("write the golden digest");
        // This test binary was compiled from the digest it just replaced;
        // the next build (cargo follows the included file) takes the new one.
        return;
    }
    let kept = std::fs::read_to_string(&path).unwrap_or_default();
    let kept_digest = std::fs::read_to_string(&digest_path).unwrap_or_default();
    let update = "run `TICKLOOP_UPDATE_GOLDEN=1 cargo test -p tickloop-proto --test wire_golden` \
                  and commit tests/golden/wire-schema.json and tests/golden/wire-digest";
    assert!(
        kept.trim_end() == schema,
        "the wire types changed: if that is meant, {update} (the wire version becomes \
         tickloop-{}+{digest})",
        env!("CARGO_PKG_VERSION")
    );
    // The version this build speaks was compiled from the digest file: a
    // stale digest would let two builds with different messages talk.
    assert_eq!(
        kept_digest, digest,
        "tests/golden/wire-digest is not the digest of the schema: {update}"
    );
    assert_eq!(
        wire_version(),
        format!("tickloop-{}+{digest}", env!("CARGO_PKG_VERSION")),
        "this build's wire version was compiled from another digest: rebuild after {update}"
    );
}

#[test]
fn a_peer_of_another_wire_version_is_refused_naming_both() {
    let mut hello = Hello::new(tickloop_proto::wire::Role::Client);
    assert!(HelloReply::answer(&hello).refused.is_none());
    hello.hello.version = "tickloop-0.1.0+000000000000".into();
    let refused = HelloReply::answer(&hello).refused.expect("refused");
    assert!(refused.contains(wire_version()) && refused.contains("+000000000000"));
}
