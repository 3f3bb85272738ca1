//! How a Tick tool's `input_schema` becomes an MCP `inputSchema` that strict
//! hosts accept.
//!
//! MCP clients (the official SDKs, the Inspector) reject a whole `tools/list`
//! when one `inputSchema` lacks `"type":"object"` at the top, and the major
//! model APIs refuse a tool whose schema has `oneOf`/`anyOf`/`allOf`/`not`/
//! `enum` (or `const`, `if`/`then`/`else`) at the top. The Tick protocol only
//! asks that an `input_schema` be a JSON object and a valid JSON Schema, and
//! `args` is always a JSON object, so the bridge sorts each schema:
//!
//! * **as is** — `type` is `"object"`, or absent, or a list with `"object"`
//!   in it (replaced by `"object"`: for the object `args` always is, that
//!   means the same), and no combinator at the top;
//! * **wrapped** — a combinator at the top: the tool takes
//!   `{"args": <the Tick's schema>}` (its `$defs`/`definitions` kept at the
//!   top so `#/$defs/...` references still resolve) and the bridge unwraps
//!   `args` before the call;
//! * **left out** — `type` names no object (no `args` could ever match, so
//!   no call could pass the host's check), or a wrapped schema would refer to
//!   its own root (`#` or `#/properties/...`), which wrapping would break.
//!
//! A left-out tool is named, with the reason, in TickDescribe's `mcp_tools`,
//! and TickCall still reaches it.

use serde_json::{json, Map, Value};

/// The property that carries a wrapped tool's arguments.
pub const WRAPPED_ARG: &str = "args";

/// Keywords that strict hosts refuse at the top of a tool's schema.
const TOP_LEVEL_REFUSED: &[&str] = &[
    "oneOf", "anyOf", "allOf", "not", "enum", "const", "if", "then", "else",
];

/// Keywords that stay at the top of a wrapped schema.
const KEPT_AT_TOP: &[&str] = &["$schema", "$defs", "definitions"];

/// How one Tick tool is offered as an MCP tool.
#[derive(Debug, Clone, PartialEq)]
pub enum Offer {
    /// The Tick's schema (with `type` made `"object"`).
    AsIs(Map<String, Value>),
    /// The Tick's schema under the property [`WRAPPED_ARG`]; the string says why.
    Wrapped(Map<String, Value>, String),
    /// Not a per-Tick tool; the string says why (TickCall still reaches it).
    LeftOut(String),
}

impl Offer {
    /// `as_is`, `wrapped` or `left_out`, for TickDescribe.
    pub fn kind(&self) -> &'static str {
        match self {
            Offer::AsIs(_) => "as_is",
            Offer::Wrapped(..) => "wrapped",
            Offer::LeftOut(_) => "left_out",
        }
    }
}

/// Sorts one `input_schema` (see the module text).
pub fn offer(schema: &Map<String, Value>) -> Offer {
    let accepts_object = match schema.get("type") {
        None => true,
        Some(Value::String(t)) => t == "object",
        Some(Value::Array(types)) => types.iter().any(|t| t == "object"),
        Some(_) => false,
    };
    if !accepts_object {
        return Offer::LeftOut(format!(
            "its input_schema's type is {}, not object, but a Tick's args are always a JSON object, so no call can match it",
            schema.get("type").map(Value::to_string).unwrap_or_default()
        ));
    }
    let mut schema = schema.clone();
    schema.insert("type".into(), Value::String("object".into()));
    let refused: Vec<&str> = TOP_LEVEL_REFUSED
        .iter()
        .copied()
        .filter(|k| schema.contains_key(*k))
        .collect();
    if refused.is_empty() {
        return Offer::AsIs(schema);
    }
    let keywords = refused.join(", ");
    if refers_to_root(&Value::Object(schema.clone())) {
        return Offer::LeftOut(format!(
            "its input_schema has {keywords} at the top, which MCP hosts refuse, and refers to its own root (`#` or `#/properties/...`), so it cannot be wrapped either"
        ));
    }
    let mut inner = schema;
    let mut outer = Map::new();
    for key in KEPT_AT_TOP {
        if let Some(value) = inner.remove(*key) {
            outer.insert((*key).to_string(), value);
        }
    }
    outer.insert("type".into(), json!("object"));
    outer.insert(
        "properties".into(),
        json!({ WRAPPED_ARG: Value::Object(inner) }),
    );
    outer.insert("required".into(), json!([WRAPPED_ARG]));
    outer.insert("additionalProperties".into(), json!(false));
    Offer::Wrapped(
        outer,
        format!(
            "its input_schema has {keywords} at the top, which MCP hosts refuse in a tool definition: its arguments go under `{WRAPPED_ARG}`"
        ),
    )
}

