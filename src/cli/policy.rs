//! `mcp-companion policy [SERVER [TOOL [allow|ask|deny|default]]]`: the call policy of each
//! server's tools in the config file, and setting one (written atomically; a running
//! companion reading the same file reloads it, without restarting the server);
//! `mcp-companion approvals [--watch] [--full]` and `approve ID once|always|deny`: the calls waiting for
//! the person, answered from a terminal.

use std::path::Path;
use std::process::ExitCode;

use anyhow::Context;
use mcp_companion::catalog::naming::{CapabilityKind, base_name};
use mcp_companion::config::{self, Policy};
use mcp_companion::control::{self, ControlRequest, ControlResponse};
use mcp_companion::hub::{Answer, ApprovalEvent, Ask, CLIENT_TEXT_MAX};
use mcp_companion::manage::edit;
use tokio::io::AsyncBufReadExt;

use super::out::{self, outln};

/// Runs `policy`: lists (no `value`) or sets one key.
pub async fn policy(
    config_path: Option<&Path>,
    socket: Option<&Path>,
    server: Option<String>,
    tool: Option<String>,
    value: Option<String>,
) -> anyhow::Result<ExitCode> {
    let path = config::resolve_config_path(config_path)?;
    let (Some(server), Some(tool), Some(value)) = (&server, &tool, &value) else {
        let cfg = config::load(&path)?;
        return list(&cfg, server.as_deref(), tool.as_deref());
    };
    let policy = match value.as_str() {
        "default" => None,
        v => Some(Policy::parse(v).with_context(|| {
            format!("\"{v}\" is not a policy: use allow, ask, deny, or default (removes the key)")
        })?),
    };
    edit::update_file(&path, |doc| {
        edit::set_tool_policy(doc, server, tool, policy)
    })?;
    if policy.is_some()
        && let Some(warning) = unknown_key(server, tool)
    {
        eprintln!("warning: {warning}");
    }
    match policy {
        Some(p) => outln!(
            "{}: toolPolicy \"{tool}\" of server \"{server}\" is now \"{}\"",
            path.display(),
            p.as_str()
        ),
        None => outln!(
            "{}: toolPolicy \"{tool}\" of server \"{server}\" removed (the tool takes its default)",
            path.display()
        ),
    }
    reload_running(&path, socket).await?;
    Ok(ExitCode::SUCCESS)
}

/// The most known tool names a warning about a key lists.
const NAMES_SHOWN: usize = 12;

/// Why the `toolPolicy` key `key` of `server` looks like a typo: it matches none of the tools
/// the server listed when it last ran (the pinned ones, by upstream or default wrapped name);
/// `None` when it matches one, or when the server's tools are not known here.
fn unknown_key(server: &str, key: &str) -> Option<String> {
    let pins = dirs::data_dir()?
        .join("mcp-companion")
        .join(mcp_companion::hub::PINS_FILE);
    let known = mcp_companion::hub::pinned_tools(&pins, server)?;
    let one = config::parse_tool_policy(server, Some(&serde_json::json!({ key: "allow" }))).ok()?;
    let matches = known.iter().any(|raw| {
        let wrapped = base_name(server, CapabilityKind::Tool, raw);
        one.decide(&[raw, &wrapped]).is_some()
    });
    if matches {
        return None;
    }
    let mut names: Vec<String> = known
        .iter()
        .take(NAMES_SHOWN)
        .map(|n| out::visible(n).into_owned())
        .collect();
    if known.len() > NAMES_SHOWN {
        names.push("…".to_owned());
    }
    Some(format!(
        "toolPolicy key \"{}\" matches none of the {} tools server \"{}\" listed when it last ran ({}): check its spelling; it was written as given",
        out::visible(key),
        known.len(),
        out::visible(server),
        names.join(", ")
    ))
}

