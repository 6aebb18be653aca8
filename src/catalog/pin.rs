//! Pinned tool definitions: the fingerprint of each tool a person approved, and the split of a
//! server's listing into what agents may see and what waits for approval.
//!
//! A capability's *definition* is the canonical JSON (objects' keys sorted at every depth, no
//! whitespace) of what a model reads as its contract ([`Kind::fields`]): a tool's `name`,
//! `description`, `inputSchema`, `outputSchema` and `annotations`; a prompt's `name`,
//! `description` and `arguments`; a resource's `uri`, `name`, `description` and `mimeType`; a
//! template's `uriTemplate`, `name`, `description` and `mimeType`. Its *fingerprint* is the
//! lowercase hex SHA-256 of that text. `title`, `icons`, `_meta`, a resource's `size` and
//! annotations (`lastModified` changes with the content) are not part of it.
//!
//! A capability is served when its server's pins hold its key (name; URI for a resource, URI
//! template for a template) with the same fingerprint. One whose fingerprint differs, or whose
//! key is not pinned, is withheld ([`Waiting`]). A renamed tool is a new name, so it waits like
//! any new tool. Removed capabilities simply leave the catalog; their pins stay, so one that
//! comes back unchanged is served again.
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

/// What kind of capability a pin or a [`Waiting`] is.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Kind {
    /// A tool, keyed by name.
    #[default]
    Tool,
    /// A prompt, keyed by name.
    Prompt,
    /// A concrete resource, keyed by URI.
    Resource,
    /// A resource template, keyed by URI template.
    ResourceTemplate,
}

impl Kind {
    /// The fields of the definition (see the module docs).
    pub fn fields(self) -> &'static [&'static str] {
        match self {
            Kind::Tool => &[
                "name",
                "description",
                "inputSchema",
                "outputSchema",
                "annotations",
            ],
            Kind::Prompt => &["name", "description", "arguments"],
            Kind::Resource => &["uri", "name", "description", "mimeType"],
            Kind::ResourceTemplate => &["uriTemplate", "name", "description", "mimeType"],
        }
    }

    /// The word a person reads: `tool`, `prompt`, `resource`, `resource template`.
    pub fn word(self) -> &'static str {
        match self {
            Kind::Tool => "tool",
            Kind::Prompt => "prompt",
            Kind::Resource => "resource",
            Kind::ResourceTemplate => "resource template",
        }
    }
}

/// One server's approved capabilities, by upstream key.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ServerPins {
    /// Approved tools, by upstream name.
    pub tools: BTreeMap<String, PinnedTool>,
    /// Approved prompts, by upstream name.
    #[serde(default)]
    pub prompts: BTreeMap<String, PinnedTool>,
    /// Approved resources, by upstream URI.
    #[serde(default)]
    pub resources: BTreeMap<String, PinnedTool>,
    /// Approved resource templates, by upstream URI template.
    #[serde(default)]
    pub templates: BTreeMap<String, PinnedTool>,
}

impl ServerPins {
    /// The pins of `kind`.
    pub fn of(&self, kind: Kind) -> &BTreeMap<String, PinnedTool> {
        match kind {
            Kind::Tool => &self.tools,
            Kind::Prompt => &self.prompts,
            Kind::Resource => &self.resources,
            Kind::ResourceTemplate => &self.templates,
        }
    }

    /// The pins of `kind`, to change.
    pub fn of_mut(&mut self, kind: Kind) -> &mut BTreeMap<String, PinnedTool> {
        match kind {
            Kind::Tool => &mut self.tools,
            Kind::Prompt => &mut self.prompts,
            Kind::Resource => &mut self.resources,
            Kind::ResourceTemplate => &mut self.templates,
        }
    }
}

