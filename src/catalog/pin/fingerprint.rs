//! A capability's definition and fingerprint (see the module docs of [`super`]), and the pins
//! of a whole listing.

use std::collections::BTreeMap;

use rmcp::model::Tool;
use serde::Serialize;
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use super::{Kind, PinnedTool, ServerPins};
use crate::catalog::ServerListing;

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
