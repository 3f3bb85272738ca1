//! Tool arguments for `tickloop check`, made from a tool's `input_schema`
//! with a seeded generator ([`Rng`]), so a run can be replayed with
//! `--seed N`.
//!
//! [`valid_args`] gives several argument objects per tool: the required
//! fields alone at their lower bounds, every field at its upper bounds, one
//! per value of each `enum` (nested objects included), and a few random
//! ones; each is kept only when the JSON Schema validator accepts it.
//! [`invalid_args`] gives objects the schema refuses (a required field
//! left out, a wrong type, a value outside an enum or a bound, a field the
//! schema forbids), each with what is wrong with it. The keywords covered
//! are those Ticks use: type (and lists of types), enum, const, properties,
//! required, additionalProperties, items, minItems/maxItems, minimum,
//! maximum and their exclusive forms, multipleOf, minLength/maxLength,
//! format (date-time, date, email, uri, uuid), anyOf/oneOf, default,
//! examples and references within the schema (`#/$defs/...`). (No crate generates examples from a JSON Schema in Rust with
//! a seed and bounds; this is a small one of its own.)

use serde_json::{json, Map, Value};

/// How many random argument objects per tool, beyond the systematic ones.
const RANDOM_PER_TOOL: usize = 3;
/// The most argument objects per tool (enum coverage included: an enum of
/// more values than this is covered in part).
const MOST_PER_TOOL: usize = 64;
/// How deep nested objects and arrays are generated.
const MOST_DEPTH: usize = 6;

/// A small seeded generator (splitmix64): the same seed, the same arguments.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (0 when `n` is 0).
    fn below(&mut self, n: u64) -> u64 {
        if n == 0 {
            0
        } else {
            self.next() % n
        }
    }

    fn coin(&mut self) -> bool {
        self.next() & 1 == 1
    }

    /// An integer in `lo..=hi`.
    fn between(&mut self, lo: i64, hi: i64) -> i64 {
        if hi <= lo {
            return lo;
        }
        let span = (hi as i128 - lo as i128 + 1) as u128;
        (lo as i128 + (self.next() as u128 % span) as i128) as i64
    }
}

/// Which values a generated object takes.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// Required fields only, lower bounds, first choices.
    Least,
    /// Every field, upper bounds, last choices.
    Most,
    /// Random fields and values.
    Random,
}

/// A value of the schema at `path` (object property names) forced to a
/// given value, for enum coverage.
struct Forced<'a> {
    path: &'a [String],
    value: &'a Value,
}

/// Argument objects `schema` accepts, several, deterministic for `rng`'s
/// seed; none when it accepts none the generator can make.
pub fn valid_args(schema: &Value, rng: &mut Rng) -> Vec<Value> {
    let Ok(validator) = jsonschema::validator_for(schema) else {
        return Vec::new();
    };
    let mut made = vec![
        generate(schema, schema, Mode::Least, rng, None, 0),
        generate(schema, schema, Mode::Most, rng, None, 0),
        // For a schema that says little (`{}`, `{"type": "object"}`).
        json!({}),
    ];
    let mut enums = Vec::new();
    enum_paths(schema, schema, &mut Vec::new(), &mut enums, 0);
    for (path, values) in &enums {
        for value in values {
            let forced = Forced { path, value };
            made.push(generate(schema, schema, Mode::Least, rng, Some(&forced), 0));
        }
    }
    for _ in 0..RANDOM_PER_TOOL {
        made.push(generate(schema, schema, Mode::Random, rng, None, 0));
    }
    let mut kept: Vec<Value> = Vec::new();
    for args in made {
        if args.is_object() && validator.is_valid(&args) && !kept.contains(&args) {
            kept.push(args);
        }
    }
    kept.truncate(MOST_PER_TOOL);
    kept
}

