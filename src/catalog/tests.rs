//! Proves `Catalog::build`: the allowlist gates every kind, names are unique and independent of
//! listing order, every wrapped name routes to its own upstream capability, and schemas are
//! normalised on the way.

use std::sync::Arc;
use std::time::Instant;

use rmcp::model::{Prompt, PromptArgument, Resource, ResourceTemplate, Tool};
use serde_json::{Map, Value, json};

use super::naming::{CapabilityKind, suffixed_name};
use super::*;

fn tool(name: &str) -> Tool {
    Tool::new(
        name.to_owned(),
        format!("does {name}"),
        Arc::new(Map::new()),
    )
}

fn strings(entries: &[&str]) -> Vec<String> {
    entries.iter().map(|e| (*e).to_owned()).collect()
}

/// Server "s": tools echo, add; resource notes; template files; prompt greet.
fn listing() -> ServerListing {
    ServerListing {
        tools: vec![tool("echo"), tool("add")],
        resources: vec![Resource::new("mem://notes", "notes")],
        resource_templates: vec![ResourceTemplate::new("file:///{path}", "files")],
        prompts: vec![Prompt::new(
            "greet",
            Some("say hi"),
            Some(vec![PromptArgument::new("who").with_required(true)]),
        )],
        declared: crate::catalog::Declared {
            prompts: true,
            resources: true,
            ..Default::default()
        },
        withheld_resources: false,
        withheld_uris: Vec::new(),
    }
}

#[test]
fn native_forms_follow_enabled_tools_and_the_wrap_switch() {
    let listing = listing();
    let enabled = strings(&["mcp_s_echo", "mcp_s_prompt_greet", "mcp_s_resource_notes"]);
    let input = [CatalogInput {
        server: "s",
        enabled_tools: &enabled,
        listing: &listing,
    }];
    let wrapped = Catalog::build_with(&input, true);
    let native_only = Catalog::build_with(&input, false);
    let names = |c: &Catalog| {
        c.tools()
            .iter()
            .map(|t| t.name.to_string())
            .collect::<Vec<_>>()
    };
    assert_eq!(
        names(&wrapped),
        ["mcp_s_echo", "mcp_s_resource_notes", "mcp_s_prompt_greet"]
    );
    assert_eq!(names(&native_only), ["mcp_s_echo"]);
    for c in [&wrapped, &native_only] {
        let n = c.native();
        let prompts: Vec<&str> = n.prompts().iter().map(|p| p.name.as_str()).collect();
        assert_eq!(prompts, ["s_greet"]);
        let uris: Vec<&str> = n.resources().iter().map(|r| r.uri.as_str()).collect();
        assert_eq!(uris, ["mem://notes"]);
        assert!(n.templates().is_empty(), "the template is not enabled");
        assert_eq!(
            n.prompt("s_greet").map(|r| r.upstream.as_str()),
            Some("greet")
        );
        assert!(n.declared().prompts && n.declared().resources);
    }
}

fn build_one(server: &str, enabled: &[&str], listing: &ServerListing) -> Catalog {
    let enabled = strings(enabled);
    Catalog::build(&[CatalogInput {
        server,
        enabled_tools: &enabled,
        listing,
    }])
}

fn names(catalog: &Catalog) -> Vec<String> {
    catalog.tools().iter().map(|t| t.name.to_string()).collect()
}

