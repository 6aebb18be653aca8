//! `login SERVER` and `logout SERVER`: OAuth sign-in of a remote server.
//!
//! With a companion running, it does the work (control API `login`): it opens the browser,
//! takes the redirect, stores the tokens and restarts the server; this command prints the URL
//! (for a headless machine) and waits for the outcome. Without one, the sign-in runs here and
//! the tokens go to the keychain for the next `serve`.

use std::path::Path;
use std::process::ExitCode;

use anyhow::{Context, bail};
use mcp_companion::auth::{self, Target, browser, flow};
use mcp_companion::config::{self, TransportConfig};
use mcp_companion::control::{ControlClient, ControlError, ControlRequest, ControlResponse};
use mcp_companion::net::Guard;

use super::out::outln;

/// `login SERVER`.
pub async fn login(
    config_path: Option<&Path>,
    socket: Option<&Path>,
    server: &str,
) -> anyhow::Result<ExitCode> {
    let paths = mcp_companion::ipc::record::locate(socket).await;
    let mut client = match ControlClient::connect(&paths.control).await {
        Ok(c) => c,
        Err(ControlError::NotRunning { .. }) => return login_here(config_path, server).await,
        Err(e) => return Err(e.into()),
    };
    client
        .send(&ControlRequest::Login {
            server: server.to_owned(),
        })
        .await?;
    let Some(ControlResponse::SignIn(first)) = client.next().await? else {
        bail!("the companion did not start the sign-in");
    };
    if first.browser_opened {
        eprintln!("Opened the browser to sign in to \"{server}\". If it did not open, visit:");
    } else {
        eprintln!("Open this URL in a browser on this machine to sign in to \"{server}\":");
    }
    eprintln!("  {}", first.url);
    eprintln!("Waiting for the sign-in to finish…");
    let Some(ControlResponse::SignedIn(_)) = client.next().await? else {
        bail!("the companion closed the connection before the sign-in finished");
    };
    outln!("Signed in to \"{server}\"; it is restarting with the new token.");
    Ok(ExitCode::SUCCESS)
}

/// The sign-in without a running companion: tokens go to the keychain for the next start.
async fn login_here(config_path: Option<&Path>, server: &str) -> anyhow::Result<ExitCode> {
    let target = target_from_config(config_path, server)?;
    let pending = flow::begin(&target, auth::vault::vault(), None, None).await?;
    match browser::open(pending.url()) {
        Ok(()) => {
            eprintln!("Opened the browser to sign in to \"{server}\". If it did not open, visit:")
        }
        Err(_) => {
            eprintln!("Open this URL in a browser on this machine to sign in to \"{server}\":")
        }
    }
    eprintln!("  {}", pending.url());
    pending.finish(flow::SIGN_IN_TIMEOUT).await?;
    outln!("Signed in to \"{server}\"; the token is in the keychain for the next start.");
    Ok(ExitCode::SUCCESS)
}

/// `logout SERVER`.
pub async fn logout(
    config_path: Option<&Path>,
    socket: Option<&Path>,
    server: &str,
) -> anyhow::Result<ExitCode> {
    let paths = mcp_companion::ipc::record::locate(socket).await;
    let req = ControlRequest::Logout {
        server: server.to_owned(),
    };
    let forgotten = match mcp_companion::control::request(&paths.control, &req).await {
        Ok(ControlResponse::LoggedOut(answer)) => answer.forgotten,
        Ok(_) => bail!("unexpected answer to logout"),
        Err(ControlError::NotRunning { .. }) => {
            auth::forget(&target_from_config(config_path, server)?).await?
        }
        Err(e) => return Err(e.into()),
    };
    if forgotten {
        outln!("Signed out of \"{server}\": its tokens are gone from the keychain.");
    } else {
        outln!("\"{server}\" had no stored sign-in.");
    }
    Ok(ExitCode::SUCCESS)
}

fn target_from_config(config_path: Option<&Path>, server: &str) -> anyhow::Result<Target> {
    let path = config::resolve_config_path(config_path)?;
    let cfg =
        config::load(&path).with_context(|| format!("cannot load config {}", path.display()))?;
    let Some(spec) = cfg.servers.iter().find(|s| s.name == server) else {
        bail!(
            "{} in {}",
            config::UnknownServer::new(server),
            path.display()
        );
    };
    let entry = spec.entry.as_ref().map_err(|e| anyhow::anyhow!("{e}"))?;
    let entry = entry.expand_from_env()?;
    let TransportConfig::StreamableHttp(http) = &entry.transport else {
        bail!("server \"{server}\" is not a streamableHttp server; only those sign in with OAuth");
    };
    let nets = cfg.ssrf_whitelist.check()?;
    Ok(Target {
        server: server.to_owned(),
        url: url::Url::parse(&http.url).context("invalid server url")?,
        oauth: http.oauth.clone(),
        guard: Guard::new(nets),
    })
}
