//! MCP Companion desktop shell (DESIGN §11): hosts the core hub in process, serves the same
//! local endpoint as `mcp-companion serve`, and adds a tray indicator and a server manager
//! window. Commands are thin calls into the core; no business logic lives here.
//!
//! | module | owns |
//! |---|---|
//! | `commands` | the Tauri commands the window calls |
//! | `tray` | the tray icon, its menu and actions |
//! | `events` | hub events → window channels and tray redraws |
//! | `approve` | calls waiting for the person's approval, shown in the window with a notification |
//! | `elicit` | elicitations put to the person in the window, and the one owner of open ones |
//! | `open_file` | opening the app on a `.mcpb` file (argv, a second launch) |
//! | `notification` | desktop notifications (freedesktop, on Linux) for a server that asks |
//! | `state` | the managed [`state::Desktop`] state and its accessor |
//! | `error` | [`error::CommandError`], the one error crossing the boundary |
//! | `logging` | stderr logging with a run-time log level |
//! | `subcommand` | `bridge` and `demo-server` answered by this binary |
//! | `bridge_program` | the installed program the Connect snippets name |
//! | `command_lists` | (tests) the four lists of command names agree |

pub mod approve;
pub mod bridge_program;
pub mod commands;
pub mod elicit;
pub mod error;
pub mod events;
pub mod logging;
pub mod notification;
pub mod open_file;
pub mod state;
pub mod subcommand;
pub mod tray;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use mcp_companion::companion::{Companion, StartError};
use mcp_companion::config::{self, Config};
use mcp_companion::control::ControlRequest;
use mcp_companion::ipc::paths::EndpointPaths;
use tauri::{Builder, Manager, RunEvent, Runtime, WindowEvent};

use crate::state::{Desktop, DesktopExt};

/// Registers every command the window may call. Generic over the runtime so the mock-runtime
/// tests build the same handler.
pub fn with_commands<R: Runtime>(builder: Builder<R>) -> Builder<R> {
    use commands::{
        add, agents, approve, bundle, elicit, import, registry, servers, settings, sign_in, trust,
    };
    builder.invoke_handler(tauri::generate_handler![
        servers::list_servers,
        agents::list_agents,
        agents::set_agent_profile,
        servers::config_warnings,
        servers::start_server,
        servers::stop_server,
        servers::restart_server,
        servers::start_all,
        servers::stop_all,
        servers::remove_server,
        servers::get_server,
        servers::read_log,
        servers::call_tool,
        servers::set_tool_policy,
        sign_in::sign_in_server,
        elicit::list_elicitations,
        elicit::answer_elicitation,
        approve::list_approvals,
        approve::answer_approval,
        add::list_presets,
        add::instantiate_preset,
        add::test_server,
        add::save_server,
        import::scan_imports,
        import::preview_import,
        import::apply_import,
        import::preview_import_secrets,
        settings::get_connect_info,
        settings::get_settings,
        settings::save_whitelist,
        settings::set_log_level,
        settings::set_autostart,
        registry::list_registries,
        registry::search_registry,
        registry::registry_details,
        registry::plan_install,
        registry::check_updates,
        registry::update_server,
        registry::list_clients,
        registry::connect_client,
        registry::disconnect_client,
        bundle::open_bundle,
        bundle::receive_bundle,
        bundle::install_bundle,
        bundle::take_opened_bundle,
        trust::list_changes,
        trust::approve_changes,
    ])
}

/// Runs the desktop app; returns only on a start-up failure (Tauri exits the process itself).
pub fn run() -> ExitCode {
    // A copy of this binary may be the reaper that guards the servers' process groups.
    mcp_companion::process::reaper::run_if_reaper();
    if let Some(code) = subcommand::run_if_subcommand() {
        return code;
    }
    let set_log_level = logging::init("info");
    match start(set_log_level) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            tracing::error!(error = %e, "mcp-companion-desktop cannot start");
            ExitCode::from(2)
        }
    }
}

