//! The wrapped capability table (DESIGN §4–6): every upstream tool, resource, resource template
//! and prompt of every server, served as one flat tool list with a route back to its owner.
//!
//! | file | owns |
//! |---|---|
//! | [`naming`] | sanitising, the 64-char limit, base and suffixed names |
//! | [`allowlist`] | `enabledTools` matching and the unmatched-entries warning |
//! | [`schema`] | `inputSchema` normalisation |
//! | [`uri_template`] | RFC 6570 variables and expansion for resource templates |
//! | [`wrap`] | the description / schema / annotations of each wrapped tool |
//! | [`execution`] | a tool's `execution` (Tasks), kept through rmcp's tool model |
//! | [`native`] | prompts, resources and templates served as themselves, their names, URIs and routes |
//! | `warning` | [`CatalogWarning`], what a build reports |
//! | `pages` | the `tools/list` pages, and each page's JSON made once per catalog |
//! | `profile` | [`Catalog::build_profile`]: a profile's subset and naming |
//! | [`pin`] | pinned tool definitions: fingerprints, and what of a listing waits for approval |
//! | `uri_names` | the rewritten form of a URI two servers claim, and the server label in it |
//! | [`search`] | `toolSearch`: what `tools/list` shows then, and BM25 search over the rest |
//! | `settle` | the capabilities waiting for their names, and making those names unique |
//! | this file | [`Catalog::build`]: allowlist → names (`settle`) → table |
//!
//! A catalog is built once per change of any server's listing and then only read: `tools()`
//! is a slice and `route()` a hash lookup, so tools/list and tools/call cost nothing per tool.

pub mod allowlist;
pub mod execution;
pub mod naming;
pub mod native;
mod pages;
pub mod pin;
mod profile;
pub use self::profile::unmatched_globs;
pub mod schema;
pub mod search;
mod settle;
mod uri_names;
pub mod uri_template;
mod warning;
pub mod wrap;

pub use self::pages::PAGE_SIZE;
pub use self::warning::{CatalogWarning, CollisionMember};

use std::collections::HashMap;
use std::sync::Arc;

use rmcp::model::{Prompt, Resource, ResourceTemplate, Tool};

use self::allowlist::Candidate;
use self::naming::{CapabilityKind, base_name, is_blank, suffixed_name};
use self::native::ServerNative;
pub use self::native::{Declared, Native, NativeRoute};
use self::settle::{Item, Pending, settle_names};

/// What one server listed (tools/list, resources/list, resources/templates/list,
/// prompts/list), after pagination.
#[derive(Clone, Debug, Default)]
pub struct ServerListing {
    /// Upstream tools in listing order.
    pub tools: Vec<Tool>,
    /// Concrete resources in listing order.
    pub resources: Vec<Resource>,
    /// Resource templates in listing order.
    pub resource_templates: Vec<ResourceTemplate>,
    /// Prompts in listing order.
    pub prompts: Vec<Prompt>,
    /// What the server declared in `initialize`.
    pub declared: Declared,
    /// Some of the resources or templates the server listed were taken out before this
    /// listing (held back by the pins): like `enabledTools`, that keeps a URI it does not
    /// list from being read through it ([`native::Native::resource`]).
    pub withheld_resources: bool,
    /// The URIs of the resources taken out (held back by the pins): never read through the
    /// server, even when a template it serves matches them.
    pub withheld_uris: Vec<String>,
}

/// What a wrapped tool calls upstream.
#[derive(Clone, Debug, PartialEq)]
pub enum Target {
    /// tools/call with this raw name.
    Tool {
        /// The upstream tool name, unsanitised.
        name: String,
    },
    /// resources/read of this URI.
    Resource {
        /// The resource URI.
        uri: String,
    },
    /// resources/read of this template expanded with the call's arguments.
    ResourceTemplate {
        /// The RFC 6570 template; see [`uri_template::expand`].
        uri_template: String,
    },
    /// prompts/get of this prompt.
    Prompt {
        /// The upstream prompt name.
        name: String,
        /// The declared argument names, in order (only these are forwarded).
        arguments: Vec<String>,
    },
}

