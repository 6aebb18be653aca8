//! Pinned tool definitions: the fingerprint of each tool a person approved, and the split of a
//! server's listing into what agents may see and what waits for approval.
//!
//! A tool's *definition* is the canonical JSON of its `name`, `description`, `inputSchema`,
//! `outputSchema` and `annotations` (objects' keys sorted at every depth, no whitespace); its
//! *fingerprint* is the lowercase hex SHA-256 of that text. `title`, `icons` and `_meta` are
//! not part of it: they do not change what the model reads as the tool's contract.
//!
//! A tool is served when its server's pins hold its name with the same fingerprint. A tool whose
//! fingerprint differs, or whose name is not pinned, is withheld ([`Waiting`]). A renamed tool
//! is a new name, so it waits like any new tool. Removed tools simply leave the catalog; their
//! pins stay, so a tool that comes back unchanged is served again.
//!
//! The hub owns the state and where it is stored (`hub::pins`); this file is pure.

use std::collections::BTreeMap;

use rmcp::model::Tool;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use super::ServerListing;

/// One approved tool: its fingerprint and the definition it was computed from (kept so a later
/// change can be shown as a diff).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PinnedTool {
    /// Lowercase hex SHA-256 of the canonical definition.
    pub fingerprint: String,
    /// The definition (see the module docs).
    pub definition: Value,
}

/// One server's approved tools, by upstream tool name.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ServerPins {
    /// Approved tools, by upstream name.
    pub tools: BTreeMap<String, PinnedTool>,
}

/// A tool withheld from agents until the person approves it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Waiting {
    /// The upstream tool name.
    pub tool: String,
    /// What was approved under this name before; `None` for a new tool (or a renamed one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approved: Option<PinnedTool>,
    /// What the server lists now.
    pub listed: PinnedTool,
}

impl Waiting {
    /// The change as lines a person reads: `new tool X`, or `changed tool X` followed by the
    /// old and new description and the input/output schema's added, removed and changed
    /// properties.
    pub fn describe(&self) -> Vec<String> {
        let Some(old) = &self.approved else {
            let mut out = vec![format!("new tool \"{}\"", self.tool)];
            out.push(format!(
                "  description: {}",
                text(&self.listed.definition, "description")
            ));
            let props = properties(&self.listed.definition, "inputSchema");
            if !props.is_empty() {
                out.push(format!(
                    "  input properties: {}",
                    props.keys().cloned().collect::<Vec<_>>().join(", ")
                ));
            }
            return out;
        };
        let (a, b) = (&old.definition, &self.listed.definition);
        let mut out = vec![format!("changed tool \"{}\"", self.tool)];
        if a.get("description") != b.get("description") {
            out.push(format!("  - description: {}", text(a, "description")));
            out.push(format!("  + description: {}", text(b, "description")));
        }
        for key in ["inputSchema", "outputSchema"] {
            if a.get(key) == b.get(key) {
                continue;
            }
            let (pa, pb) = (properties(a, key), properties(b, key));
            let added: Vec<&str> = pb
                .keys()
                .filter(|k| !pa.contains_key(*k))
                .map(String::as_str)
                .collect();
            let removed: Vec<&str> = pa
                .keys()
                .filter(|k| !pb.contains_key(*k))
                .map(String::as_str)
                .collect();
            let changed: Vec<&str> = pa
                .iter()
                .filter(|(k, v)| pb.get(*k).is_some_and(|w| w != *v))
                .map(|(k, _)| k.as_str())
                .collect();
            let mut parts = Vec::new();
            for (label, names) in [("added", added), ("removed", removed), ("changed", changed)] {
                if !names.is_empty() {
                    parts.push(format!("{label} {}", names.join(", ")));
                }
            }
            if parts.is_empty() {
                parts.push("changed outside its properties".to_owned());
            }
            out.push(format!("  {key}: {}", parts.join("; ")));
        }
        if a.get("annotations") != b.get("annotations") {
            out.push(format!(
                "  annotations: {} → {}",
                a.get("annotations").unwrap_or(&Value::Null),
                b.get("annotations").unwrap_or(&Value::Null)
            ));
        }
        out
    }
}

/// The text of `definition[key]`, or `(none)`.
fn text(definition: &Value, key: &str) -> String {
    definition
        .get(key)
        .and_then(Value::as_str)
        .unwrap_or("(none)")
        .to_owned()
}

/// `definition[schema].properties`, sorted by name.
fn properties(definition: &Value, schema: &str) -> BTreeMap<String, Value> {
    definition
        .get(schema)
        .and_then(|s| s.get("properties"))
        .and_then(Value::as_object)
        .map(|p| p.iter().map(|(k, v)| (k.clone(), v.clone())).collect())
        .unwrap_or_default()
}

/// `tool`'s definition and fingerprint (see the module docs).
pub fn pin_tool(tool: &Tool) -> PinnedTool {
    let full = serde_json::to_value(tool).unwrap_or(Value::Null);
    let mut definition = Map::new();
    for key in [
        "name",
        "description",
        "inputSchema",
        "outputSchema",
        "annotations",
    ] {
        if let Some(v) = full.get(key).filter(|v| !v.is_null()) {
            definition.insert(key.to_owned(), canonical(v));
        }
    }
    let definition = Value::Object(definition);
    let text = canonical(&definition).to_string();
    let fingerprint = Sha256::digest(text.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    PinnedTool {
        fingerprint,
        definition,
    }
}

/// `value` with every object's keys in sorted order (serde_json here keeps insertion order).
fn canonical(value: &Value) -> Value {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            Value::Object(
                keys.into_iter()
                    .map(|k| (k.clone(), canonical(&map[k])))
                    .collect(),
            )
        }
        Value::Array(items) => Value::Array(items.iter().map(canonical).collect()),
        other => other.clone(),
    }
}

