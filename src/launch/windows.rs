//! Windows launcher rules and cmd.exe quoting (DESIGN §8).
//!
//! The problem: `npx`, `npm`, `pnpm`, `yarn` and most tool shims on Windows are batch files
//! (`npx.cmd`), and `CreateProcess` cannot run a batch file by name (`program not found`, os error
//! 193). They must run under `cmd.exe`, and cmd.exe re-parses the whole command line: `&`, `|`,
//! `<`, `>`, `^`, `%` and quotes in an argument would split or rewrite it.
//!
//! The strategy: explicit shells (`cmd`, `powershell`, `pwsh`, with or without `.exe`) and real
//! binaries (`.exe`, `.com`) run as they are. The known shims, and any command whose given or
//! resolved name ends in `.cmd`/`.bat`, run as `%COMSPEC% /d /v:off /s /c ""<command>" <args…>"`
//! (COMSPEC from the entry's env, then the companion's, then `cmd.exe`). The tail after the
//! program is built here, byte for byte, and spawned with `raw_arg`, so no second quoting layer
//! applies:
//!
//! - `/s` makes cmd.exe's rule unconditional: it strips the first and the last quote of the line
//!   and runs the rest (`cmd /?`, "processing quote characters"). Without `/s`, a line with exactly
//!   two quotes around an existing program keeps them, any other line loses them, so the result
//!   would depend on the arguments;
//! - the command is written in quotes, so a folder with spaces, `&`, `(` or `^` in its name stays
//!   one token. A caret cannot do that: carets are removed before cmd.exe splits off the command
//!   name, so `C:\dir^ with^ space\x.cmd` runs `C:\dir` (a bug seen under Wine).
//!   Rust's standard library (`cmd.exe /e:ON /v:OFF /d /c ""script" args"`, since
//!   CVE-2024-24576 "BatBadBut") writes batch paths the same way;
//! - `/v:off` turns delayed expansion off even when the registry turns it on, so `!` is literal;
//! - an argument made only of safe characters is written as is (`-y`, `pkg@latest`);
//! - any other argument is quoted for the child's `CommandLineToArgvW` rules (backslashes doubled
//!   before a quote, `"` as `\"`), then every cmd.exe metacharacter, the quotes included, is
//!   escaped with `^`, so cmd.exe never enters quote mode and removes exactly one caret each; `%`
//!   is escaped too, which leaves every `%name^%` undefined, so nothing expands;
//! - when the target is a batch file, the escaping is applied twice, because the batch file's
//!   `%*` line is parsed by cmd.exe a second time (the approach of node's `cross-spawn`).
//!
//! Limits: `%NAME%` inside the command path itself is expanded by cmd.exe (quotes do not stop it;
//! Windows file names rarely hold `%`); a `"` cannot occur in a Windows file name.
//!
//! Fallback: a shim name that cannot be resolved is still wrapped and assumed to be a batch file.

use std::collections::BTreeMap;
use std::path::Path;

use super::{TargetOs, env};

/// cmd.exe's switches before the command line: no AutoRun, no delayed expansion, strip the outer
/// quotes (`/s`), run and exit (`/c`).
pub const SWITCHES: &str = "/d /v:off /s /c";

/// Programs that are batch-file shims on Windows and must run under cmd.exe.
const SHIMS: &[&str] = &["npx", "npm", "pnpm", "yarn", "bunx"];

/// Explicit shells: trusted to parse their own command line.
const SHELLS: &[&str] = &[
    "cmd",
    "cmd.exe",
    "powershell",
    "powershell.exe",
    "pwsh",
    "pwsh.exe",
];

/// How a command runs on Windows.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Wrapped {
    /// The cmd.exe to run (`COMSPEC`).
    pub comspec: String,
    /// The arguments as cmd.exe will see them, for display: the switches, the command, its args.
    pub args: Vec<String>,
    /// The exact command-line tail after the program, for `raw_arg`.
    pub raw: String,
}

/// The lower-cased last path segment of `command` (`\` and `/` both separate).
pub fn base_name(command: &str) -> String {
    command
        .rsplit(['\\', '/'])
        .next()
        .unwrap_or(command)
        .to_ascii_lowercase()
}

fn is_batch(name: &str) -> bool {
    let name = name.to_ascii_lowercase();
    name.ends_with(".cmd") || name.ends_with(".bat")
}

