use super::*;
use serde_json::json;

fn with(over: Value) -> Result<Manifest, String> {
    let mut m = json!({"name": "n", "version": "1", "description": "d", "author": {"name": "a"},
        "server": {"type": "node", "entry_point": "i.js", "mcp_config": {"command": "node"}}});
    for (k, v) in over.as_object().unwrap() {
        m[k] = v.clone();
    }
    parse(m.to_string().as_bytes()).map_err(|e| e.to_string())
}

#[test]
fn versions_fields_and_options_are_checked_by_name() {
    assert_eq!(
        with(json!({"dxt_version": "0.1"}))
            .unwrap()
            .manifest_version,
        "0.1"
    );
    let cases = [
        (json!({}), "manifest_version is missing"),
        (
            json!({"manifest_version": 0.3}),
            "manifest_version must be a string",
        ),
        (
            json!({"manifest_version": "0.4", "author": {}}),
            "author.name is missing",
        ),
        (
            json!({"manifest_version": "0.4", "name": " "}),
            "name is empty",
        ),
        (
            json!({"manifest_version": "0.4", "compatibility": {"platforms": ["beos"]}}),
            "compatibility.platforms \"beos\" is not darwin, win32 or linux",
        ),
        (
            json!({"manifest_version": "0.4", "compatibility": {"runtimes": {"ruby": "3"}}}),
            "compatibility.runtimes \"ruby\" is not node or python",
        ),
        (
            json!({"manifest_version": "0.4", "user_config": {"a b": {"type": "string", "title": "t"}}}),
            "user_config key \"a b\" must be letters, digits, _ or -",
        ),
        (
            json!({"manifest_version": "0.4", "user_config": {"k": {"type": "color", "title": "t"}}}),
            "user_config.k.type \"color\" is not string, number, boolean, directory or file",
        ),
        (
            json!({"manifest_version": "0.4", "server": {"type": "node", "entry_point": "i.js",
                   "mcp_config": {"command": "node", "env": {"A=B": "x"}}}}),
            "server.mcp_config.env \"A=B\" is not an environment variable name",
        ),
    ];
    for (over, want) in cases {
        let got = with(over.clone()).err().unwrap_or_default();
        assert!(got.contains(want), "{over}: want {want}, got {got}");
    }
    let m = with(
        json!({"manifest_version": "0.4", "server": {"type": "uv", "entry_point": "m.py",
        "mcp_config": {"command": "uv", "args": ["run", "m.py"],
                       "platform_overrides": {"win32": {"command": "uv.exe"}}}}}),
    )
    .unwrap();
    assert_eq!(m.server_type, ServerType::Uv);
    assert_eq!(m.config_for("win32").command.as_deref(), Some("uv.exe"));
    assert_eq!(m.config_for("win32").args, m.config_for("linux").args);
}
