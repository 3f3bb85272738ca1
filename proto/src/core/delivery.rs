//! Trimming a Tick's state to a delivery budget (spec 6.4, 8.3, 9): declared
//! series keep their newest end, other arrays their beginning and end, long
//! strings their beginning; every cut is marked in place.
//!
//! The trimmer looks for the largest per-container cap `C` (in bytes) such
//! that, after cutting every string to at most `C` bytes and keeping in each
//! array only as many (already cut) elements as fit in `C` bytes, the whole
//! re-encoded value fits the budget. A binary search on `C` needs about
//! log2(size) passes over the value, each linear in its size.

use super::descriptor::{Newest, Series};
use super::limits::{encoded_size, Limits};
use serde_json::{json, Map, Value};
use std::collections::HashMap;

/// The result of [`trim`].
#[derive(Debug, Clone, PartialEq)]
pub struct Trimmed {
    /// The data, cut to the budget (or as it was when it fit).
    pub data: Value,
    /// Whether anything was cut.
    pub trimmed: bool,
}

/// The key of the marker object that replaces cut array elements:
/// `{"$trimmed": N}`.
pub const MARKER_KEY: &str = "$trimmed";

/// The budget of one item of a delivery of `items` instances together: the
/// whole delivery budget (16 KiB) alone, the per-item budget (4 KiB) when
/// several are delivered together.
pub fn budget_for(items: usize, limits: &Limits) -> usize {
    if items <= 1 {
        limits.delivery_budget
    } else {
        limits.delivery_item_budget
    }
}

/// Cuts `data` until its re-encoded size is at most `budget` bytes.
///
/// Arrays named by `series` (JSON Pointers into `data`) lose their oldest
/// elements, other arrays lose their middle, and strings lose their end. A
/// run of removed array elements becomes one element `{"$trimmed": N}`; a
/// cut string ends with `…[$trimmed N bytes]`. When no such cut is enough,
/// the data becomes `{"$trimmed": {"bytes": ORIGINAL_SIZE}}`, or `{}` when
/// even that does not fit (a budget under 2 bytes cannot be met by any JSON
/// value). Never panics.
pub fn trim(data: &Value, series: &[Series], budget: usize) -> Trimmed {
    let original = encoded_size(data);
    if original <= budget {
        return Trimmed {
            data: data.clone(),
            trimmed: false,
        };
    }
    let cutter = Cutter::new(series);
    let fitting = |cap: usize| {
        let candidate = cutter.cut_root(data, cap);
        (encoded_size(&candidate) <= budget).then_some(candidate)
    };
    let Some(mut best) = fitting(0) else {
        return Trimmed {
            data: last_resort(original, budget),
            trimmed: true,
        };
    };
    // Invariant: cap `low` fits, cap `high` does not (at `original` nothing
    // is cut, and the original does not fit).
    let (mut low, mut high) = (0usize, original);
    while high - low > 1 {
        let middle = low + (high - low) / 2;
        match fitting(middle) {
            Some(candidate) => {
                best = candidate;
                low = middle;
            }
            None => high = middle,
        }
    }
    Trimmed {
        data: best,
        trimmed: true,
    }
}

fn last_resort(original: usize, budget: usize) -> Value {
    let marker = json!({ MARKER_KEY: { "bytes": original } });
    if encoded_size(&marker) <= budget {
        marker
    } else {
        Value::Object(Map::new())
    }
}

/// One pass of cutting at a given cap.
struct Cutter {
    series: HashMap<String, Newest>,
}

/// A cut value with its re-encoded size.
struct Sized {
    value: Value,
    size: usize,
}

impl Cutter {
    fn new(series: &[Series]) -> Self {
        Cutter {
            series: series
                .iter()
                .map(|one| (one.path.clone(), one.newest))
                .collect(),
        }
    }

    fn cut_root(&self, data: &Value, cap: usize) -> Value {
        let mut pointer = String::new();
        self.cut(data, cap, &mut pointer).value
    }

    fn cut(&self, value: &Value, cap: usize, pointer: &mut String) -> Sized {
        match value {
            Value::String(text) => cut_string(text, cap),
            Value::Array(items) => self.cut_array(items, cap, pointer),
            Value::Object(fields) => self.cut_object(fields, cap, pointer),
            other => Sized {
                value: other.clone(),
                size: scalar_size(other),
            },
        }
    }

    fn cut_object(&self, fields: &Map<String, Value>, cap: usize, pointer: &mut String) -> Sized {
        let mut size = 2 + fields.len().saturating_sub(1);
        let mut cut_fields = Map::new();
        for (key, field) in fields {
            let depth = pointer.len();
            push_pointer_segment(pointer, key);
            let cut = self.cut(field, cap, pointer);
            pointer.truncate(depth);
            size += string_size(key) + 1 + cut.size;
            cut_fields.insert(key.clone(), cut.value);
        }
        Sized {
            value: Value::Object(cut_fields),
            size,
        }
    }

