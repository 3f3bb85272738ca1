//! What a Tick declares about itself (`tick/describe`): its [`Describe`],
//! built from [`Tool`]s whose `mutates` is a constructor argument, and the
//! compiled [`Catalog`] the session derives from it (revision, validators).

use serde_json::{json, Map, Value};
use std::collections::HashSet;

/// One tool of the catalog. `mutates` has no default: every constructor
/// takes it, so a tool cannot be declared without saying whether it
/// changes anything.
#[derive(Debug, Clone, PartialEq)]
pub struct Tool {
    pub(crate) name: String,
    pub(crate) description: String,
    pub(crate) input_schema: Value,
    pub(crate) mutates: bool,
}

impl Tool {
    /// A tool taking no arguments until [`Tool::input`] says otherwise.
    /// `mutates`: whether a call can change anything beyond its own result
    /// (the Tick's state, its screen's content, files, remote services).
    pub fn new(name: impl Into<String>, description: impl Into<String>, mutates: bool) -> Tool {
        Tool {
            name: name.into(),
            description: description.into(),
            input_schema: json!({"type": "object", "additionalProperties": false}),
            mutates,
        }
    }

    /// `Tool::new(name, description, true)`: a tool that changes something.
    pub fn mutating(name: impl Into<String>, description: impl Into<String>) -> Tool {
        Tool::new(name, description, true)
    }

    /// `Tool::new(name, description, false)`: a query that only reads.
    pub fn query(name: impl Into<String>, description: impl Into<String>) -> Tool {
        Tool::new(name, description, false)
    }

    /// The JSON Schema of the tool's `args` (its top level an object).
    /// Calls whose args fail it are refused with -32602 before
    /// [`crate::Tick::call`] sees them.
    pub fn input(mut self, schema: Value) -> Tool {
        self.input_schema = schema;
        self
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn mutates(&self) -> bool {
        self.mutates
    }

    fn to_json(&self) -> Value {
        json!({
            "name": self.name,
            "description": self.description,
            "input_schema": self.input_schema,
            "mutates": self.mutates,
        })
    }
}

/// Which end of a time-ordered array holds its newest element.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Newest {
    First,
    Last,
}

/// What the Tick is and which tools it has: the `tick/describe` result
/// without `protocol` and `revision`, which the session adds.
#[derive(Debug, Clone, PartialEq)]
pub struct Describe {
    pub(crate) kind: String,
    pub(crate) title: String,
    pub(crate) description: String,
    pub(crate) tools: Vec<Tool>,
    pub(crate) recover_with: Option<String>,
    pub(crate) series: Vec<(String, Newest)>,
}

impl Describe {
    /// `kind`: a lowercase dotted name whose first part is the publisher
    /// (`acme.orderbook`); `title`: a short name for people and models;
    /// `description`: one or two sentences on what it shows and does.
    pub fn new(
        kind: impl Into<String>,
        title: impl Into<String>,
        description: impl Into<String>,
    ) -> Describe {
        Describe {
            kind: kind.into(),
            title: title.into(),
            description: description.into(),
            tools: Vec::new(),
            recover_with: None,
            series: Vec::new(),
        }
    }

    /// Adds a tool.
    pub fn tool(mut self, tool: Tool) -> Describe {
        self.tools.push(tool);
        self
    }

    /// Names the query tool that rebuilds what merged updates dropped (it
    /// must be a tool of this catalog with `mutates: false`).
    pub fn recover_with(mut self, tool: impl Into<String>) -> Describe {
        self.recover_with = Some(tool.into());
        self
    }

    /// Declares the array at JSON Pointer `path` of the state's `data` as
    /// ordered in time, so trimming keeps its newest end.
    pub fn series(mut self, path: impl Into<String>, newest: Newest) -> Describe {
        self.series.push((path.into(), newest));
        self
    }

    /// The tools' part of the descriptor: what the revision names.
    pub(crate) fn tools_json(&self) -> Value {
        Value::Array(self.tools.iter().map(Tool::to_json).collect())
    }

    /// The complete `tick/describe` result for `revision`.
    pub(crate) fn to_json(&self, revision: &str) -> Value {
        let mut out = Map::new();
        out.insert("protocol".into(), json!(crate::PROTOCOL));
        out.insert("kind".into(), json!(self.kind));
        out.insert("title".into(), json!(self.title));
        out.insert("description".into(), json!(self.description));
        out.insert("revision".into(), json!(revision));
        out.insert("tools".into(), self.tools_json());
        if let Some(tool) = &self.recover_with {
            out.insert("recover_with".into(), json!(tool));
        }
        if !self.series.is_empty() {
            let series: Vec<Value> = self
                .series
                .iter()
                .map(|(path, newest)| {
                    json!({"path": path, "newest": match newest {
                        Newest::First => "first",
                        Newest::Last => "last",
                    }})
                })
                .collect();
            out.insert("state".into(), json!({ "series": series }));
        }
        Value::Object(out)
    }

