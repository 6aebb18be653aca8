//! Input-schema normalisation for wrapped tools (DESIGN §6, nanobot §4).
//!
//! Owns the rewrite of an upstream tool's `inputSchema` into the shape agents and model
//! providers accept:
//!
//! 1. missing, empty or non-object → `{"type":"object","properties":{}}`; a root without
//!    `type` gets `"type": "object"`, and a root whose `type` is not `"object"` (MCP requires
//!    it: the arguments of `tools/call` are an object) is replaced by that default schema with
//!    a [`SchemaWarning::NotAnObject`], so one such tool cannot make `tools/list` fail schema
//!    validation in every agent's SDK;
//! 2. pass 1: every local `$ref` outside `#/$defs/` is hoisted into the root `$defs` under
//!    `ref_<first 12 hex of SHA-256 of the ref string>` and rewritten to point there;
//! 3. pass 2 (structural, through `properties.*`, object `items` and `$defs.*` only):
//!    `type: [X, "null"]` and two-way null unions in `oneOf`/`anyOf` become `X` +
//!    `"nullable": true`, and every `type: "object"` node gets `properties` / `required` when
//!    missing;
//! 4. pass 3 (`schema_strict.rs`, for the strict subsets of the major model APIs): `$schema`
//!    is dropped everywhere, and a `format` that JSON Schema does not define (`double`,
//!    `uint32` from schemars) moves into the node's `description` as `(format: uint32)`.
//!
//! Key order is preserved (`serde_json` with `preserve_order`), so the output is stable.

use std::collections::{HashMap, HashSet};

use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use super::naming::hex_prefix;

/// A JSON object, as rmcp stores schemas.
pub type JsonObject = Map<String, Value>;

/// Something worth telling the user about a schema; the schema is still served.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SchemaWarning {
    /// A local `$ref` whose target does not exist (or whose pointer does not decode); the
    /// `$ref` is left as it was.
    #[error("tool schema contains an unresolved local $ref: {reference}")]
    UnresolvedRef {
        /// The `$ref` string exactly as the upstream sent it.
        reference: String,
    },
    /// The root `type` is not `"object"`; the tool is served with the default object schema.
    #[error(
        "tool inputSchema has type {found}, but MCP requires \"object\"; serving it with an empty object schema"
    )]
    NotAnObject {
        /// The root `type` as the upstream sent it (JSON text).
        found: String,
    },
}

/// Normalises an upstream `inputSchema` object; see the module doc for the rules.
///
/// An empty object is replaced by the default object schema before the passes run, so it comes
/// back as `{"type":"object","properties":{},"required":[]}`. Each unresolved ref is reported
/// once, in the order first met.
pub fn normalize_input_schema(schema: &JsonObject) -> (JsonObject, Vec<SchemaWarning>) {
    if schema.is_empty() {
        return normalize_root(&default_schema());
    }
    match schema.get("type") {
        Some(Value::String(t)) if t == "object" => normalize_root(schema),
        // `["object", "null"]` (pass 2 makes it `"object"` + `nullable`) and the like:
        // arguments are always an object.
        Some(Value::Array(types)) if types.iter().any(|t| t == "object") => {
            let null_union = types.len() == 2 && types.iter().any(|t| t == "null");
            if null_union {
                return normalize_root(schema);
            }
            let mut schema = schema.clone();
            schema.insert("type".into(), Value::from("object"));
            normalize_root(&schema)
        }
        None => {
            let mut schema = schema.clone();
            schema.insert("type".into(), Value::from("object"));
            normalize_root(&schema)
        }
        Some(other) => {
            let (schema, mut warnings) = normalize_root(&default_schema());
            warnings.insert(
                0,
                SchemaWarning::NotAnObject {
                    found: other.to_string(),
                },
            );
            (schema, warnings)
        }
    }
}

/// Like [`normalize_input_schema`] for a schema of unknown JSON type: anything that is not a
/// non-empty object (`null`, a string, `{}`) becomes the default object schema.
pub fn normalize_schema_value(schema: &Value) -> (JsonObject, Vec<SchemaWarning>) {
    match schema {
        Value::Object(map) => normalize_input_schema(map),
        _ => normalize_root(&default_schema()),
    }
}

