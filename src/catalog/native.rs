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

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use rmcp::model::{Prompt, Resource, ResourceTemplate, Tool};
use serde_json::Value;

use super::naming::{hex_prefix, sanitize};
use super::uri_names::{labels, namespaced};

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
    /// Builds the tables from each server's enabled capabilities, servers in config order.
    pub(super) fn build(servers: Vec<ServerNative<'_>>) -> Native {
        let mut native = Native {
            unlisted_ok: true,
            ..Native::default()
        };
        // Which servers claim each URI and each template.
        let mut claims: HashMap<&str, HashSet<&str>> = HashMap::new();
        let mut template_claims: HashMap<&str, HashSet<&str>> = HashMap::new();
        for s in &servers {
            let uris = s.resources.iter().map(|r| r.uri.as_str());
            for uri in uris.chain(s.tool_uris.iter().map(String::as_str)) {
                claims.entry(uri).or_default().insert(&s.server);
            }
            for t in &s.templates {
                template_claims
                    .entry(&t.uri_template)
                    .or_default()
                    .insert(&s.server);
            }
        }
        let shared = |map: &HashMap<&str, HashSet<&str>>, uri: &str| {
            map.get(uri).is_some_and(|servers| servers.len() > 1)
        };
        let rewriting: Vec<&str> = servers
            .iter()
            .filter(|s| {
                let uris = s.resources.iter().map(|r| r.uri.as_str());
                uris.chain(s.tool_uris.iter().map(String::as_str))
                    .any(|uri| shared(&claims, uri))
                    || s.templates
                        .iter()
                        .any(|t| shared(&template_claims, &t.uri_template))
            })
            .map(|s| &*s.server)
            .collect();
        let kept: Vec<&str> = claims
            .iter()
            .filter(|(_, servers)| servers.len() == 1)
            .map(|(uri, _)| *uri)
            .collect();
        let labels = labels(&rewriting, &kept);
        native.rewriting = rewriting.iter().map(|s| Arc::from(*s)).collect();
        let mut prompt_names: HashMap<String, usize> = HashMap::new();
        for s in &servers {
            for p in &s.prompts {
                *prompt_names
                    .entry(prompt_name(&s.server, &p.name))
                    .or_default() += 1;
            }
        }
        for s in &servers {
            let d = &mut native.declared;
            d.prompts |= s.declared.prompts;
            d.resources |= s.declared.resources;
            d.subscribe |= s.declared.subscribe;
            d.completions |= s.declared.completions;
            d.logging |= s.declared.logging;
            native.withheld_uris.extend(s.withheld_uris.iter().cloned());
            if s.declared.resources {
                native.resource_servers.push(s.server.clone());
                native.unlisted_ok &= s.serves_every_resource;
            }
            for p in &s.prompts {
                let mut name = prompt_name(&s.server, &p.name);
                if prompt_names.get(&name).copied().unwrap_or(0) > 1 {
                    let identity = format!("{}\0prompt\0{}", s.server, p.name);
                    let digest = <sha1::Sha1 as sha1::Digest>::digest(identity.as_bytes());
                    name = format!("{name}_{}", hex_prefix(&digest, 8));
                }
                if native.prompt_routes.contains_key(&name) {
                    continue; // the same prompt listed twice by one server
                }
                native.prompt_routes.insert(
                    name.clone(),
                    NativeRoute {
                        server: s.server.clone(),
                        upstream: p.name.clone(),
                    },
                );
                let mut prompt = (*p).clone();
                prompt.name = name;
                native.prompts.push(prompt);
            }
            let label = labels.get(&*s.server).map_or("", String::as_str);
            let uris = s.resources.iter().map(|r| r.uri.as_str());
            for uri in uris.chain(s.tool_uris.iter().map(String::as_str)) {
                let agent = if shared(&claims, uri) {
                    let agent = namespaced(label, uri);
                    native
                        .rewritten
                        .entry(s.server.clone())
                        .or_default()
                        .insert(uri.to_owned(), agent.clone());
                    agent
                } else {
                    uri.to_owned()
                };
                native.uris.entry(agent).or_insert_with(|| NativeRoute {
                    server: s.server.clone(),
                    upstream: uri.to_owned(),
                });
            }
            for r in &s.resources {
                let mut resource = (*r).clone();
                resource.uri = native.to_agent(&s.server, &r.uri);
                native.resources.push(resource);
            }
            for t in &s.templates {
                let (agent, added) = if shared(&template_claims, &t.uri_template) {
                    let agent = namespaced(label, &t.uri_template);
                    let upstream_prefix = if t.uri_template.starts_with("ui://") {
                        "ui://"
                    } else {
                        ""
                    };
                    let prefix = namespaced(label, upstream_prefix);
                    (agent, Some((prefix, upstream_prefix.to_owned())))
                } else {
                    (t.uri_template.clone(), None)
                };
                let mut template = (*t).clone();
                template.uri_template.clone_from(&agent);
                native.templates.push(template);
                native.template_routes.push(TemplateRoute {
                    server: s.server.clone(),
                    agent,
                    upstream: t.uri_template.clone(),
                    added,
                });
            }
        }
        native
    }

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