    fn cut_array(&self, items: &[Value], cap: usize, pointer: &mut String) -> Sized {
        let newest = self.series.get(pointer.as_str()).copied();
        let mut cut_items = Vec::with_capacity(items.len());
        for (index, item) in items.iter().enumerate() {
            let depth = pointer.len();
            pointer.push('/');
            pointer.push_str(&index.to_string());
            cut_items.push(self.cut(item, cap, pointer));
            pointer.truncate(depth);
        }
        let sizes: Vec<usize> = cut_items.iter().map(|item| item.size + 1).collect();
        let keep = match newest {
            Some(Newest::Last) => Keep::tail(&sizes, cap),
            Some(Newest::First) => Keep::head(&sizes, cap),
            None => Keep::ends(&sizes, cap),
        };
        keep.apply(cut_items, &sizes)
    }
}

/// Which elements of an array stay: the first `head` and the last `tail`.
struct Keep {
    head: usize,
    tail: usize,
}

impl Keep {
    /// The newest end is last: keep the longest suffix within `cap`.
    fn tail(sizes: &[usize], cap: usize) -> Keep {
        Keep {
            head: 0,
            tail: fitting_count(sizes.iter().rev(), cap),
        }
    }

    /// The newest end is first: keep the longest prefix within `cap`.
    fn head(sizes: &[usize], cap: usize) -> Keep {
        Keep {
            head: fitting_count(sizes.iter(), cap),
            tail: 0,
        }
    }

    /// Keep the beginning and the end, alternately, within `cap`.
    fn ends(sizes: &[usize], cap: usize) -> Keep {
        let (mut head, mut tail, mut used) = (0usize, 0usize, 0usize);
        while head + tail < sizes.len() {
            let next = if head <= tail {
                sizes[head]
            } else {
                sizes[sizes.len() - 1 - tail]
            };
            if used + next > cap {
                break;
            }
            used += next;
            if head <= tail {
                head += 1;
            } else {
                tail += 1;
            }
        }
        Keep { head, tail }
    }

    /// Builds the array, with one marker where elements were removed. Keeps
    /// everything when the marker would cost more than the removed elements.
    fn apply(&self, items: Vec<Sized>, sizes: &[usize]) -> Sized {
        let total = items.len();
        let removed = total.saturating_sub(self.head + self.tail);
        let removed_bytes: usize = sizes[self.head..total - self.tail].iter().sum();
        let marker = json!({ MARKER_KEY: removed });
        let marker_size = encoded_size(&marker) + 1;
        if removed == 0 || removed_bytes <= marker_size {
            return join_array(items);
        }
        let mut kept = Vec::with_capacity(self.head + self.tail + 1);
        let mut items = items.into_iter();
        kept.extend(items.by_ref().take(self.head));
        kept.push(Sized {
            value: marker,
            size: marker_size - 1,
        });
        kept.extend(items.skip(removed));
        join_array(kept)
    }
}

/// How many leading sizes fit in `cap` together.
fn fitting_count<'a>(sizes: impl Iterator<Item = &'a usize>, cap: usize) -> usize {
    let mut used = 0usize;
    let mut count = 0usize;
    for size in sizes {
        if used + size > cap {
            break;
        }
        used += size;
        count += 1;
    }
    count
}

fn join_array(items: Vec<Sized>) -> Sized {
    let size =
        2 + items.len().saturating_sub(1) + items.iter().map(|item| item.size).sum::<usize>();
    Sized {
        value: Value::Array(items.into_iter().map(|item| item.value).collect()),
        size,
    }
}

/// Cuts `text` to at most `cap` bytes (on a character boundary) and marks
/// the cut, unless the marked result would not be shorter.
fn cut_string(text: &str, cap: usize) -> Sized {
    if text.len() > cap {
        let mut end = cap;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        let cut = format!("{}…[{MARKER_KEY} {} bytes]", &text[..end], text.len() - end);
        if cut.len() < text.len() {
            let size = string_size(&cut);
            return Sized {
                value: Value::String(cut),
                size,
            };
        }
    }
    Sized {
        value: Value::String(text.to_string()),
        size: string_size(text),
    }
}

/// Re-encoded size of a JSON string (quotes and escapes included), as
/// serde_json writes it.
fn string_size(text: &str) -> usize {
    2 + text
        .bytes()
        .map(|byte| match byte {
            b'"' | b'\\' | b'\n' | b'\r' | b'\t' | 0x08 | 0x0c => 2,
            0x00..=0x1f => 6,
            _ => 1,
        })
        .sum::<usize>()
}

fn scalar_size(value: &Value) -> usize {
    match value {
        Value::Null => 4,
        Value::Bool(true) => 4,
        Value::Bool(false) => 5,
        Value::Number(number) => number.to_string().len(),
        other => encoded_size(other),
    }
}

/// Appends one RFC 6901 segment (`~` → `~0`, `/` → `~1`).
fn push_pointer_segment(pointer: &mut String, key: &str) {
    pointer.push('/');
    for character in key.chars() {
        match character {
            '~' => pointer.push_str("~0"),
            '/' => pointer.push_str("~1"),
            other => pointer.push(other),
        }
    }
}