fn default_schema() -> JsonObject {
    let mut map = Map::new();
    map.insert("type".into(), Value::from("object"));
    map.insert("properties".into(), Value::Object(Map::new()));
    map
}

fn normalize_root(schema: &JsonObject) -> (JsonObject, Vec<SchemaWarning>) {
    let root = Value::Object(schema.clone());
    let mut hoister = Hoister::new(&root);
    let mut out = match hoister.rewrite(&root) {
        Value::Object(map) => map,
        // rewrite maps an object to an object.
        _ => default_schema(),
    };
    let Hoister {
        defs, unresolved, ..
    } = hoister;
    if !defs.is_empty() {
        match out.get_mut("$defs") {
            Some(Value::Object(existing)) => existing.extend(defs),
            _ => {
                out.insert("$defs".into(), Value::Object(defs));
            }
        }
    }
    normalize_nullable(&mut out);
    strict::apply(&mut out);
    let warnings = unresolved
        .into_iter()
        .map(|reference| SchemaWarning::UnresolvedRef { reference })
        .collect();
    (out, warnings)
}

/// Pass 1 state: which refs were hoisted under which name, and the generated definitions.
struct Hoister<'a> {
    /// The original root; targets are always looked up here, never in the rewritten copy.
    root: &'a Value,
    /// Names already present in the root `$defs`, which generated names must avoid.
    existing: HashSet<String>,
    /// Ref string → generated definition name; filled *before* the target is rewritten, so a
    /// self-reference finds its own name and recursion ends.
    names: HashMap<String, String>,
    /// Generated definitions in order of first reference.
    defs: JsonObject,
    /// Unresolved refs in order first met, without repeats.
    unresolved: Vec<String>,
}

impl<'a> Hoister<'a> {
    fn new(root: &'a Value) -> Self {
        let existing = match root.get("$defs") {
            Some(Value::Object(defs)) => defs.keys().cloned().collect(),
            _ => HashSet::new(),
        };
        Hoister {
            root,
            existing,
            names: HashMap::new(),
            defs: Map::new(),
            unresolved: Vec::new(),
        }
    }

    fn rewrite(&mut self, node: &Value) -> Value {
        match node {
            Value::Object(map) => {
                let mut out = Map::with_capacity(map.len());
                for (key, value) in map {
                    let new = match (key.as_str(), value) {
                        ("$ref", Value::String(reference)) => match self.hoist(reference) {
                            Some(name) => Value::String(format!("#/$defs/{name}")),
                            None => value.clone(),
                        },
                        _ => self.rewrite(value),
                    };
                    out.insert(key.clone(), new);
                }
                Value::Object(out)
            }
            Value::Array(items) => Value::Array(items.iter().map(|v| self.rewrite(v)).collect()),
            other => other.clone(),
        }
    }

    /// Returns the definition name for `reference`, hoisting its target on first sight, or
    /// `None` when the ref is not a local one to hoist or cannot be resolved.
    fn hoist(&mut self, reference: &str) -> Option<String> {
        let pointer = reference.strip_prefix('#')?;
        if pointer.starts_with("/$defs/") {
            return None;
        }
        if let Some(name) = self.names.get(reference) {
            return Some(name.clone());
        }
        let target = match percent_decode(pointer) {
            Some(decoded) if !decoded.is_empty() && !decoded.starts_with('/') => return None,
            Some(decoded) => resolve_pointer(self.root, &decoded),
            None => None,
        };
        let Some(target) = target else {
            if !self.unresolved.iter().any(|r| r == reference) {
                self.unresolved.push(reference.to_owned());
            }
            return None;
        };
        let mut name = format!("ref_{}", hex_prefix(&Sha256::digest(reference), 12));
        while self.existing.contains(&name) || self.defs.contains_key(&name) {
            name.push('_');
        }
        self.names.insert(reference.to_owned(), name.clone());
        self.defs.insert(name.clone(), Value::Null);
        let hoisted = self.rewrite(target);
        self.defs.insert(name.clone(), hoisted);
        Some(name)
    }
}