#[test]
fn allowlist_decides_what_is_served() {
    let listing = listing();
    let everything = [
        "mcp_s_echo",
        "mcp_s_add",
        "mcp_s_resource_notes",
        "mcp_s_resource_files",
        "mcp_s_prompt_greet",
    ];
    let cases: Vec<(Vec<&str>, Vec<&str>)> = vec![
        (vec!["*"], everything.to_vec()),
        (vec![], vec![]),
        (vec!["echo"], vec!["mcp_s_echo"]),
        (vec!["mcp_s_echo"], vec!["mcp_s_echo"]),
        (vec!["echo", "add"], vec!["mcp_s_echo", "mcp_s_add"]),
        (vec!["mcp_s_resource_notes"], vec!["mcp_s_resource_notes"]),
        (
            vec!["mcp_s_prompt_greet", "echo"],
            vec!["mcp_s_echo", "mcp_s_prompt_greet"],
        ),
    ];
    for (enabled, want) in cases {
        let catalog = build_one("s", &enabled, &listing);
        assert_eq!(names(&catalog), want, "{enabled:?}");
        assert_eq!(catalog.len(), want.len());
        assert_eq!(catalog.is_empty(), want.is_empty());
        assert_eq!(catalog.tool_count_for("s"), want.len());
        assert!(
            catalog.warnings().is_empty(),
            "{enabled:?}: {:?}",
            catalog.warnings()
        );
    }
}

#[test]
fn plain_tool_list_never_leaks_resources_or_prompts() {
    let catalog = build_one("s", &["echo", "add"], &listing());
    assert!(
        catalog
            .routes
            .iter()
            .all(|r| matches!(r.target, Target::Tool { .. }))
    );
    assert_eq!(catalog.len(), 2);
}

#[test]
fn unknown_entry_gives_exactly_one_warning_with_available_names() {
    let catalog = build_one("s", &["nope", "echo", "gone"], &listing());
    assert_eq!(names(&catalog), ["mcp_s_echo"]);
    let [warning] = catalog.warnings() else {
        panic!("want one warning, got {:?}", catalog.warnings());
    };
    assert!(warning.concerns("s"));
    assert_eq!(
        warning.to_string(),
        "enabledTools entries not found: gone, nope. Available raw names: echo, add. \
         Available wrapped names: mcp_s_echo, mcp_s_add, mcp_s_resource_notes, \
         mcp_s_resource_files, mcp_s_prompt_greet"
    );
    assert_eq!(catalog.warnings_for("s").count(), 1);
    assert_eq!(catalog.warnings_for("other").count(), 0);
}

#[test]
fn routes_point_at_upstream_capabilities() {
    let catalog = build_one("s", &["*"], &listing());
    let cases = [
        (
            "mcp_s_echo",
            Target::Tool {
                name: "echo".into(),
            },
        ),
        (
            "mcp_s_resource_notes",
            Target::Resource {
                uri: "mem://notes".into(),
            },
        ),
        (
            "mcp_s_resource_files",
            Target::ResourceTemplate {
                uri_template: "file:///{path}".into(),
            },
        ),
        (
            "mcp_s_prompt_greet",
            Target::Prompt {
                name: "greet".into(),
                arguments: vec!["who".into()],
            },
        ),
    ];
    for (wrapped, want) in cases {
        let route = catalog.route(wrapped).expect(wrapped);
        assert_eq!(&*route.server, "s");
        assert_eq!(route.target, want, "{wrapped}");
        assert_eq!(catalog.tool(wrapped).map(|t| &*t.name), Some(wrapped));
    }
    assert!(catalog.route("echo").is_none());
    assert_eq!(catalog.tool_count_for("s"), 5);
    assert_eq!(catalog.tool_count_for("nobody"), 0);
}

#[test]
fn only_read_only_or_idempotent_capabilities_are_safe_to_send_twice() {
    use rmcp::model::ToolAnnotations;
    let mut listing = listing();
    listing.tools.extend([
        tool("look").with_annotations(ToolAnnotations::new().read_only(true)),
        tool("put").with_annotations(ToolAnnotations::new().idempotent(true)),
        tool("nope").with_annotations(ToolAnnotations::new().read_only(false).idempotent(false)),
    ]);
    let catalog = build_one("s", &["*"], &listing);
    let safe = |name: &str| catalog.route(name).expect(name).retry_safe;
    // No annotations: the server promised nothing, so a second send could run it twice.
    assert!(!safe("mcp_s_echo"));
    assert!(!safe("mcp_s_nope"));
    assert!(safe("mcp_s_look"));
    assert!(safe("mcp_s_put"));
    // resources/read and prompts/get are reads.
    assert!(safe("mcp_s_resource_notes"));
    assert!(safe("mcp_s_resource_files"));
    assert!(safe("mcp_s_prompt_greet"));
    assert_eq!(catalog.routes().count(), catalog.len());
}