/// A capability withheld from agents until the person approves it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Waiting {
    /// What it is (default `tool`).
    #[serde(default)]
    pub kind: Kind,
    /// Its upstream key: a tool's or prompt's name, a resource's URI, a template's URI template.
    pub tool: String,
    /// What was approved under this key before; `None` for a new one (or a renamed one).
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
        let word = self.kind.word();
        let Some(old) = &self.approved else {
            let mut out = vec![format!("new {word} \"{}\"", self.tool)];
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
        let mut out = vec![format!("changed {word} \"{}\"", self.tool)];
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
            for (label, names) in [
                ("added", &added),
                ("removed", &removed),
                ("changed", &changed),
            ] {
                if !names.is_empty() {
                    parts.push(format!("{label} {}", names.join(", ")));
                }
            }
            let (ra, rb) = (outside_properties(a, key), outside_properties(b, key));
            if ra != rb {
                parts.push("changed outside its properties".to_owned());
            }
            out.push(format!("  {key}: {}", parts.join("; ")));
            // The values themselves: a number or a bound can change with no name changing.
            for name in &added {
                out.push(format!("    + {name}: {}", pb[*name]));
            }
            for name in &changed {
                out.push(format!("    - {name}: {}", pa[*name]));
                out.push(format!("    + {name}: {}", pb[*name]));
            }
            if ra != rb {
                out.push(format!("    - (rest): {ra}"));
                out.push(format!("    + (rest): {rb}"));
            }
        }
        for key in ["annotations", "arguments", "name", "mimeType"] {
            if a.get(key) != b.get(key) {
                out.push(format!(
                    "  {key}: {} → {}",
                    a.get(key).unwrap_or(&Value::Null),
                    b.get(key).unwrap_or(&Value::Null)
                ));
            }
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

/// `definition[schema]` without its `properties` (`null` when absent), as compact JSON.
fn outside_properties(definition: &Value, schema: &str) -> String {
    let mut rest = definition.get(schema).cloned().unwrap_or(Value::Null);
    if let Value::Object(map) = &mut rest {
        map.remove("properties");
    }
    rest.to_string()
}

/// `tool`'s definition and fingerprint (see the module docs).
pub fn pin_tool(tool: &Tool) -> PinnedTool {
    pin(Kind::Tool, tool)
}

/// The definition and fingerprint of `item`, a capability of `kind` (see the module docs).
pub fn pin(kind: Kind, item: &impl Serialize) -> PinnedTool {
    let full = serde_json::to_value(item).unwrap_or(Value::Null);
    let mut definition = Map::new();
    for key in kind.fields() {
        if let Some(v) = full.get(*key).filter(|v| !v.is_null()) {
            definition.insert((*key).to_owned(), crate::io::json::canonical(v));
        }
    }
    let definition = Value::Object(definition);
    let text = crate::io::json::canonical(&definition).to_string();
    let fingerprint = Sha256::digest(text.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    PinnedTool {
        fingerprint,
        definition,
    }
}

/// Pins of everything in `listing`, as approved now (trust on first use, or auto-approval).
pub fn pin_all(listing: &ServerListing) -> ServerPins {
    fn all<T: Serialize>(
        kind: Kind,
        items: &[T],
        key: impl Fn(&T) -> String,
    ) -> BTreeMap<String, PinnedTool> {
        items.iter().map(|i| (key(i), pin(kind, i))).collect()
    }
    ServerPins {
        tools: all(Kind::Tool, &listing.tools, |t| t.name.to_string()),
        prompts: all(Kind::Prompt, &listing.prompts, |p| p.name.clone()),
        resources: all(Kind::Resource, &listing.resources, |r| r.uri.clone()),
        templates: all(Kind::ResourceTemplate, &listing.resource_templates, |t| {
            t.uri_template.clone()
        }),
    }
}

/// `items` split by `pins`: those served, and those withheld appended to `waiting`.
fn split<T: Serialize + Clone>(
    kind: Kind,
    items: &[T],
    key: impl Fn(&T) -> String,
    pins: &ServerPins,
    waiting: &mut Vec<Waiting>,
) -> Vec<T> {
    let mut keep = Vec::with_capacity(items.len());
    for item in items {
        let listed = pin(kind, item);
        let key = key(item);
        let approved = pins.of(kind).get(&key);
        if approved.is_some_and(|a| a.fingerprint == listed.fingerprint) {
            keep.push(item.clone());
        } else {
            waiting.push(Waiting {
                kind,
                tool: key,
                approved: approved.cloned(),
                listed,
            });
        }
    }
    keep
}

/// Splits `listing` by `pins`: the listing agents may see (withheld capabilities removed;
/// `None` when nothing is withheld) and the withheld ones, tools first, in listing order.
pub fn withhold(
    listing: &ServerListing,
    pins: &ServerPins,
) -> (Option<ServerListing>, Vec<Waiting>) {
    let mut waiting = Vec::new();
    let mut narrowed = ServerListing {
        tools: split(
            Kind::Tool,
            &listing.tools,
            |t| t.name.to_string(),
            pins,
            &mut waiting,
        ),
        prompts: split(
            Kind::Prompt,
            &listing.prompts,
            |p| p.name.clone(),
            pins,
            &mut waiting,
        ),
        resources: split(
            Kind::Resource,
            &listing.resources,
            |r| r.uri.clone(),
            pins,
            &mut waiting,
        ),
        resource_templates: split(
            Kind::ResourceTemplate,
            &listing.resource_templates,
            |t| t.uri_template.clone(),
            pins,
            &mut waiting,
        ),
        declared: listing.declared,
        withheld_resources: false,
        withheld_uris: listing.withheld_uris.clone(),
    };
    narrowed.withheld_uris.extend(
        waiting
            .iter()
            .filter(|w| w.kind == Kind::Resource)
            .map(|w| w.tool.clone()),
    );
    narrowed.withheld_resources = listing.withheld_resources
        || narrowed.resources.len() < listing.resources.len()
        || narrowed.resource_templates.len() < listing.resource_templates.len();
    if waiting.is_empty() {
        return (None, waiting);
    }
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
        assert!(
            edit.contains(&"    + y: {\"type\":\"string\"}".to_owned()),
            "{edit:?}"
        );
        assert_eq!(waiting[1].describe()[0], "new tool \"new_name\"");
    }

    /// A number that changes only its spelling (`1` → `1.0`) or its value, inside a property
    /// or beside the properties, is shown with its old and new value.
    #[test]
    fn numeric_schema_changes_show_the_old_and_new_values() {
        let before = json!({"type": "object", "maxProperties": 1,
            "properties": {"n": {"type": "integer", "maximum": 5}}});
        let after = json!({"type": "object", "maxProperties": 1.0,
            "properties": {"n": {"type": "integer", "maximum": 6}}});
        let pins = pin_all(&listing(vec![tool("t", "d", before)]));
        let (_, waiting) = withhold(&listing(vec![tool("t", "d", after)]), &pins);
        let lines = waiting[0].describe();
        for line in [
            "  inputSchema: changed n; changed outside its properties",
            "    - n: {\"maximum\":5,\"type\":\"integer\"}",
            "    + n: {\"maximum\":6,\"type\":\"integer\"}",
            "    - (rest): {\"maxProperties\":1,\"type\":\"object\"}",
            "    + (rest): {\"maxProperties\":1.0,\"type\":\"object\"}",
        ] {
            assert!(lines.contains(&line.to_owned()), "{line}\n{lines:#?}");
        }
    }

    #[test]
    fn resources_are_keyed_by_uri_and_their_size_does_not_count() {
        let resource = |description: &str, size| {
            let mut r = rmcp::model::Resource::new("file:///a", "a");
            r.description = Some(description.to_owned());
            r.size = Some(size);
            r
        };
        let pins = pin_all(&ServerListing {
            resources: vec![resource("plain", 1)],
            ..ServerListing::default()
        });
        let grown = ServerListing {
            resources: vec![resource("plain", 2)],
            ..ServerListing::default()
        };
        assert!(withhold(&grown, &pins).1.is_empty());
        let reworded = ServerListing {
            resources: vec![resource("do this instead", 1)],
            ..ServerListing::default()
        };
        let (served, waiting) = withhold(&reworded, &pins);
        let served = served.expect("withheld");
        assert!(served.resources.is_empty());
        assert!(
            served.withheld_resources,
            "a URI it does not list must not be read through it either"
        );
        assert_eq!(
            served.withheld_uris,
            ["file:///a"],
            "nor its own, through a template"
        );
        assert_eq!(waiting[0].kind, Kind::Resource);
        assert_eq!(waiting[0].tool, "file:///a");
        assert_eq!(waiting[0].describe()[0], "changed resource \"file:///a\"");
    }

    #[test]
    fn an_unchanged_listing_passes_whole() {
        let l = listing(vec![tool("a", "d", json!({"type": "object"}))]);
        let (served, waiting) = withhold(&l, &pin_all(&l));
        assert!(served.is_none());
        assert!(waiting.is_empty());
    }
}
