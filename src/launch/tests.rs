//! Launch plans for Windows, macOS and Linux, on every host: the lookup is a fake file system.

use std::path::{Path, PathBuf};

use super::*;

/// A fake file system: `(dir, file)` pairs; a bare name is searched in the PATH's dirs with
/// Windows `PATHEXT`-style suffixes when the OS is Windows.
struct Fake {
    os: TargetOs,
    files: Vec<(&'static str, &'static str)>,
    dirs: Vec<&'static str>,
}

impl Lookup for Fake {
    fn find(&self, command: &str, path: &str, _cwd: &Path) -> Option<PathBuf> {
        let sep = if self.os == TargetOs::Windows {
            "\\"
        } else {
            "/"
        };
        let exts: &[&str] = if self.os == TargetOs::Windows && !command.contains('.') {
            &[".COM", ".EXE", ".BAT", ".CMD"]
        } else {
            &[""]
        };
        if has_separator(self.os, command) {
            return self
                .files
                .iter()
                .any(|(d, f)| format!("{d}{sep}{f}").eq_ignore_ascii_case(command))
                .then(|| PathBuf::from(command));
        }
        for dir in path.split(self.os.path_separator()) {
            for ext in exts {
                let want = format!("{command}{ext}");
                if let Some((d, f)) = self
                    .files
                    .iter()
                    .find(|(d, f)| *d == dir && f.eq_ignore_ascii_case(&want))
                {
                    return Some(PathBuf::from(format!("{d}{sep}{f}")));
                }
            }
        }
        None
    }

    fn is_dir(&self, dir: &Path) -> bool {
        self.dirs.iter().any(|d| Path::new(d) == dir)
    }
}

fn windows_fs() -> Fake {
    Fake {
        os: TargetOs::Windows,
        files: vec![
            (r"C:\Program Files\nodejs", "npx.cmd"),
            (r"C:\Program Files\nodejs", "node.exe"),
            (r"C:\Tools", "custom-launcher.cmd"),
            (r"C:\Python", "python.exe"),
            (r"C:\Windows\System32", "cmd.exe"),
            (
                r"C:\Windows\System32\WindowsPowerShell\v1.0",
                "powershell.exe",
            ),
            (r"C:\Users\u\.local\bin", "uvx.exe"),
            (r"C:\tools", "run.BAT"),
        ],
        dirs: vec![r"C:\work"],
    }
}

fn unix_fs(os: TargetOs) -> Fake {
    Fake {
        os,
        files: vec![
            ("/usr/bin", "npx"),
            ("/usr/bin", "custom-launcher"),
            ("/usr/bin", "python.exe"),
            ("/usr/bin", "cmd.exe"),
            ("/usr/bin", "powershell"),
            ("/usr/bin", "uvx"),
            ("/opt/gui/bin", "mcp-fake"),
        ],
        dirs: vec!["/work"],
    }
}

fn windows_vars(k: &str) -> Option<String> {
    match k {
        "PATH" => Some(
            r"C:\Windows\System32;C:\Windows\System32\WindowsPowerShell\v1.0;C:\Program Files\nodejs;C:\Python;C:\Users\u\.local\bin"
                .into(),
        ),
        "COMSPEC" => Some(r"C:\Windows\System32\cmd.exe".into()),
        "GITHUB_TOKEN" => Some("ghp_secret".into()),
        _ => None,
    }
}

fn unix_vars(k: &str) -> Option<String> {
    match k {
        "PATH" => Some("/usr/bin:/bin".into()),
        "HOME" => Some("/home/u".into()),
        "GITHUB_TOKEN" => Some("ghp_secret".into()),
        _ => None,
    }
}

fn entry(command: &str, args: &[&str], env: &[(&str, &str)]) -> StdioConfig {
    StdioConfig {
        command: command.to_owned(),
        args: args.iter().map(|a| (*a).to_owned()).collect(),
        env: env
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect(),
        cwd: None,
    }
}

type Vars = dyn Fn(&str) -> Option<String>;

fn plan_on(os: TargetOs, cfg: &StdioConfig, gui: Option<&LoginPath>) -> Launch {
    let (fs, vars, base): (Fake, &Vars, &Path) = match os {
        TargetOs::Windows => (windows_fs(), &windows_vars, Path::new(r"C:\work")),
        _ => (unix_fs(os), &unix_vars, Path::new("/work")),
    };
    plan(
        cfg,
        &Host {
            os,
            vars,
            gui_path: gui,
            lookup: &fs,
            base_dir: base,
        },
    )
}

