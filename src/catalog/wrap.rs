//! Turning one upstream capability into the tool agents see (DESIGN §6, nanobot §5).
//!
//! Owns the shape of each wrapped tool: its description, input schema and annotations. The
//! name is decided elsewhere (naming + collisions in the catalog table) and passed in.
//!
//! | upstream | description | arguments | read-only |
//! |---|---|---|---|
//! | tool | upstream's | normalised `inputSchema` | upstream's annotations |
//! | resource | `[MCP Resource] <description or name>\nURI: <uri>` | none | yes |
//! | resource template | `[MCP Resource Template] …\nURI template: <template>` | one string per URI variable | yes |
//! | prompt | `[MCP Prompt] …\nReturns the filled prompt messages.` | prompt arguments as strings | yes |

use std::borrow::Cow;
use std::sync::Arc;

use rmcp::model::{Prompt, Resource, ResourceTemplate, Tool, ToolAnnotations};
use serde_json::{Map, Value, json};

use super::naming::CapabilityKind;
use super::schema::{JsonObject, SchemaWarning, normalize_input_schema};
use super::uri_template;

/// Serves an upstream tool under `name`, keeping description, title, annotations,
/// `outputSchema`, icons and `_meta`, with its `inputSchema` normalised.
///
/// Returns the schema warnings (unresolved refs) alongside; the tool is served regardless.
pub fn wrap_tool(name: String, tool: &Tool) -> (Tool, Vec<SchemaWarning>) {
    let (schema, warnings) = normalize_input_schema(&tool.input_schema);
    let mut wrapped = tool.clone();
    wrapped.name = Cow::Owned(name);
    wrapped.input_schema = Arc::new(schema);
    (wrapped, warnings)
}

/// Serves a resource as a tool without arguments that reads its URI.
pub fn wrap_resource(name: String, resource: &Resource) -> Tool {
    let description = format!(
        "[MCP Resource] {}\nURI: {}",
        describe(resource.description.as_deref(), &resource.name),
        resource.uri
    );
    let mut tool = read_only_tool(name, description, object_schema(Map::new(), Vec::new()));
    tool.title.clone_from(&resource.title);
    tool.icons.clone_from(&resource.icons);
    tool
}

/// Serves a resource template as a tool whose arguments are the URI variables.
///
/// Only variables used as a simple `{x}` are required (see [`uri_template`] for why); each is a
/// string, or a list of strings when the template explodes it (`{/segments*}`).
pub fn wrap_resource_template(name: String, template: &ResourceTemplate) -> Tool {
    let description = format!(
        "[MCP Resource Template] {}\nURI template: {}",
        describe(template.description.as_deref(), &template.name),
        template.uri_template
    );
    let mut properties = Map::new();
    let mut required = Vec::new();
    for variable in uri_template::variable_specs(&template.uri_template) {
        if !variable.optional {
            required.push(Value::String(variable.name.clone()));
        }
        let schema = if variable.explode {
            json!({"type": "array", "items": {"type": "string"}})
        } else {
            json!({"type": "string"})
        };
        properties.insert(variable.name, schema);
    }
    let mut tool = read_only_tool(name, description, object_schema(properties, required));
    tool.title.clone_from(&template.title);
    tool.icons.clone_from(&template.icons);
    tool
}

/// Serves a prompt as a tool whose string arguments are the prompt arguments.
///
/// Each argument becomes `{"type":"string"}` plus its description when non-empty; names are
/// not sanitised; `required` lists the required ones in order.
pub fn wrap_prompt(name: String, prompt: &Prompt) -> Tool {
    let description = format!(
        "[MCP Prompt] {}\nReturns the filled prompt messages.",
        describe(prompt.description.as_deref(), &prompt.name)
    );
    let mut properties = Map::new();
    let mut required = Vec::new();
    for argument in prompt.arguments.iter().flatten() {
        let mut property = Map::new();
        property.insert("type".into(), Value::from("string"));
        if let Some(text) = argument.description.as_deref().filter(|d| !d.is_empty()) {
            property.insert("description".into(), Value::from(text));
        }
        properties.insert(argument.name.clone(), Value::Object(property));
        if argument.required == Some(true) {
            required.push(Value::String(argument.name.clone()));
        }
    }
    let mut tool = read_only_tool(name, description, object_schema(properties, required));
    tool.title.clone_from(&prompt.title);
    tool.icons.clone_from(&prompt.icons);
    tool
}

/// The prompt's argument names in upstream order (what `prompts/get` may receive).
pub fn prompt_argument_names(prompt: &Prompt) -> Vec<String> {
    prompt
        .arguments
        .iter()
        .flatten()
        .map(|a| a.name.clone())
        .collect()
}

/// `tool` with a sentence saying what it wraps, for a name with a suffix: another capability
/// shares its name, or its raw name had nothing left after sanitising, so the name alone no
/// longer tells the agent which capability this is.
pub fn name_note(mut tool: Tool, server: &str, kind: CapabilityKind, raw: &str) -> Tool {
    let kind = match kind {
        CapabilityKind::Tool => "tool",
        CapabilityKind::Resource => "resource",
        CapabilityKind::ResourceTemplate => "resource template",
        CapabilityKind::Prompt => "prompt",
    };
    let raw = serde_json::to_string(raw).unwrap_or_default();
    let note = format!("(This is the {kind} {raw} of server \"{server}\".)");
    let description = match tool.description.as_deref() {
        Some(d) if !d.is_empty() => format!("{d}\n{note}"),
        _ => note,
    };
    tool.description = Some(Cow::Owned(description));
    tool
}

fn describe<'a>(description: Option<&'a str>, name: &'a str) -> &'a str {
    description.filter(|d| !d.is_empty()).unwrap_or(name)
}

