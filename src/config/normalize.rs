//! Save-time normalisation of the document (DESIGN §3: "write `type` explicitly when saving").

use serde_json::Value;

use super::transport::{Kind, detect};

/// The document as it should be saved: every server entry gets an explicit `type`.
///
/// An entry without `type` (or with `null`) gets the detected one inserted as its first key;
/// `"http"` is rewritten as `"streamableHttp"`. Everything else is kept as is, including key
/// order, unknown keys, unexpanded `${VAR}`s and entries that are invalid or whose transport
/// cannot be detected.
pub fn normalize_document(doc: &Value) -> Value {
    let mut doc = doc.clone();
    let Some(servers) = doc.get_mut("mcpServers").and_then(Value::as_object_mut) else {
        return doc;
    };
    for entry in servers.values_mut().filter_map(Value::as_object_mut) {
        normalize_entry(entry);
    }
    doc
}

/// One server entry as it should be saved: the detected `type` inserted as the first key when
/// absent (or `null`), `"http"` rewritten as `"streamableHttp"`; nothing else changes.
pub fn normalize_entry(entry: &mut serde_json::Map<String, Value>) {
    let written = entry.get("type").filter(|t| !t.is_null());
    let kind = match written {
        Some(Value::String(t)) if t == "http" => Some(Kind::StreamableHttp),
        Some(_) => None,
        None => detect(
            entry.get("command").is_some_and(|c| !c.is_null()),
            entry.get("url").and_then(Value::as_str),
        ),
    };
    let Some(kind) = kind else { return };
    let value = Value::String(kind.name().to_owned());
    match entry.get_mut("type") {
        Some(slot) => *slot = value,
        None => {
            entry.shift_insert(0, "type".to_owned(), value);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn normalize_writes_type_first_and_rewrites_the_http_alias() {
        let doc = json!({"mcpServers": {
            "a": {"command": "x", "note": 1},
            "b": {"url": "https://h/sse/"},
            "c": {"url": "https://h/mcp", "type": null},
            "d": {"headers": {}, "type": "http", "url": "https://h/"},
            "e": {"type": "stdio", "command": "y"},
            "f": {"args": []},
            "g": {"type": "bogus", "url": "https://h/"},
            "h": "not an object"
        }, "other": true});
        let got = normalize_document(&doc);
        let want = json!({"mcpServers": {
            "a": {"type": "stdio", "command": "x", "note": 1},
            "b": {"type": "sse", "url": "https://h/sse/"},
            "c": {"url": "https://h/mcp", "type": "streamableHttp"},
            "d": {"headers": {}, "type": "streamableHttp", "url": "https://h/"},
            "e": {"type": "stdio", "command": "y"},
            "f": {"args": []},
            "g": {"type": "bogus", "url": "https://h/"},
            "h": "not an object"
        }, "other": true});
        // Compare text so key order counts too.
        assert_eq!(got.to_string(), want.to_string());
        assert_eq!(normalize_document(&json!([1])), json!([1]));
    }
}
