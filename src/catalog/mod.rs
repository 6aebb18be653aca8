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
//! | `build` | [`Catalog::build`]: allowlist → names (`settle`) → table |
//! | this file | [`Catalog`], its [`Route`]s and [`ServerListing`]: the table's types and reading it |
//!
//! A catalog is built once per change of any server's listing and then only read: `tools()`
//! is a slice and `route()` a hash lookup, so tools/list and tools/call cost nothing per tool.

pub mod allowlist;
mod build;
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

pub use self::native::{Claimant, Declared, Native, NativeRoute};

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

#[cfg(test)]
mod tests;
