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
//!
//! | file | owns |
//! |---|---|
//! | `mod.rs` | building the tray, redrawing it when its content changes, showing the window |
//! | `content.rs` | [`TrayContent`]: what the tray shows, computed from the statuses |
//! | `menu.rs` | drawing a [`TrayContent`]: icon and menu |
//! | `action.rs` | [`TrayAction`]: the menu ids and what each click does |

mod action;
mod content;
mod menu;

use std::sync::Mutex;

use tauri::image::Image;
use tauri::tray::TrayIconBuilder;
use tauri::{AppHandle, Manager, Runtime};

pub use action::TrayAction;
pub use content::{Health, ServerEntry, TrayContent, summary};

use crate::state::DesktopExt;

/// The tray icon's id.
pub const TRAY_ID: &str = "main-tray";

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
        .on_menu_event(action::on_menu_event)
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
