//! Delivery trimming (spec 6.4, 8.3, 9) and the delivery budgets (spec-gaps 3.5).

use proptest::prelude::*;
use serde_json::{json, Value};

use tickhost::core::delivery::{budget_for, trim, Trimmed};
use tickhost::core::descriptor::{Newest, Series};
use tickhost::core::Limits;

fn size(value: &Value) -> usize {
    serde_json::to_vec(value)
        .map(|v| v.len())
        .unwrap_or(usize::MAX)
}

fn series(path: &str, newest: Newest) -> Series {
    Series {
        path: path.to_string(),
        newest,
    }
}

fn marker_count(value: &Value) -> Option<u64> {
    value.get("$trimmed").and_then(Value::as_u64)
}

/// A ~40 KB state: a value and 400 chronological entries.
fn forty_kb_state() -> Value {
    let recent: Vec<Value> = (0..400)
        .map(|seq| json!({"seq": seq, "note": format!("change number {seq} of the counter, {}", "x".repeat(60))}))
        .collect();
    json!({"value": 399, "recent": recent})
}

#[test]
fn data_within_budget_is_unchanged() {
    let data = json!({"value": 1, "recent": [1, 2, 3]});
    assert_eq!(
        trim(&data, &[], 16384),
        Trimmed {
            data: data.clone(),
            trimmed: false
        }
    );
}

