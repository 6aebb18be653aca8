//! The native tables: which URIs and prompt names are kept or rewritten, and where each served
//! name routes back to; template matching.

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

#[test]
fn a_shared_uri_template_or_prompt_name_names_each_claimant_and_its_served_form() {
    let hello = Resource::new("demo://hello", "hello");
    let note = ResourceTemplate::new("note://{id}", "note");
    let p = Prompt::new("greet", None::<String>, None);
    let mut a = server("x.y", &[&hello]);
    a.templates = vec![&note];
    a.prompts = vec![&p];
    let mut b = server("x_y", &[&hello]);
    b.templates = vec![&note];
    b.prompts = vec![&p];
    let mut c = server("c", &[]);
    c.prompts = vec![&p];
    let native = Native::build(vec![a, b, c]);
    let forms = |claimants: Vec<Claimant>| -> Vec<(String, String)> {
        (claimants.into_iter())
            .map(|c| (c.server.to_string(), c.served))
            .collect()
    };

    // A listed URI, as the servers wrote it: each rewritten form reads its server's copy.
    let claimants = forms(native.claimants("demo://hello"));
    assert_eq!(claimants.len(), 2, "{claimants:?}");
    for (server, served) in &claimants {
        assert_eq!(&*native.resource(served).expect("routed").server, server);
    }
    assert_eq!(
        claimants
            .iter()
            .map(|(s, _)| s.as_str())
            .collect::<Vec<_>>(),
        ["x.y", "x_y"]
    );
    // An expansion of the shared template.
    let claimants = forms(native.claimants("note://7"));
    assert_eq!(claimants.len(), 2, "{claimants:?}");
    for (server, served) in &claimants {
        let route = native.resource(served).expect("routed");
        assert_eq!(
            (&*route.server, route.upstream.as_str()),
            (server.as_str(), "note://7")
        );
    }
    // The template itself, for a completion.
    let claimants = forms(native.template_claimants("note://{id}"));
    assert_eq!(claimants.len(), 2, "{claimants:?}");
    for (server, served) in &claimants {
        assert_eq!(&*native.template(served).expect("routed").server, server);
    }
    // A prompt name two prompts would take; not one only one takes.
    let claimants = forms(native.prompt_claimants("x_y_greet"));
    assert_eq!(claimants.len(), 2, "{claimants:?}");
    for (server, served) in &claimants {
        assert_eq!(&*native.prompt(served).expect("routed").server, server);
    }
    assert!(native.prompt("c_greet").is_some());
    assert!(native.prompt_claimants("c_greet").is_empty());
    // Nothing else is anyone's.
    for other in [
        "demo://other",
        "mcp-companion://x_y/demo://hello",
        "notes://7",
    ] {
        assert!(native.claimants(other).is_empty(), "{other}");
    }
    assert!(native.template_claimants("other://{id}").is_empty());
}
