//! The tray indicator (DESIGN §11): an icon per health, a summary, one toggle per server, Start
//! all, Stop all, Open, Quit. Rebuilt from the hub's statuses on every hub event.
//!
//! Linux note: the AppIndicator protocol has no tooltips, so the summary (`N of M servers
//! running`) is also the menu's first, disabled item.

use mcp_companion::supervisor::{ServerState, ServerStatus};
use tauri::image::Image;
use tauri::menu::{CheckMenuItem, IsMenuItem, Menu, MenuEvent, MenuItem, PredefinedMenuItem};
use tauri::tray::TrayIconBuilder;
use tauri::{AppHandle, Manager, Runtime};

use crate::state::DesktopExt;

/// The tray icon's id.
pub const TRAY_ID: &str = "main-tray";

/// Every tray menu action; menu ids are made and parsed here only.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TrayAction {
    /// Start the server if it is not running, else stop it.
    Toggle(String),
    /// Start every server.
    StartAll,
    /// Stop every server.
    StopAll,
    /// Show and focus the window.
    Open,
    /// Stop every server and exit.
    Quit,
}

const SERVER_PREFIX: &str = "server:";

impl TrayAction {
    /// The menu item id.
    pub fn id(&self) -> String {
        match self {
            TrayAction::Toggle(name) => format!("{SERVER_PREFIX}{name}"),
            TrayAction::StartAll => "start-all".into(),
            TrayAction::StopAll => "stop-all".into(),
            TrayAction::Open => "open".into(),
            TrayAction::Quit => "quit".into(),
        }
    }

    /// The action of a menu item id.
    pub fn parse(id: &str) -> Option<TrayAction> {
        if let Some(name) = id.strip_prefix(SERVER_PREFIX) {
            return Some(TrayAction::Toggle(name.to_owned()));
        }
        match id {
            "start-all" => Some(TrayAction::StartAll),
            "stop-all" => Some(TrayAction::StopAll),
            "open" => Some(TrayAction::Open),
            "quit" => Some(TrayAction::Quit),
            _ => None,
        }
    }
}

/// Overall health, one icon each. The rule (README "Desktop"): servers the user stopped (or
/// `disabled`) are not trouble; failed and backing-off ones are.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Health {
    /// Nothing is in trouble and at least one server runs (green).
    Ok,
    /// At least one server failed or is retrying (amber), whatever the others do.
    Degraded,
    /// Nothing is in trouble and nothing runs: no servers, or all stopped (grey).
    Off,
}

impl Health {
    /// Health of a set of servers.
    pub fn of(statuses: &[ServerStatus]) -> Health {
        let failing = statuses.iter().any(|s| {
            matches!(
                s.state,
                ServerState::Failed | ServerState::Backoff | ServerState::NeedsSignIn
            )
        });
        let running = statuses.iter().any(|s| s.state == ServerState::Running);
        match (failing, running) {
            (true, _) => Health::Degraded,
            (false, true) => Health::Ok,
            (false, false) => Health::Off,
        }
    }

    fn icon(self) -> &'static [u8] {
        match self {
            Health::Ok => include_bytes!("../../icons/tray-ok.png"),
            Health::Degraded => include_bytes!("../../icons/tray-degraded.png"),
            Health::Off => include_bytes!("../../icons/tray-off.png"),
        }
    }
}

/// `N of M servers running`.
pub fn summary(statuses: &[ServerStatus]) -> String {
    let running = statuses
        .iter()
        .filter(|s| s.state == ServerState::Running)
        .count();
    format!("{running} of {} servers running", statuses.len())
}

fn is_active(state: ServerState) -> bool {
    matches!(
        state,
        ServerState::Running | ServerState::Starting | ServerState::Backoff
    )
}

fn menu<R: Runtime>(app: &AppHandle<R>, statuses: &[ServerStatus]) -> tauri::Result<Menu<R>> {
    let mut items: Vec<Box<dyn IsMenuItem<R>>> = Vec::new();
    items.push(Box::new(MenuItem::with_id(
        app,
        "summary",
        summary(statuses),
        false,
        None::<&str>,
    )?));
    items.push(Box::new(PredefinedMenuItem::separator(app)?));
    for s in statuses {
        let label = if s.state == ServerState::NeedsSignIn {
            format!("{} — sign in", s.name)
        } else {
            format!("{} — {}", s.name, s.state.as_str())
        };
        let id = TrayAction::Toggle(s.name.clone()).id();
        items.push(Box::new(CheckMenuItem::with_id(
            app,
            id,
            label,
            true,
            is_active(s.state),
            None::<&str>,
        )?));
    }
    if !statuses.is_empty() {
        items.push(Box::new(PredefinedMenuItem::separator(app)?));
    }
    for (action, label) in [
        (TrayAction::StartAll, "Start all"),
        (TrayAction::StopAll, "Stop all"),
    ] {
        items.push(Box::new(MenuItem::with_id(
            app,
            action.id(),
            label,
            true,
            None::<&str>,
        )?));
    }
    items.push(Box::new(PredefinedMenuItem::separator(app)?));
    items.push(Box::new(MenuItem::with_id(
        app,
        TrayAction::Open.id(),
        "Open MCP Companion",
        true,
        None::<&str>,
    )?));
    items.push(Box::new(MenuItem::with_id(
        app,
        TrayAction::Quit.id(),
        "Quit",
        true,
        None::<&str>,
    )?));
    let refs: Vec<&dyn IsMenuItem<R>> = items.iter().map(AsRef::as_ref).collect();
    Menu::with_items(app, &refs)
}

