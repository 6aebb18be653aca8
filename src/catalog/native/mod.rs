//! The native tables: every enabled prompt, resource and resource template of every server,
//! served as themselves (`prompts/list`, `resources/list`, `resources/templates/list`), with
//! the table that routes `prompts/get`, `resources/read`, `completion/complete` and
//! `resources/subscribe` back to the owning server.
//!
//! | upstream | served as | when |
//! |---|---|---|
//! | prompt `p` of server `s` | `<s>_<p>` (`s` sanitised as in tool names) | always: names are labels, so they carry their server as tool names do and stay stable when servers come and go |
//! | two prompts that end up with one name | `<s>_<p>_<8 hex>` (SHA-1 of server and prompt) | a collision |
//! | resource URI `u` | `u` | only one server claims `u` |
//! | a URI (or template) two servers claim | `ui://<label>/<rest>` for `ui://<rest>`, else `mcp-companion://<label>/<u>` | a collision: every claimant's copy is rewritten |
//!
//! A server *claims* a URI by listing it as a resource or by naming it in one of its tools'
//! `_meta.ui.resourceUri` (MCP Apps); a template by listing it. The label is the server's
//! sanitised name, with a hash suffix when a rewritten URI would otherwise read like another
//! served URI (`uri_names.rs`). Rewritten URIs, and the expansions of a rewritten template,
//! are rewritten everywhere an agent sees them (`resources/list`, tool `_meta`, tool results,
//! prompt messages, read results) by [`Native::to_agent`], and routed back by table lookups,
//! never by reading a prefix.
//!
//! This file owns the tables and their lookups; `build.rs` fills them from the servers'
//! listings, [`template_matches`] (`matching.rs`) tells whether a URI expands a template.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use rmcp::model::{Prompt, Resource, ResourceTemplate, Tool};
use serde_json::Value;

use super::naming::sanitize;

mod build;
mod matching;
#[cfg(test)]
mod tests;

pub use self::matching::template_matches;

/// What the running servers declared in `initialize`, merged: a capability counts when any
/// server has it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Declared {
    /// Some server declared `prompts`.
    pub prompts: bool,
    /// Some server declared `resources`.
    pub resources: bool,
    /// Some server declared `resources.subscribe`.
    pub subscribe: bool,
    /// Some server declared `completions`.
    pub completions: bool,
    /// Some server declared `logging`.
    pub logging: bool,
}

/// Where a native request goes: the owning server and the name or URI it knows.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NativeRoute {
    /// The server name as configured.
    pub server: Arc<str>,
    /// The upstream prompt name, resource URI or URI template.
    pub upstream: String,
}

/// One of several servers that claim one URI, template or prompt name, and the form agents
/// reach its copy by (the rewritten URI or template, the suffixed prompt name).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Claimant {
    /// The server name as configured.
    pub server: Arc<str>,
    /// What an agent sends for this server's copy.
    pub served: String,
}

/// A served template and where it goes.
#[derive(Clone, Debug)]
struct TemplateRoute {
    server: Arc<str>,
    /// The template as agents see it.
    agent: String,
    /// The server's own template.
    upstream: String,
    /// For a rewritten template: the literal text added in front of the server's URIs.
    added: Option<(String, String)>,
}

/// The native prompts, resources and templates of a catalog, and their routes.
#[derive(Debug, Default)]
pub struct Native {
    prompts: Vec<Prompt>,
    prompt_routes: HashMap<String, NativeRoute>,
    resources: Vec<Resource>,
    templates: Vec<ResourceTemplate>,
    template_routes: Vec<TemplateRoute>,
    /// Agent URI → route, for listed resources and tools' `ui://` URIs.
    uris: HashMap<String, NativeRoute>,
    /// Server → (upstream URI → agent URI), only for rewritten URIs.
    rewritten: HashMap<Arc<str>, HashMap<String, String>>,
    /// Servers some of whose URIs or templates are rewritten.
    rewriting: HashSet<Arc<str>>,
    /// A URI two or more servers claim, as they wrote it → each claimant and the rewritten URI
    /// agents see for it, in config order: a read of the URI as written names no one server.
    shared_uris: HashMap<String, Vec<Claimant>>,
    /// A prompt name two or more prompts would take (`<server>_<prompt>`) → each such prompt's
    /// server and the name it is served under (with its suffix), in config order.
    shared_prompts: HashMap<String, Vec<Claimant>>,
    /// Servers that declared `resources`, in config order.
    resource_servers: Vec<Arc<str>>,
    /// Whether a URI no table entry matches may go to the only server in `resource_servers`:
    /// that server serves every resource and template it listed (nothing withheld by pins,
    /// `enabledTools` or a profile), and every configured server is running, so no other
    /// server that could own the URI is out of sight.
    unlisted_ok: bool,
    /// URIs held back by the pins: read by no server until approved, whatever template or
    /// fallback would match them.
    withheld_uris: HashSet<String>,
    declared: Declared,
}

