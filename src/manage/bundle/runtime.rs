//! `compatibility.runtimes`: the version range a bundle asks of `node` or `python`, against
//! the version the installed program reports (`node --version`, `python3 --version`).
//!
//! Ranges understood: comparators `>=`, `>`, `<=`, `<`, `=` (or none), `^`, `~`, joined by
//! spaces or commas (all must hold), e.g. `>=16.0.0`, `>=3.8,<4.0`, `^20.1`. Anything else
//! (`||`, `x` wildcards) is reported as not checked, never guessed.

use std::cmp::Ordering;

/// What checking a range found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// The version is in the range.
    Fits,
    /// It is not.
    Outside,
    /// The range uses syntax this check does not read.
    Unreadable,
}

fn parse(v: &str) -> Option<Vec<u64>> {
    let v = v.trim().trim_start_matches('v');
    let core = v.split(['-', '+']).next()?;
    let parts: Option<Vec<u64>> = core.split('.').map(|p| p.parse().ok()).collect();
    parts.filter(|p| !p.is_empty() && p.len() <= 4)
}

fn cmp(a: &[u64], b: &[u64]) -> Ordering {
    for i in 0..a.len().max(b.len()) {
        let o = a.get(i).unwrap_or(&0).cmp(b.get(i).unwrap_or(&0));
        if o != Ordering::Equal {
            return o;
        }
    }
    Ordering::Equal
}

/// Whether `version` (e.g. `v18.19.0`, `3.11.2`) is in `range`.
pub fn check(range: &str, version: &str) -> Verdict {
    let Some(have) = parse(version) else {
        return Verdict::Unreadable;
    };
    if range.contains("||") {
        return Verdict::Unreadable;
    }
    let mut any = false;
    for item in range.split([',', ' ']).filter(|s| !s.is_empty()) {
        let (op, rest) = [">=", "<=", ">", "<", "=", "^", "~"]
            .iter()
            .find_map(|op| item.strip_prefix(op).map(|r| (*op, r)))
            .unwrap_or(("=", item));
        let Some(want) = parse(rest) else {
            return Verdict::Unreadable;
        };
        let o = cmp(&have, &want);
        let ok = match op {
            ">=" => o != Ordering::Less,
            "<=" => o != Ordering::Greater,
            ">" => o == Ordering::Greater,
            "<" => o == Ordering::Less,
            "^" => {
                let major = want.iter().position(|p| *p != 0).unwrap_or(want.len() - 1);
                o != Ordering::Less && have.get(..=major) == want.get(..=major)
            }
            "~" => {
                o != Ordering::Less
                    && have.get(..2.min(want.len())) == want.get(..2.min(want.len()))
            }
            _ => have.get(..want.len()) == Some(&want[..]),
        };
        if !ok {
            return Verdict::Outside;
        }
        any = true;
    }
    if any {
        Verdict::Fits
    } else {
        Verdict::Unreadable
    }
}

/// The version `program --version` prints (its last word), `None` when it does not run.
pub fn installed_version(program: &str) -> Option<String> {
    let out = std::process::Command::new(program)
        .arg("--version")
        .stdin(std::process::Stdio::null())
        .output()
        .ok()?;
    let text = if out.stdout.is_empty() {
        out.stderr
    } else {
        out.stdout
    };
    let text = String::from_utf8_lossy(&text);
    text.split_whitespace().last().map(str::to_owned)
}

/// `compatibility.runtimes` for the runtime the entry runs: a version outside the range is
/// refused; a runtime not found or a range not understood is a warning.
pub(super) fn check_manifest(
    manifest: &super::Manifest,
    built: &crate::manage::registry::Built,
    setup: &super::install::Setup<'_>,
    warnings: &mut Vec<String>,
) -> Result<(), super::BundleError> {
    let Some(program) = &built.program else {
        return Ok(());
    };
    let runtime = match manifest.server_type {
        super::manifest::ServerType::Node => "node",
        super::manifest::ServerType::Python | super::manifest::ServerType::Uv => "python",
        super::manifest::ServerType::Binary => return Ok(()),
    };
    let Some(range) = manifest.runtimes.get(runtime) else {
        return Ok(());
    };
    // `uv` brings its own Python: the range is its business.
    if manifest.server_type == super::manifest::ServerType::Uv {
        return Ok(());
    }
    let Some(version) = (setup.version_of)(program) else {
        warnings.push(format!(
            "needs {runtime} {range}; {program} --version did not answer, so it is not checked"
        ));
        return Ok(());
    };
    match check(range, &version) {
        Verdict::Fits => Ok(()),
        Verdict::Outside => Err(super::BundleError::Incompatible {
            reason: format!("it needs {runtime} {range} and {program} is {version}"),
        }),
        Verdict::Unreadable => {
            warnings.push(format!(
                "needs {runtime} \"{}\": that range is not checked here ({program} is {version})",
                super::manifest::quote(range)
            ));
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_hold_or_not_and_unknown_syntax_is_said() {
        let cases = [
            (">=16.0.0", "v18.19.0", Verdict::Fits),
            (">=20", "v18.19.0", Verdict::Outside),
            (">=3.8,<4.0", "3.11.2", Verdict::Fits),
            (">=3.8,<4.0", "4.0.0", Verdict::Outside),
            (">=3.8 <3.10", "3.11.2", Verdict::Outside),
            ("^18.2", "v18.19.0", Verdict::Fits),
            ("^18.2", "v19.0.0", Verdict::Outside),
            ("~3.11", "3.11.9", Verdict::Fits),
            ("~3.11", "3.12.0", Verdict::Outside),
            ("3.11", "3.11.2", Verdict::Fits),
            ("16 || 18", "v18.0.0", Verdict::Unreadable),
            ("18.x", "v18.0.0", Verdict::Unreadable),
            ("", "v18.0.0", Verdict::Unreadable),
        ];
        for (range, version, want) in cases {
            assert_eq!(check(range, version), want, "{range} vs {version}");
        }
    }
}
