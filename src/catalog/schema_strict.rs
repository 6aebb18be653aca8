//! Pass 3 of the input-schema rewrite: what the strictest model APIs refuse.
//!
//! OpenAI's strict function calling, Gemini's OpenAPI subset and Anthropic's tool schemas each
//! accept a subset of JSON Schema; what schemars and friends emit by default falls outside it:
//!
//! * `$schema` (a meta-schema URI) is dropped everywhere;
//! * a `format` that JSON Schema 2020-12 does not define ([`STANDARD_FORMATS`]; schemars writes
//!   `double`, `float`, `int32`, `uint32`, `uint8`…) is removed and its value kept as a hint
//!   at the end of the node's `description`: `"Count (format: uint32)"`.
//!
//! The walk follows only the keywords whose values are schemas (`properties.*`, `items`,
//! `anyOf[]`, `$defs.*`…), so a property *named* `format` or an `enum`/`default` value is never
//! touched.

use serde_json::Value;

use super::JsonObject;

/// The `format` values JSON Schema 2020-12 defines (Validation §7.3).
pub const STANDARD_FORMATS: &[&str] = &[
    "date-time",
    "date",
    "time",
    "duration",
    "email",
    "idn-email",
    "hostname",
    "idn-hostname",
    "ipv4",
    "ipv6",
    "uri",
    "uri-reference",
    "iri",
    "iri-reference",
    "uuid",
    "uri-template",
    "json-pointer",
    "relative-json-pointer",
    "regex",
];

/// Keywords whose value is one schema.
const ONE_SCHEMA: &[&str] = &[
    "items",
    "additionalProperties",
    "additionalItems",
    "unevaluatedProperties",
    "unevaluatedItems",
    "not",
    "if",
    "then",
    "else",
    "contains",
    "propertyNames",
];
/// Keywords whose value is an array of schemas.
const SCHEMA_LIST: &[&str] = &["anyOf", "oneOf", "allOf", "prefixItems", "items"];
/// Keywords whose value maps names to schemas.
const SCHEMA_MAP: &[&str] = &[
    "properties",
    "patternProperties",
    "$defs",
    "definitions",
    "dependentSchemas",
];

/// Applies pass 3 to `node` and every schema below it.
pub(super) fn apply(node: &mut JsonObject) {
    node.shift_remove("$schema");
    if let Some(Value::String(format)) = node.get("format")
        && !STANDARD_FORMATS.contains(&format.as_str())
    {
        let hint = format!("(format: {format})");
        node.shift_remove("format");
        let description = match node.get("description") {
            Some(Value::String(d)) if !d.trim().is_empty() => format!("{} {hint}", d.trim_end()),
            _ => hint,
        };
        node.insert("description".into(), Value::String(description));
    }
    for key in ONE_SCHEMA {
        if let Some(Value::Object(child)) = node.get_mut(*key) {
            apply(child);
        }
    }
    for key in SCHEMA_LIST {
        if let Some(Value::Array(children)) = node.get_mut(*key) {
            children
                .iter_mut()
                .filter_map(Value::as_object_mut)
                .for_each(apply);
        }
    }
    for key in SCHEMA_MAP {
        if let Some(Value::Object(children)) = node.get_mut(*key) {
            children
                .values_mut()
                .filter_map(Value::as_object_mut)
                .for_each(apply);
        }
    }
}
