use rmcp::model::Tool;
use serde_json::json;

use super::*;
use crate::catalog::ServerListing;

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