#[test]
fn forty_kb_state_keeps_the_newest_series_elements_and_the_marker() {
    let data = forty_kb_state();
    assert!(size(&data) > 38_000);
    let result = trim(&data, &[series("/recent", Newest::Last)], 16 * 1024);
    assert!(result.trimmed);
    assert!(size(&result.data) <= 16 * 1024);
    assert!(size(&result.data) > 12 * 1024, "the budget is used well");
    assert_eq!(result.data["value"], 399);
    let recent = result.data["recent"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let removed = marker_count(&recent[0]).expect("marker first, where the oldest were");
    let kept = &recent[1..];
    assert_eq!(removed as usize + kept.len(), 400);
    assert_eq!(kept.last().map(|e| e["seq"].clone()), Some(json!(399)));
    let seqs: Vec<u64> = kept.iter().filter_map(|e| e["seq"].as_u64()).collect();
    assert_eq!(seqs, (400 - kept.len() as u64..400).collect::<Vec<_>>());
    assert_eq!(
        kept[0],
        data["recent"][400 - kept.len()],
        "kept elements are intact"
    );
}

#[test]
fn series_with_newest_first_keeps_the_beginning() {
    let data = json!({"log": (0..1000).collect::<Vec<u32>>()});
    let result = trim(&data, &[series("/log", Newest::First)], 1000);
    let log = result.data["log"].as_array().cloned().unwrap_or_default();
    assert_eq!(log[0], 0);
    assert_eq!(log[1], 1);
    let removed = marker_count(log.last().unwrap_or(&Value::Null)).expect("marker last");
    assert_eq!(removed as usize + log.len() - 1, 1000);
    assert!(size(&result.data) <= 1000);
}

#[test]
fn series_at_the_root_and_escaped_pointers_are_found() {
    let data: Value = (0..1000).collect::<Vec<u32>>().into();
    let result = trim(&data, &[series("", Newest::Last)], 500);
    let items = result.data.as_array().cloned().unwrap_or_default();
    assert!(marker_count(&items[0]).is_some());
    assert_eq!(items.last(), Some(&json!(999)));

    let data = json!({"a/b": {"c~d": (0..1000).collect::<Vec<u32>>()}});
    let result = trim(&data, &[series("/a~1b/c~0d", Newest::Last)], 500);
    let items = result.data["a/b"]["c~d"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert!(marker_count(&items[0]).is_some());
    assert_eq!(items.last(), Some(&json!(999)));
}

#[test]
fn undeclared_arrays_keep_beginning_and_end() {
    let data = json!({"items": (0..1000).collect::<Vec<u32>>()});
    let result = trim(&data, &[], 1000);
    let items = result.data["items"].as_array().cloned().unwrap_or_default();
    assert_eq!(items.first(), Some(&json!(0)));
    assert_eq!(items.last(), Some(&json!(999)));
    let markers: Vec<(usize, u64)> = items
        .iter()
        .enumerate()
        .filter_map(|(i, e)| marker_count(e).map(|n| (i, n)))
        .collect();
    assert_eq!(markers.len(), 1);
    let (at, removed) = markers[0];
    assert!(
        at > 0 && at < items.len() - 1,
        "the marker is in the middle"
    );
    assert_eq!(removed as usize + items.len() - 1, 1000);
    assert!(size(&result.data) <= 1000);
}

#[test]
fn long_strings_are_cut_at_their_end_and_marked() {
    let text = "é".repeat(10_000);
    let data = json!({"title": "short", "body": text});
    let result = trim(&data, &[], 2000);
    assert!(size(&result.data) <= 2000);
    assert_eq!(result.data["title"], "short");
    let body = result.data["body"].as_str().unwrap_or("");
    assert!(body.starts_with("éé"));
    assert!(body.contains("…[$trimmed "), "{body}");
    assert!(body.ends_with(" bytes]"));
}

#[test]
fn a_big_string_does_not_cost_a_small_array_its_elements() {
    let data = json!({"log": "x".repeat(100_000), "recent": [1, 2, 3, 4, 5]});
    let result = trim(&data, &[series("/recent", Newest::Last)], 4096);
    assert_eq!(result.data["recent"], json!([1, 2, 3, 4, 5]));
    assert!(size(&result.data) <= 4096);
}

#[test]
fn last_resort_replaces_data_that_cannot_be_cut_enough() {
    let mut object = serde_json::Map::new();
    for i in 0..2000 {
        object.insert(format!("key{i}"), json!(i));
    }
    let data = Value::Object(object);
    let original = size(&data);
    let result = trim(&data, &[], 4096);
    assert_eq!(result.data, json!({"$trimmed": {"bytes": original}}));
    assert!(result.trimmed);
    let tiny = trim(&data, &[], 5);
    assert!(size(&tiny.data) <= 5);
}

/// Trimming a large state fits the budget and keeps the newest end of its
/// series (how fast is a benchmark's question, not a test's).
#[test]
fn large_states_trim_to_the_budget() {
    let big: Vec<Value> = (0..5000)
        .map(|i| json!({"i": i, "text": "y".repeat(80), "tags": ["a", "b", "c"]}))
        .collect();
    let data = json!({"big": big, "blob": "z".repeat(50_000)});
    assert!(size(&data) > 500_000);
    for data in [forty_kb_state(), data] {
        let result = trim(&data, &[series("/big", Newest::Last)], 16 * 1024);
        assert!(size(&result.data) <= 16 * 1024);
        assert!(result.trimmed);
    }
}

#[test]
fn budget_is_16_kib_alone_and_4_kib_each_together() {
    let limits = Limits::default();
    assert_eq!(budget_for(1, &limits), 16384);
    assert_eq!(budget_for(0, &limits), 16384);
    assert_eq!(budget_for(2, &limits), 4096);
    assert_eq!(budget_for(10, &limits), 4096);
}

fn arbitrary_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(|f| json!(f)),
        "[\\PC\"\\\\\n\t\u{1}é]{0,300}".prop_map(Value::String),
    ];
    leaf.prop_recursive(5, 400, 40, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..40).prop_map(Value::Array),
            prop::collection::btree_map("[a-z/~]{0,6}", inner, 0..12)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

    #[test]
    fn trim_always_ends_within_budget(data in arbitrary_json(), budget in 2usize..5000, newest_last in any::<bool>()) {
        let newest = if newest_last { Newest::Last } else { Newest::First };
        let declared = [series("", newest), series("/a", newest)];
        let result = trim(&data, &declared, budget);
        prop_assert!(size(&result.data) <= budget);
        prop_assert_eq!(result.trimmed, size(&data) > budget);
        if !result.trimmed {
            prop_assert_eq!(result.data, data);
        }
    }
}