/// The DESIGN §8 table; `None` expects the resolved program with unchanged arguments.
#[test]
fn windows_launch_lines_follow_design_8() {
    let cases: &[(StdioConfig, Option<&str>, Option<&str>)] = &[
        (
            entry("npx", &["-y", "pkg@latest"], &[]),
            Some(r#"C:\Windows\System32\cmd.exe /d /v:off /s /c ""npx" -y pkg@latest""#),
            None,
        ),
        (
            entry("custom-launcher", &["serve"], &[("PATH", r"C:\Tools")]),
            Some(r#"C:\Windows\System32\cmd.exe /d /v:off /s /c ""custom-launcher" serve""#),
            None,
        ),
        (
            entry(r"C:\tools\run.BAT", &[], &[]),
            Some(r#"C:\Windows\System32\cmd.exe /d /v:off /s /c ""C:\tools\run.BAT"""#),
            None,
        ),
        (
            entry("python.exe", &["-m", "x"], &[]),
            None,
            Some(r"C:\Python\python.exe"),
        ),
        (
            entry("cmd.exe", &["/c", "echo", "hi"], &[]),
            None,
            Some(r"C:\Windows\System32\cmd.exe"),
        ),
        (
            entry("powershell", &["-File", "a.ps1"], &[]),
            None,
            Some(r"C:\Windows\System32\WindowsPowerShell\v1.0\powershell.exe"),
        ),
        (
            entry("uvx", &["tool"], &[]),
            None,
            Some(r"C:\Users\u\.local\bin\uvx.exe"),
        ),
    ];
    for (cfg, line, program) in cases {
        let launch = plan_on(TargetOs::Windows, cfg, None);
        assert_eq!(launch.error, None, "{cfg:?}");
        let spec = launch.spec;
        match (line, program) {
            (Some(line), _) => {
                assert_eq!(spec.display_line(), *line, "{cfg:?}");
                assert!(spec.raw_args.is_some());
            }
            (None, Some(program)) => {
                assert_eq!(spec.program, PathBuf::from(program), "{cfg:?}");
                assert_eq!(spec.args, cfg.args, "{cfg:?}");
                assert_eq!(spec.raw_args, None, "{cfg:?}");
            }
            (None, None) => unreachable!("every case expects something"),
        }
    }
}

#[test]
fn windows_argument_with_cmd_metacharacters_is_escaped_exactly() {
    let cfg = entry("npx", &["-y", "pkg", "a&b \"c d\""], &[]);
    let spec = plan_on(TargetOs::Windows, &cfg, None).spec;
    // npx.cmd is a batch file: escaped twice (cmd /c, then the batch file's %* line).
    assert_eq!(
        spec.raw_args.as_deref(),
        Some(r#"/d /v:off /s /c ""npx" -y pkg ^^^"a^^^&b^^^ \^^^"c^^^ d\^^^"^^^"""#)
    );
    let cfg = entry(r"C:\Python\python.exe", &["a&b \"c d\""], &[]);
    let spec = plan_on(TargetOs::Windows, &cfg, None).spec;
    assert_eq!(
        spec.args,
        vec!["a&b \"c d\""],
        "a real binary gets std quoting"
    );
}

#[test]
fn the_same_configs_are_unchanged_on_linux_and_macos() {
    let configs = [
        entry("npx", &["-y", "pkg@latest"], &[]),
        entry("custom-launcher", &["serve"], &[("PATH", "/usr/bin")]),
        entry("python.exe", &["-m", "x"], &[]),
        entry("cmd.exe", &["/c", "echo", "hi"], &[]),
        entry("powershell", &["-File", "a.ps1"], &[]),
        entry("uvx", &["tool", "a&b \"c d\""], &[]),
    ];
    for os in [TargetOs::Linux, TargetOs::Macos] {
        for cfg in &configs {
            let launch = plan_on(os, cfg, None);
            assert_eq!(launch.error, None, "{os:?} {cfg:?}");
            assert_eq!(
                launch.spec.program,
                PathBuf::from(format!("/usr/bin/{}", cfg.command))
            );
            assert_eq!(launch.spec.args, cfg.args, "{os:?} {cfg:?}");
            assert_eq!(launch.spec.raw_args, None);
        }
        let bat = plan_on(os, &entry(r"C:\tools\run.BAT", &[], &[]), None);
        assert!(bat.spec.raw_args.is_none(), "never wrapped off Windows");
    }
}

#[test]
fn secrets_stay_out_and_entry_env_gets_in_on_every_os() {
    for os in [TargetOs::Linux, TargetOs::Macos, TargetOs::Windows] {
        let cfg = entry("npx", &[], &[("GITHUB_PERSONAL_ACCESS_TOKEN", "t")]);
        let spec = plan_on(os, &cfg, None).spec;
        assert!(!spec.env.contains_key("GITHUB_TOKEN"), "{os:?}");
        assert_eq!(spec.env["GITHUB_PERSONAL_ACCESS_TOKEN"], "t");
        assert_eq!(spec.path_source, PathSource::Process);
    }
}

#[test]
fn gui_mode_extends_path_with_login_shell_and_tool_dirs() {
    let gui = LoginPath {
        shell: Some("/bin/zsh".into()),
        entries: vec!["/opt/gui/bin".into(), "/usr/bin".into()],
        tool_dirs: vec!["/home/u/.cargo/bin".into()],
        fallback: None,
    };
    let cfg = entry("mcp-fake", &[], &[]);
    for os in [TargetOs::Linux, TargetOs::Macos] {
        assert!(matches!(
            plan_on(os, &cfg, None).error,
            Some(LaunchError::NotFound { .. })
        ));
        let launch = plan_on(os, &cfg, Some(&gui));
        assert_eq!(launch.error, None);
        assert_eq!(launch.spec.program, PathBuf::from("/opt/gui/bin/mcp-fake"));
        assert_eq!(
            launch.spec.path(os),
            "/usr/bin:/bin:/opt/gui/bin:/home/u/.cargo/bin"
        );
        assert!(matches!(launch.spec.path_source, PathSource::Gui { .. }));
        let own = plan_on(os, &entry("mcp-fake", &[], &[("PATH", "/x")]), Some(&gui));
        assert_eq!(own.spec.path_source, PathSource::Entry, "entry PATH wins");
        assert_eq!(own.spec.path(os), "/x");
    }
    let win = plan_on(TargetOs::Windows, &entry("npx", &[], &[]), Some(&gui));
    assert_eq!(
        win.spec.path_source,
        PathSource::Process,
        "no login shell on Windows"
    );
}

#[test]
fn problems_are_reported_with_the_plan_still_shown() {
    let mut bad_cwd = entry("npx", &[], &[]);
    bad_cwd.cwd = Some("/no/such/dir".into());
    let cases: &[(TargetOs, StdioConfig, &str)] = &[
        (
            TargetOs::Linux,
            entry("nope", &[], &[]),
            "command \"nope\" not found on PATH (/usr/bin:/bin)",
        ),
        (
            TargetOs::Linux,
            entry("/abs/nope", &[], &[]),
            "command \"/abs/nope\" does not exist",
        ),
        (
            TargetOs::Macos,
            entry("  ", &[], &[]),
            "field \"command\" is empty",
        ),
        (
            TargetOs::Linux,
            bad_cwd,
            "field \"cwd\": directory /no/such/dir does not exist",
        ),
        (
            TargetOs::Windows,
            entry("npx", &[], &[("PATH", r"C:\empty")]),
            r#"command "npx" not found on PATH (C:\empty)"#,
        ),
    ];
    for (os, cfg, message) in cases {
        let launch = plan_on(*os, cfg, None);
        let err = launch.clone().into_result().expect_err("problem");
        assert_eq!(err.to_string(), *message, "{os:?}");
        assert!(!launch.spec.display_line().is_empty());
    }
    let ok = entry("npx", &[], &[]);
    let mut ok = ok;
    ok.cwd = Some("/work".into());
    assert!(plan_on(TargetOs::Linux, &ok, None).into_result().is_ok());
}

#[test]
fn target_os_names_parse() {
    let cases = [
        ("windows", Some(TargetOs::Windows)),
        ("MacOS", Some(TargetOs::Macos)),
        ("linux", Some(TargetOs::Linux)),
        ("beos", None),
    ];
    for (s, want) in cases {
        assert_eq!(s.parse::<TargetOs>().ok(), want, "{s}");
    }
}

#[cfg(unix)]
#[test]
fn the_system_lookup_finds_real_programs() {
    let found = SystemLookup.find("sh", "/usr/bin:/bin", Path::new("/"));
    assert!(found.is_some_and(|p| p.is_absolute()));
    assert!(
        SystemLookup
            .find("sh", "/nonexistent", Path::new("/"))
            .is_none()
    );
    assert!(SystemLookup.is_dir(Path::new("/")));
}
