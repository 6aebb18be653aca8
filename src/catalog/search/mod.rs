//! Tool search: a view whose `toolSearch` is on lists only [`SEARCH_TOOLS`], [`CALL_TOOL`] and
//! the tools its `alwaysList` pins; the rest of its catalog is found by `search_tools` and
//! called through `call_tool` (or directly, by the name the search gave).
//!
//! | file | owns |
//! |---|---|
//! | [`bm25`] | tokens and the BM25 index (why our own: its module docs) |
//! | this file | the two search tools' definitions, [`Catalog::with_tool_search`], [`Catalog::search`] |
//!
//! The index covers every tool of the catalog it is built with — the view's, so a profile's
//! search never finds a tool outside the profile. Each tool's document is its name (split on
//! `_`, `-` and camelCase humps), its description, and the names and descriptions of its
//! `inputSchema`'s top-level properties. The index is built once per catalog (a catalog is
//! built once per change of any server's listing).
//!
//! The measured quality on the paraphrase set in `tests/fixtures/tool_search_eval.json` is in
//! `docs/src/tool-search.md`; the test `eval::bm25_over_the_fixture` computes it.

pub mod bm25;
#[cfg(test)]
mod eval;

use std::sync::Arc;

use rmcp::model::{JsonObject, Tool, ToolAnnotations};
use serde_json::{Value, json};

use super::naming::{CapabilityKind, base_name};
use super::{Catalog, Target};
use crate::config::ToolSearchConfig;

/// The search tool's name.
pub const SEARCH_TOOLS: &str = "search_tools";
/// The call-through tool's name.
pub const CALL_TOOL: &str = "call_tool";
/// How many matches `search_tools` returns when the call gives no `limit`.
pub const DEFAULT_LIMIT: usize = 5;
/// The most matches one `search_tools` call returns.
pub const MAX_LIMIT: usize = 20;

/// A catalog's search state: what `tools/list` shows, and the index over every tool.
#[derive(Debug)]
pub(super) struct SearchMode {
    listed: Vec<Tool>,
    index: bm25::Index,
}

/// One match of [`Catalog::search`].
#[derive(Clone, Debug, PartialEq)]
pub struct Found {
    /// The tool, as the view serves it (name, description, `inputSchema`).
    pub tool: Tool,
    /// Its BM25 score (higher is better; only comparable within one query).
    pub score: f64,
}

/// Whether `name` is one of the search tools.
pub fn is_search_tool(name: &str) -> bool {
    name == SEARCH_TOOLS || name == CALL_TOOL
}

impl Catalog {
    /// This catalog under `config`: unchanged when `toolSearch` is off; otherwise its
    /// `tools/list` pages show the two search tools and the pinned tools, in catalog order,
    /// while routing still knows every tool.
    #[must_use]
    pub fn with_tool_search(mut self, config: &ToolSearchConfig) -> Catalog {
        if !config.enabled {
            return self;
        }
        let index = bm25::Index::build(self.tools.iter().map(document));
        let servers: Vec<&str> = {
            let mut s: Vec<&str> = self.routes.iter().map(|r| &*r.server).collect();
            s.dedup();
            s
        };
        let mut listed = vec![search_tool(self.tools.len(), &servers), call_tool()];
        listed.extend(
            self.tools
                .iter()
                .zip(&self.routes)
                .filter(|(tool, route)| {
                    let raw = match &route.target {
                        Target::Tool { name } => name.as_str(),
                        _ => "",
                    };
                    let wrapped = base_name(&route.server, CapabilityKind::Tool, raw);
                    config.pinned(&[&tool.name, raw, &wrapped])
                })
                .map(|(tool, _)| tool.clone()),
        );
        self.search = Some(Arc::new(SearchMode { listed, index }));
        self
    }

    /// Whether this catalog's view has `toolSearch` on.
    pub fn searching(&self) -> bool {
        self.search.is_some()
    }

    /// The tools `tools/list` shows: every tool, or under `toolSearch` the search tools and
    /// the pinned ones.
    pub fn listed(&self) -> &[Tool] {
        self.search.as_ref().map_or(&self.tools, |s| &s.listed)
    }

    /// Up to `limit` tools of this catalog matching `query`, best first (ties in catalog
    /// order); empty when `toolSearch` is off or nothing shares a word with the query.
    pub fn search(&self, query: &str, limit: usize) -> Vec<Found> {
        let Some(search) = &self.search else {
            return Vec::new();
        };
        search
            .index
            .search(query, limit)
            .into_iter()
            .filter_map(|(i, score)| {
                Some(Found {
                    tool: self.tools.get(i)?.clone(),
                    score,
                })
            })
            .collect()
    }
}