    /// What a host would refuse in this descriptor (section 5.3), so the
    /// author hears of it from the Tick's own answer.
    pub(crate) fn problems(&self) -> Vec<String> {
        let mut problems = Vec::new();
        if self.kind.trim().is_empty() {
            problems.push("kind is empty".to_string());
        }
        if self.title.trim().is_empty() {
            problems.push("title is empty".to_string());
        }
        let mut names = HashSet::new();
        for tool in &self.tools {
            if tool.name.trim().is_empty() {
                problems.push("a tool has an empty name".to_string());
            } else if !names.insert(tool.name.as_str()) {
                problems.push(format!("two tools are called {:?}", tool.name));
            }
        }
        if let Some(name) = &self.recover_with {
            match self.tools.iter().find(|t| &t.name == name) {
                None => problems.push(format!("recover_with names {name:?}, which is no tool")),
                Some(t) if t.mutates => problems.push(format!(
                    "recover_with names {name:?}, which mutates; it must be a query"
                )),
                Some(_) => {}
            }
        }
        let mut paths = HashSet::new();
        for (path, _) in &self.series {
            if !path.is_empty() && !path.starts_with('/') {
                problems.push(format!(
                    "series path {path:?} is neither empty nor starts with /"
                ));
            }
            if !paths.insert(path.as_str()) {
                problems.push(format!("series path {path:?} is declared twice"));
            }
        }
        problems
    }
}

/// A catalog as the session serves it: the descriptor, its revision and
/// each tool's compiled schema.
pub(crate) struct Catalog {
    /// Digest of the tools' JSON, to notice a change.
    pub digest: u64,
    pub revision: String,
    pub descriptor: Result<Value, String>,
    pub tools: Vec<(Tool, Option<jsonschema::Validator>)>,
}

impl Catalog {
    /// Compiles `describe`; `generation` numbers the catalogs seen so far.
    pub fn compile(describe: &Describe, digest: u64, generation: u64) -> Catalog {
        let revision = format!("{generation}-{digest:016x}");
        let mut problems = describe.problems();
        let mut tools = Vec::new();
        for tool in &describe.tools {
            let validator = compile_schema(&tool.input_schema);
            match validator {
                Ok(v) => tools.push((tool.clone(), Some(v))),
                Err(e) => {
                    problems.push(format!("tool {:?}: input_schema {e}", tool.name));
                    tools.push((tool.clone(), None));
                }
            }
        }
        let descriptor = if problems.is_empty() {
            Ok(describe.to_json(&revision))
        } else {
            Err(problems.join("; "))
        };
        Catalog {
            digest,
            revision,
            descriptor,
            tools,
        }
    }
}

fn compile_schema(schema: &Value) -> Result<jsonschema::Validator, String> {
    if !schema.is_object() {
        return Err("is not a JSON object".to_string());
    }
    jsonschema::meta::validate(schema).map_err(|e| format!("is not a valid JSON Schema: {e}"))?;
    jsonschema::validator_for(schema).map_err(|e| format!("cannot be compiled: {e}"))
}

/// FNV-1a, 64 bits: stable across builds and platforms (unlike std's
/// hasher), so a catalog keeps its revision from one run to the next.
pub(crate) fn digest(bytes: &[u8]) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for b in bytes {
        hash ^= u64::from(*b);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    hash
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn problems_name_what_a_host_refuses() {
        let d = Describe::new(" ", "T", "d")
            .tool(Tool::mutating("a", "x"))
            .tool(Tool::query("a", "y"))
            .recover_with("a")
            .series("recent", Newest::Last);
        let p = d.problems().join("\n");
        assert!(p.contains("kind is empty"), "{p}");
        assert!(p.contains("two tools are called \"a\""), "{p}");
        assert!(p.contains("which mutates"), "{p}");
        assert!(p.contains("neither empty nor starts with /"), "{p}");
    }

    #[test]
    fn a_bad_schema_makes_describe_fail_with_the_tool_named() {
        let d = Describe::new("k.k", "T", "d")
            .tool(Tool::query("q", "x").input(json!({"type": "no-such-type"})));
        let c = Catalog::compile(&d, 1, 1);
        let e = c.descriptor.expect_err("a bad schema");
        assert!(e.contains("tool \"q\"") && e.contains("JSON Schema"), "{e}");
    }

    #[test]
    fn descriptor_has_protocol_revision_and_series() {
        let d = Describe::new("k.k", "T", "d")
            .tool(Tool::query("history", "h"))
            .recover_with("history")
            .series("/recent", Newest::Last);
        let c = Catalog::compile(&d, 7, 2);
        let v = c.descriptor.expect("valid");
        assert_eq!(v["protocol"], 3);
        assert_eq!(v["revision"], "2-0000000000000007");
        assert_eq!(v["tools"][0]["mutates"], false);
        assert_eq!(v["state"]["series"][0]["newest"], "last");
        assert_eq!(v["recover_with"], "history");
    }
}
