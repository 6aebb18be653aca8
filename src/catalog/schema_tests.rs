//! Proves the input-schema rewrite matches nanobot §4.3 row by row, plus the edge cases of
//! pass 1 (name clashes, repeated refs, remote refs) and the key order of the output.

use serde_json::{Value, json};

use super::*;

fn obj(value: Value) -> JsonObject {
    match value {
        Value::Object(map) => map,
        other => panic!("test schema must be an object, got {other}"),
    }
}

fn props(properties: Value) -> Value {
    json!({"type": "object", "properties": properties})
}

fn normalized_props(properties: Value) -> Value {
    json!({"type": "object", "properties": properties, "required": []})
}

#[test]
fn normalizes_every_nanobot_example() {
    let cases: Vec<(&str, Value, Value)> = vec![
        (
            "non-null union kept",
            props(json!({"value": {"anyOf": [{"type": "string"}, {"type": "integer"}]}})),
            normalized_props(
                json!({"value": {"anyOf": [{"type": "string"}, {"type": "integer"}]}}),
            ),
        ),
        (
            "type list with null",
            props(json!({"name": {"type": ["string", "null"]}})),
            normalized_props(json!({"name": {"type": "string", "nullable": true}})),
        ),
        (
            "anyOf with null",
            props(
                json!({"name": {"anyOf": [{"type": "string"}, {"type": "null"}], "description": "optional name"}}),
            ),
            normalized_props(
                json!({"name": {"description": "optional name", "type": "string", "nullable": true}}),
            ),
        ),
        (
            "existing $defs ref kept",
            json!({"type": "object", "$defs": {"value": {"type": "string"}}, "properties": {"value": {"$ref": "#/$defs/value"}}}),
            json!({"type": "object", "$defs": {"value": {"type": "string"}}, "properties": {"value": {"$ref": "#/$defs/value"}}, "required": []}),
        ),
        (
            // (Inside a property: at the root only an object is an MCP input schema.)
            "three-way type list kept",
            props(json!({"a": {"type": ["string", "integer", "null"]}})),
            normalized_props(json!({"a": {"type": ["string", "integer", "null"]}})),
        ),
        (
            "nullable object gets properties and required",
            json!({"type": ["object", "null"]}),
            json!({"type": "object", "nullable": true, "properties": {}, "required": []}),
        ),
        (
            "oneOf object or null, recursed after merge",
            props(
                json!({"o": {"oneOf": [{"type": "object", "properties": {"x": {"type": ["integer", "null"]}}}, {"type": "null"}], "description": "d"}}),
            ),
            normalized_props(
                json!({"o": {"description": "d", "type": "object", "properties": {"x": {"type": "integer", "nullable": true}}, "nullable": true, "required": []}}),
            ),
        ),
        (
            "union branches not entered",
            props(json!({"u": {"anyOf": [{"type": ["string", "null"]}, {"type": "integer"}]}})),
            normalized_props(
                json!({"u": {"anyOf": [{"type": ["string", "null"]}, {"type": "integer"}]}}),
            ),
        ),
        (
            "additionalProperties not entered",
            props(
                json!({"a": {"type": "object", "additionalProperties": {"type": ["string", "null"]}}}),
            ),
            normalized_props(
                json!({"a": {"type": "object", "additionalProperties": {"type": ["string", "null"]}, "properties": {}, "required": []}}),
            ),
        ),
        (
            "null alone kept",
            props(json!({"n": {"type": ["null"]}})),
            normalized_props(json!({"n": {"type": ["null"]}})),
        ),
        (
            "oneOf checked before anyOf",
            props(
                json!({"p": {"oneOf": [{"type": "string"}, {"type": "null"}], "anyOf": [{"type": "integer"}, {"type": "null"}]}}),
            ),
            normalized_props(
                json!({"p": {"anyOf": [{"type": "integer"}, {"type": "null"}], "type": "string", "nullable": true}}),
            ),
        ),
        (
            "items object entered, tuple items not",
            props(
                json!({"l": {"type": "array", "items": {"type": ["string", "null"]}}, "t": {"type": "array", "items": [{"type": ["string", "null"]}]}}),
            ),
            normalized_props(
                json!({"l": {"type": "array", "items": {"type": "string", "nullable": true}}, "t": {"type": "array", "items": [{"type": ["string", "null"]}]}}),
            ),
        ),
        (
            // The reference client leaves it without; MCP SDKs (TypeScript, Python 2.x)
            // reject a listing whose inputSchema lacks `"type": "object"`.
            "top level without type gets type object",
            json!({"properties": {"a": {"type": "string"}}}),
            json!({"properties": {"a": {"type": "string"}}, "type": "object", "required": []}),
        ),
        (
            "top level object among other types is an object",
            json!({"type": ["object", "string"], "properties": {}}),
            json!({"type": "object", "properties": {}, "required": []}),
        ),
    ];
    for (label, input, want) in cases {
        let (got, warnings) = normalize_input_schema(&obj(input));
        assert_eq!(Value::Object(got), want, "{label}");
        assert!(warnings.is_empty(), "{label}: {warnings:?}");
    }
}

