//! Desktop notifications for a server that asks the person: when an elicitation (or a call
//! waiting for approval) is put to the person, a notification says who asks what; clicking it brings the window
//! forward, and it is withdrawn once the request is answered, times out or is withdrawn.
//!
//! On Linux this speaks the freedesktop *Desktop Notifications* specification (1.2) to
//! `org.freedesktop.Notifications` on the session bus (`Notify`, `CloseNotification`, the
//! `ActionInvoked` and `NotificationClosed` signals) through `zbus` 4, the D-Bus crate the core
//! already builds for the Secret Service; `tauri-plugin-notification` would add a second D-Bus
//! stack (zbus 6) and still cannot report a click on Linux. Elsewhere [`Notification::show`]
//! returns [`NotifyError::Unsupported`] and only the window is raised.

use std::time::Duration;

/// A notification could not be shown.
#[derive(Debug, thiserror::Error)]
pub enum NotifyError {
    /// No session bus, or no notification server on it (a bare X session, a headless CI box).
    #[error("no desktop notification service: {0}")]
    Unavailable(String),
    /// This platform's notifications are not wired up (only the freedesktop service is).
    #[error("desktop notifications are not supported on this platform")]
    Unsupported,
}

/// What to show: a one-line summary and a plain-text body.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Notice {
    /// The title line, e.g. `everything asks you something`.
    pub summary: String,
    /// The body, plain text (escaped for servers that read markup).
    pub body: String,
    /// How long the notification stays up at most (the request's timeout).
    pub expire: Duration,
}

/// The longest body shown, in characters; longer messages end with `…` (the window has it all).
pub const MAX_BODY_CHARS: usize = 240;

impl Notice {
    /// The notice for an elicitation from `server` saying `message`.
    pub fn asking(server: &str, message: &str, expire: Duration) -> Notice {
        let mut body: String = message.chars().take(MAX_BODY_CHARS).collect();
        if message.chars().count() > MAX_BODY_CHARS {
            body.push('…');
        }
        Notice {
            summary: format!("{server} asks you something"),
            body: format!("{body}\nAnswer in MCP Companion."),
            expire,
        }
    }
}

impl Notice {
    /// The notice for a call waiting for the person's approval: who wants to run which tool
    /// of which server, and its arguments (as the core masked them), cut to
    /// [`MAX_BODY_CHARS`].
    pub fn approving(ask: &mcp_companion::hub::Ask) -> Notice {
        let agent = ask.agent.as_deref().unwrap_or("an agent");
        let arguments: String = ask.arguments.chars().take(MAX_BODY_CHARS).collect();
        let cut = if ask.arguments.chars().count() > MAX_BODY_CHARS {
            "…"
        } else {
            ""
        };
        Notice {
            summary: format!("{agent} wants to run {}", ask.tool),
            body: format!(
                "server {}: {arguments}{cut}\nAllow or deny in MCP Companion.",
                ask.server
            ),
            expire: std::time::Duration::from_secs(ask.timeout_s),
        }
    }
}

/// `text` with `&`, `<` and `>` escaped, for servers that advertise `body-markup` (they read the
/// body as a subset of HTML; a server's message must show as the text it is). Servers without
/// it show the body as is, so it is sent unescaped to them.
pub fn escape_markup(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            c => out.push(c),
        }
    }
    out
}

/// How a shown notification ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// The person clicked it (its default action).
    Clicked,
    /// It expired or was dismissed without a click.
    Dismissed,
}

#[cfg(target_os = "linux")]
pub use freedesktop::Notification;

#[cfg(not(target_os = "linux"))]
pub use unsupported::Notification;

#[cfg(target_os = "linux")]
mod freedesktop {
    use std::collections::HashMap;

    use futures::StreamExt;
    use zbus::zvariant::Value;

    use super::{Notice, NotifyError, Outcome, escape_markup};

    const DESTINATION: &str = "org.freedesktop.Notifications";
    const PATH: &str = "/org/freedesktop/Notifications";
    const INTERFACE: &str = "org.freedesktop.Notifications";
    /// The action a click on the notification's body invokes (spec: "default").
    const DEFAULT_ACTION: &str = "default";

    fn unavailable(e: zbus::Error) -> NotifyError {
        NotifyError::Unavailable(e.to_string())
    }

    /// The session bus connection, opened by the first notification and shared by the rest.
    static SESSION: tokio::sync::OnceCell<zbus::Connection> = tokio::sync::OnceCell::const_new();

    /// One notification on the screen.
    pub struct Notification {
        proxy: zbus::Proxy<'static>,
        id: u32,
        /// Every signal of the interface, in the order the server sent them: a click is
        /// `ActionInvoked` then `NotificationClosed`, and reading two streams instead could
        /// take the second first.
        signals: zbus::proxy::SignalStream<'static>,
    }