/// Longest URI matched against a template (the matcher backtracks).
const MAX_MATCHED_URI: usize = 8 * 1024;

/// Whether `uri` could be an expansion of the RFC 6570 `template`: the literal parts appear in
/// order, a simple `{x}` stands for text without `/`, `?` or `#`, every other expression for
/// any text.
pub fn template_matches(template: &str, uri: &str) -> bool {
    if uri.len() > MAX_MATCHED_URI {
        return false;
    }
    let mut parts = Vec::new();
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        let Some(close) = rest[open..].find('}') else {
            break;
        };
        if open > 0 {
            parts.push(Part::Literal(&rest[..open]));
        }
        let body = &rest[open + 1..open + close];
        parts.push(Part::Variable {
            simple: body
                .chars()
                .next()
                .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_' || c == '%'),
        });
        rest = &rest[open + close + 1..];
    }
    if !rest.is_empty() {
        parts.push(Part::Literal(rest));
    }
    matches_parts(&parts, uri)
}

enum Part<'a> {
    Literal(&'a str),
    Variable { simple: bool },
}

fn matches_parts(parts: &[Part<'_>], uri: &str) -> bool {
    match parts.split_first() {
        None => uri.is_empty(),
        Some((Part::Literal(l), rest)) => uri
            .strip_prefix(l)
            .is_some_and(|after| matches_parts(rest, after)),
        Some((Part::Variable { simple }, rest)) => {
            for (i, c) in uri.char_indices() {
                if matches_parts(rest, &uri[i..]) {
                    return true;
                }
                if *simple && matches!(c, '/' | '?' | '#') {
                    return false;
                }
            }
            matches_parts(rest, "")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn templates_match_their_expansions_only() {
        let cases = [
            (
                "demo://resource/dynamic/text/{id}",
                "demo://resource/dynamic/text/3",
                true,
            ),
            (
                "demo://resource/dynamic/text/{id}",
                "demo://resource/dynamic/text/3/x",
                false,
            ),
            (
                "demo://resource/dynamic/text/{id}",
                "demo://resource/dynamic/blob/3",
                false,
            ),
            ("file:///{+path}", "file:///a/b/c.txt", true),
            ("db://{schema}/{table}{?limit}", "db://s/t?limit=3", true),
            ("db://{schema}/{table}{?limit}", "db://s/t", true),
            ("db://{schema}/{table}", "db://s", false),
            ("ui://widget", "ui://widget", true),
        ];
        for (template, uri, want) in cases {
            assert_eq!(template_matches(template, uri), want, "{template} ~ {uri}");
        }
    }

    fn server<'a>(name: &str, resources: &[&'a Resource]) -> ServerNative<'a> {
        ServerNative {
            server: Arc::from(name),
            resources: resources.to_vec(),
            declared: Declared {
                resources: true,
                ..Declared::default()
            },
            serves_every_resource: true,
            ..ServerNative::default()
        }
    }

    #[test]
    fn a_unique_uri_stays_and_a_shared_one_is_rewritten_for_every_claimant() {
        let a_ui = Resource::new("ui://widget/app.html", "app");
        let b_ui = Resource::new("ui://widget/app.html", "app");
        let a_file = Resource::new("file:///a.txt", "a");
        let native = Native::build(vec![
            server("a", &[&a_ui, &a_file]),
            server("b-x", &[&b_ui]),
        ]);
        let uris: Vec<&str> = native.resources().iter().map(|r| r.uri.as_str()).collect();
        assert_eq!(
            uris,
            [
                "ui://a/widget/app.html",
                "file:///a.txt",
                "ui://b-x/widget/app.html"
            ]
        );
        let route = native.resource("ui://b-x/widget/app.html").expect("routed");
        assert_eq!(
            (&*route.server, route.upstream.as_str()),
            ("b-x", "ui://widget/app.html")
        );
        assert_eq!(
            native
                .resource("file:///a.txt")
                .expect("routed")
                .server
                .as_ref(),
            "a"
        );
        assert_eq!(
            native.to_agent("a", "ui://widget/app.html"),
            "ui://a/widget/app.html"
        );
        assert_eq!(native.to_agent("a", "file:///a.txt"), "file:///a.txt");
        assert!(native.rewrites("b-x"));
        // Two servers declare resources: an unlisted URI has no owner.
        assert!(native.resource("file:///elsewhere").is_none());
    }

    #[test]
    fn shared_prompt_names_get_a_suffix_and_route_back() {
        let p = Prompt::new("greet", None::<String>, None);
        let q = Prompt::new("x_greet", None::<String>, None);
        let mut a = server("a_x", &[]);
        a.prompts = vec![&p];
        let mut b = server("a", &[]);
        b.prompts = vec![&q];
        let native = Native::build(vec![a, b]);
        let names: Vec<&str> = native.prompts().iter().map(|p| p.name.as_str()).collect();
        assert_eq!(names.len(), 2);
        assert_ne!(names[0], names[1]);
        assert!(
            names.iter().all(|n| n.starts_with("a_x_greet_")),
            "{names:?}"
        );
        assert_eq!(native.prompt(names[1]).expect("routed").upstream, "x_greet");
    }

    #[test]
    fn a_shared_template_is_rewritten_and_its_expansions_route_back() {
        let t = ResourceTemplate::new("note://{id}", "note");
        let mut a = server("a", &[]);
        a.templates = vec![&t];
        let mut b = server("b", &[]);
        b.templates = vec![&t];
        let native = Native::build(vec![a, b]);
        assert_eq!(
            native.templates()[1].uri_template,
            "mcp-companion://b/note://{id}"
        );
        let route = native
            .resource("mcp-companion://b/note://7")
            .expect("routed");
        assert_eq!((&*route.server, route.upstream.as_str()), ("b", "note://7"));
        let route = native
            .template("mcp-companion://a/note://{id}")
            .expect("routed");
        assert_eq!(
            (&*route.server, route.upstream.as_str()),
            ("a", "note://{id}")
        );
    }

    #[test]
    fn expansions_of_a_rewritten_template_are_rewritten_toward_the_agent_and_route_back() {
        let note = ResourceTemplate::new("note://{id}", "note");
        let ui = ResourceTemplate::new("ui://{view}/app.html", "view");
        let listed = Resource::new("note://listed", "listed");
        let mut a = server("a", &[&listed]);
        a.templates = vec![&note, &ui];
        let mut b = server("b", &[]);
        b.templates = vec![&note, &ui];
        let native = Native::build(vec![a, b]);
        assert!(native.rewrites("a") && native.rewrites("b"));
        // A link in a result of `b` to an expansion reads back at `b`.
        let agent = native.to_agent("b", "note://7");
        assert_eq!(agent, "mcp-companion://b/note://7");
        let route = native.resource(&agent).expect("routed");
        assert_eq!((&*route.server, route.upstream.as_str()), ("b", "note://7"));
        let agent = native.to_agent("a", "ui://clock/app.html");
        assert_eq!(agent, "ui://a/clock/app.html");
        let route = native.resource(&agent).expect("routed");
        assert_eq!(
            (&*route.server, route.upstream.as_str()),
            ("a", "ui://clock/app.html")
        );
        // A URI `a` lists unrewritten stays, though its template matches it; other URIs stay.
        assert_eq!(native.to_agent("a", "note://listed"), "note://listed");
        assert_eq!(
            native.to_agent("a", "https://example.com/x"),
            "https://example.com/x"
        );
    }

    #[test]
    fn servers_whose_names_sanitise_alike_route_their_shared_uris_apart() {
        let r = Resource::new("demo://doc", "doc");
        let native = Native::build(vec![server("x.y", &[&r]), server("x_y", &[&r])]);
        let uris: Vec<&str> = native.resources().iter().map(|r| r.uri.as_str()).collect();
        assert_ne!(uris[0], uris[1]);
        for (uri, owner) in uris.iter().zip(["x.y", "x_y"]) {
            assert_eq!(&*native.resource(uri).expect("routed").server, owner);
            assert_eq!(native.to_agent(owner, "demo://doc"), *uri);
        }
    }
}
