//! The Tick's descriptor (`tick/describe` result, spec 5) and its validation
//! (spec 5.3): the tool catalog, its revision, `recover_with` and the
//! declared state series.

use super::limits::{encoded_size, Limits};
use serde_json::{Map, Value};
use std::collections::HashSet;
use thiserror::Error;

/// The Tick protocol version this host speaks.
pub const PROTOCOL_VERSION: u64 = 3;

/// A validated descriptor.
#[derive(Debug, Clone)]
pub struct Descriptor {
    /// The result exactly as the Tick sent it (unknown fields included).
    pub raw: Value,
    pub kind: String,
    pub title: String,
    /// Empty when the Tick sent none.
    pub description: String,
    pub revision: String,
    pub tools: Vec<Tool>,
    pub recover_with: Option<String>,
    /// `state.series`, in the Tick's order.
    pub series: Vec<Series>,
}

/// One tool of the catalog, with its compiled `input_schema`.
#[derive(Debug, Clone)]
pub struct Tool {
    pub name: String,
    pub description: String,
    pub mutates: bool,
    pub input_schema: Value,
    /// `input_schema` compiled (no remote references are resolved).
    pub validator: jsonschema::Validator,
}

/// A declared chronological array of the state (`state.series`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Series {
    /// JSON Pointer into `data`; `""` is `data` itself.
    pub path: String,
    pub newest: Newest,
}

/// The end of a series holding its newest element.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Newest {
    First,
    Last,
}

/// Why a descriptor was rejected. Each message is a sentence naming the field.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum DescriptorError {
    /// `protocol` is not 3; `version` is the value as the Tick sent it.
    #[error("unsupported Tick protocol version {version}; this host speaks Tick protocol 3")]
    UnsupportedVersion { version: String },
    #[error("the descriptor has no protocol field; this host speaks Tick protocol 3")]
    MissingVersion,
    #[error("the descriptor is {size} bytes re-encoded, over the limit of {limit} bytes")]
    TooLarge { size: usize, limit: usize },
    #[error("the descriptor is not a JSON object")]
    NotAnObject,
    /// Any other rule of spec 5.3; `field` is a path such as `tools[2].name`.
    #[error("the descriptor's {field} {problem}")]
    InvalidField { field: String, problem: String },
}

fn invalid(field: impl Into<String>, problem: impl Into<String>) -> DescriptorError {
    DescriptorError::InvalidField {
        field: field.into(),
        problem: problem.into(),
    }
}

impl Descriptor {
    /// Validates a `tick/describe` result (spec 5.3). Unknown fields are ignored.
    pub fn validate(value: &Value, limits: &Limits) -> Result<Descriptor, DescriptorError> {
        let size = encoded_size(value);
        if size > limits.max_describe {
            return Err(DescriptorError::TooLarge {
                size,
                limit: limits.max_describe,
            });
        }
        let object = value.as_object().ok_or(DescriptorError::NotAnObject)?;
        check_protocol(object)?;
        let kind = non_blank_string(object, "kind")?;
        let title = non_blank_string(object, "title")?;
        let description = optional_string(object, "description")?.unwrap_or_default();
        let revision = revision(object)?;
        let tools = tools(object)?;
        let recover_with = recover_with(object, &tools)?;
        let series = series(object)?;
        Ok(Descriptor {
            raw: value.clone(),
            kind,
            title,
            description,
            revision,
            tools,
            recover_with,
            series,
        })
    }

    /// The tool named `name`.
    pub fn tool(&self, name: &str) -> Option<&Tool> {
        self.tools.iter().find(|tool| tool.name == name)
    }
}