#[test]
fn tools_that_sanitize_alike_are_both_served_and_route_to_their_own_raw_name() {
    let forward = ServerListing {
        tools: vec![tool("a b"), tool("a.b"), tool("c")],
        ..ServerListing::default()
    };
    let backward = ServerListing {
        tools: vec![tool("c"), tool("a.b"), tool("a b")],
        ..ServerListing::default()
    };
    let one = build_one("srv", &["*"], &forward);
    let two = build_one("srv", &["*"], &backward);
    for catalog in [&one, &two] {
        assert_eq!(catalog.len(), 3);
        assert!(catalog.route("mcp_srv_a_b").is_none());
        let [CatalogWarning::NameCollision { name, members }] = catalog.warnings() else {
            panic!("want one collision warning, got {:?}", catalog.warnings());
        };
        assert_eq!(name, "mcp_srv_a_b");
        assert_eq!(members.len(), 2);
    }
    for catalog in [&one, &two] {
        let text = catalog.warnings()[0].to_string();
        assert!(
            text.starts_with("wrapped name mcp_srv_a_b is shared by srv tool "),
            "{text}"
        );
        assert!(
            text.contains("\"a b\"") && text.contains("\"a.b\""),
            "{text}"
        );
    }
    for raw in ["a b", "a.b"] {
        let wrapped = suffixed_name("srv", CapabilityKind::Tool, raw);
        for catalog in [&one, &two] {
            let route = catalog.route(&wrapped).expect("suffixed name routes");
            assert_eq!(route.target, Target::Tool { name: raw.into() });
        }
    }
    assert_eq!(
        one.route("mcp_srv_c").map(|r| &r.target),
        Some(&Target::Tool { name: "c".into() })
    );
    // The suffixed names alone cannot tell the two apart: their descriptions say which is which.
    for raw in ["a b", "a.b"] {
        let wrapped = suffixed_name("srv", CapabilityKind::Tool, raw);
        let description = one
            .tool(&wrapped)
            .and_then(|t| t.description.as_deref())
            .unwrap_or_default();
        assert!(
            description.ends_with(&format!("(This is the tool \"{raw}\" of server \"srv\".)")),
            "{description}"
        );
    }
    let plain = one.tool("mcp_srv_c").and_then(|t| t.description.as_deref());
    assert!(
        !plain.unwrap_or_default().contains("This is the"),
        "{plain:?}"
    );
}

#[test]
fn cross_server_collision_names_do_not_depend_on_input_order() {
    let ab = ServerListing {
        tools: vec![tool("c")],
        ..ServerListing::default()
    };
    let a = ServerListing {
        tools: vec![tool("b_c")],
        ..ServerListing::default()
    };
    let all = strings(&["*"]);
    let first = CatalogInput {
        server: "a_b",
        enabled_tools: &all,
        listing: &ab,
    };
    let second = CatalogInput {
        server: "a",
        enabled_tools: &all,
        listing: &a,
    };
    let one = Catalog::build(&[first, second]);
    let two = Catalog::build(&[second, first]);
    let mut n1 = names(&one);
    let mut n2 = names(&two);
    assert_eq!(n1.len(), 2);
    assert_ne!(n1[0], n1[1]);
    n1.sort();
    n2.sort();
    assert_eq!(n1, n2);
    let route = one
        .route(&suffixed_name("a_b", CapabilityKind::Tool, "c"))
        .expect("routes");
    assert_eq!(&*route.server, "a_b");
    let route = two
        .route(&suffixed_name("a", CapabilityKind::Tool, "b_c"))
        .expect("routes");
    assert_eq!(&*route.server, "a");
    assert!(one.warnings()[0].concerns("a") && one.warnings()[0].concerns("a_b"));
}

