//! [`Catalog::build`]: each server's allowlist, then names settled across all servers, then
//! the wrapped table with a route per tool and the native tables beside it.

use std::collections::HashMap;
use std::sync::Arc;

use rmcp::model::Tool;

use super::allowlist::{self, Candidate};
use super::naming::{CapabilityKind, base_name, is_blank, suffixed_name};
use super::native::{self, Native, ServerNative};
use super::settle::{Item, Pending, settle_names};
use super::{Catalog, CatalogInput, CatalogWarning, Route, Target, wrap};

impl Catalog {
    /// Builds the table from every server's listing.
    ///
    /// Per server the allowlist is applied first (against base and suffixed names), then names
    /// are settled across all servers: a name shared by several enabled capabilities (or a
    /// blank raw part) is replaced by each one's suffixed name, which depends only on
    /// server, kind and raw name, so the result does not depend on listing order. Two
    /// resources of one server with the same name also hash their URI; an exact duplicate is
    /// dropped. Problems are returned as [`CatalogWarning`]s (see [`Catalog::warnings`]); the hub
    /// logs each one once, when it first appears.
    pub fn build(inputs: &[CatalogInput<'_>]) -> Catalog {
        Catalog::build_with(inputs, true)
    }

    /// [`Catalog::build`], serving resources, templates and prompts as tools too only when
    /// `wrap_resources` (the config's `wrapResources`); they are always served natively
    /// ([`Catalog::native`]), under the same `enabledTools` rules.
    pub fn build_with(inputs: &[CatalogInput<'_>], wrap_resources: bool) -> Catalog {
        let mut warnings = Vec::new();
        let mut pending = Vec::new();
        for input in inputs {
            select_server(input, &mut pending, &mut warnings);
        }
        settle_names(&mut pending, &mut warnings);
        let native = Native::build(native_servers(inputs, &pending));
        if !wrap_resources {
            pending.retain(|p| matches!(p.item, Item::Tool(_)));
        }

        let mut catalog = Catalog {
            tools: Vec::with_capacity(pending.len()),
            routes: Vec::with_capacity(pending.len()),
            index: HashMap::with_capacity(pending.len()),
            counts: HashMap::new(),
            warnings: Vec::new(),
            pages: std::sync::OnceLock::new(),
            native,
            search: None,
        };
        for p in pending {
            let object_arguments = matches!(p.item, Item::Tool(tool)
                if tool.input_schema.get("type").and_then(serde_json::Value::as_str) == Some("object"));
            let (tool, target) = match p.item {
                Item::Tool(tool) => {
                    let (wrapped, schema_warnings) = wrap::wrap_tool(p.name.clone(), tool);
                    warnings.extend(schema_warnings.into_iter().map(|warning| {
                        CatalogWarning::Schema {
                            server: p.server.clone(),
                            tool: p.raw.to_owned(),
                            warning,
                        }
                    }));
                    let name = tool.name.to_string();
                    let wrapped = agent_ui_uri(wrapped, &catalog.native, &p.server);
                    (wrapped, Target::Tool { name })
                }
                Item::Resource(r) => (
                    wrap::wrap_resource(p.name.clone(), r),
                    Target::Resource { uri: r.uri.clone() },
                ),
                Item::Template(t) => (
                    wrap::wrap_resource_template(p.name.clone(), t),
                    Target::ResourceTemplate {
                        uri_template: t.uri_template.clone(),
                    },
                ),
                Item::Prompt(prompt) => (
                    wrap::wrap_prompt(p.name.clone(), prompt),
                    Target::Prompt {
                        name: prompt.name.clone(),
                        arguments: wrap::prompt_argument_names(prompt),
                    },
                ),
            };
            let tool = if p.suffixed {
                wrap::name_note(tool, &p.server, p.kind, p.raw)
            } else {
                tool
            };
            *catalog.counts.entry(p.server.clone()).or_default() += 1;
            catalog.index.insert(p.name, catalog.tools.len());
            let retry_safe = tool
                .annotations
                .as_ref()
                .is_some_and(|a| a.read_only_hint == Some(true) || a.idempotent_hint == Some(true));
            let destructive = tool.annotations.as_ref().is_some_and(|a| {
                a.destructive_hint == Some(true) && a.read_only_hint != Some(true)
            });
            catalog.tools.push(tool);
            catalog.routes.push(Route {
                base: base_name(&p.server, p.kind, p.raw),
                server: p.server,
                target,
                retry_safe,
                object_arguments,
                destructive,
            });
        }
        catalog.warnings = warnings;
        catalog
    }
}

/// Each server's enabled prompts, resources, templates and tool UI URIs, for [`Native::build`].
fn native_servers<'a>(
    inputs: &[CatalogInput<'a>],
    pending: &[Pending<'a>],
) -> Vec<ServerNative<'a>> {
    let mut servers: Vec<ServerNative<'a>> = inputs
        .iter()
        .map(|input| ServerNative {
            server: Arc::from(input.server),
            declared: input.listing.declared,
            ..ServerNative::default()
        })
        .collect();
    for p in pending {
        let Some(s) = servers.iter_mut().find(|s| s.server == p.server) else {
            continue;
        };
        match p.item {
            Item::Tool(tool) => s
                .tool_uris
                .extend(native::tool_ui_uri(tool).map(str::to_owned)),
            Item::Resource(r) => s.resources.push(r),
            Item::Template(t) => s.templates.push(t),
            Item::Prompt(prompt) => s.prompts.push(prompt),
        }
    }
    for (s, input) in servers.iter_mut().zip(inputs) {
        s.withheld_uris.clone_from(&input.listing.withheld_uris);
        s.serves_every_resource = !input.listing.withheld_resources
            && s.resources.len() == input.listing.resources.len()
            && s.templates.len() == input.listing.resource_templates.len();
    }
    servers
}

/// `tool` with its `_meta.ui.resourceUri` (and the flat `ui/resourceUri`) as agents see it.
fn agent_ui_uri(mut tool: Tool, native: &Native, server: &str) -> Tool {
    let Some(uri) = native::tool_ui_uri(&tool).map(str::to_owned) else {
        return tool;
    };
    let agent = native.to_agent(server, &uri);
    if agent == uri {
        return tool;
    }
    if let Some(meta) = tool.meta.as_mut() {
        if let Some(ui) = meta
            .get_mut("ui")
            .and_then(serde_json::Value::as_object_mut)
            && ui.contains_key("resourceUri")
        {
            ui.insert("resourceUri".into(), agent.clone().into());
        }
        if meta.contains_key("ui/resourceUri") {
            meta.insert("ui/resourceUri".into(), agent.into());
        }
    }
    tool
}

/// Applies one server's allowlist and appends its enabled capabilities to `pending`.
fn select_server<'a>(
    input: &CatalogInput<'a>,
    pending: &mut Vec<Pending<'a>>,
    warnings: &mut Vec<CatalogWarning>,
) {
    let listing = input.listing;
    let items = (listing
        .tools
        .iter()
        .map(|t| (CapabilityKind::Tool, &*t.name, Item::Tool(t))))
    .chain(
        listing
            .resources
            .iter()
            .map(|r| (CapabilityKind::Resource, &*r.name, Item::Resource(r))),
    )
    .chain(listing.resource_templates.iter().map(|t| {
        (
            CapabilityKind::ResourceTemplate,
            &*t.name,
            Item::Template(t),
        )
    }))
    .chain(
        listing
            .prompts
            .iter()
            .map(|p| (CapabilityKind::Prompt, &*p.name, Item::Prompt(p))),
    );
    let named: Vec<(CapabilityKind, &'a str, Item<'a>, String, String)> = items
        .map(|(kind, raw, item)| {
            let base = base_name(input.server, kind, raw);
            let suffixed = suffixed_name(input.server, kind, raw);
            (kind, raw, item, base, suffixed)
        })
        .collect();
    let candidates: Vec<Candidate<'_>> = named
        .iter()
        .map(|(kind, raw, _, base, suffixed)| Candidate {
            kind: *kind,
            raw,
            wrapped: base,
            suffixed,
        })
        .collect();
    let selection = allowlist::select(input.enabled_tools, &candidates);
    let server: Arc<str> = Arc::from(input.server);
    if let Some(unmatched) = selection.unmatched {
        warnings.push(CatalogWarning::UnmatchedEntries {
            server: server.clone(),
            unmatched,
        });
    }
    for ((kind, raw, item, base, suffixed), enabled) in named.into_iter().zip(selection.enabled) {
        if enabled {
            let name = if is_blank(raw) { suffixed } else { base };
            pending.push(Pending {
                server: server.clone(),
                kind,
                raw,
                item,
                name,
                suffixed: is_blank(raw),
            });
        }
    }
}
