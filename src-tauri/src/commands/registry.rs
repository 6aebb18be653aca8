//! The Add server → Registry tab (search, details, install plan; "Test" and "Save" reuse
//! `add.rs`) and the Connect page's per-client toggles.

use std::collections::BTreeMap;

use mcp_companion::config;
use mcp_companion::manage::connect::{self, Client, ClientStatus, Os, Outcome, Roots};
use mcp_companion::manage::registry::{
    self, Choice, Field, InstallOption, NoKeychainSink, RegistryClient, RegistryError, RegistryRef,
    Values, install, keychain,
    model::ServerList,
    model::ServerResponse,
    sources,
    update::{self, UpdatePlan},
};
use mcp_companion::manage::{edit, import};
use serde::Serialize;
use tauri::State;

use crate::error::{CommandError, ErrorKind};
use crate::state::Desktop;

impl From<RegistryError> for CommandError {
    fn from(e: RegistryError) -> CommandError {
        let (kind, field) = match &e {
            RegistryError::MissingInput { key, .. } | RegistryError::BadInput { key, .. } => {
                (ErrorKind::Invalid, Some(key.clone()))
            }
            RegistryError::Http { .. }
            | RegistryError::Status { .. }
            | RegistryError::Timeout { .. }
            | RegistryError::Ssrf { .. } => (ErrorKind::Connect, None),
            _ => (ErrorKind::Invalid, None),
        };
        CommandError {
            kind,
            message: e.to_string(),
            field,
        }
    }
}

impl From<connect::ConnectError> for CommandError {
    fn from(e: connect::ConnectError) -> CommandError {
        CommandError::new(ErrorKind::File, e.to_string())
    }
}

fn loaded(state: &Desktop) -> Result<config::Config, CommandError> {
    Ok(config::load(&state.config_path)?)
}

fn client(
    cfg: &config::Config,
    registry: Option<&str>,
) -> Result<(String, RegistryClient), CommandError> {
    let list = sources::registries(&cfg.raw)?;
    let chosen = sources::pick(&list, registry)?;
    Ok((
        chosen.url.clone(),
        chosen.client(&cfg.ssrf_whitelist, &keychain::token_lookup)?,
    ))
}

/// The configured registries (the default first).
#[tauri::command]
pub fn list_registries(state: State<'_, Desktop>) -> Result<Vec<RegistryRef>, CommandError> {
    Ok(sources::registries(&loaded(&state)?.raw)?)
}

/// One page of `GET /v0.1/servers?search=…`.
#[tauri::command]
pub async fn search_registry(
    state: State<'_, Desktop>,
    registry: Option<String>,
    term: String,
    cursor: Option<String>,
) -> Result<ServerList, CommandError> {
    let cfg = loaded(&state)?;
    let (_, c) = client(&cfg, registry.as_deref())?;
    Ok(c.list(Some(&term), cursor.as_deref(), Some(20)).await?)
}

/// What the details pane shows.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Details {
    /// The version shown.
    pub found: ServerResponse,
    /// Every version, newest first.
    pub versions: Vec<String>,
    /// Packages and remotes, each supported or not.
    pub options: Vec<InstallOption>,
    /// The form of the default option.
    pub fields: Vec<Field>,
    /// The default option.
    pub choice: Option<Choice>,
    /// The suggested server name.
    pub server: String,
}

/// Details of `name` at `version` (default latest).
#[tauri::command]
pub async fn registry_details(
    state: State<'_, Desktop>,
    registry: Option<String>,
    name: String,
    version: Option<String>,
) -> Result<Details, CommandError> {
    let cfg = loaded(&state)?;
    let (_, c) = client(&cfg, registry.as_deref())?;
    let found = c
        .version(&name, version.as_deref().unwrap_or("latest"))
        .await?;
    let versions = c
        .versions(&name)
        .await
        .map(|l| l.servers.into_iter().map(|s| s.server.version).collect())
        .unwrap_or_default();
    let d = &found.server;
    let choice = registry::default_choice(d).ok();
    let fields = match choice {
        Some(ch) => {
            registry::build(d, ch, "server", &Values::default(), &NoKeychainSink, true)?.fields
        }
        None => Vec::new(),
    };
    Ok(Details {
        options: registry::options(d),
        server: install::default_server_name(&d.name),
        versions,
        fields,
        choice,
        found,
    })
}

/// The entry (with `source`) installing `name`@`version` as `server` with `values`; the window
/// then tests and saves it with `test_server` / `save_server`.
///
/// The test needs the secret inputs, so they are stored in the keychain here, but only after
/// every check: the name must be free (the window's save never replaces) and the entry must
/// map and validate. A refused plan leaves the keychain as it was.
#[tauri::command]
pub async fn plan_install(
    state: State<'_, Desktop>,
    registry: Option<String>,
    name: String,
    version: String,
    choice: Option<Choice>,
    server: String,
    values: BTreeMap<String, String>,
) -> Result<install::Planned, CommandError> {
    let cfg = loaded(&state)?;
    let (url, c) = client(&cfg, registry.as_deref())?;
    let found = c.version(&name, &version).await?;
    let choice = match choice {
        Some(ch) => ch,
        None => registry::default_choice(&found.server)?,
    };
    let values = Values {
        plain: values.into_iter().filter(|(_, v)| !v.is_empty()).collect(),
        ..Values::default()
    };
    install::check_name_free(&state.config_path, &server)?;
    let (secrets, _) = keychain::machine_secrets();
    let planned = install::plan(
        &url,
        &found.server,
        choice,
        &server,
        &values,
        secrets.as_ref(),
        &cfg.ssrf_whitelist,
        &install::on_path,
    )
    .await?;
    install::store_secrets(&planned, secrets.as_ref())?;
    Ok(planned)
}

