//! Many instances: 50 Ticks open at once under one tickhost, all listed
//! running and all answering `read`.

mod common;

use common::*;
use std::thread;

const INSTANCES: usize = 50;
const WORKERS: usize = 5;

#[test]
fn fifty_instances_open_at_once_all_answer_read() {
    let host = Host::new();
    host.ok(&["list"]); // start tickhost once, before the parallel opens
    let counter = tick("counter.py");
    thread::scope(|s| {
        for w in 0..WORKERS {
            let (host, counter) = (&host, &counter);
            s.spawn(move || {
                for i in (w..INSTANCES).step_by(WORKERS) {
                    let id = format!("n{i:02}");
                    let v = host.ok(&["open", "--id", &id, "--", counter]);
                    assert_eq!(v["id"], format!("hosted:{id}"));
                }
            });
        }
    });
    let list = host.list();
    assert_eq!(list.len(), INSTANCES);
    assert!(list.iter().all(|e| e["state"] == "running"), "{list:#?}");
    thread::scope(|s| {
        for w in 0..WORKERS {
            let host = &host;
            s.spawn(move || {
                for i in (w..INSTANCES).step_by(WORKERS) {
                    let r = host.read(&format!("hosted:n{i:02}"));
                    assert_eq!(r["seq"], 0);
                }
            });
        }
    });
    let v = host.ok(&[
        "call",
        "n49",
        "increment",
        r#"{"amount":7}"#,
        "--revision",
        "1",
    ]);
    assert_eq!(v["result"]["value"], 7);
}
