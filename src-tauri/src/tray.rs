//! The tray indicator (DESIGN §11): an icon per health, a summary, one toggle per server, Start
//! all, Stop all, Open, Quit.
//!
//! What the tray shows is computed from the hub's statuses as a plain value, [`TrayContent`], on
//! every hub event; the menu, icon and tooltip are replaced only when that value differs from the
//! one last set. Replacing the menu closes it under a person (or a keyboard-driven test) who has
//! it open, and a server that keeps retrying produces an event every few seconds whose attempt
//! counter and last error the tray does not show. For the same reason a server's automatic
//! restart (`starting` right after `backoff`) reads `retrying` in the menu: only what a person
//! does (start, stop) or a real outcome (running, failed) changes the menu.
//!
//! Linux note: the AppIndicator protocol has no tooltips, so the summary (`N of M servers
//! running`) is also the menu's first, disabled item.

use mcp_companion::supervisor::{ServerState, ServerStatus};
use std::sync::Mutex;
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

/// Overall health, one icon each. The rule (docs/src/desktop.md, "Tray"): servers the user stopped (or
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

/// Whether `status` is an automatic restart: `backoff`, or `starting` again after a failure with
/// nobody having asked (a start by the user clears the last error first).
fn is_retrying(status: &ServerStatus) -> bool {
    match status.state {
        ServerState::Backoff => true,
        ServerState::Starting => status.last_error.is_some(),
        _ => false,
    }
}

/// One server's menu entry: a check item whose check mark means "active" (running, starting or
/// retrying); clicking it toggles the server.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServerEntry {
    /// The menu item id ([`TrayAction::Toggle`]).
    pub id: String,
    /// `NAME — STATE`, or `NAME — sign in`.
    pub label: String,
    /// The check mark.
    pub checked: bool,
}

/// Everything the tray shows, as a value: equal values draw the same tray.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TrayContent {
    /// The icon.
    pub health: Health,
    /// The tooltip and the menu's first (disabled) item: `N of M servers running`.
    pub summary: String,
    /// One entry per server, in config order.
    pub servers: Vec<ServerEntry>,
}

impl TrayContent {
    /// What the tray shows for `statuses`. Fields the tray does not display (restart counts,
    /// last errors, retry times, pids, tool counts) do not affect it; capability changes that
    /// wait for approval are named in the server's item.
    pub fn of(statuses: &[ServerStatus]) -> TrayContent {
        let servers = statuses
            .iter()
            .map(|s| {
                let mut label = if s.state == ServerState::NeedsSignIn {
                    format!("{} — sign in", s.name)
                } else if is_retrying(s) {
                    format!("{} — {}", s.name, ServerState::Backoff.label())
                } else {
                    format!("{} — {}", s.name, s.state.label())
                };
                // Pinned definitions that changed wait for the person (`mcp-companion trust`).
                if s.waiting_approval > 0 {
                    label.push_str(&format!(" · {} change(s) to approve", s.waiting_approval));
                }
                ServerEntry {
                    id: TrayAction::Toggle(s.name.clone()).id(),
                    label,
                    checked: is_active(s.state),
                }
            })
            .collect();
        let health = match Health::of(statuses) {
            // A server starting again on its own is still in trouble.
            Health::Off | Health::Ok if statuses.iter().any(is_retrying) => Health::Degraded,
            health => health,
        };
        TrayContent {
            health,
            summary: summary(statuses),
            servers,
        }
    }