/// Every server's `toolPolicy` (or `server`'s), one key a line.
fn list(
    cfg: &config::Config,
    server: Option<&str>,
    tool: Option<&str>,
) -> anyhow::Result<ExitCode> {
    if let Some(name) = server
        && !cfg.servers.iter().any(|s| s.name == name)
    {
        anyhow::bail!(config::UnknownServer::new(name));
    }
    let mut any = false;
    for entry in cfg
        .valid_servers()
        .filter(|s| server.is_none_or(|n| n == s.name))
    {
        if let Some(tool) = tool {
            // TOOL may be the upstream or the default wrapped name; keys may name either.
            let prefix = format!("mcp_{}_", entry.name);
            let raw = tool.strip_prefix(&prefix).unwrap_or(tool);
            let wrapped = base_name(&entry.name, CapabilityKind::Tool, raw);
            let (name, tool) = (out::visible(&entry.name), out::visible(tool));
            match entry.tool_policy.decide(&[raw, &wrapped]) {
                Some(p) => outln!("{name} {tool}: {} (toolPolicy)", p.as_str()),
                None => outln!(
                    "{name} {tool}: default (no toolPolicy key matches: ask if the tool declares destructiveHint without readOnlyHint, else allow)"
                ),
            }
            return Ok(ExitCode::SUCCESS);
        }
        for e in &entry.tool_policy.entries {
            any = true;
            outln!(
                "{}  {}  {}",
                out::visible(&entry.name),
                out::visible(&e.glob.text),
                e.policy.as_str()
            );
        }
    }
    if !any {
        outln!(
            "No toolPolicy set: every tool runs, except that one declaring destructiveHint (without readOnlyHint) asks the person when an approver is attached."
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// Asks a running companion that reads `path` to reload it; says so when none does.
async fn reload_running(path: &Path, socket: Option<&Path>) -> anyhow::Result<()> {
    let paths = mcp_companion::ipc::record::locate(socket).await;
    let same = |running: &Path| match (std::fs::canonicalize(path), std::fs::canonicalize(running))
    {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    };
    match control::status(&paths.control).await {
        Ok(status) if status.config.as_deref().is_some_and(same) => {
            match control::request(&paths.control, &ControlRequest::Reload).await {
                Ok(_) => outln!("the running companion applied it"),
                Err(e) => outln!("the running companion did not reload: {e}"),
            }
        }
        Ok(_) => outln!("the running companion reads another config file: not applied there"),
        Err(_) => outln!("no companion is running: it applies at the next start"),
    }
    Ok(())
}

/// Runs `approve ID ANSWER`.
pub async fn approve(socket: Option<&Path>, id: u64, answer: &str) -> anyhow::Result<ExitCode> {
    let answer = Answer::parse(answer)
        .with_context(|| format!("\"{answer}\" is not an answer: use once, always or deny"))?;
    let paths = mcp_companion::ipc::record::locate(socket).await;
    let ControlResponse::Approved(report) =
        control::request(&paths.control, &ControlRequest::Approve { id, answer }).await?
    else {
        anyhow::bail!("unexpected answer to approve");
    };
    let what = match answer {
        Answer::Once => "allowed once",
        Answer::Always => "allowed, and always from now on (toolPolicy \"allow\" written)",
        Answer::Deny => "denied",
    };
    outln!(
        "{}: {} of server {} {what}",
        report.approved.id,
        out::visible(&report.approved.tool),
        out::visible(&report.approved.server)
    );
    Ok(ExitCode::SUCCESS)
}

/// Runs `approvals`: the waiting calls; with `watch`, attached as an approver, printing each
/// ask and its end, and answering `ID once|always|deny` lines read from stdin; with `full`,
/// each call's whole arguments instead of their preview.
pub async fn approvals(
    socket: Option<&Path>,
    watch: bool,
    full: bool,
    json: bool,
) -> anyhow::Result<ExitCode> {
    let paths = mcp_companion::ipc::record::locate(socket).await;
    let mut client = control::ControlClient::connect(&paths.control).await?;
    client.send(&ControlRequest::Approvals { watch }).await?;
    let mut stdin = tokio::io::BufReader::new(tokio::io::stdin()).lines();
    let reading = watch;
    loop {
        let answer = tokio::select! {
            answer = client.next() => answer?,
            line = stdin.next_line(), if reading => {
                match line {
                    Ok(Some(line)) => answer_line(&paths.control, &line).await,
                    // An approver that can no longer answer detaches, so the companion refuses
                    // explicit asks at once instead of waiting out their timeout.
                    Ok(None) | Err(_) => {
                        eprintln!("standard input closed: detached as an approver (nothing could answer)");
                        return Ok(ExitCode::SUCCESS);
                    }
                }
                continue;
            }
        };
        match answer {
            None if watch => {
                eprintln!("the companion went away (stopped or crashed): no longer attached");
                return Ok(ExitCode::FAILURE);
            }
            None => return Ok(ExitCode::SUCCESS),
            Some(ControlResponse::Approvals(report)) => {
                if json {
                    outln!("{}", serde_json::to_string(&report)?);
                } else if report.open.is_empty() && !watch {
                    outln!("No call waits for approval.");
                }
                if !json {
                    for ask in &report.open {
                        show(ask, full);
                    }
                }
                if watch && !json {
                    outln!(
                        "Attached as an approver; answer with `ID once`, `ID always` or `ID deny` (Ctrl-C to detach)."
                    );
                }
            }
            Some(ControlResponse::Approval(event)) => {
                if json {
                    outln!("{}", serde_json::to_string(&event)?);
                } else {
                    match &event {
                        ApprovalEvent::Asked(ask) => show(ask, full),
                        ApprovalEvent::Closed { id, outcome } => {
                            outln!(
                                "{id}: closed ({})",
                                serde_json::to_string(outcome)?.trim_matches('"')
                            );
                        }
                    }
                }
            }
            Some(_) => anyhow::bail!("unexpected answer to approvals"),
        }
        if !watch {
            return Ok(ExitCode::SUCCESS);
        }
    }
}

/// Answers the `ID ANSWER` line a watcher typed (errors are printed, the watch goes on).
async fn answer_line(control_path: &Path, line: &str) {
    let mut words = line.split_whitespace();
    let (Some(id), Some(answer)) = (words.next(), words.next()) else {
        return;
    };
    let (Ok(id), Some(answer)) = (id.parse::<u64>(), Answer::parse(answer)) else {
        eprintln!("answer with `ID once`, `ID always` or `ID deny`");
        return;
    };
    if let Err(e) = control::request(control_path, &ControlRequest::Approve { id, answer }).await {
        eprintln!("{id}: {e}");
    }
}

/// `text` cut at [`CLIENT_TEXT_MAX`] characters (an agent's name is the agent's to choose).
fn cut(text: &str) -> std::borrow::Cow<'_, str> {
    match text.char_indices().nth(CLIENT_TEXT_MAX) {
        Some((end, _)) => format!("{}…", &text[..end]).into(),
        None => text.into(),
    }
}

/// One ask for a person: the tool, the agent, the server and the arguments — their preview,
/// or with `full` the whole of them (the companion masked known secrets; the terminal shows
/// the text, never obeys it).
fn show(ask: &Ask, full: bool) {
    let agent = match (&ask.agent, ask.agent_pid) {
        (Some(name), Some(pid)) => format!("{name} (pid {pid})"),
        (Some(name), None) => name.clone(),
        (None, Some(pid)) => format!("pid {pid}"),
        (None, None) => "an unnamed agent".to_owned(),
    };
    let arguments = match (&ask.arguments_full, full) {
        (Some(whole), true) => whole,
        _ => &ask.arguments,
    };
    // One line each for the agent, tool and server, which the agent and the server chose: a
    // newline or a control sequence in them must not fake a line of our own.
    let _ = out::line(format_args!(
        "{}: {} wants to call {} of server {} ({} s to answer; {}):\n{}",
        ask.id,
        out::inert(&cut(&agent)),
        out::inert(&ask.tool),
        out::inert(&ask.server),
        ask.timeout_s,
        ask.reason,
        out::visible(arguments)
    ));
    if ask.arguments_full.is_some() && !full {
        let _ = out::line(format_args!(
            "(arguments cut: `mcp-companion approvals --full` shows them whole)"
        ));
    }
}
