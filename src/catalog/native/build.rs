//! Building the native tables ([`Native::build`]) from each server's enabled prompts,
//! resources and templates: which URIs and templates more than one server claims (those are
//! rewritten under the server's label), prompt names and their collision suffixes, and the
//! merged declared capabilities.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use super::{Claimant, Native, NativeRoute, ServerNative, TemplateRoute, prompt_name};
use crate::catalog::naming::hex_prefix;
use crate::catalog::uri_names::{labels, namespaced};

impl Native {
    /// Builds the tables from each server's enabled capabilities, servers in config order.
    pub(in crate::catalog) fn build(servers: Vec<ServerNative<'_>>) -> Native {
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
                let base = (prompt_names.get(&name).copied().unwrap_or(0) > 1).then(|| {
                    let identity = format!("{}\0prompt\0{}", s.server, p.name);
                    let digest = <sha1::Sha1 as sha1::Digest>::digest(identity.as_bytes());
                    let base = name.clone();
                    name = format!("{name}_{}", hex_prefix(&digest, 8));
                    base
                });
                if native.prompt_routes.contains_key(&name) {
                    continue; // the same prompt listed twice by one server
                }
                if let Some(base) = base {
                    (native.shared_prompts.entry(base).or_default()).push(Claimant {
                        server: s.server.clone(),
                        served: name.clone(),
                    });
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
                    let claimants = native.shared_uris.entry(uri.to_owned()).or_default();
                    if !claimants.iter().any(|c| c.server == s.server) {
                        claimants.push(Claimant {
                            server: s.server.clone(),
                            served: agent.clone(),
                        });
                    }
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
}
