//! What the tray shows, as a plain value computed from the hub's statuses: [`TrayContent`]
//! (the [`Health`] icon, the summary, one [`ServerEntry`] per server). Equal values draw the
//! same tray, so the tray is redrawn only when the value changes (see the module doc of
//! [`super`]).

use mcp_companion::supervisor::{ServerState, ServerStatus};

use super::TrayAction;

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
}

/// `N of M servers running`.
pub fn summary(statuses: &[ServerStatus]) -> String {
    let running = statuses
        .iter()
        .filter(|s| s.state == ServerState::Running)
        .count();
    format!("{running} of {} servers running", statuses.len())
}

pub(super) fn is_active(state: ServerState) -> bool {
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