impl Tool {
    /// Checks call arguments against `input_schema`; the error lists every
    /// schema error, each with the place in `args` it concerns.
    pub fn check_args(&self, args: &Value) -> Result<(), String> {
        if !args.is_object() {
            return Err(format!(
                "the arguments of {} must be a JSON object, not {}",
                self.name,
                json_type_name(args)
            ));
        }
        let errors: Vec<String> = self
            .validator
            .iter_errors(args)
            .map(|error| {
                let place = error.instance_path().to_string();
                if place.is_empty() {
                    format!("{error}")
                } else {
                    format!("at {place}: {error}")
                }
            })
            .collect();
        if errors.is_empty() {
            Ok(())
        } else {
            Err(format!(
                "the arguments do not match the input_schema of {}: {}",
                self.name,
                errors.join("; ")
            ))
        }
    }
}

/// The JSON type of `value`, for messages.
pub fn json_type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

fn check_protocol(object: &Map<String, Value>) -> Result<(), DescriptorError> {
    match object.get("protocol") {
        None => Err(DescriptorError::MissingVersion),
        Some(version) if version.as_u64() == Some(PROTOCOL_VERSION) => Ok(()),
        Some(version) => Err(DescriptorError::UnsupportedVersion {
            version: version.to_string(),
        }),
    }
}

fn non_blank_string(object: &Map<String, Value>, field: &str) -> Result<String, DescriptorError> {
    match object.get(field) {
        Some(Value::String(text)) if !text.trim().is_empty() => Ok(text.clone()),
        Some(Value::String(_)) => Err(invalid(field, "is blank")),
        Some(other) => Err(invalid(
            field,
            format!("must be a string, not {}", json_type_name(other)),
        )),
        None => Err(invalid(field, "is missing")),
    }
}

fn optional_string(
    object: &Map<String, Value>,
    field: &str,
) -> Result<Option<String>, DescriptorError> {
    match object.get(field) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(text)) => Ok(Some(text.clone())),
        Some(other) => Err(invalid(
            field,
            format!("must be a string, not {}", json_type_name(other)),
        )),
    }
}

fn revision(object: &Map<String, Value>) -> Result<String, DescriptorError> {
    match object.get("revision") {
        Some(Value::String(text)) if !text.is_empty() => Ok(text.clone()),
        Some(Value::String(_)) => Err(invalid("revision", "is an empty string")),
        Some(other) => Err(invalid(
            "revision",
            format!("must be a string, not {}", json_type_name(other)),
        )),
        None => Err(invalid("revision", "is missing")),
    }
}

fn tools(object: &Map<String, Value>) -> Result<Vec<Tool>, DescriptorError> {
    let list = match object.get("tools") {
        Some(Value::Array(list)) => list,
        Some(other) => {
            return Err(invalid(
                "tools",
                format!("must be an array, not {}", json_type_name(other)),
            ))
        }
        None => return Err(invalid("tools", "is missing")),
    };
    let mut names = HashSet::new();
    let mut tools = Vec::with_capacity(list.len());
    for (index, entry) in list.iter().enumerate() {
        let tool = parse_tool(index, entry)?;
        if !names.insert(tool.name.clone()) {
            return Err(invalid(
                format!("tools[{index}].name"),
                format!(
                    "repeats the tool name {:?}, which must be unique",
                    tool.name
                ),
            ));
        }
        tools.push(tool);
    }
    Ok(tools)
}

fn parse_tool(index: usize, entry: &Value) -> Result<Tool, DescriptorError> {
    let field = format!("tools[{index}]");
    let object = entry
        .as_object()
        .ok_or_else(|| invalid(&field, "must be an object"))?;
    let name = non_blank_string(object, "name").map_err(|error| prefix_field(&field, error))?;
    let description =
        optional_string(object, "description").map_err(|error| prefix_field(&field, error))?;
    let mutates = match object.get("mutates") {
        Some(Value::Bool(mutates)) => *mutates,
        _ => return Err(invalid(format!("{field}.mutates"), "must be true or false")),
    };
    let input_schema = object
        .get("input_schema")
        .cloned()
        .ok_or_else(|| invalid(format!("{field}.input_schema"), "is missing"))?;
    let validator = compile_schema(&field, &input_schema)?;
    Ok(Tool {
        name,
        description: description.unwrap_or_default(),
        mutates,
        input_schema,
        validator,
    })
}