/// Argument objects `schema` refuses, each with what is wrong with it.
pub fn invalid_args(schema: &Value, rng: &mut Rng) -> Vec<(Value, String)> {
    let Ok(validator) = jsonschema::validator_for(schema) else {
        return Vec::new();
    };
    let base = generate(schema, schema, Mode::Least, rng, None, 0);
    let Some(base_object) = base.as_object().filter(|_| validator.is_valid(&base)) else {
        // Nothing valid to start from: only the plain refusals.
        return [(json!([]), "args that are not an object".to_string())]
            .into_iter()
            .filter(|(args, _)| !validator.is_valid(args))
            .collect();
    };
    let mut made: Vec<(Value, String)> = Vec::new();
    for name in required(schema) {
        let mut args = base_object.clone();
        args.remove(&name);
        made.push((
            Value::Object(args),
            format!("without the required {name:?}"),
        ));
    }
    let properties = schema.get("properties").and_then(Value::as_object);
    for (name, property) in properties.into_iter().flatten() {
        for (wrong, why) in wrong_values(property) {
            let mut args = base_object.clone();
            args.insert(name.clone(), wrong);
            made.push((Value::Object(args), format!("{name:?} {why}")));
        }
    }
    if schema.get("additionalProperties") == Some(&Value::Bool(false)) {
        let mut args = base_object.clone();
        args.insert("__tickloop_check_unexpected".into(), json!(1));
        made.push((
            Value::Object(args),
            "with a field the schema forbids".into(),
        ));
    }
    made.into_iter()
        .filter(|(args, _)| !validator.is_valid(args))
        .collect()
}

/// Values a property's schema refuses, with what is wrong with each.
fn wrong_values(property: &Value) -> Vec<(Value, String)> {
    let mut wrong = Vec::new();
    match first_type(property).as_deref() {
        Some("string") => wrong.push((json!(12), "a number where a string belongs".into())),
        Some(_) => wrong.push((
            json!("not the declared type"),
            "a string where another type belongs".into(),
        )),
        None => {}
    }
    if property.get("enum").is_some() {
        wrong.push((
            json!("__not_one_of_the_enum"),
            "a value outside its enum".into(),
        ));
    }
    if let Some(min) = property.get("minimum").and_then(Value::as_f64) {
        wrong.push((number_like(property, min - 1.0), "below its minimum".into()));
    }
    if let Some(max) = property.get("maximum").and_then(Value::as_f64) {
        wrong.push((number_like(property, max + 1.0), "above its maximum".into()));
    }
    if let Some(max) = property.get("maxLength").and_then(Value::as_u64) {
        let long = "x".repeat(max.saturating_add(1).min(1 << 16) as usize);
        wrong.push((json!(long), "longer than its maxLength".into()));
    }
    if property
        .get("minLength")
        .and_then(Value::as_u64)
        .unwrap_or(0)
        > 0
    {
        wrong.push((json!(""), "shorter than its minLength".into()));
    }
    wrong
}

fn number_like(property: &Value, n: f64) -> Value {
    if first_type(property).as_deref() == Some("integer") {
        json!(n.floor() as i64)
    } else {
        json!(n)
    }
}

