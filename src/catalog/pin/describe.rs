//! A withheld capability's change as lines a person reads: what is new, or what changed since
//! it was approved, down to the schema properties' values.

use std::collections::BTreeMap;

use serde_json::Value;

use super::Waiting;

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
