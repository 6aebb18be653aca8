//! One source entry in our format (known fields only, an explicit `type`), and how it compares
//! with the entries the config already has: the same server, our own bridge, a name taken.

use std::path::Path;

use serde_json::{Map, Value};

use crate::config;

/// The entry in our format: known fields only, explicit `type` (`http` → `streamableHttp`).
pub(super) fn convert_entry(raw: &Value) -> Result<Value, String> {
    let obj = raw
        .as_object()
        .ok_or_else(|| "not a server entry (expected a JSON object)".to_owned())?;
    let mut out = Map::new();
    let declared = obj.get("type").and_then(Value::as_str);
    let kind = match declared {
        Some(t) => config::TransportKind::from_type(t)
            .ok_or_else(|| format!("unsupported type \"{t}\""))?
            .name(),
        None => config::detect_transport(
            obj.contains_key("command"),
            obj.get("url").and_then(Value::as_str),
        )
        .ok_or_else(|| "has neither \"command\" nor \"url\"".to_owned())?
        .name(),
    };
    out.insert("type".into(), Value::String(kind.into()));
    for key in config::ENTRY_KEYS
        .iter()
        .filter(|k| !matches!(**k, "type" | "source"))
    {
        if let Some(v) = obj.get(*key) {
            out.insert((*key).into(), v.clone());
        }
    }
    let needed = if kind == "stdio" { "command" } else { "url" };
    if out.get(needed).is_none_or(|v| v.as_str().is_none()) {
        return Err(format!("type {kind} needs a \"{needed}\" string"));
    }
    Ok(Value::Object(out))
}

/// Whether `entry` launches MCP Companion's own bridge (importing it would loop).
pub(super) fn is_companion_bridge(entry: &Value) -> bool {
    let command = entry.get("command").and_then(Value::as_str).unwrap_or("");
    let stem = Path::new(command)
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or("");
    let first_arg = entry.pointer("/args/0").and_then(Value::as_str);
    stem.starts_with("mcp-companion") && first_arg == Some("bridge")
}

/// Same server: same command, args and environment, or same URL and headers. Two entries
/// that differ only in `env` or `headers` are two accounts of one server: both are kept.
pub(super) fn same_server(a: &Value, b: &Value) -> bool {
    let empty = || Value::Object(Map::new());
    let key = |e: &Value| {
        (
            e.get("command").cloned(),
            e.get("args").cloned().unwrap_or(Value::Array(Vec::new())),
            e.get("url").cloned(),
            e.get("env").cloned().unwrap_or_else(empty),
            e.get("headers").cloned().unwrap_or_else(empty),
        )
    };
    key(a) == key(b)
}

/// `name`, or `name-2`, `name-3`… whichever is not in `taken`.
pub(super) fn unique_name(name: &str, taken: &[(String, Value)]) -> String {
    let free = |n: &str| !taken.iter().any(|(t, _)| t == n);
    if free(name) {
        return name.to_owned();
    }
    (2..)
        .map(|i| format!("{name}-{i}"))
        .find(|n| free(n))
        .unwrap_or_else(|| name.to_owned())
}