/// Whether a `$ref` anywhere in `value` points at the root document other
/// than into `$defs`/`definitions`.
fn refers_to_root(value: &Value) -> bool {
    match value {
        Value::Object(map) => map.iter().any(|(key, v)| {
            let bad_ref = (key == "$ref" || key == "$dynamicRef")
                && v.as_str().is_some_and(|r| {
                    r.starts_with('#')
                        && !r.starts_with("#/$defs/")
                        && !r.starts_with("#/definitions/")
                });
            bad_ref || refers_to_root(v)
        }),
        Value::Array(items) => items.iter().any(refers_to_root),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(v: Value) -> Map<String, Value> {
        match v {
            Value::Object(m) => m,
            other => panic!("not an object: {other}"),
        }
    }

    /// What every offered schema must be: an object schema with no refused
    /// keyword at the top.
    fn strict(schema: &Map<String, Value>) {
        assert_eq!(schema.get("type"), Some(&json!("object")), "{schema:?}");
        for k in TOP_LEVEL_REFUSED {
            assert!(!schema.contains_key(*k), "{k} at the top: {schema:?}");
        }
    }

    #[test]
    fn object_schemas_pass_as_they_are() {
        let s = map(json!({"type": "object", "properties": {"a": {"type": "integer"}}}));
        assert_eq!(offer(&s), Offer::AsIs(s.clone()));
        let Offer::AsIs(empty) = offer(&Map::new()) else {
            panic!("{{}} is offered as is")
        };
        strict(&empty);
        let Offer::AsIs(nullable) = offer(&map(json!({"type": ["object", "null"]}))) else {
            panic!("object-or-null is offered as is")
        };
        strict(&nullable);
    }

    #[test]
    fn a_schema_that_takes_no_object_is_left_out() {
        for s in [
            json!({"type": "string"}),
            json!({"type": ["array", "null"]}),
        ] {
            let o = offer(&map(s.clone()));
            assert!(
                matches!(&o, Offer::LeftOut(why) if why.contains("always a JSON object")),
                "{s}: {o:?}"
            );
        }
    }

    #[test]
    fn top_level_combinators_are_wrapped_with_their_defs_at_the_top() {
        let s = map(json!({
            "oneOf": [{"$ref": "#/$defs/a"}, {"properties": {"b": {"type": "string"}}, "required": ["b"]}],
            "$defs": {"a": {"properties": {"a": {"type": "integer"}}, "required": ["a"]}}
        }));
        let Offer::Wrapped(w, why) = offer(&s) else {
            panic!("oneOf is wrapped")
        };
        strict(&w);
        assert!(why.contains("oneOf"), "{why}");
        assert_eq!(w["required"], json!(["args"]));
        assert!(w["properties"]["args"]["oneOf"].is_array());
        assert!(w["$defs"]["a"].is_object());
        // The wrapped schema still validates what the Tick's does.
        let validator = jsonschema::validator_for(&Value::Object(w)).expect("valid schema");
        assert!(validator.is_valid(&json!({"args": {"a": 1}})));
        assert!(!validator.is_valid(&json!({"args": {"a": "x"}})));
        assert!(!validator.is_valid(&json!({"a": 1})));
    }

    #[test]
    fn a_combinator_with_a_root_reference_is_left_out() {
        let s = map(json!({"anyOf": [{"properties": {"next": {"$ref": "#"}}}]}));
        assert!(matches!(offer(&s), Offer::LeftOut(_)));
    }
}