/// Creates the tray icon.
///
/// # Errors
/// When the menu or icon cannot be built.
pub fn build<R: Runtime>(app: &AppHandle<R>) -> tauri::Result<()> {
    let statuses = app.desktop().hub.statuses();
    let health = Health::of(&statuses);
    TrayIconBuilder::with_id(TRAY_ID)
        .icon(Image::from_bytes(health.icon())?)
        .tooltip(summary(&statuses))
        .menu(&menu(app, &statuses)?)
        .show_menu_on_left_click(true)
        .on_menu_event(on_menu_event)
        .build(app)?;
    Ok(())
}

/// Redraws icon, tooltip and menu from the hub's current statuses. Failures are logged.
pub fn refresh<R: Runtime>(app: &AppHandle<R>) {
    let Some(tray) = app.tray_by_id(TRAY_ID) else {
        return;
    };
    let statuses = app.desktop().hub.statuses();
    let result = (|| {
        tray.set_icon(Some(Image::from_bytes(Health::of(&statuses).icon())?))?;
        tray.set_tooltip(Some(summary(&statuses)))?;
        tray.set_menu(Some(menu(app, &statuses)?))
    })();
    if let Err(e) = result {
        tracing::warn!(error = %e, "cannot update the tray");
    }
}

/// Shows, unminimises and focuses the main window.
pub fn show_window<R: Runtime>(app: &AppHandle<R>) {
    let Some(window) = app.get_webview_window("main") else {
        tracing::warn!("no main window to show");
        return;
    };
    for result in [window.show(), window.unminimize(), window.set_focus()] {
        if let Err(e) = result {
            tracing::warn!(error = %e, "cannot show the window");
        }
    }
}

fn on_menu_event<R: Runtime>(app: &AppHandle<R>, event: MenuEvent) {
    let Some(action) = TrayAction::parse(event.id.as_ref()) else {
        return;
    };
    tracing::info!(?action, "tray");
    let hub = app.desktop().hub.clone();
    match action {
        TrayAction::Toggle(name) => {
            if let Some(handle) = hub
                .server(&name)
                .filter(|s| s.snapshot().status.state == ServerState::NeedsSignIn)
            {
                // "name — sign in": the browser opens; the server restarts once signed in.
                tauri::async_runtime::spawn(async move {
                    if let Err(e) = mcp_companion::ipc::login::sign_in(handle).await {
                        tracing::warn!(server = %name, error = %e, "tray sign-in failed");
                    }
                });
                return;
            }
            let active = hub
                .server(&name)
                .is_some_and(|s| is_active(s.snapshot().status.state));
            tauri::async_runtime::spawn(async move {
                let result = if active {
                    hub.stop_server(&name).await
                } else {
                    hub.start_server(&name).await
                };
                if let Err(e) = result {
                    tracing::warn!(server = %name, error = %e, "tray toggle failed");
                }
            });
        }
        TrayAction::StartAll => {
            tauri::async_runtime::spawn(async move { hub.start_all().await });
        }
        TrayAction::StopAll => {
            tauri::async_runtime::spawn(async move { hub.stop_all().await });
        }
        TrayAction::Open => show_window(app),
        // Servers are stopped in the exit handler (`RunEvent::Exit`), whoever asked to exit.
        TrayAction::Quit => app.exit(0),
    }
    // The menu shows the state as of now; hub events redraw it as servers change.
    refresh(app);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn status(name: &str, state: ServerState) -> ServerStatus {
        ServerStatus {
            name: name.into(),
            transport: "stdio".into(),
            state,
            last_error: None,
            since_ms: 0,
            retry_at_ms: None,
            pid: None,
            restarts: 0,
            tools: 0,
        }
    }

    #[test]
    fn menu_ids_round_trip() {
        for action in [
            TrayAction::Toggle("a:b c".into()),
            TrayAction::StartAll,
            TrayAction::StopAll,
            TrayAction::Open,
            TrayAction::Quit,
        ] {
            assert_eq!(TrayAction::parse(&action.id()), Some(action));
        }
        assert_eq!(TrayAction::parse("summary"), None);
    }

    #[test]
    fn health_and_summary_follow_the_states() {
        use ServerState::*;
        let cases: &[(&[ServerState], Health, &str)] = &[
            (&[], Health::Off, "0 of 0 servers running"),
            (&[Running, Running], Health::Ok, "2 of 2 servers running"),
            (&[Running, Stopped], Health::Ok, "1 of 2 servers running"),
            (
                &[Running, Failed],
                Health::Degraded,
                "1 of 2 servers running",
            ),
            (
                &[Running, Backoff, Starting],
                Health::Degraded,
                "1 of 3 servers running",
            ),
            (
                &[Failed, Stopped],
                Health::Degraded,
                "0 of 2 servers running",
            ),
            (&[Backoff], Health::Degraded, "0 of 1 servers running"),
            (&[Stopped, Stopped], Health::Off, "0 of 2 servers running"),
            (&[Starting], Health::Off, "0 of 1 servers running"),
        ];
        for (states, health, text) in cases {
            let statuses: Vec<_> = states
                .iter()
                .enumerate()
                .map(|(i, s)| status(&i.to_string(), *s))
                .collect();
            assert_eq!(Health::of(&statuses), *health, "{states:?}");
            assert_eq!(summary(&statuses), *text);
        }
    }
}