#[test]
fn missing_or_non_object_schema_becomes_empty_object_schema() {
    let want = json!({"type": "object", "properties": {}, "required": []});
    for input in [Value::Null, json!("str"), json!({}), json!([1]), json!(3)] {
        let (got, warnings) = normalize_schema_value(&input);
        assert_eq!(Value::Object(got), want, "{input}");
        assert!(warnings.is_empty());
    }
}

#[test]
fn a_root_type_other_than_object_is_replaced_and_warned() {
    let want = json!({"type": "object", "properties": {}, "required": []});
    for (input, found) in [
        (json!({"type": "string"}), "\"string\""),
        (
            json!({"type": "array", "items": {"type": "string"}}),
            "\"array\"",
        ),
        (json!({"type": ["string", "null"]}), "[\"string\",\"null\"]"),
        (json!({"type": 7, "properties": {}}), "7"),
    ] {
        let (got, warnings) = normalize_input_schema(&obj(input.clone()));
        assert_eq!(Value::Object(got), want, "{input}");
        assert_eq!(
            warnings,
            [SchemaWarning::NotAnObject {
                found: found.to_owned()
            }],
            "{input}"
        );
        assert!(warnings[0].to_string().contains("MCP requires"), "{input}");
    }
}

#[test]
fn hoists_recursive_local_ref_into_defs() {
    let reference = "#/properties/filter/properties/items";
    let input = props(json!({"filter": {"type": "object", "properties": {
        "items": {"type": "array", "items": {"$ref": reference}}
    }}}));
    let (got, warnings) = normalize_input_schema(&obj(input));
    assert!(warnings.is_empty());
    let hoisted = "#/$defs/ref_18e7c0915865";
    assert_eq!(
        got["properties"]["filter"]["properties"]["items"]["items"],
        json!({"$ref": hoisted})
    );
    assert_eq!(
        got["$defs"],
        json!({"ref_18e7c0915865": {"type": "array", "items": {"$ref": hoisted}}})
    );
}

#[test]
fn hoists_root_self_ref_into_defs() {
    let input = props(json!({"children": {"type": "array", "items": {"$ref": "#"}}}));
    let (got, warnings) = normalize_input_schema(&obj(input));
    assert!(warnings.is_empty());
    let tree =
        json!({"children": {"type": "array", "items": {"$ref": "#/$defs/ref_334359b90efe"}}});
    assert_eq!(
        Value::Object(got),
        json!({
            "type": "object",
            "properties": tree,
            "$defs": {"ref_334359b90efe": {"type": "object", "properties": tree, "required": []}},
            "required": []
        })
    );
}

#[test]
fn resolves_percent_and_tilde_encoded_pointer() {
    let input = props(json!({
        "space name/value": {"type": "string"},
        "alias": {"$ref": "#/properties/space%20name~1value"}
    }));
    let (got, warnings) = normalize_input_schema(&obj(input));
    assert!(warnings.is_empty());
    assert_eq!(
        got["properties"]["alias"],
        json!({"$ref": "#/$defs/ref_ef18f95668dd"})
    );
    assert_eq!(got["$defs"]["ref_ef18f95668dd"], json!({"type": "string"}));
}

#[test]
fn unresolved_ref_is_left_and_warned_once() {
    let input = props(json!({
        "f": {"$ref": "#/definitions/Missing"},
        "g": {"$ref": "#/definitions/Missing"},
        "h": {"$ref": "#/properties/%FF"},
        "i": {"type": "array", "items": [{"$ref": "#/properties/f/items/7"}]}
    }));
    let (got, warnings) = normalize_input_schema(&obj(input.clone()));
    let mut want = input;
    want["required"] = json!([]);
    assert_eq!(Value::Object(got), want);
    let refs: Vec<String> = warnings
        .iter()
        .map(|w| match w {
            SchemaWarning::UnresolvedRef { reference } => reference.clone(),
            other => panic!("unexpected warning {other}"),
        })
        .collect();
    assert_eq!(
        refs,
        [
            "#/definitions/Missing",
            "#/properties/%FF",
            "#/properties/f/items/7"
        ]
    );
    assert_eq!(
        warnings[0].to_string(),
        "tool schema contains an unresolved local $ref: #/definitions/Missing"
    );
}