fn prefix_field(prefix: &str, error: DescriptorError) -> DescriptorError {
    match error {
        DescriptorError::InvalidField { field, problem } => {
            invalid(format!("{prefix}.{field}"), problem)
        }
        other => other,
    }
}

fn compile_schema(field: &str, schema: &Value) -> Result<jsonschema::Validator, DescriptorError> {
    let field = format!("{field}.input_schema");
    if !schema.is_object() {
        return Err(invalid(
            field,
            format!("must be an object, not {}", json_type_name(schema)),
        ));
    }
    // The schema comes from the Tick: a panic inside the validator library
    // must not take the host down, so it counts as an invalid schema.
    let compiled = std::panic::catch_unwind(|| {
        jsonschema::meta::validate(schema)
            .map_err(|error| format!("is not a valid JSON Schema: {error}"))?;
        jsonschema::validator_for(schema)
            .map_err(|error| format!("is not a usable JSON Schema: {error}"))
    });
    match compiled {
        Ok(Ok(validator)) => Ok(validator),
        Ok(Err(problem)) => Err(invalid(field, problem)),
        Err(_) => Err(invalid(field, "could not be compiled as a JSON Schema")),
    }
}

fn recover_with(
    object: &Map<String, Value>,
    tools: &[Tool],
) -> Result<Option<String>, DescriptorError> {
    let Some(name) = optional_string(object, "recover_with")? else {
        return Ok(None);
    };
    match tools.iter().find(|tool| tool.name == name) {
        None => Err(invalid(
            "recover_with",
            format!("names {name:?}, which is not a tool of the catalog"),
        )),
        Some(tool) if tool.mutates => Err(invalid(
            "recover_with",
            format!("names {name:?}, which mutates; it must be a query tool (mutates: false)"),
        )),
        Some(_) => Ok(Some(name)),
    }
}

fn series(object: &Map<String, Value>) -> Result<Vec<Series>, DescriptorError> {
    let state = match object.get("state") {
        None | Some(Value::Null) => return Ok(Vec::new()),
        Some(Value::Object(state)) => state,
        Some(other) => {
            return Err(invalid(
                "state",
                format!("must be an object, not {}", json_type_name(other)),
            ))
        }
    };
    let list = match state.get("series") {
        None | Some(Value::Null) => return Ok(Vec::new()),
        Some(Value::Array(list)) => list,
        Some(other) => {
            return Err(invalid(
                "state.series",
                format!("must be an array, not {}", json_type_name(other)),
            ))
        }
    };
    let mut paths = HashSet::new();
    let mut series = Vec::with_capacity(list.len());
    for (index, entry) in list.iter().enumerate() {
        let one = parse_series(index, entry)?;
        if !paths.insert(one.path.clone()) {
            return Err(invalid(
                format!("state.series[{index}].path"),
                format!("repeats the path {:?}, which must be unique", one.path),
            ));
        }
        series.push(one);
    }
    Ok(series)
}

fn parse_series(index: usize, entry: &Value) -> Result<Series, DescriptorError> {
    let field = format!("state.series[{index}]");
    let object = entry
        .as_object()
        .ok_or_else(|| invalid(&field, "must be an object"))?;
    let path = match object.get("path") {
        Some(Value::String(path)) if path.is_empty() || path.starts_with('/') => path.clone(),
        Some(Value::String(path)) => {
            return Err(invalid(
                format!("{field}.path"),
                format!("is {path:?}; it must be empty or start with \"/\""),
            ))
        }
        _ => return Err(invalid(format!("{field}.path"), "must be a string")),
    };
    let newest = match object.get("newest").and_then(Value::as_str) {
        Some("first") => Newest::First,
        Some("last") => Newest::Last,
        _ => {
            return Err(invalid(
                format!("{field}.newest"),
                "must be \"first\" or \"last\"",
            ))
        }
    };
    Ok(Series { path, newest })
}
