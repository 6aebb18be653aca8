//! The tray menu's actions: [`TrayAction`] makes and parses every menu id, and
//! `on_menu_event` does what was clicked.

use mcp_companion::supervisor::ServerState;
use tauri::menu::MenuEvent;
use tauri::{AppHandle, Runtime};

use super::content::is_active;
use super::{refresh, show_window};
use crate::state::DesktopExt;

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

pub(super) fn on_menu_event<R: Runtime>(app: &AppHandle<R>, event: MenuEvent) {
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
                    if let Err(e) = mcp_companion::control::login::sign_in(&hub, handle).await {
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
}