/// Wraps `command` in cmd.exe when DESIGN §8 says so; `None` leaves it unchanged.
///
/// `resolved` is where the lookup found the command, if anywhere; `entry_env` is the entry's own
/// `env` (searched for `COMSPEC` first), `parent` the companion's environment.
pub fn wrap(
    command: &str,
    args: &[String],
    resolved: Option<&Path>,
    entry_env: &BTreeMap<String, String>,
    parent: &dyn Fn(&str) -> Option<String>,
) -> Option<Wrapped> {
    let base = base_name(command);
    if SHELLS.contains(&base.as_str()) || base.ends_with(".exe") || base.ends_with(".com") {
        return None;
    }
    let resolved_batch = resolved
        .and_then(|p| p.to_str())
        .is_some_and(|p| is_batch(&base_name(p)));
    let shim = SHIMS.contains(&base.as_str());
    if !(shim || is_batch(&base) || resolved_batch) {
        return None;
    }
    // An unresolved shim is almost certainly `<name>.cmd`; a resolved `.exe` (bunx) is not.
    let batch = is_batch(&base) || resolved_batch || (shim && resolved.is_none());
    let comspec = env::get(entry_env, TargetOs::Windows, "COMSPEC")
        .map(str::to_owned)
        .or_else(|| parent("COMSPEC"))
        .filter(|c| !c.is_empty())
        .unwrap_or_else(|| "cmd.exe".to_owned());
    let mut raw = format!("{SWITCHES} \"{}", quote_command(command));
    for arg in args {
        raw.push(' ');
        raw.push_str(&escape_arg(arg, batch));
    }
    raw.push('"');
    let mut shown: Vec<String> = SWITCHES.split(' ').map(str::to_owned).collect();
    shown.push(command.to_owned());
    shown.extend(args.iter().cloned());
    Some(Wrapped {
        comspec,
        args: shown,
        raw,
    })
}

fn is_meta(c: char) -> bool {
    matches!(
        c,
        '(' | ')'
            | '['
            | ']'
            | '%'
            | '!'
            | '^'
            | '"'
            | '`'
            | '<'
            | '>'
            | '&'
            | '|'
            | ';'
            | ','
            | ' '
            | '*'
            | '?'
            | '\t'
    )
}

fn caret_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len() * 2);
    for c in s.chars() {
        if is_meta(c) {
            out.push('^');
        }
        out.push(c);
    }
    out
}

/// The command token for `cmd /s /c "…"`: in quotes, so spaces and `&()^` stay in the name.
///
/// A Windows file name holds no `"`; one in `command` is dropped rather than ending the quotes.
pub fn quote_command(command: &str) -> String {
    format!("\"{}\"", command.replace('"', ""))
}

/// One argument for `cmd /c`, surviving cmd.exe (twice when `batch`) and `CommandLineToArgvW`.
pub fn escape_arg(arg: &str, batch: bool) -> String {
    let safe = !arg.is_empty()
        && arg.chars().all(|c| {
            c.is_alphanumeric() || matches!(c, '-' | '_' | '.' | '/' | ':' | '\\' | '@' | '+' | '~')
        });
    if safe {
        return arg.to_owned();
    }
    let quoted = argv_quote(arg);
    let once = caret_escape(&quoted);
    if batch { caret_escape(&once) } else { once }
}