fn start(set_log_level: state::SetLogLevel) -> Result<(), Box<dyn std::error::Error>> {
    let config_path = config::resolve_config_path(None)?;
    let (cfg, created) = config::load_or_init(&config_path)?;
    if created {
        tracing::info!(path = %config_path.display(), "created default config");
    }
    let socket = std::env::var_os("MCP_COMPANION_SOCKET").map(std::path::PathBuf::from);
    let launch = Launch {
        config: cfg,
        config_path,
        paths: EndpointPaths::resolve(socket.as_deref()),
        set_log_level: Some(set_log_level),
        tray: true,
    };

    // Plugin order matters: single-instance first, so a second launch hands over to the first
    // (which shows its window) and exits before anything else starts.
    let builder = Builder::default()
        .plugin(tauri_plugin_single_instance::init(|app, args, cwd| {
            if let Some(path) =
                open_file::bundle_arg(args.get(1..).unwrap_or_default(), Path::new(&cwd))
            {
                open_file::open(app, &path);
            }
            tray::show_window(app);
        }))
        .plugin(tauri_plugin_store::Builder::new().build())
        .plugin(tauri_plugin_autostart::init(
            tauri_plugin_autostart::MacosLauncher::LaunchAgent,
            None,
        ));
    let app = with_commands(builder)
        .setup(move |app| {
            // Before any server starts, so every process group is registered with it. Not in
            // `setup`: the reaper re-executes this binary, which a test binary must not do.
            if let Err(e) = mcp_companion::process::reaper::start() {
                tracing::warn!(error = %e, "cannot start the reaper: servers may outlive a killed companion");
            }
            let paths = launch.paths.clone();
            if let Err(e) = setup(app, launch) {
                if matches!(e.downcast_ref::<StartError>(), Some(StartError::AlreadyRunning { .. }))
                    && show_running(&paths)
                {
                    // No D-Bus session, so the single-instance plugin could not hand over: the
                    // running companion was asked over its control socket instead.
                    tracing::info!("another companion is running: asked it to show its window");
                    std::process::exit(0);
                }
                // Tauri panics on a setup error; exit plainly with the reason instead (e.g.
                // which companion holds the socket).
                eprintln!("error: {e}");
                tracing::error!(error = %e, "mcp-companion-desktop cannot start");
                std::process::exit(2);
            }
            let args: Vec<String> = std::env::args().skip(1).collect();
            let cwd = std::env::current_dir().unwrap_or_default();
            if let Some(path) = open_file::bundle_arg(&args, &cwd) {
                open_file::open(app.handle(), &path);
            }
            exit_on_signal(app.handle().clone());
            Ok(())
        })
        .on_window_event(|window, event| {
            // Closing the window hides it; the tray keeps running until Quit.
            if let WindowEvent::CloseRequested { api, .. } = event {
                api.prevent_close();
                if let Err(e) = window.hide() {
                    tracing::warn!(error = %e, "cannot hide the window");
                }
            }
        })
        .build(tauri::generate_context!())?;
    app.run(|app, event| match event {
        RunEvent::ExitRequested {
            code: None, api, ..
        } => api.prevent_exit(),
        RunEvent::Exit => shutdown(app),
        _ => {}
    });
    Ok(())
}

/// Asks the companion listening on `paths` to show its window (control API `show`); true when
/// it did. A headless `serve` has no window and refuses.
fn show_running(paths: &EndpointPaths) -> bool {
    let ask = mcp_companion::control::request(&paths.control, &ControlRequest::Show);
    match tauri::async_runtime::block_on(ask) {
        Ok(_) => true,
        Err(e) => {
            tracing::info!(error = %e, "the running companion cannot show a window");
            false
        }
    }
}

