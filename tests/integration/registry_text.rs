//! What the registry CLI prints of a registry's text: control sequences escaped (names,
//! versions, cursors, input descriptions), registry URLs without their credentials, and the
//! launch line `add` shows (and asks about) when the registry's arguments add flags.

use serde_json::json;

use crate::registry::{cli, cli_asking, entry, fixture_config, out, path_with_uv};

fn raw_controls(text: &str) -> bool {
    text.chars().any(|c| c.is_control() && c != '\n')
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn registry_text_reaches_the_terminal_with_its_control_sequences_escaped() {
    let (_fx, _dir, cfg) = fixture_config().await;
    let path = path_with_uv(None);

    let o = cli(
        &cfg,
        &path,
        &["registry", "search", "hostile", "--limit", "1"],
    )
    .await;
    let text = String::from_utf8_lossy(&o.stdout).to_string();
    assert!(o.status.success(), "{}", out(&o));
    assert!(!raw_controls(&text), "{text:?}");
    assert!(
        text.contains(r"io.github.hostile/ansi\x1b[2J@1.0.0\x1b]0;pwned\x07"),
        "{text:?}"
    );
    assert!(
        text.contains(r#"--cursor io.github.hostile/ansi\x1b[2J"#),
        "{text:?}"
    );

    let o = cli(
        &cfg,
        &path,
        &["registry", "show", "io.github.hostile/ansi\u{1b}[2J"],
    )
    .await;
    let text = String::from_utf8_lossy(&o.stdout).to_string();
    assert!(o.status.success(), "{}", out(&o));
    assert!(!raw_controls(&text), "{text:?}");
    assert!(
        text.contains(r"where\x1b[8m hidden\x1b[0m \x0a--set fake=1"),
        "{text:?}"
    );
    assert!(
        !text.lines().any(|l| l.starts_with("--set fake")),
        "{text:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn registry_list_shows_no_password_or_key_of_a_registry_url() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("config.json");
    let doc = json!({"registries": [{"name": "private",
        "url": "https://alice:s3cret-pw@registry.example/v0?key=k3y-value"}], "mcpServers": {}});
    std::fs::write(&cfg, doc.to_string()).unwrap();
    let o = cli(&cfg, &path_with_uv(None), &["registry", "list"]).await;
    let text = out(&o);
    assert!(o.status.success(), "{text}");
    assert!(text.contains("https://registry.example/"), "{text}");
    for secret in ["alice", "s3cret-pw", "k3y-value"] {
        assert!(!text.contains(secret), "{secret} shown: {text}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn add_shows_the_launch_line_and_asks_before_flags_from_the_registry() {
    let (_fx, _dir, cfg) = fixture_config().await;
    let path = path_with_uv(None);
    let original = std::fs::read(&cfg).unwrap();
    let line = "\"flags\" runs npx -y --node-options --require=/tmp/x.js flags-mcp@1.0.0";

    // No terminal to ask on: refused, the launch line and the way to accept shown.
    let o = cli_asking(&cfg, &path, &["add", "io.github.hostile/flags"]).await;
    let err = String::from_utf8_lossy(&o.stderr).to_string();
    assert!(!o.status.success(), "{}", out(&o));
    assert!(err.contains(line), "{err}");
    assert!(
        err.contains("add the flags --node-options --require=/tmp/x.js") && err.contains("--yes"),
        "{err}"
    );
    assert_eq!(std::fs::read(&cfg).unwrap(), original, "nothing written");

    let o = cli_asking(&cfg, &path, &["add", "io.github.hostile/flags", "--yes"]).await;
    assert!(o.status.success(), "{}", out(&o));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains(line),
        "{}",
        out(&o)
    );
    assert_eq!(
        entry(&cfg, "flags")["args"],
        json!([
            "-y",
            "--node-options",
            "--require=/tmp/x.js",
            "flags-mcp@1.0.0"
        ])
    );
}
