//! The control API's `login` and `logout` (OAuth sign-in of a remote server, issue #12): the
//! running companion signs the server in and restarts it, so nothing else is restarted and the
//! CLI in another terminal only relays the URL and the outcome.
//!
//! ```text
//! → {"method":"login","server":"linear"}
//! ← {"ok":true,"result":{"url":"https://…/authorize?…","browserOpened":true}}
//! ← {"ok":true,"result":{"signedIn":true}}          (or {"ok":false,"error":"…"}), when done
//! → {"method":"logout","server":"linear"}
//! ← {"ok":true,"result":{"forgotten":true}}
//! ```

use futures::FutureExt;
use serde_json::{Value, json};
use tokio::sync::watch;

use super::control::ControlContext;
use crate::auth::{self, Target, pending};
use crate::config::TransportConfig;
use crate::net::Guard;
use crate::supervisor::{ServerHandle, ServerState, ServerStatus};

/// The server handle and sign-in target of `server`.
///
/// # Errors
/// The reason as a sentence: unknown server, invalid entry, not streamable HTTP, bad URL or
/// whitelist.
pub fn target_of(handle: &ServerHandle) -> Result<Target, String> {
    let server = handle.name().to_string();
    let cfg = handle
        .config()
        .ok_or_else(|| format!("server \"{server}\" has an invalid entry"))?
        .expand_from_env()
        .map_err(|e| e.to_string())?;
    let TransportConfig::StreamableHttp(http) = &cfg.transport else {
        return Err(format!(
            "server \"{server}\" is not a streamableHttp server; only those sign in with OAuth"
        ));
    };
    let nets = handle.whitelist().check().map_err(|e| e.to_string())?;
    let url =
        url::Url::parse(&http.url).map_err(|e| format!("server \"{server}\": invalid url: {e}"))?;
    Ok(Target {
        server,
        url,
        oauth: http.oauth.clone(),
        guard: Guard::new(nets),
    })
}

fn handle(ctx: &ControlContext, server: &str) -> Result<ServerHandle, String> {
    ctx.hub
        .server(server)
        .ok_or_else(|| format!("no server named \"{server}\""))
}

/// Starts signing `handle`'s server in (the control API, the window's **Sign in** button and
/// the tray use this): discovery and registration now, the browser, and in the background the
/// redirect, the tokens to the keychain and a restart of the server.
///
/// # Errors
/// The reason as a sentence (discovery and registration errors quote the server).
pub async fn sign_in(handle: ServerHandle) -> Result<pending::Started, String> {
    let server = handle.name().to_string();
    let target = target_of(&handle)?;
    pending::start(target, move || {
        async move {
            handle.restart().await;
        }
        .boxed()
    })
    .await
    .map_err(|e| format!("cannot sign in to \"{server}\": {e}"))
}

/// [`sign_in`] by name, for the control API: the first answer (URL, whether a browser opened)
/// and a receiver that sees the outcome.
///
/// # Errors
/// The reason as a sentence.
pub async fn start(
    ctx: &ControlContext,
    server: &str,
) -> Result<(Value, watch::Receiver<pending::Phase>), String> {
    let started = sign_in(handle(ctx, server)?).await?;
    Ok((
        json!({"url": started.url, "browserOpened": started.browser_opened}),
        started.phase,
    ))
}

/// Forgets `server`'s tokens and client registration and restarts it without them.
///
/// # Errors
/// The reason as a sentence.
pub async fn logout(ctx: &ControlContext, server: &str) -> Result<Value, String> {
    let handle = handle(ctx, server)?;
    let target = target_of(&handle)?;
    let forgotten = auth::forget(&target).await.map_err(|e| e.to_string())?;
    handle.restart().await;
    Ok(json!({ "forgotten": forgotten }))
}

/// `statuses` with the authorization URL of every sign-in still waiting for the browser put
/// into the server's `lastError`, so `status` on a headless machine shows what to open.
pub fn with_sign_in_urls(mut statuses: Vec<ServerStatus>) -> Vec<ServerStatus> {
    for s in &mut statuses {
        if s.state != ServerState::NeedsSignIn {
            continue;
        }
        if let Some(pending::Phase::Waiting { url }) = pending::phase(&s.name) {
            s.last_error = Some(format!(
                "signing in: waiting for the browser; open {url} on this machine"
            ));
        }
    }
    statuses
}
