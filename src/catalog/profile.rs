//! A profile's catalog: the subset of servers and capabilities a profile
//! ([`ProfileConfig`]) lets through, built like the default catalog, named the profile's
//! way, and listed its way (`toolSearch`, [`super::search`]).
//!
//! The profile is applied before names are settled, so a profile's tools are unique among
//! themselves (a collision suffix appears only when two of *its* capabilities collide). Globs
//! are matched against a capability's raw name and its default wrapped name
//! ([`super::naming::base_name`], `mcp_<server>_<tool>`), never against the profile's own
//! naming, so changing `naming` never changes what is served; resources also match by URI and
//! templates by URI template; a profile that has `resources` reads only the URIs it lists and
//! its templates' expansions (without it, an unlisted URI goes to the only server with
//! resources, as in the default view). Per server, `enabledTools` applies first: a profile can narrow a
//! server, never widen it.
//!
//! Naming ([`ProfileNaming`]) shortens tool names: `server` drops the `mcp_` prefix, `raw`
//! drops `mcp_<server>_`. Dropping a prefix every name of the catalog shares keeps names
//! unique, which is why `raw` is refused at load for more than one server. Under `raw`, prompts
//! are served under the server's own names too (the profile serves one server, so they cannot
//! collide); otherwise prompts keep `<server>_<name>`. Resources and templates keep their URIs.

use crate::config::{ProfileConfig, ProfileNaming, any_match};

use super::naming::{CapabilityKind, base_name, limit_length, sanitize};
use super::{Catalog, CatalogInput, ServerListing, Target};

