//! `--profile NAME` on the commands that talk to the MCP socket: which socket, and what to
//! say when the companion serves no such profile.

use std::path::PathBuf;

use mcp_companion::hub::ProfileStatus;
use mcp_companion::ipc::paths::{EndpointPaths, profile_socket};

/// The socket to talk to: the main one, or `profile`'s beside it. A profile the running
/// companion does not serve is refused here, with why ([`not_served`]).
pub async fn endpoint(paths: &EndpointPaths, profile: Option<&str>) -> anyhow::Result<PathBuf> {
    let Some(name) = profile else {
        return Ok(paths.mcp.clone());
    };
    if let Ok(report) = mcp_companion::control::status(&paths.control).await
        && !report
            .profiles
            .iter()
            .any(|p| p.name == name && p.error.is_none())
    {
        anyhow::bail!(not_served(name, &report.profiles));
    }
    Ok(profile_socket(&paths.mcp, name))
}

/// Why the running companion, whose profiles are `profiles`, does not serve `name`.
pub fn not_served(name: &str, profiles: &[ProfileStatus]) -> String {
    match profiles.iter().find(|p| p.name == name) {
        Some(ProfileStatus {
            error: Some(why), ..
        }) => format!("profile \"{name}\" is not served: {why}"),
        Some(ProfileStatus {
            socket_error: Some(why),
            ..
        }) => format!("profile \"{name}\" is not served: the companion {why}"),
        Some(_) => format!(
            "profile \"{name}\" has no socket (the companion could not open it; see its log)"
        ),
        None if profiles.is_empty() => format!(
            "unknown profile \"{name}\": the companion's config has no profiles (see `profiles` in the config reference)"
        ),
        None => format!(
            "unknown profile \"{name}\": the companion's profiles are {}",
            profiles
                .iter()
                .map(|p| p.name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// Whether `config` (read from `path`) has a valid profile `name`: the reason when not.
pub fn check(
    config: &mcp_companion::config::Config,
    path: &std::path::Path,
    name: &str,
) -> Result<(), String> {
    match config.profiles.iter().find(|p| p.name == name) {
        Some(p) => p.entry.as_ref().map(|_| ()).map_err(ToString::to_string),
        None => Err(format!(
            "unknown profile \"{name}\" in {}: its profiles are {}",
            path.display(),
            if config.profiles.is_empty() {
                "none".to_owned()
            } else {
                config
                    .profiles
                    .iter()
                    .map(|p| p.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            }
        )),
    }
}