    fn menu<R: Runtime>(&self, app: &AppHandle<R>) -> tauri::Result<Menu<R>> {
        let mut items: Vec<Box<dyn IsMenuItem<R>>> = Vec::new();
        items.push(Box::new(MenuItem::with_id(
            app,
            "summary",
            &self.summary,
            false,
            None::<&str>,
        )?));
        items.push(Box::new(PredefinedMenuItem::separator(app)?));
        for entry in &self.servers {
            items.push(Box::new(CheckMenuItem::with_id(
                app,
                &entry.id,
                &entry.label,
                true,
                entry.checked,
                None::<&str>,
            )?));
        }
        if !self.servers.is_empty() {
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
}

/// The content last set on the tray (Tauri managed state, owned by this module).
struct Shown(Mutex<Option<TrayContent>>);

/// Creates the tray icon.
///
/// # Errors
/// When the menu or icon cannot be built.
pub fn build<R: Runtime>(app: &AppHandle<R>) -> tauri::Result<()> {
    let content = TrayContent::of(&app.desktop().hub.statuses());
    TrayIconBuilder::with_id(TRAY_ID)
        .icon(Image::from_bytes(content.health.icon())?)
        .tooltip(&content.summary)
        .menu(&content.menu(app)?)
        .show_menu_on_left_click(true)
        .on_menu_event(on_menu_event)
        .build(app)?;
    app.manage(Shown(Mutex::new(Some(content))));
    Ok(())
}

/// Redraws icon, tooltip and menu from the hub's current statuses when what they show changed
/// ([`TrayContent`]); otherwise leaves them alone, so an open menu stays open. Failures are
/// logged, and the next refresh tries again.
pub fn refresh<R: Runtime>(app: &AppHandle<R>) {
    let (Some(tray), Some(shown)) = (app.tray_by_id(TRAY_ID), app.try_state::<Shown>()) else {
        return;
    };
    let content = TrayContent::of(&app.desktop().hub.statuses());
    // Held while setting, so two refreshes cannot interleave and record the older content.
    let mut last = shown.0.lock().unwrap_or_else(|p| p.into_inner());
    if last.as_ref() == Some(&content) {
        return;
    }
    let result = (|| {
        tray.set_icon(Some(Image::from_bytes(content.health.icon())?))?;
        tray.set_tooltip(Some(&content.summary))?;
        tray.set_menu(Some(content.menu(app)?))
    })();
    match result {
        Ok(()) => *last = Some(content),
        Err(e) => {
            *last = None;
            tracing::warn!(error = %e, "cannot update the tray");
        }
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

    fn status(name: &str, state: ServerState) -> ServerStatus {
        ServerStatus::new(name, "stdio", state)
    }

    fn retrying(name: &str, state: ServerState, restarts: u32, error: &str) -> ServerStatus {
        ServerStatus {
            last_error: Some(error.into()),
            restarts,
            retry_at_ms: (state == ServerState::Backoff).then_some(1_000 * u64::from(restarts)),
            since_ms: 500 * u64::from(restarts),
            ..status(name, state)
        }
    }

    #[test]
    fn a_server_retrying_on_its_own_keeps_the_tray_content_unchanged() {
        let demo = ServerStatus {
            tools: 3,
            pid: Some(42),
            ..status("demo", ServerState::Running)
        };
        let first = TrayContent::of(&[
            demo.clone(),
            retrying("docs", ServerState::Backoff, 1, "connection refused"),
        ]);
        assert_eq!(first.health, Health::Degraded);
        assert_eq!(first.servers[1].label, "docs — retrying");
        assert!(first.servers[1].checked);
        for attempt in 2..8 {
            for state in [ServerState::Starting, ServerState::Backoff] {
                let again = TrayContent::of(&[
                    ServerStatus {
                        tools: attempt as usize,
                        ..demo.clone()
                    },
                    retrying(
                        "docs",
                        state,
                        attempt,
                        &format!("attempt {attempt}: connection refused"),
                    ),
                ]);
                assert_eq!(again, first, "attempt {attempt}, {state:?}");
            }
        }
    }

    #[test]
    fn what_the_tray_shows_changes_its_content() {
        let base = [
            status("a", ServerState::Running),
            status("b", ServerState::Stopped),
        ];
        let content = TrayContent::of(&base);
        assert_eq!(content.summary, "1 of 2 servers running");
        assert_eq!(
            content.servers,
            vec![
                ServerEntry {
                    id: "server:a".into(),
                    label: "a — running".into(),
                    checked: true
                },
                ServerEntry {
                    id: "server:b".into(),
                    label: "b — stopped".into(),
                    checked: false
                },
            ]
        );
        let changed: &[Vec<ServerStatus>] = &[
            // The user starts b: a first start, not a retry.
            vec![base[0].clone(), status("b", ServerState::Starting)],
            vec![base[0].clone(), status("b", ServerState::NeedsSignIn)],
            vec![status("a", ServerState::Failed), base[1].clone()],
            vec![base[0].clone()],
            vec![base[0].clone(), status("c", ServerState::Stopped)],
        ];
        for statuses in changed {
            assert_ne!(TrayContent::of(statuses), content, "{statuses:?}");
        }
        assert_eq!(
            TrayContent::of(&[base[0].clone(), status("b", ServerState::Starting)]).servers[1]
                .label,
            "b — starting"
        );
        let waiting = ServerStatus {
            waiting_approval: 2,
            ..base[0].clone()
        };
        assert_eq!(
            TrayContent::of(&[waiting]).servers[0].label,
            "a — running · 2 change(s) to approve"
        );
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