impl Catalog {
    /// The catalog `profile` serves: `inputs` narrowed to its servers and globs, then named its
    /// way. `wrap_resources` as in [`Catalog::build_with`].
    pub fn build_profile(
        inputs: &[CatalogInput<'_>],
        wrap_resources: bool,
        profile: &ProfileConfig,
    ) -> Catalog {
        let listings: Vec<(usize, ServerListing)> = inputs
            .iter()
            .enumerate()
            .filter(|(_, input)| profile.has_server(input.server))
            .map(|(i, input)| (i, narrow(input.server, input.listing, profile)))
            .collect();
        let narrowed: Vec<CatalogInput<'_>> = listings
            .iter()
            .map(|(i, listing)| CatalogInput {
                listing,
                ..inputs[*i]
            })
            .collect();
        let mut catalog = Catalog::build_with(&narrowed, wrap_resources);
        if profile.resources.is_some() {
            catalog.native.listed_resources_only();
        }
        if profile.naming != ProfileNaming::Wrapped {
            catalog.rename(profile.naming);
        }
        if profile.naming == ProfileNaming::Raw {
            catalog.native.raw_prompt_names();
        }
        catalog.with_tool_search(&profile.tool_search)
    }

    /// Renames every tool by dropping the prefix `naming` drops (see the module docs).
    fn rename(&mut self, naming: ProfileNaming) {
        let mut index = std::collections::HashMap::with_capacity(self.index.len());
        for (i, (tool, route)) in self.tools.iter_mut().zip(&self.routes).enumerate() {
            let name = match &route.target {
                // A tool under its plain wrapped name: shortened from the uncut wrapped form,
                // so the 64-character limit applies to the profile's shorter name (a tool
                // name that fits is served whole).
                Target::Tool { name: raw }
                    if *tool.name == *base_name(&route.server, CapabilityKind::Tool, raw) =>
                {
                    let uncut = sanitize(&format!("mcp_{}_{raw}", route.server));
                    limit_length(shortened(&uncut, &route.server, naming))
                }
                _ => shortened(&tool.name, &route.server, naming),
            };
            let name = if index.contains_key(&name) {
                shortened(&tool.name, &route.server, naming)
            } else {
                name
            };
            tool.name = name.clone().into();
            index.insert(name, i);
        }
        self.index = index;
    }
}

/// The globs of `profile` that match nothing the profile's servers in `inputs` list, each as
/// `tools "x*"` (key and glob as written), in the profile's order. Meaningful once every
/// server of the profile is in `inputs`.
pub fn unmatched_globs(inputs: &[CatalogInput<'_>], profile: &ProfileConfig) -> Vec<String> {
    let servers: Vec<&CatalogInput<'_>> = inputs
        .iter()
        .filter(|i| profile.has_server(i.server))
        .collect();
    let mut out = Vec::new();
    let mut check = |key: &str,
                     globs: Option<&[crate::config::ProfileGlob]>,
                     names: &dyn Fn(&CatalogInput<'_>) -> Vec<String>| {
        let Some(globs) = globs else { return };
        let all: Vec<String> = servers.iter().flat_map(|i| names(i)).collect();
        for g in globs {
            if !all.iter().any(|n| g.matches(n)) {
                out.push(format!("{key} \"{}\"", g.text));
            }
        }
    };
    check("tools", profile.tools.as_deref(), &|i| {
        i.listing
            .tools
            .iter()
            .flat_map(|t| {
                [
                    t.name.to_string(),
                    base_name(i.server, CapabilityKind::Tool, &t.name),
                ]
            })
            .collect()
    });
    check("prompts", profile.prompts.as_deref(), &|i| {
        i.listing
            .prompts
            .iter()
            .flat_map(|p| {
                [
                    p.name.clone(),
                    base_name(i.server, CapabilityKind::Prompt, &p.name),
                ]
            })
            .collect()
    });
    check("resources", profile.resources.as_deref(), &|i| {
        let resources = i.listing.resources.iter().flat_map(|r| {
            [
                r.name.clone(),
                r.uri.clone(),
                base_name(i.server, CapabilityKind::Resource, &r.name),
            ]
        });
        let templates = i.listing.resource_templates.iter().flat_map(|t| {
            [
                t.name.clone(),
                t.uri_template.clone(),
                base_name(i.server, CapabilityKind::ResourceTemplate, &t.name),
            ]
        });
        resources.chain(templates).collect()
    });
    out
}

/// `name` without the prefix `naming` drops; unchanged when it does not start with it (a
/// server name so long that the 64-char limit cut into it).
fn shortened(name: &str, server: &str, naming: ProfileNaming) -> String {
    let prefix = match naming {
        ProfileNaming::Wrapped => return name.to_owned(),
        ProfileNaming::Server => "mcp_".to_owned(),
        ProfileNaming::Raw => sanitize(&format!("mcp_{server}_")),
    };
    match name.strip_prefix(&prefix) {
        Some(rest) if !rest.is_empty() => rest.to_owned(),
        _ => name.to_owned(),
    }
}

/// `listing` with only what the profile's globs let through.
fn narrow(server: &str, listing: &ServerListing, profile: &ProfileConfig) -> ServerListing {
    let wrapped = |kind, raw: &str| base_name(server, kind, raw);
    ServerListing {
        tools: listing
            .tools
            .iter()
            .filter(|t| {
                let w = wrapped(CapabilityKind::Tool, &t.name);
                any_match(profile.tools.as_deref(), &[&t.name, &w])
            })
            .cloned()
            .collect(),
        resources: listing
            .resources
            .iter()
            .filter(|r| {
                let w = wrapped(CapabilityKind::Resource, &r.name);
                any_match(profile.resources.as_deref(), &[&r.name, &r.uri, &w])
            })
            .cloned()
            .collect(),
        resource_templates: listing
            .resource_templates
            .iter()
            .filter(|t| {
                let w = wrapped(CapabilityKind::ResourceTemplate, &t.name);
                any_match(
                    profile.resources.as_deref(),
                    &[&t.name, &t.uri_template, &w],
                )
            })
            .cloned()
            .collect(),
        prompts: listing
            .prompts
            .iter()
            .filter(|p| {
                let w = wrapped(CapabilityKind::Prompt, &p.name);
                any_match(profile.prompts.as_deref(), &[&p.name, &w])
            })
            .cloned()
            .collect(),
        declared: listing.declared,
        withheld_resources: listing.withheld_resources,
        withheld_uris: listing.withheld_uris.clone(),
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use rmcp::model::{Prompt, Tool};

    use super::super::{Catalog, CatalogInput, ServerListing};
    use crate::config::ProfileConfig;

    fn profile(json: &str) -> ProfileConfig {
        let text = format!(
            r#"{{"mcpServers": {{"a": {{"command": "x"}}, "b": {{"command": "y"}}}}, "profiles": {{"p": {json}}}}}"#
        );
        let config = crate::config::parse(&text, Path::new("c.json")).expect("parses");
        config.profiles[0].entry.clone().expect("valid profile")
    }

    fn listing(tools: &[&str]) -> ServerListing {
        let schema = serde_json::json!({"type": "object"});
        let schema = schema.as_object().cloned().unwrap_or_default();
        ServerListing {
            tools: tools
                .iter()
                .map(|t| Tool::new(t.to_string(), "d", schema.clone()))
                .collect(),
            prompts: vec![Prompt::new("greet", Some("g"), None)],
            ..ServerListing::default()
        }
    }

    fn names(catalog: &Catalog) -> Vec<String> {
        catalog.tools().iter().map(|t| t.name.to_string()).collect()
    }

    fn build(json: &str) -> Catalog {
        let (a, b) = (listing(&["echo", "add"]), listing(&["echo", "sleep"]));
        let all = vec!["*".to_owned()];
        let inputs = [
            CatalogInput {
                server: "a",
                enabled_tools: &all,
                listing: &a,
            },
            CatalogInput {
                server: "b",
                enabled_tools: &all,
                listing: &b,
            },
        ];
        Catalog::build_profile(&inputs, false, &profile(json))
    }

    #[test]
    fn globs_match_raw_or_wrapped_names_across_the_profiles_servers() {
        let c = build(r#"{"tools": ["ech?", "mcp_b_sleep"], "prompts": []}"#);
        assert_eq!(names(&c), ["mcp_a_echo", "mcp_b_echo", "mcp_b_sleep"]);
        assert!(c.route("mcp_a_add").is_none());
        assert!(c.native().prompts().is_empty());
    }

    #[test]
    fn servers_narrow_and_raw_naming_drops_the_prefix() {
        let c = build(r#"{"servers": ["b"], "naming": "raw"}"#);
        assert_eq!(names(&c), ["echo", "sleep"]);
        let route = c.route("sleep").expect("routed by its profile name");
        assert_eq!(&*route.server, "b");
        assert!(c.route("mcp_b_sleep").is_none());
        assert_eq!(c.native().prompts().len(), 1);
        // Prompts too go under the server's own names, routed to that server.
        assert_eq!(c.native().prompts()[0].name, "greet");
        let prompt = c.native().prompt("greet").expect("routed by its own name");
        assert_eq!((&*prompt.server, prompt.upstream.as_str()), ("b", "greet"));
        assert!(c.native().prompt("b_greet").is_none());
    }

    #[test]
    fn server_naming_keeps_the_prompts_server_prefix() {
        let c = build(r#"{"servers": ["b"], "naming": "server"}"#);
        assert_eq!(c.native().prompts()[0].name, "b_greet");
        assert!(c.native().prompt("b_greet").is_some());
    }

    #[test]
    fn a_tool_name_that_fits_is_served_whole_under_raw_naming() {
        let long = "x".repeat(60);
        let server = listing(&[&long, "echo"]);
        let all = vec!["*".to_owned()];
        let inputs = [CatalogInput {
            server: "b",
            enabled_tools: &all,
            listing: &server,
        }];
        let c = Catalog::build_profile(
            &inputs,
            false,
            &profile(r#"{"servers": ["b"], "naming": "raw"}"#),
        );
        assert_eq!(names(&c), [long.as_str(), "echo"]);
        assert!(c.route(&long).is_some());
        let c = Catalog::build_profile(
            &inputs,
            false,
            &profile(r#"{"servers": ["b"], "naming": "server"}"#),
        );
        assert_eq!(names(&c), [format!("b_{long}").as_str(), "b_echo"]);
    }

    #[test]
    fn globs_that_match_nothing_are_named() {
        let (a, b) = (listing(&["echo", "add"]), listing(&["echo", "sleep"]));
        let all = vec!["*".to_owned()];
        let inputs = [
            CatalogInput {
                server: "a",
                enabled_tools: &all,
                listing: &a,
            },
            CatalogInput {
                server: "b",
                enabled_tools: &all,
                listing: &b,
            },
        ];
        let p = profile(
            r#"{"servers": ["a"], "tools": ["ech*", "sleep", "mcp_a_add"], "prompts": ["nope"]}"#,
        );
        assert_eq!(
            super::unmatched_globs(&inputs, &p),
            ["tools \"sleep\"", "prompts \"nope\""]
        );
    }

    #[test]
    fn server_naming_drops_only_mcp() {
        let c = build(r#"{"tools": ["echo"], "naming": "server"}"#);
        assert_eq!(names(&c), ["a_echo", "b_echo"]);
    }
}
