//! The server page's **Sign in** button: OAuth sign-in of a server in `needs sign-in`.

use mcp_companion::config::UnknownServer;
use serde::Serialize;
use tauri::State;

use crate::error::{CommandError, ErrorKind};
use crate::state::Desktop;

/// What the window shows while the browser is out.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SignInStarted {
    /// The authorization URL (shown as a link when no browser opened).
    pub url: String,
    /// Whether a browser was started on it.
    pub browser_opened: bool,
}

/// Starts the sign-in of `name`: the browser opens; the server restarts by itself once signed
/// in (the window sees it through the usual status events).
#[tauri::command]
pub async fn sign_in_server(
    state: State<'_, Desktop>,
    name: String,
) -> Result<SignInStarted, CommandError> {
    let handle = state
        .hub
        .server(&name)
        .ok_or_else(|| UnknownServer::new(&name))?;
    let started = mcp_companion::control::login::sign_in(&state.hub, handle)
        .await
        .map_err(|e| CommandError::new(ErrorKind::Connect, e))?;
    Ok(SignInStarted {
        url: started.url,
        browser_opened: started.browser_opened,
    })
}
