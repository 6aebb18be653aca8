//! The control API's `login` and `logout` (OAuth sign-in of a remote server): the
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
use tokio::sync::watch;

use super::{
    ControlContext, ControlResponse, ErrorKind, LoggedOut, Refusal, SignInStarted, SignedIn,
};
use crate::auth::{self, Target, pending};
use crate::config::TransportConfig;
use crate::hub::Hub;
use crate::net::Guard;
use crate::supervisor::ServerHandle;

/// The sign-in target of `handle`'s server.
///
/// # Errors
/// The reason as a sentence: invalid entry, not streamable HTTP, bad URL or whitelist.
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

fn handle(ctx: &ControlContext, server: &str) -> Result<ServerHandle, Refusal> {
    ctx.hub
        .server(server)
        .ok_or_else(|| crate::config::UnknownServer::new(server).into())
}

/// Starts signing `handle`'s server in (the control API, the window's **Sign in** button and
/// the tray use this): discovery and registration now, the browser, and in the background the
/// redirect, the tokens to the keychain and a restart of the server. The sign-in is entered in
/// `hub`'s [`Hub::sign_ins`], where `status` and the window read it.
///
/// # Errors
/// The reason as a sentence (discovery and registration errors quote the server).
pub async fn sign_in(hub: &Hub, handle: ServerHandle) -> Result<pending::Started, String> {
    let server = handle.name().to_string();
    let target = target_of(&handle)?;
    let challenge = handle.snapshot().sign_in_challenge;
    hub.sign_ins()
        .start(target, challenge.as_deref(), move || {
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
/// [`Refusal`]: unknown server, or [`ErrorKind::SignIn`] with the reason.
pub async fn start(
    ctx: &ControlContext,
    server: &str,
) -> Result<(ControlResponse, watch::Receiver<pending::Phase>), Refusal> {
    let started = sign_in(&ctx.hub, handle(ctx, server)?)
        .await
        .map_err(|e| Refusal::new(ErrorKind::SignIn, e))?;
    Ok((
        ControlResponse::SignIn(SignInStarted {
            url: started.url,
            browser_opened: started.browser_opened,
        }),
        started.phase,
    ))
}

/// The second `login` answer, once `phase` settles.
///
/// # Errors
/// [`ErrorKind::SignIn`] with why the sign-in failed.
pub async fn outcome(
    server: &str,
    phase: watch::Receiver<pending::Phase>,
) -> Result<ControlResponse, Refusal> {
    pending::outcome(phase)
        .await
        .map(|()| ControlResponse::SignedIn(SignedIn { signed_in: true }))
        .map_err(|e| {
            Refusal::new(
                ErrorKind::SignIn,
                format!("sign-in to \"{server}\" failed: {e}"),
            )
        })
}

/// Forgets `server`'s tokens and client registration and restarts it without them.
///
/// # Errors
/// [`Refusal`]: unknown server, or [`ErrorKind::SignIn`] with the reason.
pub async fn logout(ctx: &ControlContext, server: &str) -> Result<ControlResponse, Refusal> {
    let handle = handle(ctx, server)?;
    let target = target_of(&handle).map_err(|e| Refusal::new(ErrorKind::SignIn, e))?;
    let forgotten = auth::forget(&target)
        .await
        .map_err(|e| Refusal::new(ErrorKind::SignIn, e.to_string()))?;
    handle.restart().await;
    Ok(ControlResponse::LoggedOut(LoggedOut { forgotten }))
}