/// One server's enabled native capabilities, as the catalog selected them.
#[derive(Default)]
pub(super) struct ServerNative<'a> {
    pub(super) server: Arc<str>,
    pub(super) prompts: Vec<&'a Prompt>,
    pub(super) resources: Vec<&'a Resource>,
    pub(super) templates: Vec<&'a ResourceTemplate>,
    /// The `ui://` (or other) URIs the server's enabled tools name in `_meta.ui.resourceUri`.
    pub(super) tool_uris: Vec<String>,
    pub(super) declared: Declared,
    /// Whether every resource and template the server listed is served: only then may a URI
    /// it did not list be sent to it ([`Native::resource`]); `enabledTools` that leaves some
    /// out must not be read around.
    pub(super) serves_every_resource: bool,
    /// URIs of the server's resources held back by the pins (`ServerListing::withheld_uris`).
    pub(super) withheld_uris: Vec<String>,
}

/// The URI a tool names as its MCP Apps UI: `_meta.ui.resourceUri`, or the older flat
/// `_meta["ui/resourceUri"]`.
pub fn tool_ui_uri(tool: &Tool) -> Option<&str> {
    let meta = tool.meta.as_ref()?;
    meta.get("ui")
        .and_then(|ui| ui.get("resourceUri"))
        .or_else(|| meta.get("ui/resourceUri"))
        .and_then(Value::as_str)
}

impl Native {
    /// The served prompts, servers in config order, each in upstream order.
    pub fn prompts(&self) -> &[Prompt] {
        &self.prompts
    }

    /// The served resources.
    pub fn resources(&self) -> &[Resource] {
        &self.resources
    }

    /// The served resource templates.
    pub fn templates(&self) -> &[ResourceTemplate] {
        &self.templates
    }

    /// Whether `other` serves the same prompts, resources and templates.
    pub fn same_lists(&self, other: &Native) -> bool {
        self.prompts == other.prompts
            && self.resources == other.resources
            && self.templates == other.templates
    }

    /// Whether `other` serves the same prompts.
    pub fn same_prompts(&self, other: &Native) -> bool {
        self.prompts == other.prompts
    }

    /// Whether `other` serves the same resources and templates.
    pub fn same_resources(&self, other: &Native) -> bool {
        self.resources == other.resources && self.templates == other.templates
    }

    /// What the running servers declared, merged.
    pub fn declared(&self) -> Declared {
        self.declared
    }

    /// Serves every prompt under its server's own name (a profile of one server with
    /// `"naming": "raw"`): one server's prompt names are unique among themselves.
    pub(super) fn raw_prompt_names(&mut self) {
        let mut routes = HashMap::with_capacity(self.prompt_routes.len());
        for prompt in &mut self.prompts {
            if let Some(route) = self.prompt_routes.get(&prompt.name)
                && !routes.contains_key(&route.upstream)
            {
                prompt.name = route.upstream.clone();
                routes.insert(route.upstream.clone(), route.clone());
            }
        }
        self.prompt_routes = routes;
        self.shared_prompts.clear();
    }

    /// Where the served prompt `name` goes.
    pub fn prompt(&self, name: &str) -> Option<&NativeRoute> {
        self.prompt_routes.get(name)
    }

    /// Where a read (or subscription) of the agent's `uri` goes: a listed resource or a tool's
    /// UI, else the first served template that matches it, else the only server that declared
    /// `resources` (servers often read URIs they do not list: files, links in tool results),
    /// when none of its listed resources and templates is withheld and no configured server
    /// is out of sight (see [`Catalog::listed_uris_only`](super::Catalog::listed_uris_only)).
    /// `None` when no table entry matches and several servers (or none) could own it.
    pub fn resource(&self, uri: &str) -> Option<NativeRoute> {
        if let Some(route) = self.uris.get(uri) {
            return Some(route.clone());
        }
        if self.withheld_uris.contains(uri) {
            return None;
        }
        // A rewritten template's label is its server's alone: try those first, so that no
        // other server's template that happens to match takes its expansions.
        let (rewritten, kept): (Vec<_>, Vec<_>) =
            self.template_routes.iter().partition(|t| t.added.is_some());
        for t in rewritten.into_iter().chain(kept) {
            let upstream = match &t.added {
                Some((prefix, upstream_prefix)) => match uri.strip_prefix(prefix.as_str()) {
                    Some(rest) => format!("{upstream_prefix}{rest}"),
                    None => continue,
                },
                None => uri.to_owned(),
            };
            if template_matches(&t.upstream, &upstream) {
                return Some(NativeRoute {
                    server: t.server.clone(),
                    upstream,
                });
            }
        }
        match self.resource_servers.as_slice() {
            [only] if self.unlisted_ok => Some(NativeRoute {
                server: only.clone(),
                upstream: uri.to_owned(),
            }),
            _ => None,
        }
    }