    impl std::fmt::Debug for Notification {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.debug_struct("Notification")
                .field("id", &self.id)
                .finish_non_exhaustive()
        }
    }

    impl Notification {
        /// Shows `notice` (`Notify`, with a default action so a click is reported).
        ///
        /// # Errors
        /// [`NotifyError::Unavailable`] with the bus's words when there is no session bus or
        /// no notification server on it.
        pub async fn show(notice: &Notice) -> Result<Notification, NotifyError> {
            let connection = SESSION
                .get_or_try_init(zbus::Connection::session)
                .await
                .map_err(unavailable)?
                .clone();
            let proxy = zbus::Proxy::new_owned(connection, DESTINATION, PATH, INTERFACE)
                .await
                .map_err(unavailable)?;
            let capabilities: Vec<String> = proxy
                .call("GetCapabilities", &())
                .await
                .map_err(unavailable)?;
            let body = if capabilities.iter().any(|c| c == "body-markup") {
                escape_markup(&notice.body)
            } else {
                notice.body.clone()
            };
            // Subscribed before `Notify`, so a quick click is not missed.
            let signals = proxy.receive_all_signals().await.map_err(unavailable)?;
            let hints: HashMap<&str, Value<'_>> = HashMap::from([
                ("desktop-entry", Value::from("mcp-companion")),
                // Spec urgency levels: 0 low, 1 normal, 2 critical.
                ("urgency", Value::U8(1)),
            ]);
            let expire_ms = i32::try_from(notice.expire.as_millis()).unwrap_or(i32::MAX);
            let id: u32 = proxy
                .call(
                    "Notify",
                    &(
                        "MCP Companion",
                        0u32,
                        "dialog-question",
                        notice.summary.as_str(),
                        body,
                        vec![DEFAULT_ACTION, "Open MCP Companion"],
                        hints,
                        expire_ms,
                    ),
                )
                .await
                .map_err(unavailable)?;
            Ok(Notification { proxy, id, signals })
        }

        /// The notification server's id for it.
        pub fn id(&self) -> u32 {
            self.id
        }

        /// Waits until the person clicks it ([`Outcome::Clicked`]) or it goes away otherwise;
        /// a lost bus counts as dismissed.
        pub async fn outcome(&mut self) -> Outcome {
            while let Some(signal) = self.signals.next().await {
                let header = signal.header();
                let body = signal.body();
                match header.member().map(|m| m.as_str()) {
                    Some("ActionInvoked") => {
                        if let Ok((id, action)) = body.deserialize::<(u32, String)>()
                            && id == self.id
                            && action == DEFAULT_ACTION
                        {
                            return Outcome::Clicked;
                        }
                    }
                    Some("NotificationClosed") => {
                        if let Ok((id, _reason)) = body.deserialize::<(u32, u32)>()
                            && id == self.id
                        {
                            return Outcome::Dismissed;
                        }
                    }
                    _ => {}
                }
            }
            Outcome::Dismissed
        }

        /// Takes it off the screen (`CloseNotification`); a notification already gone is fine.
        pub async fn close(self) {
            if let Err(e) = self
                .proxy
                .call::<_, _, ()>("CloseNotification", &(self.id,))
                .await
            {
                tracing::debug!(error = %e, id = self.id, "CloseNotification");
            }
        }
    }
}

#[cfg(not(target_os = "linux"))]
mod unsupported {
    use super::{Notice, NotifyError, Outcome};

    /// No notification on this platform (see the module doc).
    #[derive(Debug)]
    pub struct Notification;

    impl Notification {
        /// Always [`NotifyError::Unsupported`].
        ///
        /// # Errors
        /// Always.
        pub async fn show(_notice: &Notice) -> Result<Notification, NotifyError> {
            Err(NotifyError::Unsupported)
        }

        /// The notification server's id (never reached).
        pub fn id(&self) -> u32 {
            0
        }

        /// Never reached.
        pub async fn outcome(&mut self) -> Outcome {
            Outcome::Dismissed
        }

        /// Never reached.
        pub async fn close(self) {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_message_is_cut_and_the_summary_names_the_server() {
        let long = "x".repeat(MAX_BODY_CHARS + 10);
        let notice = Notice::asking("files", &long, Duration::from_secs(60));
        assert_eq!(notice.summary, "files asks you something");
        let first = notice.body.lines().next().expect("a line");
        assert_eq!(first.chars().count(), MAX_BODY_CHARS + 1);
        assert!(first.ends_with('…'), "{first}");
        let short = Notice::asking("files", "Delete 3 files?", Duration::from_secs(60));
        assert_eq!(short.body, "Delete 3 files?\nAnswer in MCP Companion.");
    }

    #[test]
    fn markup_in_a_message_is_shown_as_text() {
        assert_eq!(
            escape_markup("<b>Tom & Jerry</b>"),
            "&lt;b&gt;Tom &amp; Jerry&lt;/b&gt;"
        );
    }
}