/// Where a wrapped tool goes: the owning server (by stored name, never parsed from the prefix)
/// and the upstream target.
#[derive(Clone, Debug)]
pub struct Route {
    /// The server name as configured; `Arc` because every route of a server shares it.
    pub server: Arc<str>,
    /// What to call there.
    pub target: Target,
    /// Whether the call may be sent again when it is unknown whether the first one ran: the
    /// wrapped tool declares `readOnlyHint` or `idempotentHint` (resources and prompts are
    /// read-only). See `hub::route` for the retry rule.
    pub retry_safe: bool,
    /// Whether the server's own `inputSchema` of the tool is `"type": "object"`: a call
    /// without `arguments` then forwards `{}` (see `hub::forward`). `false` for resources and
    /// prompts.
    pub object_arguments: bool,
    /// Whether the tool declares `destructiveHint: true` without `readOnlyHint: true`: its
    /// calls wait for the person's approval unless its `toolPolicy` says otherwise
    /// (`hub::approve`). An absent hint counts as not declared.
    pub destructive: bool,
    /// The default wrapped name ([`naming::base_name`], `mcp_<server>_<tool>`), whatever the
    /// name it is served under (a collision suffix, a profile's naming).
    pub base: String,
}

impl Route {
    /// The names the server's `toolPolicy` keys are matched against (`config::policy`): a
    /// tool's upstream name and its default wrapped name; a prompt or resource served as a
    /// tool, its default wrapped name. Never the name a view or a client serves it under, so
    /// every view decides the same.
    pub fn policy_names(&self) -> Vec<&str> {
        match &self.target {
            Target::Tool { name } => vec![name, &self.base],
            _ => vec![&self.base],
        }
    }

    /// The tool's name as the person's messages give it: a tool's upstream name, else its
    /// default wrapped name.
    pub fn tool_name(&self) -> &str {
        match &self.target {
            Target::Tool { name } => name,
            _ => &self.base,
        }
    }
}

/// One server's share of a build.
#[derive(Clone, Copy, Debug)]
pub struct CatalogInput<'a> {
    /// The configured server name.
    pub server: &'a str,
    /// The server's `enabledTools`.
    pub enabled_tools: &'a [String],
    /// What the server listed.
    pub listing: &'a ServerListing,
}

/// The merged, wrapped capability table served to agents.
#[derive(Debug, Default)]
pub struct Catalog {
    /// Wrapped tools: servers in input order; within a server tools, resources, templates,
    /// prompts, each in upstream order.
    tools: Vec<Tool>,
    /// Parallel to `tools`.
    routes: Vec<Route>,
    /// Wrapped name → index into `tools` / `routes`.
    index: HashMap<String, usize>,
    /// Served tools per server.
    counts: HashMap<Arc<str>, usize>,
    warnings: Vec<CatalogWarning>,
    /// The `tools/list` pages as JSON, made the first time one is asked for (`pages.rs`).
    pages: std::sync::OnceLock<Vec<String>>,
    /// Prompts, resources and templates served as themselves.
    native: Native,
    /// Under `toolSearch`: the listed tools and the search index ([`search`]).
    search: Option<Arc<search::SearchMode>>,
}

impl Catalog {
    /// This catalog, reading only the URIs its tables list (its resources, templates and tools'
    /// UIs): used while some configured server is not running, since an unlisted URI might be
    /// that server's and must not reach the one server with resources that is running.
    #[must_use]
    pub fn listed_uris_only(mut self) -> Catalog {
        self.native.listed_resources_only();
        self
    }

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

    /// The prompts, resources and templates served as themselves, and their routes.
    pub fn native(&self) -> &Native {
        &self.native
    }

    /// Every wrapped name with its route, in no particular order.
    pub fn routes(&self) -> impl Iterator<Item = (&str, &Route)> {
        self.index
            .iter()
            .map(|(name, &i)| (name.as_str(), &self.routes[i]))
    }

    /// The wrapped tools, as tools/list serves them.
    pub fn tools(&self) -> &[Tool] {
        &self.tools
    }

    /// Where the wrapped tool `wrapped` goes, or `None` for an unknown name.
    pub fn route(&self, wrapped: &str) -> Option<&Route> {
        self.index.get(wrapped).map(|&i| &self.routes[i])
    }

    /// The wrapped tool named `wrapped`.
    pub fn tool(&self, wrapped: &str) -> Option<&Tool> {
        self.index.get(wrapped).map(|&i| &self.tools[i])
    }

    /// Number of wrapped tools.
    pub fn len(&self) -> usize {
        self.tools.len()
    }

    /// True when nothing is served.
    pub fn is_empty(&self) -> bool {
        self.tools.is_empty()
    }

    /// Number of wrapped tools owned by `server` (0 for an unknown server).
    pub fn tool_count_for(&self, server: &str) -> usize {
        self.counts.get(server).copied().unwrap_or(0)
    }

    /// Every warning of the build, in the order found.
    pub fn warnings(&self) -> &[CatalogWarning] {
        &self.warnings
    }

    /// The warnings that concern `server`.
    pub fn warnings_for<'a>(&'a self, server: &'a str) -> impl Iterator<Item = &'a CatalogWarning> {
        self.warnings.iter().filter(move |w| w.concerns(server))
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

#[cfg(test)]
mod tests;
