//! The presets: the catalogue's shape and ids, and the entries `instantiate` makes from inputs.

use super::*;

fn inputs(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect()
}

#[test]
fn catalogue_has_the_required_presets_each_with_docs_and_unique_ids() {
    let required = [
        "filesystem",
        "memory",
        "fetch",
        "time",
        "git",
        "everything",
        "sequential-thinking",
        "github",
        "brave-search",
        "playwright",
        "context7",
    ];
    for id in required {
        assert!(find(id).is_some(), "{id}");
    }
    assert!(
        catalogue()
            .iter()
            .any(|p| matches!(p.launcher, Launcher::StreamableHttp { .. }))
    );
    let mut ids: Vec<_> = catalogue().iter().map(|p| p.id).collect();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), catalogue().len());
    for p in catalogue() {
        assert!(p.docs_url.starts_with("https://"), "{}", p.id);
    }
}

#[test]
fn every_preset_instantiates_to_an_entry_the_config_accepts() {
    for p in catalogue() {
        let given = p
            .inputs
            .iter()
            .map(|i| (i.key, "/tmp/x"))
            .collect::<Vec<_>>();
        let entry = instantiate(p.id, &inputs(&given)).unwrap();
        let doc = json!({"mcpServers": {p.id: entry}});
        let cfg = crate::config::parse(&doc.to_string(), std::path::Path::new("t.json")).unwrap();
        assert!(
            cfg.servers[0].entry.is_ok(),
            "{}: {:?}",
            p.id,
            cfg.servers[0]
        );
    }
}

#[test]
fn inputs_land_in_env_headers_or_args_as_given() {
    let cases = [
        (
            "time",
            vec![],
            json!({"type": "stdio", "command": "uvx", "args": ["mcp-server-time"]}),
        ),
        (
            "github",
            vec![("token", " ghp_secret ")],
            json!({"type": "stdio", "command": "npx", "args": ["-y", "@modelcontextprotocol/server-github"],
                   "env": {"GITHUB_PERSONAL_ACCESS_TOKEN": "ghp_secret"}}),
        ),
        (
            "git",
            vec![("repository", "/src/repo")],
            json!({"type": "stdio", "command": "uvx", "args": ["mcp-server-git", "--repository", "/src/repo"]}),
        ),
        (
            "github-remote",
            vec![("token", "${GH}")],
            json!({"type": "streamableHttp", "url": "https://api.githubcopilot.com/mcp/",
                   "headers": {"Authorization": "Bearer ${GH}"}}),
        ),
        (
            "context7",
            vec![("apiKey", "  ")],
            json!({"type": "stdio", "command": "npx", "args": ["-y", "@upstash/context7-mcp"]}),
        ),
    ];
    for (id, given, want) in cases {
        assert_eq!(instantiate(id, &inputs(&given)).unwrap(), want, "{id}");
    }
}

#[test]
fn missing_required_input_and_unknown_preset_are_errors() {
    assert_eq!(
        instantiate("brave-search", &inputs(&[("apiKey", "")])),
        Err(PresetError::MissingInput {
            preset: "brave-search".into(),
            input: "apiKey".into()
        })
    );
    assert_eq!(
        instantiate("nope", &BTreeMap::new()),
        Err(PresetError::UnknownPreset { id: "nope".into() })
    );
}