/// Quotes `arg` for the Microsoft C runtime's argument parser (`CommandLineToArgvW`).
fn argv_quote(arg: &str) -> String {
    let mut out = String::from("\"");
    let mut backslashes = 0usize;
    for c in arg.chars() {
        match c {
            '\\' => backslashes += 1,
            '"' => {
                out.extend(std::iter::repeat_n('\\', backslashes * 2 + 1));
                out.push('"');
                backslashes = 0;
            }
            _ => {
                out.extend(std::iter::repeat_n('\\', backslashes));
                out.push(c);
                backslashes = 0;
            }
        }
    }
    out.extend(std::iter::repeat_n('\\', backslashes * 2));
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// cmd.exe's caret pass on a line with no unescaped quotes: `^x` becomes `x`.
    fn cmd_unescape(line: &str) -> String {
        let mut out = String::new();
        let mut chars = line.chars();
        while let Some(c) = chars.next() {
            if c == '^' {
                if let Some(next) = chars.next() {
                    out.push(next);
                }
            } else {
                out.push(c);
            }
        }
        out
    }

    /// The Microsoft C runtime's argument splitting (the 2008+ rules).
    fn argv_parse(line: &str) -> Vec<String> {
        let mut args = Vec::new();
        let chars: Vec<char> = line.chars().collect();
        let mut i = 0;
        while i < chars.len() {
            while i < chars.len() && (chars[i] == ' ' || chars[i] == '\t') {
                i += 1;
            }
            if i >= chars.len() {
                break;
            }
            let mut cur = String::new();
            let mut quoted = false;
            while i < chars.len() && (quoted || (chars[i] != ' ' && chars[i] != '\t')) {
                if chars[i] == '\\' {
                    let start = i;
                    while i < chars.len() && chars[i] == '\\' {
                        i += 1;
                    }
                    let n = i - start;
                    if i < chars.len() && chars[i] == '"' {
                        cur.extend(std::iter::repeat_n('\\', n / 2));
                        if n % 2 == 1 {
                            cur.push('"');
                            i += 1;
                        }
                    } else {
                        cur.extend(std::iter::repeat_n('\\', n));
                    }
                } else if chars[i] == '"' {
                    if quoted && chars.get(i + 1) == Some(&'"') {
                        cur.push('"');
                        i += 2;
                        continue;
                    }
                    quoted = !quoted;
                    i += 1;
                } else {
                    cur.push(chars[i]);
                    i += 1;
                }
            }
            args.push(cur);
        }
        args
    }

    const NASTY: &[&str] = &[
        "a&b \"c d\"",
        "plain",
        "",
        "with space",
        "pipe|and>redirect<",
        "caret^percent%PATH%",
        "trailing\\",
        "back\\\\\"slash",
        "bang!(paren)[x],semi;",
        "\"",
        "tab\there",
    ];

    #[test]
    fn arguments_survive_cmd_once_and_a_batch_file_again() {
        for batch in [false, true] {
            let line: Vec<String> = NASTY.iter().map(|a| escape_arg(a, batch)).collect();
            let mut seen = cmd_unescape(&line.join(" "));
            if batch {
                seen = cmd_unescape(&seen);
            }
            assert_eq!(argv_parse(&seen), NASTY, "batch={batch}: {seen}");
        }
    }

    #[test]
    fn escaped_arguments_hold_no_live_quote_or_operator() {
        for arg in NASTY {
            let esc = escape_arg(arg, false);
            let mut prev = ' ';
            for c in esc.chars() {
                if is_meta(c) && c != '^' {
                    assert_eq!(prev, '^', "{arg:?} -> {esc}");
                }
                prev = if prev == '^' && c == '^' { ' ' } else { c };
            }
        }
    }

    #[test]
    fn safe_arguments_are_written_as_is() {
        for arg in ["-y", "pkg@latest", r"C:\x\y.txt", "--flag", "a.b/c:d+e~f"] {
            assert_eq!(escape_arg(arg, true), arg);
        }
    }

    #[test]
    fn wrap_follows_design_8() {
        let none = BTreeMap::new();
        let parent = |_: &str| None;
        let cases: &[(&str, Option<&str>, bool)] = &[
            ("npx", Some(r"C:\node\npx.cmd"), true),
            ("npx", None, true),
            ("NPM", None, true),
            ("bunx", Some(r"C:\bun\bunx.exe"), true),
            ("custom", Some(r"C:\Tools\custom.CMD"), true),
            (r"C:\tools\run.BAT", None, true),
            ("python.exe", Some(r"C:\py\python.exe"), false),
            ("cmd.exe", None, false),
            ("cmd", None, false),
            ("powershell", None, false),
            ("pwsh.exe", None, false),
            ("uvx", Some(r"C:\u\uvx.exe"), false),
            ("tool.com", None, false),
            ("node", None, false),
        ];
        for (command, resolved, wrapped) in cases {
            let got = wrap(command, &[], resolved.map(Path::new), &none, &parent);
            assert_eq!(got.is_some(), *wrapped, "{command} {resolved:?}");
        }
    }

    #[test]
    fn comspec_comes_from_entry_then_companion_then_default() {
        let entry = BTreeMap::from([("ComSpec".to_owned(), r"D:\cmd.exe".to_owned())]);
        let parent = |k: &str| (k == "COMSPEC").then(|| r"C:\Windows\System32\cmd.exe".to_owned());
        let no_parent = |_: &str| None;
        let pick = |e: &BTreeMap<String, String>, p: &dyn Fn(&str) -> Option<String>| {
            wrap("npx", &[], None, e, p).map(|w| w.comspec)
        };
        assert_eq!(pick(&entry, &parent).as_deref(), Some(r"D:\cmd.exe"));
        assert_eq!(
            pick(&BTreeMap::new(), &parent).as_deref(),
            Some(r"C:\Windows\System32\cmd.exe")
        );
        assert_eq!(
            pick(&BTreeMap::new(), &no_parent).as_deref(),
            Some("cmd.exe")
        );
    }

    /// cmd.exe's phase 2 on one line: outside quotes `^x` becomes `x` and `&|<>` are operators
    /// (an error here); quotes toggle quote mode and stay. Returns the line as it is executed.
    fn cmd_phase2(line: &str) -> Result<String, String> {
        let mut out = String::new();
        let mut quoted = false;
        let mut chars = line.chars();
        while let Some(c) = chars.next() {
            match c {
                '"' => {
                    quoted = !quoted;
                    out.push(c);
                }
                '^' if !quoted => out.extend(chars.next()),
                '&' | '|' | '<' | '>' if !quoted => return Err(format!("live {c} in {line}")),
                _ => out.push(c),
            }
        }
        Ok(out)
    }

    /// What `cmd.exe /s /c <tail>` runs: the command and the argument string it passes on
    /// (`cmd /?`: with `/s`, the first and the last quote of the line are removed).
    fn cmd_s_c(tail: &str) -> Result<(String, String), String> {
        let inner = tail.strip_prefix('"').ok_or("no opening quote")?;
        let last = inner.rfind('"').ok_or("no closing quote")?;
        let line = cmd_phase2(&format!("{}{}", &inner[..last], &inner[last + 1..]))?;
        // The command token: a quoted name up to its closing quote, else up to a delimiter.
        let (command, rest) = match line.strip_prefix('"') {
            Some(q) => q.split_once('"').ok_or("unterminated command")?,
            None => line.split_once([' ', '\t']).unwrap_or((&line, "")),
        };
        Ok((command.to_owned(), rest.to_owned()))
    }

    fn wrapped(command: &str, args: &[&str]) -> Wrapped {
        let args: Vec<String> = args.iter().map(|a| (*a).to_owned()).collect();
        wrap(command, &args, None, &BTreeMap::new(), &|_| None).expect("a batch file is wrapped")
    }

    #[test]
    fn a_batch_file_in_a_folder_with_spaces_and_ampersand_runs_with_every_argument_intact() {
        let command = r"C:\Users\Zoë\my tools & (more)\run^it.cmd";
        let mut args = NASTY.to_vec();
        args.extend(["100%", "%PATH%", "!x!", "naïve 日本"]);
        let w = wrapped(command, &args);
        let tail = w
            .raw
            .strip_prefix(SWITCHES)
            .expect("switches first")
            .trim_start();
        let (ran, rest) = cmd_s_c(tail).expect("cmd.exe parses the line");
        assert_eq!(ran, command);
        // The batch file's `%*` line goes through phase 2 once more.
        let rest = cmd_phase2(&rest).expect("the batch line parses");
        assert_eq!(argv_parse(&rest), args, "{}", w.raw);
    }

    #[test]
    fn the_launch_line_quotes_the_command_inside_outer_quotes() {
        let w = wrapped(r"C:\Program Files\x\run.bat", &["-y", "a b"]);
        assert_eq!(
            w.raw,
            r#"/d /v:off /s /c ""C:\Program Files\x\run.bat" -y ^^^"a^^^ b^^^"""#
        );
        assert_eq!(
            w.args,
            [
                "/d",
                "/v:off",
                "/s",
                "/c",
                r"C:\Program Files\x\run.bat",
                "-y",
                "a b"
            ]
        );
    }

    /// The old form `/d /c C:\dir^ with^ space\x.cmd` ran `C:\dir`: carets are removed before the
    /// command name is split off.
    #[test]
    fn a_caret_escaped_command_name_would_split_at_the_space() {
        let line = cmd_phase2(r"C:\dir^ with^ space\x.cmd").expect("parses");
        assert_eq!(line.split(' ').next(), Some(r"C:\dir"));
        assert_eq!(
            quote_command(r"C:\dir with space\x.cmd"),
            r#""C:\dir with space\x.cmd""#
        );
    }
}
