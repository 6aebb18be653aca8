//! Declares the app's commands so the capability file can grant them to the window one by one
//! (`allow-list-servers`, …); a command not listed in `capabilities/` cannot be invoked.

const COMMANDS: &[&str] = &[
    "list_servers",
    "list_agents",
    "set_agent_profile",
    "config_warnings",
    "start_server",
    "stop_server",
    "restart_server",
    "start_all",
    "stop_all",
    "remove_server",
    "get_server",
    "read_log",
    "call_tool",
    "set_tool_policy",
    "sign_in_server",
    "list_elicitations",
    "answer_elicitation",
    "list_approvals",
    "answer_approval",
    "list_presets",
    "instantiate_preset",
    "test_server",
    "save_server",
    "scan_imports",
    "preview_import",
    "apply_import",
    "preview_import_secrets",
    "get_connect_info",
    "get_settings",
    "save_whitelist",
    "set_log_level",
    "set_autostart",
    "list_registries",
    "search_registry",
    "registry_details",
    "plan_install",
    "check_updates",
    "update_server",
    "list_clients",
    "connect_client",
    "disconnect_client",
    "open_bundle",
    "receive_bundle",
    "install_bundle",
    "take_opened_bundle",
    "list_changes",
    "approve_changes",
];

fn main() {
    let attributes = tauri_build::Attributes::new()
        .app_manifest(tauri_build::AppManifest::new().commands(COMMANDS));
    if let Err(e) = tauri_build::try_build(attributes) {
        panic!("tauri-build failed: {e:#}");
    }
}
