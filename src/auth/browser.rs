//! Opening the authorization URL in the user's browser.
//!
//! `$BROWSER` wins when set (the Unix convention: a `:`-separated list of commands, each tried
//! in turn; `%s` stands for the URL, else the URL is appended as the last argument). Otherwise
//! `xdg-open` (Linux, BSD), `open` (macOS) or the URL protocol handler (Windows). No shell is
//! involved: the URL is built from the authorization server's metadata and must never be
//! interpreted as shell syntax.

use std::process::Stdio;

/// Why no browser could be started.
#[derive(Debug, thiserror::Error)]
pub enum BrowserError {
    /// Only `http` and `https` URLs are opened.
    #[error("not opening \"{scheme}:\" URLs in a browser")]
    Scheme {
        /// The refused scheme.
        scheme: String,
    },
    /// Every candidate command failed to start.
    #[error("could not start a browser ({tried}); open the URL yourself")]
    NoBrowser {
        /// The commands tried and what the OS said.
        tried: String,
    },
}

/// Starts the browser on `url` and returns at once (the browser is not waited for).
///
/// # Errors
/// [`BrowserError`] when the URL is not http(s) or no command could be started.
pub fn open(url: &str) -> Result<(), BrowserError> {
    let scheme = url
        .split(':')
        .next()
        .unwrap_or_default()
        .to_ascii_lowercase();
    if scheme != "http" && scheme != "https" {
        return Err(BrowserError::Scheme { scheme });
    }
    let mut tried = Vec::new();
    for argv in commands(std::env::var("BROWSER").ok().as_deref(), url) {
        let Some((program, args)) = argv.split_first() else {
            continue;
        };
        match tokio::process::Command::new(program)
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
        {
            Ok(mut child) => {
                tracing::info!(browser = %program, "opened the browser for sign-in");
                // Reap it whenever it exits; a browser may keep running.
                tokio::spawn(async move {
                    let _ = child.wait().await;
                });
                return Ok(());
            }
            Err(e) => tried.push(format!("{program}: {e}")),
        }
    }
    Err(BrowserError::NoBrowser {
        tried: tried.join("; "),
    })
}

/// The argument vectors to try for `url`, given `$BROWSER`.
fn commands(browser: Option<&str>, url: &str) -> Vec<Vec<String>> {
    if let Some(list) = browser.filter(|b| !b.trim().is_empty()) {
        return list
            .split(':')
            .filter(|c| !c.trim().is_empty())
            .map(|c| {
                let mut argv: Vec<String> = c.split_whitespace().map(str::to_owned).collect();
                if argv.iter().any(|a| a.contains("%s")) {
                    for a in &mut argv {
                        *a = a.replace("%s", url);
                    }
                } else {
                    argv.push(url.to_owned());
                }
                argv
            })
            .collect();
    }
    let own = |p: &str| vec![p.to_owned(), url.to_owned()];
    if cfg!(target_os = "macos") {
        vec![own("open")]
    } else if cfg!(windows) {
        vec![vec![
            "rundll32".to_owned(),
            "url.dll,FileProtocolHandler".to_owned(),
            url.to_owned(),
        ]]
    } else {
        vec![own("xdg-open"), own("gio"), own("sensible-browser")]
            .into_iter()
            .map(|mut v| {
                if v[0] == "gio" {
                    v.insert(1, "open".to_owned());
                }
                v
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn browser_variable_is_split_and_the_url_stays_one_argument() {
        let url = "https://a.example/authorize?x=1&y=$(rm -rf ~)";
        let got = commands(Some("firefox --new-tab:chromium %s"), url);
        assert_eq!(
            got,
            vec![
                vec!["firefox".to_owned(), "--new-tab".to_owned(), url.to_owned()],
                vec!["chromium".to_owned(), url.to_owned()],
            ]
        );
    }

    #[test]
    fn only_web_urls_are_opened() {
        assert!(matches!(
            open("file:///etc/passwd"),
            Err(BrowserError::Scheme { .. })
        ));
    }
}