#[test]
fn collisions_only_count_enabled_capabilities() {
    let listing = ServerListing {
        tools: vec![tool("a b"), tool("a.b")],
        ..ServerListing::default()
    };
    let catalog = build_one("srv", &["a b"], &listing);
    assert_eq!(names(&catalog), ["mcp_srv_a_b"]);
    assert!(catalog.warnings().is_empty());
}

#[test]
fn blank_names_are_always_suffixed() {
    let listing = ServerListing {
        tools: vec![tool("查询天气")],
        ..ServerListing::default()
    };
    let catalog = build_one("srv", &["*"], &listing);
    let want = suffixed_name("srv", CapabilityKind::Tool, "查询天气");
    assert_eq!(names(&catalog), std::slice::from_ref(&want));
    assert_eq!(
        catalog.route(&want).map(|r| &r.target),
        Some(&Target::Tool {
            name: "查询天气".into()
        })
    );
    // The base name and the raw name still work in enabledTools.
    assert_eq!(build_one("srv", &["查询天气"], &listing).len(), 1);
    assert_eq!(build_one("srv", &["mcp_srv_"], &listing).len(), 1);
}

#[test]
fn same_named_resources_are_told_apart_by_uri_and_exact_duplicates_dropped() {
    let listing = ServerListing {
        tools: vec![tool("t"), tool("t")],
        resources: vec![
            Resource::new("file:///a", "file"),
            Resource::new("file:///b", "file"),
            Resource::new("file:///b", "file"),
        ],
        ..ServerListing::default()
    };
    let catalog = build_one("s", &["*"], &listing);
    assert_eq!(catalog.len(), 3);
    let uris: Vec<&Target> = catalog.routes.iter().map(|r| &r.target).collect();
    assert_eq!(
        uris,
        [
            &Target::Tool { name: "t".into() },
            &Target::Resource {
                uri: "file:///a".into()
            },
            &Target::Resource {
                uri: "file:///b".into()
            },
        ]
    );
    let duplicates = catalog
        .warnings()
        .iter()
        .filter(|w| matches!(w, CatalogWarning::Duplicate { .. }))
        .count();
    assert_eq!(duplicates, 2);
}

#[test]
fn input_schemas_are_normalised_and_unresolved_refs_warned() {
    let schema = json!({"type": "object", "properties": {
        "q": {"type": ["string", "null"]},
        "r": {"$ref": "#/definitions/Missing"}
    }});
    let Value::Object(schema) = schema else {
        unreachable!("literal is an object")
    };
    let listing = ServerListing {
        tools: vec![
            Tool::new("find", "find", Arc::new(schema)),
            Tool::new_with_raw("bare", None, Arc::new(Map::new())),
        ],
        ..ServerListing::default()
    };
    let catalog = build_one("s", &["*"], &listing);
    let find = catalog.tool("mcp_s_find").expect("served");
    assert_eq!(
        find.input_schema["properties"]["q"],
        json!({"type": "string", "nullable": true})
    );
    assert_eq!(find.input_schema["required"], json!([]));
    let bare = catalog.tool("mcp_s_bare").expect("served");
    assert_eq!(
        Value::Object((*bare.input_schema).clone()),
        json!({"type": "object", "properties": {}, "required": []})
    );
    let [CatalogWarning::Schema { server, tool, .. }] = catalog.warnings() else {
        panic!("want one schema warning, got {:?}", catalog.warnings());
    };
    assert_eq!((&**server, tool.as_str()), ("s", "find"));
}