/// The text BM25 indexes for `tool` (module docs).
pub fn document(tool: &Tool) -> String {
    let mut text = format!(
        "{} {}",
        tool.name,
        tool.description.as_deref().unwrap_or_default()
    );
    if let Some(Value::Object(props)) = tool.input_schema.get("properties") {
        for (name, prop) in props {
            text.push(' ');
            text.push_str(name);
            if let Some(d) = prop.get("description").and_then(Value::as_str) {
                text.push(' ');
                text.push_str(d);
            }
        }
    }
    text
}

fn object(value: Value) -> Arc<JsonObject> {
    match value {
        Value::Object(o) => Arc::new(o),
        _ => Arc::default(),
    }
}

/// `search_tools`: its description says what it searches, so agents use it before deciding
/// no tool fits.
fn search_tool(count: usize, servers: &[&str]) -> Tool {
    let description = format!(
        "Find the right tool for a task. This connection lists only a few tools: {count} more \
         are available from these MCP servers: {}. Before saying no tool can do something, \
         call this with a few words describing the task (what you want done, not a tool \
         name). It returns the best-matching tools with their names, descriptions and input \
         schemas; then call the one you pick with `{CALL_TOOL}`.",
        if servers.is_empty() {
            "(none running)".to_owned()
        } else {
            servers.join(", ")
        }
    );
    Tool::new(
        SEARCH_TOOLS,
        description,
        object(json!({
            "type": "object",
            "properties": {
                "query": {"type": "string", "description": "What you want to do, in a few words"},
                "limit": {"type": "integer", "minimum": 1, "maximum": MAX_LIMIT,
                          "description": format!("How many tools to return (default {DEFAULT_LIMIT})")}
            },
            "required": ["query"]
        })),
    )
    .with_annotations(
        ToolAnnotations::new()
            .read_only(true)
            .destructive(false)
            .idempotent(true)
            .open_world(false),
    )
}

/// `call_tool`: calls a tool `search_tools` found, exactly as calling it directly would.
fn call_tool() -> Tool {
    Tool::new(
        CALL_TOOL,
        format!(
            "Call a tool found with `{SEARCH_TOOLS}`: give its exact name and arguments that \
             match its input schema. The result is the tool's own result."
        ),
        object(json!({
            "type": "object",
            "properties": {
                "name": {"type": "string", "description": "The tool's name, as search_tools returned it"},
                "arguments": {"type": "object", "description": "The tool's arguments"}
            },
            "required": ["name"]
        })),
    )
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use rmcp::model::Tool;

    use crate::catalog::{Catalog, CatalogInput, ServerListing};

    fn catalog(search: &str) -> Catalog {
        let schema = serde_json::json!({"type": "object", "properties": {
            "path": {"type": "string", "description": "Where the file lives"}}});
        let schema = std::sync::Arc::new(schema.as_object().cloned().unwrap_or_default());
        let listing = ServerListing {
            tools: vec![
                Tool::new("read_file", "Read a text file", schema.clone()),
                Tool::new("echo", "Return the message unchanged", schema.clone()),
                Tool::new("listDirectory", "Show what a folder holds", schema),
            ],
            ..ServerListing::default()
        };
        let config = crate::config::parse(
            &format!(r#"{{"mcpServers": {{"f": {{"command": "x"}}}}, {search}}}"#),
            Path::new("c.json"),
        )
        .expect("parses");
        Catalog::build(&[CatalogInput {
            server: "f",
            enabled_tools: &["*".to_owned()],
            listing: &listing,
        }])
        .with_tool_search(&config.tool_search)
    }

    fn listed(c: &Catalog) -> Vec<String> {
        c.listed().iter().map(|t| t.name.to_string()).collect()
    }

    #[test]
    fn search_mode_lists_the_search_tools_and_the_pinned_ones_and_routes_all() {
        let c = catalog(r#""toolSearch": true, "alwaysList": ["echo"]"#);
        assert_eq!(listed(&c), ["search_tools", "call_tool", "mcp_f_echo"]);
        assert!(
            c.route("mcp_f_read_file").is_some(),
            "hidden tools still route"
        );
        assert_eq!(c.page(0).map(|p| p.tools.len()), Some(3));
        let found = c.search("contents of a folder", 5);
        assert_eq!(found[0].tool.name, "mcp_f_listDirectory");
        let found = c.search("read the file at this path", 1);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].tool.name, "mcp_f_read_file");
    }

    #[test]
    fn without_tool_search_nothing_changes() {
        let c = catalog(r#""alwaysList": ["echo"]"#);
        assert_eq!(
            listed(&c),
            ["mcp_f_read_file", "mcp_f_echo", "mcp_f_listDirectory"]
        );
        assert!(!c.searching() && c.search("file", 5).is_empty());
    }
}