fn object_schema(properties: JsonObject, required: Vec<Value>) -> JsonObject {
    let mut schema = Map::new();
    schema.insert("type".into(), Value::from("object"));
    schema.insert("properties".into(), Value::Object(properties));
    schema.insert("required".into(), Value::Array(required));
    schema
}

fn read_only_tool(name: String, description: String, schema: JsonObject) -> Tool {
    Tool::new_with_raw(name, Some(Cow::Owned(description)), Arc::new(schema))
        .with_annotations(ToolAnnotations::new().read_only(true))
}

#[cfg(test)]
mod tests {
    use rmcp::model::PromptArgument;

    use super::*;

    fn schema_of(tool: &Tool) -> Value {
        Value::Object((*tool.input_schema).clone())
    }

    #[test]
    fn tool_keeps_upstream_fields_and_normalises_schema() {
        let schema = json!({"type": "object", "properties": {"q": {"type": ["string", "null"]}}});
        let Value::Object(schema) = schema else {
            unreachable!("literal is an object")
        };
        let upstream = Tool::new("search", "find things", Arc::new(schema))
            .with_title("Search")
            .with_annotations(ToolAnnotations::new().destructive(true))
            .with_raw_output_schema(Arc::new(Map::new()));
        let (wrapped, warnings) = wrap_tool("mcp_s_search".into(), &upstream);
        assert!(warnings.is_empty());
        assert_eq!(wrapped.name, "mcp_s_search");
        assert_eq!(wrapped.description.as_deref(), Some("find things"));
        assert_eq!(wrapped.title.as_deref(), Some("Search"));
        assert_eq!(wrapped.annotations, upstream.annotations);
        assert_eq!(wrapped.output_schema, upstream.output_schema);
        assert_eq!(
            schema_of(&wrapped),
            json!({"type": "object", "properties": {"q": {"type": "string", "nullable": true}}, "required": []})
        );
    }

    #[test]
    fn resource_becomes_read_only_tool_without_arguments() {
        let cases = [
            (
                Resource::new("file:///a.txt", "a").with_description("the a file"),
                "[MCP Resource] the a file\nURI: file:///a.txt",
            ),
            (
                Resource::new("file:///b.txt", "b").with_description(""),
                "[MCP Resource] b\nURI: file:///b.txt",
            ),
            (
                Resource::new("file:///c.txt", "c"),
                "[MCP Resource] c\nURI: file:///c.txt",
            ),
        ];
        for (resource, want) in cases {
            let tool = wrap_resource("mcp_s_resource_x".into(), &resource);
            assert_eq!(tool.description.as_deref(), Some(want));
            assert_eq!(
                schema_of(&tool),
                json!({"type": "object", "properties": {}, "required": []})
            );
            assert_eq!(tool.annotations.and_then(|a| a.read_only_hint), Some(true));
        }
    }

    #[test]
    fn template_arguments_are_uri_variables() {
        let template = ResourceTemplate::new("db://{schema}/{table}{?limit}", "table rows")
            .with_description("rows of a table");
        let tool = wrap_resource_template("mcp_db_resource_table_rows".into(), &template);
        assert_eq!(
            tool.description.as_deref(),
            Some(
                "[MCP Resource Template] rows of a table\nURI template: db://{schema}/{table}{?limit}"
            )
        );
        assert_eq!(
            schema_of(&tool),
            json!({"type": "object", "properties": {
                "schema": {"type": "string"}, "table": {"type": "string"}, "limit": {"type": "string"}
            }, "required": ["schema", "table"]})
        );
        assert_eq!(tool.annotations.and_then(|a| a.read_only_hint), Some(true));
    }

    #[test]
    fn exploded_and_operator_variables_are_optional_and_exploded_ones_are_lists() {
        let template = ResourceTemplate::new("repo://{owner}{/segments*}{+rest}{.ext}", "files");
        let tool = wrap_resource_template("mcp_s_resource_files".into(), &template);
        assert_eq!(
            schema_of(&tool),
            json!({"type": "object", "properties": {
                "owner": {"type": "string"},
                "segments": {"type": "array", "items": {"type": "string"}},
                "rest": {"type": "string"},
                "ext": {"type": "string"}
            }, "required": ["owner"]})
        );
    }

    #[test]
    fn prompt_arguments_become_string_properties() {
        let prompt = Prompt::new(
            "write",
            Some("write a piece"),
            Some(vec![
                PromptArgument::new("topic")
                    .with_description("what about")
                    .with_required(true),
                PromptArgument::new("style").with_description(""),
                PromptArgument::new("length").with_required(false),
            ]),
        );
        let tool = wrap_prompt("mcp_s_prompt_write".into(), &prompt);
        assert_eq!(
            tool.description.as_deref(),
            Some("[MCP Prompt] write a piece\nReturns the filled prompt messages.")
        );
        assert_eq!(
            schema_of(&tool),
            json!({"type": "object", "properties": {
                "topic": {"type": "string", "description": "what about"},
                "style": {"type": "string"},
                "length": {"type": "string"}
            }, "required": ["topic"]})
        );
        assert_eq!(prompt_argument_names(&prompt), ["topic", "style", "length"]);
        assert_eq!(tool.annotations.and_then(|a| a.read_only_hint), Some(true));

        let bare = Prompt::new("help", None::<String>, None);
        let tool = wrap_prompt("mcp_s_prompt_help".into(), &bare);
        assert_eq!(
            tool.description.as_deref(),
            Some("[MCP Prompt] help\nReturns the filled prompt messages.")
        );
        assert_eq!(
            schema_of(&tool),
            json!({"type": "object", "properties": {}, "required": []})
        );
    }
}