#[test]
fn order_is_servers_then_kinds_in_upstream_order() {
    let l1 = listing();
    let l2 = ServerListing {
        tools: vec![tool("z"), tool("y")],
        ..ServerListing::default()
    };
    let all = strings(&["*"]);
    let catalog = Catalog::build(&[
        CatalogInput {
            server: "two",
            enabled_tools: &all,
            listing: &l2,
        },
        CatalogInput {
            server: "s",
            enabled_tools: &all,
            listing: &l1,
        },
    ]);
    assert_eq!(
        names(&catalog),
        [
            "mcp_two_z",
            "mcp_two_y",
            "mcp_s_echo",
            "mcp_s_add",
            "mcp_s_resource_notes",
            "mcp_s_resource_files",
            "mcp_s_prompt_greet"
        ]
    );
    assert_eq!(catalog.tool_count_for("two"), 2);
}

#[test]
fn two_thousand_tools_build_once_and_list_as_a_slice() {
    let listings: Vec<ServerListing> = (0..20)
        .map(|s| ServerListing {
            tools: (0..100).map(|t| tool(&format!("tool {s} {t}"))).collect(),
            ..ServerListing::default()
        })
        .collect();
    let servers: Vec<String> = (0..20).map(|s| format!("srv{s}")).collect();
    let all = strings(&["*"]);
    let inputs: Vec<CatalogInput<'_>> = servers
        .iter()
        .zip(&listings)
        .map(|(server, listing)| CatalogInput {
            server,
            enabled_tools: &all,
            listing,
        })
        .collect();
    let catalog = Catalog::build(&inputs);
    assert_eq!(catalog.len(), 2000);
    let started = Instant::now();
    for _ in 0..1000 {
        assert_eq!(catalog.tools().len(), 2000);
        assert!(catalog.route("mcp_srv7_tool_7_42").is_some());
    }
    assert!(
        started.elapsed().as_millis() < 50,
        "{:?}",
        started.elapsed()
    );
}

/// A URI the server does not list goes to it (its only resource server) only while none of
/// its resources and templates is left out, by `enabledTools` or by the pins.
#[test]
fn an_unlisted_uri_reaches_the_only_resource_server_only_when_nothing_is_withheld() {
    let all = build_one("s", &["*"], &listing());
    assert!(all.native().resource("file:///etc/x").is_some());
    assert!(all.native().resource("other://unlisted").is_some());
    let tools_only = build_one("s", &["echo"], &listing());
    assert!(tools_only.native().resource("other://unlisted").is_none());
    assert!(tools_only.native().resource("mem://notes").is_none());
    let held = ServerListing {
        withheld_resources: true,
        ..listing()
    };
    let pinned = build_one("s", &["*"], &held);
    assert!(pinned.native().resource("other://unlisted").is_none());
    assert!(
        pinned.native().resource("mem://notes").is_some(),
        "listed ones stay"
    );

    // Two servers with resources, one with something withheld: the other is not "the only
    // one", and an unlisted URI goes to neither.
    let all = strings(&["*"]);
    let plain = listing();
    let two = Catalog::build(&[
        CatalogInput {
            server: "a",
            enabled_tools: &all,
            listing: &held,
        },
        CatalogInput {
            server: "b",
            enabled_tools: &all,
            listing: &plain,
        },
    ]);
    assert!(two.native().resource("zzz://q").is_none());
    // A resource held back by the pins is not read through a served template that matches
    // its URI either.
    let held_uri = ServerListing {
        withheld_resources: true,
        withheld_uris: vec!["file:///secret.txt".into()],
        ..listing()
    };
    let via_template = build_one("s", &["*"], &held_uri);
    assert!(
        via_template
            .native()
            .resource("file:///secret.txt")
            .is_none()
    );
    assert!(
        via_template
            .native()
            .resource("file:///other.txt")
            .is_some()
    );
    // A server out of sight (the hub says so): only listed URIs are read.
    let partial = build_one("s", &["*"], &listing()).listed_uris_only();
    assert!(partial.native().resource("zzz://q").is_none());
    assert!(partial.native().resource("mem://notes").is_some());
}