/// Pins of every tool in `listing`, as approved now (trust on first use, or auto-approval).
pub fn pin_all(listing: &ServerListing) -> ServerPins {
    ServerPins {
        tools: listing
            .tools
            .iter()
            .map(|t| (t.name.to_string(), pin_tool(t)))
            .collect(),
    }
}

/// Splits `listing` by `pins`: the listing agents may see (withheld tools removed) and the
/// withheld tools, in listing order. Prompts and resources pass unchanged.
pub fn withhold(
    listing: &ServerListing,
    pins: &ServerPins,
) -> (Option<ServerListing>, Vec<Waiting>) {
    let mut waiting = Vec::new();
    let mut keep = Vec::with_capacity(listing.tools.len());
    for tool in &listing.tools {
        let listed = pin_tool(tool);
        let approved = pins.tools.get(tool.name.as_ref());
        if approved.is_some_and(|a| a.fingerprint == listed.fingerprint) {
            keep.push(tool.clone());
        } else {
            waiting.push(Waiting {
                tool: tool.name.to_string(),
                approved: approved.cloned(),
                listed,
            });
        }
    }
    if waiting.is_empty() {
        return (None, waiting);
    }
    let narrowed = ServerListing {
        tools: keep,
        ..listing.clone()
    };
    (Some(narrowed), waiting)
}

#[cfg(test)]
mod tests {
    use rmcp::model::Tool;
    use serde_json::json;

    use super::*;

    fn tool(name: &str, description: &str, schema: Value) -> Tool {
        Tool::new(
            name.to_owned(),
            description.to_owned(),
            schema.as_object().cloned().unwrap_or_default(),
        )
    }

    fn listing(tools: Vec<Tool>) -> ServerListing {
        ServerListing {
            tools,
            ..ServerListing::default()
        }
    }

    #[test]
    fn fingerprint_ignores_key_order_and_sees_every_part() {
        let a = tool(
            "t",
            "d",
            json!({"type": "object", "properties": {"x": {"type": "string"}}}),
        );
        let b = tool(
            "t",
            "d",
            json!({"properties": {"x": {"type": "string"}}, "type": "object"}),
        );
        assert_eq!(pin_tool(&a).fingerprint, pin_tool(&b).fingerprint);
        assert_eq!(pin_tool(&a).fingerprint.len(), 64);
        let c = tool(
            "t",
            "d.",
            json!({"type": "object", "properties": {"x": {"type": "string"}}}),
        );
        assert_ne!(pin_tool(&a).fingerprint, pin_tool(&c).fingerprint);
        let d = tool(
            "t",
            "d",
            json!({"type": "object", "properties": {"x": {"type": "number"}}}),
        );
        assert_ne!(pin_tool(&a).fingerprint, pin_tool(&d).fingerprint);
        let e = tool(
            "u",
            "d",
            json!({"type": "object", "properties": {"x": {"type": "string"}}}),
        );
        assert_ne!(pin_tool(&a).fingerprint, pin_tool(&e).fingerprint);
    }

    #[test]
    fn changed_new_and_renamed_tools_are_withheld_and_described() {
        let schema = json!({"type": "object", "properties": {"x": {"type": "string"}}});
        let pins = pin_all(&listing(vec![
            tool("keep", "k", schema.clone()),
            tool("edit", "old text", schema.clone()),
            tool("old_name", "r", schema.clone()),
        ]));
        let now = listing(vec![
            tool("keep", "k", schema.clone()),
            tool(
                "edit",
                "new text",
                json!({"type": "object", "properties": {"y": {"type": "string"}}}),
            ),
            tool("new_name", "r", schema),
        ]);
        let (served, waiting) = withhold(&now, &pins);
        let served = served.expect("something withheld");
        let names: Vec<&str> = served.tools.iter().map(|t| t.name.as_ref()).collect();
        assert_eq!(names, ["keep"]);
        let waiting_names: Vec<&str> = waiting.iter().map(|w| w.tool.as_str()).collect();
        assert_eq!(waiting_names, ["edit", "new_name"]);
        let edit = waiting[0].describe();
        assert_eq!(edit[0], "changed tool \"edit\"");
        assert!(
            edit.contains(&"  - description: old text".to_owned()),
            "{edit:?}"
        );
        assert!(
            edit.contains(&"  + description: new text".to_owned()),
            "{edit:?}"
        );
        assert!(
            edit.contains(&"  inputSchema: added y; removed x".to_owned()),
            "{edit:?}"
        );
        assert_eq!(waiting[1].describe()[0], "new tool \"new_name\"");
    }

    #[test]
    fn an_unchanged_listing_passes_whole() {
        let l = listing(vec![tool("a", "d", json!({"type": "object"}))]);
        let (served, waiting) = withhold(&l, &pin_all(&l));
        assert!(served.is_none());
        assert!(waiting.is_empty());
    }
}