/// Every server installed from a registry, compared with its registry's latest version.
#[tauri::command]
pub async fn check_updates(
    state: State<'_, Desktop>,
) -> Result<Vec<install::Outdated>, CommandError> {
    let cfg = loaded(&state)?;
    Ok(install::outdated(&cfg, &keychain::token_lookup).await)
}

/// Updates server `name` to its registry's latest version (same inputs, hand-made keys kept)
/// and applies it; `false` when it was already up to date.
///
/// A new version on another origin is refused (kind `moved`, the message says from where to
/// where) unless `accept_new_origin`: the window asks the person first.
#[tauri::command]
pub async fn update_server(
    state: State<'_, Desktop>,
    name: String,
    accept_new_origin: Option<bool>,
) -> Result<bool, CommandError> {
    let cfg = loaded(&state)?;
    let (secrets, _) = keychain::machine_secrets();
    let plan = update::plan_update(
        &cfg,
        &name,
        Values::default(),
        secrets.as_ref(),
        &keychain::token_lookup,
    )
    .await?;
    match plan {
        UpdatePlan::UpToDate(_) => Ok(false),
        UpdatePlan::Planned(planned, moves) => {
            if let Some(m) = moves.iter().find(|m| m.needs_consent())
                && accept_new_origin != Some(true)
            {
                return Err(CommandError::new(
                    ErrorKind::Moved,
                    format!(
                        "the new version of \"{name}\" moves ({m}); its inputs and secrets would go there"
                    ),
                ));
            }
            install::store_secrets(&planned, secrets.as_ref())?;
            super::edit_and_reload(&state, |doc| {
                edit::set_server(doc, &planned.server, planned.entry.clone(), true)
            })
            .await?;
            Ok(true)
        }
    }
}

/// Every client: path, installed?, connected?
#[tauri::command]
pub fn list_clients() -> Result<Vec<ClientStatus>, CommandError> {
    let roots = Roots::current()
        .ok_or_else(|| CommandError::new(ErrorKind::System, "no home directory"))?;
    Ok(connect::statuses(&roots))
}

fn pick(id: &str) -> Result<(Client, std::path::PathBuf), CommandError> {
    let client = Client::from_id(id)
        .ok_or_else(|| CommandError::new(ErrorKind::Invalid, format!("unknown client \"{id}\"")))?;
    let roots = Roots::current()
        .ok_or_else(|| CommandError::new(ErrorKind::System, "no home directory"))?;
    let path = client.path(Os::current(), &roots);
    Ok((client, path))
}

/// Connects client `id` (our `bridge` entry in its file); with `import`, first imports its
/// own servers into our config. Returns how many servers were imported.
#[tauri::command]
pub async fn connect_client(
    state: State<'_, Desktop>,
    id: String,
    import: bool,
) -> Result<usize, CommandError> {
    let (client, path) = pick(&id)?;
    let mut added = 0;
    if import && path.exists() {
        let kind = import::ClientKind::of(client);
        if let Some(kind) = kind {
            let source = import::Source::read(&path, Some(kind))
                .map_err(|e| CommandError::new(ErrorKind::Import, e.to_string()))?;
            super::edit_and_reload(&state, |doc| {
                let plan = import::plan(doc, std::slice::from_ref(&source));
                added = plan.added();
                import::apply(doc, &plan);
                Ok::<(), edit::EditError>(())
            })
            .await?;
        }
    }
    let program = stable_program(crate::bridge_program::bridge_program());
    connect::stable::ensure(&program)
        .map_err(|e| CommandError::new(ErrorKind::File, e.to_string()))?;
    let exe = program.path().display().to_string();
    connect::connect(client, &path, &exe)?;
    Ok(added)
}

/// The CLI beside the app, when it runs from a build or temporary directory, is named by its
/// stable copy, as `connect` does (`mcp_companion::manage::connect::stable`); the app's own
/// binary and an AppImage are named as they are.
fn stable_program(exe: std::path::PathBuf) -> connect::stable::Program {
    let cli = exe
        .file_name()
        .is_some_and(|n| n == std::ffi::OsStr::new(&connect::stable::file_name()));
    if !cli {
        return connect::stable::Program::AsIs {
            path: exe,
            fragile: None,
        };
    }
    let copy = connect::stable::current_copy_path();
    connect::stable::choose(&exe, &connect::location::temp_dirs(), copy.as_deref())
}

/// Removes our entry from client `id`'s file.
#[tauri::command]
pub fn disconnect_client(id: String) -> Result<bool, CommandError> {
    let (client, path) = pick(&id)?;
    Ok(connect::disconnect(client, &path)? == Outcome::Changed)
}