#[test]
fn definitions_block_is_kept_and_copied() {
    let input = json!({
        "type": "object",
        "definitions": {"Id": {"type": ["string", "null"]}},
        "properties": {"id": {"$ref": "#/definitions/Id"}, "id2": {"$ref": "#/definitions/Id"}}
    });
    let (got, _) = normalize_input_schema(&obj(input));
    let name = format!(
        "ref_{}",
        hex_prefix(&Sha256::digest("#/definitions/Id"), 12)
    );
    assert_eq!(
        got["definitions"],
        json!({"Id": {"type": ["string", "null"]}})
    );
    assert_eq!(
        got["properties"]["id"],
        json!({"$ref": format!("#/$defs/{name}")})
    );
    assert_eq!(got["properties"]["id2"], got["properties"]["id"]);
    // $defs are entered by pass 2, `definitions` are not.
    assert_eq!(
        got["$defs"],
        json!({name: {"type": "string", "nullable": true}})
    );
}

#[test]
fn generated_name_avoids_existing_defs_and_merges() {
    let taken = "ref_334359b90efe";
    let input = json!({
        "type": "object",
        "$defs": {taken: {"type": "integer"}},
        "properties": {"me": {"$ref": "#/properties/other"}, "other": {"type": "string"},
                       "root": {"$ref": "#"}}
    });
    let (got, _) = normalize_input_schema(&obj(input));
    let defs = got["$defs"].as_object().expect("defs object");
    assert_eq!(defs[taken], json!({"type": "integer"}));
    assert!(defs.contains_key("ref_334359b90efe_"), "{defs:?}");
    assert_eq!(
        got["properties"]["root"],
        json!({"$ref": "#/$defs/ref_334359b90efe_"})
    );
}

#[test]
fn remote_and_anchor_refs_are_left_silently() {
    let input = props(json!({
        "r": {"$ref": "https://example.com/schema.json#/x"},
        "a": {"$ref": "#anchor"},
        "n": {"$ref": 5}
    }));
    let (got, warnings) = normalize_input_schema(&obj(input.clone()));
    let mut want = input;
    want["required"] = json!([]);
    assert_eq!(Value::Object(got), want);
    assert!(warnings.is_empty());
}

#[test]
fn output_keeps_key_order() {
    let input = props(
        json!({"name": {"anyOf": [{"type": "string"}, {"type": "null"}], "description": "d"}}),
    );
    let (got, _) = normalize_input_schema(&obj(input));
    let text = serde_json::to_string(&got).expect("serialises");
    assert_eq!(
        text,
        r#"{"type":"object","properties":{"name":{"description":"d","type":"string","nullable":true}},"required":[]}"#
    );
}

#[test]
fn strict_pass_drops_meta_schema_and_moves_non_standard_formats_into_descriptions() {
    let cases: Vec<(&str, Value, Value)> = vec![
        (
            "$schema dropped at the root and in $defs",
            json!({"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object",
                   "properties": {}, "$defs": {"d": {"$schema": "x", "type": "string"}}}),
            json!({"type": "object", "properties": {}, "$defs": {"d": {"type": "string"}},
                   "required": []}),
        ),
        (
            "schemars number format, no description",
            props(json!({"ratio": {"type": "number", "format": "double"}})),
            normalized_props(
                json!({"ratio": {"type": "number", "description": "(format: double)"}}),
            ),
        ),
        (
            "schemars integer format appended to the description",
            props(json!({"n": {"type": "integer", "format": "uint32", "description": "Count. "}})),
            normalized_props(
                json!({"n": {"type": "integer", "description": "Count. (format: uint32)"}}),
            ),
        ),
        (
            "standard formats kept",
            props(json!({"at": {"type": "string", "format": "date-time"},
                         "id": {"type": "string", "format": "uuid"}})),
            normalized_props(json!({"at": {"type": "string", "format": "date-time"},
                                    "id": {"type": "string", "format": "uuid"}})),
        ),
        (
            "inside items, anyOf and additionalProperties",
            props(
                json!({"a": {"type": "array", "items": {"type": "integer", "format": "int64"}},
                         "b": {"anyOf": [{"type": "integer", "format": "uint8"}, {"type": "string"}]},
                         "c": {"type": "object", "additionalProperties": {"type": "number", "format": "float"}}}),
            ),
            normalized_props(
                json!({"a": {"type": "array", "items": {"type": "integer", "description": "(format: int64)"}},
                                    "b": {"anyOf": [{"type": "integer", "description": "(format: uint8)"}, {"type": "string"}]},
                                    "c": {"type": "object", "additionalProperties": {"type": "number", "description": "(format: float)"}, "properties": {}, "required": []}}),
            ),
        ),
        (
            "a property named format, and data keywords, are not schemas",
            props(
                json!({"format": {"type": "string", "enum": ["double"], "default": "double"},
                         "$schema": {"type": "string"}}),
            ),
            normalized_props(
                json!({"format": {"type": "string", "enum": ["double"], "default": "double"},
                                    "$schema": {"type": "string"}}),
            ),
        ),
    ];
    for (what, input, want) in cases {
        let (got, warnings) = normalize_input_schema(&obj(input));
        assert_eq!(Value::Object(got), want, "{what}");
        assert!(warnings.is_empty(), "{what}");
    }
}