/// The names `schema` requires.
fn required(schema: &Value) -> Vec<String> {
    schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| {
            r.iter()
                .filter_map(|n| n.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

/// The first declared type that is not `null` (or `null` when it is the
/// only one); guessed from the keywords when none is declared.
fn first_type(schema: &Value) -> Option<String> {
    match schema.get("type") {
        Some(Value::String(t)) => Some(t.clone()),
        Some(Value::Array(types)) => types
            .iter()
            .filter_map(Value::as_str)
            .find(|t| *t != "null")
            .or_else(|| types.iter().filter_map(Value::as_str).next())
            .map(str::to_string),
        _ if schema.get("properties").is_some() => Some("object".into()),
        _ if schema.get("items").is_some() => Some("array".into()),
        _ => None,
    }
}

/// Every enum reachable through object properties: its path and values.
fn enum_paths(
    root: &Value,
    schema: &Value,
    path: &mut Vec<String>,
    found: &mut Vec<(Vec<String>, Vec<Value>)>,
    depth: usize,
) {
    if depth > MOST_DEPTH {
        return;
    }
    let schema = schema
        .get("$ref")
        .and_then(Value::as_str)
        .and_then(|r| r.strip_prefix('#'))
        .and_then(|pointer| root.pointer(pointer))
        .unwrap_or(schema);
    if let Some(values) = schema.get("enum").and_then(Value::as_array) {
        if !path.is_empty() {
            found.push((path.clone(), values.clone()));
        }
    }
    for (name, property) in schema
        .get("properties")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
    {
        path.push(name.clone());
        enum_paths(root, property, path, found, depth + 1);
        path.pop();
    }
}

/// One value of `schema` in `mode`, with `forced` (if any) in place.
fn generate(
    root: &Value,
    schema: &Value,
    mode: Mode,
    rng: &mut Rng,
    forced: Option<&Forced>,
    depth: usize,
) -> Value {
    if let Some(f) = forced.filter(|f| f.path.is_empty()) {
        return f.value.clone();
    }
    // A reference within the schema (`#/$defs/...`), as schemars writes them.
    if let Some(target) = schema
        .get("$ref")
        .and_then(Value::as_str)
        .and_then(|r| r.strip_prefix('#'))
        .and_then(|pointer| root.pointer(pointer))
        .filter(|_| depth <= MOST_DEPTH)
    {
        return generate(root, target, mode, rng, forced, depth + 1);
    }
    if let Some(constant) = schema.get("const") {
        return constant.clone();
    }
    if let Some(values) = schema.get("enum").and_then(Value::as_array) {
        if !values.is_empty() {
            return pick(values, mode, rng).clone();
        }
    }
    if mode != Mode::Random && forced.is_none() {
        if let Some(example) = schema
            .get("examples")
            .and_then(Value::as_array)
            .and_then(|e| e.first())
            .or_else(|| schema.get("default"))
            .filter(|_| mode == Mode::Most)
        {
            return example.clone();
        }
    }
    if let Some(branches) = schema
        .get("anyOf")
        .or_else(|| schema.get("oneOf"))
        .and_then(Value::as_array)
    {
        if !branches.is_empty() {
            let branch = pick(branches, mode, rng);
            return generate(root, branch, mode, rng, forced, depth + 1);
        }
    }
    match first_type(schema).as_deref() {
        Some("object") => object(root, schema, mode, rng, forced, depth),
        Some("array") => array(root, schema, mode, rng, depth),
        Some("integer") => integer(schema, mode, rng),
        Some("number") => number(schema, mode, rng),
        Some("boolean") => json!(match mode {
            Mode::Least => false,
            Mode::Most => true,
            Mode::Random => rng.coin(),
        }),
        Some("null") => Value::Null,
        _ => string(schema, mode, rng),
    }
}

fn pick<'a>(values: &'a [Value], mode: Mode, rng: &mut Rng) -> &'a Value {
    match mode {
        Mode::Least => &values[0],
        Mode::Most => &values[values.len() - 1],
        Mode::Random => &values[rng.below(values.len() as u64) as usize],
    }
}

fn object(
    root: &Value,
    schema: &Value,
    mode: Mode,
    rng: &mut Rng,
    forced: Option<&Forced>,
    depth: usize,
) -> Value {
    let mut out = Map::new();
    if depth > MOST_DEPTH {
        return Value::Object(out);
    }
    let needed = required(schema);
    let forced_name = forced.and_then(|f| f.path.first());
    for (name, property) in schema
        .get("properties")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
    {
        let is_forced = forced_name == Some(name);
        let wanted = needed.contains(name)
            || is_forced
            || match mode {
                Mode::Least => false,
                Mode::Most => true,
                Mode::Random => rng.coin(),
            };
        if !wanted {
            continue;
        }
        let inner = forced.filter(|_| is_forced).map(|f| Forced {
            path: &f.path[1..],
            value: f.value,
        });
        let value = generate(root, property, mode, rng, inner.as_ref(), depth + 1);
        out.insert(name.clone(), value);
    }
    // A required field without a declared schema: any value fits.
    for name in needed {
        out.entry(name).or_insert_with(|| json!("x"));
    }
    Value::Object(out)
}

fn array(root: &Value, schema: &Value, mode: Mode, rng: &mut Rng, depth: usize) -> Value {
    let least = schema.get("minItems").and_then(Value::as_u64).unwrap_or(0);
    let most = schema
        .get("maxItems")
        .and_then(Value::as_u64)
        .unwrap_or(least + 3)
        .max(least);
    let count = match mode {
        Mode::Least => least,
        Mode::Most => most.min(least + 3),
        Mode::Random => least + rng.below(most.min(least + 3) - least + 1),
    };
    let items = schema.get("items").cloned().unwrap_or(json!({}));
    let values = (0..count)
        .map(|i| {
            // Distinct items where it matters (uniqueItems, enums).
            let item_mode = if i == 0 { mode } else { Mode::Random };
            generate(root, &items, item_mode, rng, None, depth + 1)
        })
        .collect();
    Value::Array(values)
}

/// The inclusive bounds of a number schema, defaulting to `-1000..=1000`
/// where it sets none.
fn bounds(schema: &Value) -> (f64, f64, bool, bool) {
    let get = |k: &str| schema.get(k).and_then(Value::as_f64);
    let (lo, lo_set) = match (get("minimum"), get("exclusiveMinimum")) {
        (Some(m), _) => (m, true),
        (None, Some(e)) => (e + 1.0, true),
        (None, None) => (-1000.0, false),
    };
    let (hi, hi_set) = match (get("maximum"), get("exclusiveMaximum")) {
        (Some(m), _) => (m, true),
        (None, Some(e)) => (e - 1.0, true),
        (None, None) => (lo.max(0.0) + 1000.0, false),
    };
    (lo, hi.max(lo), lo_set, hi_set)
}

fn integer(schema: &Value, mode: Mode, rng: &mut Rng) -> Value {
    let (lo, hi, lo_set, _) = bounds(schema);
    let (lo, hi) = (lo.ceil() as i64, hi.floor() as i64);
    let mut n = match mode {
        Mode::Least if lo_set => lo,
        Mode::Least => 0.clamp(lo, hi.max(lo)),
        Mode::Most => hi,
        Mode::Random => rng.between(lo, hi),
    };
    if let Some(step) = schema
        .get("multipleOf")
        .and_then(Value::as_i64)
        .filter(|s| *s > 0)
    {
        n = (n / step) * step;
        if n < lo {
            n += step;
        }
    }
    json!(n)
}

fn number(schema: &Value, mode: Mode, rng: &mut Rng) -> Value {
    let (lo, hi, lo_set, _) = bounds(schema);
    let n = match mode {
        Mode::Least if lo_set => lo,
        Mode::Least => 0f64.clamp(lo, hi),
        Mode::Most => hi,
        Mode::Random => lo + (hi - lo) * (rng.below(1000) as f64 / 1000.0),
    };
    if schema.get("multipleOf").is_some() {
        return json!(n.round());
    }
    json!(n)
}

fn string(schema: &Value, mode: Mode, rng: &mut Rng) -> Value {
    if let Some(format) = schema.get("format").and_then(Value::as_str) {
        let known = match format {
            "date-time" => Some("2026-01-02T03:04:05Z"),
            "date" => Some("2026-01-02"),
            "time" => Some("03:04:05Z"),
            "email" => Some("someone@example.com"),
            "uri" | "url" => Some("https://example.com/a"),
            "uuid" => Some("123e4567-e89b-12d3-a456-426614174000"),
            "ipv4" => Some("192.0.2.1"),
            "hostname" => Some("example.com"),
            _ => None,
        };
        if let Some(text) = known {
            return json!(text);
        }
    }
    let least = schema.get("minLength").and_then(Value::as_u64).unwrap_or(0) as usize;
    let most = schema
        .get("maxLength")
        .and_then(Value::as_u64)
        .map(|m| m as usize)
        .unwrap_or(least.max(1) + 24)
        .max(least);
    let length = match mode {
        Mode::Least => least.max(1).min(most),
        Mode::Most => most.min(least.max(1) + 40),
        Mode::Random => least + rng.below((most.min(least + 24) - least + 1) as u64) as usize,
    };
    let text: String = match mode {
        // Beyond ASCII on purpose: a Tick must take any UTF-8.
        Mode::Most => "Grüße ✓ tick ".chars().cycle().take(length).collect(),
        _ => (0..length)
            .map(|_| (b'a' + rng.below(26) as u8) as char)
            .collect(),
    };
    json!(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn schema() -> Value {
        json!({
            "type": "object",
            "properties": {
                "n": {"type": "integer", "minimum": 1, "maximum": 9},
                "mode": {"enum": ["fast", "slow", "off"]},
                "name": {"type": "string", "minLength": 2, "maxLength": 5},
                "inner": {"type": "object", "properties": {
                    "level": {"type": "string", "enum": ["low", "high"]},
                    "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 2}
                }, "required": ["level"], "additionalProperties": false},
                "at": {"type": "string", "format": "date-time"}
            },
            "required": ["n"],
            "additionalProperties": false
        })
    }

    #[test]
    fn valid_args_fit_cover_bounds_and_every_enum_value_and_repeat_by_seed() {
        let made = valid_args(&schema(), &mut Rng::new(7));
        let validator = jsonschema::validator_for(&schema()).expect("schema");
        assert!(made.iter().all(|a| validator.is_valid(a)), "{made:#?}");
        assert!(made.iter().any(|a| a == &json!({"n": 1})), "{made:#?}");
        assert!(
            made.iter().any(|a| a["n"] == 9
                && a["name"].as_str().map(str::chars).map(Iterator::count) == Some(5)),
            "{made:#?}"
        );
        for mode in ["fast", "slow", "off"] {
            assert!(made.iter().any(|a| a["mode"] == mode), "{mode}: {made:#?}");
        }
        for level in ["low", "high"] {
            assert!(
                made.iter().any(|a| a["inner"]["level"] == level),
                "{level}: {made:#?}"
            );
        }
        assert_eq!(made, valid_args(&schema(), &mut Rng::new(7)));
        assert_ne!(made, valid_args(&schema(), &mut Rng::new(8)));
    }

    #[test]
    fn invalid_args_are_refused_and_say_why() {
        let made = invalid_args(&schema(), &mut Rng::new(1));
        let validator = jsonschema::validator_for(&schema()).expect("schema");
        assert!(
            made.iter().all(|(a, _)| !validator.is_valid(a)),
            "{made:#?}"
        );
        let whys: Vec<&str> = made.iter().map(|(_, w)| w.as_str()).collect();
        for expected in [
            "without the required \"n\"",
            "\"n\" below its minimum",
            "\"n\" above its maximum",
            "\"mode\" a value outside its enum",
            "with a field the schema forbids",
        ] {
            assert!(whys.contains(&expected), "{expected}: {whys:#?}");
        }
    }

    #[test]
    fn references_within_the_schema_are_followed() {
        let schema = json!({
            "type": "object",
            "properties": {"item": {"$ref": "#/$defs/Item"}},
            "required": ["item"],
            "$defs": {"Item": {"type": "object", "properties": {
                "kind": {"type": "string", "enum": ["a", "b", "c"]}}, "required": ["kind"]}}
        });
        let made = valid_args(&schema, &mut Rng::new(5));
        for kind in ["a", "b", "c"] {
            assert!(
                made.iter().any(|a| a["item"]["kind"] == kind),
                "{kind}: {made:#?}"
            );
        }
    }

    #[test]
    fn a_schema_without_fields_gives_the_empty_object() {
        let none = json!({"type": "object", "additionalProperties": false});
        assert_eq!(valid_args(&none, &mut Rng::new(3)), vec![json!({})]);
        assert_eq!(valid_args(&json!({}), &mut Rng::new(3)), vec![json!({})]);
    }
}
