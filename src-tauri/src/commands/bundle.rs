//! The Add server → Bundle tab: open a `.mcpb` file (a path dropped on the window or given
//! by the file association, or bytes from the file picker), show its `user_config` form, and
//! install it through the core's bundle install, as `mcp-companion install FILE.mcpb` does.

use std::collections::BTreeMap;
use std::path::PathBuf;

use mcp_companion::config;
use mcp_companion::manage::bundle::install::{self, Setup};
use mcp_companion::manage::bundle::preview::{self, Preview};
use mcp_companion::manage::bundle::{BundleError, signature};
use mcp_companion::manage::registry::Values;
use mcp_companion::manage::registry::inputs::StoredSecrets;
use serde::Serialize;
use tauri::State;

use crate::error::{CommandError, ErrorKind};
use crate::state::Desktop;

impl From<BundleError> for CommandError {
    fn from(e: BundleError) -> CommandError {
        match e {
            BundleError::Input(e) => e.into(),
            BundleError::Io { .. } => CommandError::new(ErrorKind::File, e.to_string()),
            _ => CommandError::new(ErrorKind::Invalid, e.to_string()),
        }
    }
}

/// Runs blocking bundle work (reading and hashing the file, `node --version`, the keychain)
/// off the async runtime.
async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, CommandError> + Send + 'static,
) -> Result<T, CommandError> {
    tauri::async_runtime::spawn_blocking(f)
        .await
        .map_err(|e| CommandError::new(ErrorKind::System, e.to_string()))?
}

/// This machine's bundle setup, bundles unpacked under the state's root.
fn setup(root: Option<PathBuf>) -> Result<Setup<'static>, CommandError> {
    let here = Setup::here()?;
    Ok(match root {
        Some(root) => Setup { root, ..here },
        None => here,
    })
}

/// The bundle at `path`, read and checked (archive, signature, manifest, platform); nothing
/// is written. A bundle whose signature does not verify is refused here already.
#[tauri::command]
pub async fn open_bundle(state: State<'_, Desktop>, path: String) -> Result<Preview, CommandError> {
    let root = state.bundles_root.clone();
    blocking(move || {
        let setup = setup(root)?;
        Ok(preview::preview(&PathBuf::from(path), &setup)?)
    })
    .await
}

/// Keeps the bytes of a bundle picked in the window (named `name` there) in the companion's
/// data directory and returns that copy's path, for [`open_bundle`] and [`install_bundle`].
#[tauri::command]
pub async fn receive_bundle(
    state: State<'_, Desktop>,
    name: String,
    bytes: Vec<u8>,
) -> Result<String, CommandError> {
    let root = state.bundles_root.clone();
    blocking(move || {
        let setup = setup(root)?;
        Ok(preview::keep_received(&setup, &name, &bytes)?
            .display()
            .to_string())
    })
    .await
}

/// What an install did.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Installed {
    /// The server name in `mcpServers`.
    pub server: String,
    /// Where the bundle was unpacked.
    pub dir: String,
    /// [`signature::describe`] of the bundle's signature.
    pub signature: String,
    /// Things to know (a runtime not on PATH, a certificate out of its validity).
    pub warnings: Vec<String>,
    /// Variables the entry reads from the environment (no keychain).
    pub exports: Vec<String>,
}

/// Installs the bundle at `path` as server `server` with the form's `values` (empty ones
/// are left unset): unpacks it, stores its sensitive values in the keychain, writes the
/// entry with its `source`, and applies the config (the new server starts).
#[tauri::command]
pub async fn install_bundle(
    state: State<'_, Desktop>,
    path: String,
    server: String,
    values: BTreeMap<String, String>,
) -> Result<Installed, CommandError> {
    let config_path = state.config_path.clone();
    let root = state.bundles_root.clone();
    let store = state.secrets.clone();
    let installed = blocking(move || {
        let setup = setup(root)?;
        let values = Values {
            plain: values.into_iter().filter(|(_, v)| !v.is_empty()).collect(),
            ..Values::default()
        };
        let secrets = StoredSecrets::new(move |name: &str, value: &str| {
            store.set(name, value).map_err(|e| e.to_string())
        });
        let plan = install::plan(
            &PathBuf::from(path),
            Some(&server),
            &values,
            &secrets,
            &setup,
        )?;
        install::save(&config_path, &plan, false, &secrets, &setup.root)?;
        Ok(Installed {
            server: plan.planned.server.clone(),
            dir: plan.dir.display().to_string(),
            signature: signature::describe(plan.archive.signature.as_ref()),
            warnings: plan.planned.warnings.clone(),
            exports: plan.planned.built.exports.clone(),
        })
    })
    .await?;
    let cfg = config::load(&state.config_path)?;
    state.hub.reload(&cfg).await;
    Ok(installed)
}

/// The bundle the app was opened with (the file association, or a second launch handing a
/// file over), once: the window asks at start and when told `bundle-opened`.
#[tauri::command]
pub fn take_opened_bundle(state: State<'_, Desktop>) -> Option<String> {
    state.take_opened_bundle()
}