    /// The servers that claim the agent's `uri` when that is a URI (or an expansion of a
    /// template) two or more servers serve only rewritten, each with the rewritten URI that
    /// reads its copy, in config order; empty for any other URI. For telling an agent that
    /// read `uri` as the servers wrote it which URIs it can read instead.
    pub fn claimants(&self, uri: &str) -> Vec<Claimant> {
        if let Some(claimants) = self.shared_uris.get(uri) {
            return claimants.clone();
        }
        let mut claimants: Vec<Claimant> = Vec::new();
        for t in &self.template_routes {
            if let Some((prefix, upstream_prefix)) = &t.added
                && let Some(rest) = uri.strip_prefix(upstream_prefix.as_str())
                && template_matches(&t.upstream, uri)
                && !claimants.iter().any(|c| c.server == t.server)
            {
                claimants.push(Claimant {
                    server: t.server.clone(),
                    served: format!("{prefix}{rest}"),
                });
            }
        }
        claimants
    }

    /// As [`Native::claimants`], for a completion's reference: the template (or URI) `uri` as
    /// two or more servers list it, each with the rewritten template (or URI) agents see.
    pub fn template_claimants(&self, uri: &str) -> Vec<Claimant> {
        let claimants: Vec<Claimant> = (self.template_routes.iter())
            .filter(|t| t.added.is_some() && t.upstream == uri)
            .map(|t| Claimant {
                server: t.server.clone(),
                served: t.agent.clone(),
            })
            .collect();
        if claimants.is_empty() {
            return self.shared_uris.get(uri).cloned().unwrap_or_default();
        }
        claimants
    }

    /// The prompts that would all be served as `name` (`<server>_<prompt>`), so are served
    /// with a suffix each, in config order; empty for any other name.
    pub fn prompt_claimants(&self, name: &str) -> Vec<Claimant> {
        self.shared_prompts.get(name).cloned().unwrap_or_default()
    }

    /// Stops [`Native::resource`] from sending an unlisted URI to the only server with
    /// resources: for a profile that names its resources, a URI it did not list is unknown.
    pub(super) fn listed_resources_only(&mut self) {
        self.unlisted_ok = false;
    }

    /// Where a completion for the template (or resource URI) `uri` goes.
    pub fn template(&self, uri: &str) -> Option<NativeRoute> {
        self.template_routes
            .iter()
            .find(|t| t.agent == uri)
            .map(|t| NativeRoute {
                server: t.server.clone(),
                upstream: t.upstream.clone(),
            })
            .or_else(|| self.uris.get(uri).cloned())
    }

    /// The URI agents see for `server`'s `uri`: rewritten when it is shared (module doc),
    /// else unchanged.
    ///
    /// Looked up in order: `server`'s rewritten URIs; a URI `server` lists (or names as a UI)
    /// unrewritten stays; an expansion of one of `server`'s rewritten templates gets the
    /// template's rewriting (so links to it in results read back at `server`); anything else
    /// stays.
    pub fn to_agent(&self, server: &str, uri: &str) -> String {
        if let Some(agent) = self.rewritten.get(server).and_then(|m| m.get(uri)) {
            return agent.clone();
        }
        if !self.rewriting.contains(server)
            || self
                .uris
                .get(uri)
                .is_some_and(|r| &*r.server == server && r.upstream == uri)
        {
            return uri.to_owned();
        }
        for t in &self.template_routes {
            if let Some((prefix, upstream_prefix)) = &t.added
                && &*t.server == server
                && template_matches(&t.upstream, uri)
                && let Some(rest) = uri.strip_prefix(upstream_prefix.as_str())
            {
                return format!("{prefix}{rest}");
            }
        }
        uri.to_owned()
    }

    /// Whether any of `server`'s URIs or templates is rewritten (its results must then be
    /// rewritten too).
    pub fn rewrites(&self, server: &str) -> bool {
        self.rewriting.contains(server)
    }
}

/// The served name of prompt `raw` of `server`, before collision handling.
pub(crate) fn prompt_name(server: &str, raw: &str) -> String {
    format!("{}_{raw}", sanitize(server))
}