/// Strict percent-decoding: `%XX` becomes the byte, a `%` not followed by two hex digits stays
/// literal, and the result must be valid UTF-8 (else `None`).
fn percent_decode(input: &str) -> Option<String> {
    let bytes = input.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && let (Some(hi), Some(lo)) = (
                bytes.get(i + 1).and_then(|b| hex_value(*b)),
                bytes.get(i + 2).and_then(|b| hex_value(*b)),
            )
        {
            out.push(hi * 16 + lo);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8(out).ok()
}

fn hex_value(b: u8) -> Option<u8> {
    (b as char).to_digit(16).and_then(|d| u8::try_from(d).ok())
}

/// Resolves a decoded JSON Pointer (RFC 6901): `""` is the root, else `/`-separated tokens with
/// `~1` → `/` and `~0` → `~`; arrays take a plain decimal index.
fn resolve_pointer<'v>(root: &'v Value, pointer: &str) -> Option<&'v Value> {
    if pointer.is_empty() {
        return Some(root);
    }
    let mut node = root;
    for token in pointer.strip_prefix('/')?.split('/') {
        let token = token.replace("~1", "/").replace("~0", "~");
        node = match node {
            Value::Object(map) => map.get(&token)?,
            Value::Array(items)
                if !token.is_empty() && token.bytes().all(|b| b.is_ascii_digit()) =>
            {
                items.get(token.parse::<usize>().ok()?)?
            }
            _ => return None,
        };
    }
    Some(node)
}

/// Pass 2 on one node, then its `properties.*`, object `items` and `$defs.*`.
fn normalize_nullable(node: &mut JsonObject) {
    if let Some(Value::Array(types)) = node.get("type")
        && types.iter().any(|t| t == "null")
    {
        let mut others = types.iter().filter(|t| *t != "null");
        if let (Some(only), None) = (others.next(), others.next()) {
            let only = only.clone();
            node.insert("type".into(), only);
            node.insert("nullable".into(), Value::Bool(true));
        }
    }

    for keyword in ["oneOf", "anyOf"] {
        if let Some(option) = nullable_union_option(node.get(keyword)) {
            node.shift_remove(keyword);
            for (key, value) in option {
                node.insert(key, value);
            }
            node.insert("nullable".into(), Value::Bool(true));
            break;
        }
    }

    if let Some(Value::Object(properties)) = node.get_mut("properties") {
        for value in properties.values_mut() {
            if let Value::Object(child) = value {
                normalize_nullable(child);
            }
        }
    }
    if let Some(Value::Object(items)) = node.get_mut("items") {
        normalize_nullable(items);
    }
    if let Some(Value::Object(defs)) = node.get_mut("$defs") {
        for value in defs.values_mut() {
            if let Value::Object(child) = value {
                normalize_nullable(child);
            }
        }
    }

    if node.get("type").and_then(Value::as_str) == Some("object") {
        node.entry("properties")
            .or_insert_with(|| Value::Object(Map::new()));
        node.entry("required")
            .or_insert_with(|| Value::Array(Vec::new()));
    }
}

/// The single non-null option of a `oneOf`/`anyOf` list that is "X or null": every option is
/// an object, at least one is `{"type":"null",…}` and exactly one is not.
fn nullable_union_option(options: Option<&Value>) -> Option<JsonObject> {
    let options = options?.as_array()?;
    let mut non_null = None;
    let mut saw_null = false;
    for option in options {
        let option = option.as_object()?;
        if option.get("type").and_then(Value::as_str) == Some("null") {
            saw_null = true;
        } else if non_null.replace(option).is_some() {
            return None;
        }
    }
    if saw_null { non_null.cloned() } else { None }
}

#[path = "schema_strict.rs"]
mod strict;

pub use strict::STANDARD_FORMATS;

#[cfg(test)]
#[path = "schema_tests.rs"]
mod tests;