/// What [`setup`] starts: the loaded config and where to serve it.
pub struct Launch {
    /// The config as loaded.
    pub config: Config,
    /// Its file, which `reload` and the window's edits use.
    pub config_path: PathBuf,
    /// The sockets to serve.
    pub paths: EndpointPaths,
    /// Changes the log level at run time; `None` when logging is not ours (tests).
    pub set_log_level: Option<state::SetLogLevel>,
    /// Build the tray icon. Its menu needs a desktop session (GTK on Linux), which the
    /// mock-runtime tests do not have.
    pub tray: bool,
}

/// Starts the companion inside `app` — the same lock, sockets and hub as
/// `mcp-companion serve` — and wires the shell around it: the [`Desktop`] state, the stored log
/// level, the tray and the hub-event forwarding. Generic over the runtime, so the mock-runtime
/// tests run exactly what the app runs. Process-wide effects (the reaper, signal handlers) stay
/// with the caller.
///
/// # Errors
/// The companion's start error (e.g. another companion is running, naming it), or the tray's.
pub fn setup<R: Runtime>(
    app: &mut tauri::App<R>,
    launch: Launch,
) -> Result<(), Box<dyn std::error::Error>> {
    let Launch {
        config,
        config_path,
        paths,
        set_log_level,
        tray,
    } = launch;
    let elicitations = elicit::Pending::default();
    let elicitor = elicit::WindowElicitor::new(app.handle().clone(), elicitations.clone());
    let companion = tauri::async_runtime::block_on(Companion::start_with(
        &config,
        paths.clone(),
        Some(config_path.clone()),
        std::sync::Arc::new(elicitor),
    ))?;
    tracing::info!(socket = %paths.mcp.display(), config = %config_path.display(), "serving");
    let handle = app.handle().clone();
    companion.on_show_window(move || tray::show_window(&handle));
    let hub = companion.hub().clone();
    app.manage(Desktop {
        hub: hub.clone(),
        config_path,
        paths,
        companion: std::sync::Mutex::new(Some(companion)),
        set_log_level,
        secrets: std::sync::Arc::new(mcp_companion::secret::os_keychain()),
        elicitations,
        opened_bundle: std::sync::Mutex::new(None),
        bundles_root: None,
    });
    if std::env::var_os("RUST_LOG").is_none()
        && let Some(level) = commands::settings::stored_log_level(app.handle())
        && let Some(set) = &app.desktop().set_log_level
        && let Err(e) = set(&level)
    {
        tracing::warn!(error = %e, "stored log level ignored");
    }
    if tray {
        tray::build(app.handle())?;
    }
    approve::attach(app.handle().clone(), &hub);
    events::forward(app.handle().clone(), hub);
    Ok(())
}

/// Stops every server and closes the sockets, within the core's shutdown budget (the app's
/// exit handler; also after [`setup`] in tests).
pub fn shutdown<R: Runtime>(app: &tauri::AppHandle<R>) {
    let Some(desktop) = app.try_state::<Desktop>() else {
        return;
    };
    if let Some(companion) = desktop.take_companion() {
        tracing::info!("stopping every server");
        tauri::async_runtime::block_on(companion.shutdown());
    }
}

/// SIGTERM and SIGINT exit like Quit does (servers stopped, sockets removed).
fn exit_on_signal<R: Runtime>(app: tauri::AppHandle<R>) {
    tauri::async_runtime::spawn(async move {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{SignalKind, signal};
            let (Ok(mut term), Ok(mut int)) = (
                signal(SignalKind::terminate()),
                signal(SignalKind::interrupt()),
            ) else {
                tracing::warn!("cannot install signal handlers");
                return;
            };
            tokio::select! {
                _ = term.recv() => {}
                _ = int.recv() => {}
            }
        }
        #[cfg(not(unix))]
        if tokio::signal::ctrl_c().await.is_err() {
            return;
        }
        tracing::info!("signal received: exiting");
        app.exit(0);
    });
}

#[cfg(test)]
mod command_lists;
#[cfg(test)]
mod tests;
