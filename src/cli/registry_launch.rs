//! What `add` shows before it writes an entry from a registry: the exact launch line, and a
//! question when the registry's `runtimeArguments`/`packageArguments` add flags (docker's
//! `--privileged -v /:/host` is one such line).

use std::io::IsTerminal as _;

use anyhow::bail;
use mcp_companion::manage::registry::install::Planned;
use serde_json::Value;

use super::out::inert;

/// One argv item as a shell would need it, control characters escaped.
fn word(arg: &str) -> String {
    let arg = inert(arg);
    let plain = !arg.is_empty()
        && arg
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./:=@,+%^".contains(c));
    if plain {
        arg.into_owned()
    } else {
        format!("'{}'", arg.replace('\'', r"'\''"))
    }
}

/// The launch line of `entry`: `command arg…` (with the names of the environment variables
/// it sets), or the URL a remote connects to.
pub fn launch_line(entry: &Value) -> String {
    if let Some(url) = entry.get("url").and_then(Value::as_str) {
        return format!("connects to {}", inert(url));
    }
    let mut words: Vec<String> = entry
        .get("command")
        .and_then(Value::as_str)
        .map(word)
        .into_iter()
        .collect();
    if let Some(args) = entry.get("args").and_then(Value::as_array) {
        words.extend(args.iter().filter_map(Value::as_str).map(word));
    }
    let mut line = format!("runs {}", words.join(" "));
    if let Some(env) = entry.get("env").and_then(Value::as_object)
        && !env.is_empty()
    {
        let names: Vec<String> = env.keys().map(|k| inert(k).into_owned()).collect();
        line.push_str(&format!("  (environment: {})", names.join(", ")));
    }
    line
}

/// Prints the launch line of `planned` (stderr: stdout may be the dry run's JSON) and, when
/// the registry added flags, asks before writing unless `yes`. A dry run writes nothing, so
/// it never asks; without a terminal to ask on, the answer is no.
///
/// # Errors
/// The refusal, naming the flags and `--yes`.
pub fn confirm(planned: &Planned, yes: bool, dry_run: bool) -> anyhow::Result<()> {
    eprintln!(
        "\"{}\" {}",
        inert(&planned.server),
        launch_line(&planned.entry)
    );
    let flags = &planned.built.flags;
    if flags.is_empty() || yes || dry_run {
        return Ok(());
    }
    let shown: Vec<String> = flags.iter().map(|f| word(f)).collect();
    eprintln!("the registry's arguments add the flags {}", shown.join(" "));
    if std::io::stdin().is_terminal() && std::io::stderr().is_terminal() {
        eprint!("Write this entry? [y/N] ");
        let mut answer = String::new();
        std::io::stdin().read_line(&mut answer)?;
        if matches!(answer.trim(), "y" | "Y" | "yes" | "Yes") {
            return Ok(());
        }
    }
    bail!(
        "not added: the registry's arguments add the flags {} to the launch line above; check \
         them, then run again with --yes to accept",
        shown.join(" ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_launch_line_quotes_and_escapes_what_a_shell_or_terminal_would_obey() {
        let entry = serde_json::json!({"command": "docker", "args": ["run", "--privileged",
            "-v", "/:/host", "a b", "it's", "\u{1b}[8mhid"], "env": {"TOKEN": "x"}});
        assert_eq!(
            launch_line(&entry),
            r"runs docker run --privileged -v /:/host 'a b' 'it'\''s' '\x1b[8mhid'  (environment: TOKEN)"
        );
        assert_eq!(
            launch_line(&serde_json::json!({"url": "https://h/mcp"})),
            "connects to https://h/mcp"
        );
    }
}
