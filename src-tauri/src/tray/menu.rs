//! Drawing a [`TrayContent`]: its icon and its menu as Tauri objects.

use tauri::menu::{CheckMenuItem, IsMenuItem, Menu, MenuItem, PredefinedMenuItem};
use tauri::{AppHandle, Runtime};

use super::{Health, TrayAction, TrayContent};

impl Health {
    /// The icon's PNG bytes.
    pub(super) fn icon(self) -> &'static [u8] {
        match self {
            Health::Ok => include_bytes!("../../../icons/tray-ok.png"),
            Health::Degraded => include_bytes!("../../../icons/tray-degraded.png"),
            Health::Off => include_bytes!("../../../icons/tray-off.png"),
        }
    }
}

impl TrayContent {
    /// The menu: the summary (disabled), one check item per server, Start all, Stop all, Open,
    /// Quit, with separators between the groups.
    pub(super) fn menu<R: Runtime>(&self, app: &AppHandle<R>) -> tauri::Result<Menu<R>> {
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
