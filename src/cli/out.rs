//! Printing for the client commands: when the reader of stdout goes away (`status | head`,
//! `status | findstr x` on Windows), the command ends quietly instead of panicking as `println!`
//! does, on every OS.
//!
//! SIGPIPE stays ignored (see `main`): on Unix the write fails with EPIPE; on Windows with
//! `ERROR_NO_DATA` (232) or `ERROR_PIPE_NOT_CONNECTED` (233, which std does not map to
//! [`std::io::ErrorKind::BrokenPipe`]). Either way this module is what ends the command. (With
//! SIGPIPE's default restored, a write to a companion that hung up would also kill the
//! command, silently.)

use std::borrow::Cow;

pub use mcp_companion::io::text::{inert, inert_lines, visible};
use std::fmt;
use std::io::Write as _;

/// The reader of stdout went away; `main` ends the command with status 0 and prints nothing.
#[derive(Debug, thiserror::Error)]
#[error("standard output was closed by its reader")]
pub struct StdoutClosed;

/// Writes `args` and a newline to stdout.
///
/// # Errors
/// [`StdoutClosed`] when the reader is gone; any other write error as it is.
pub fn line(args: fmt::Arguments<'_>) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    out.write_fmt(args)
        .and_then(|()| out.write_all(b"\n"))
        .map_err(|e| {
            if is_closed_pipe(e.kind(), e.raw_os_error(), cfg!(windows)) {
                anyhow::Error::new(StdoutClosed)
            } else {
                anyhow::Error::new(e).context("cannot write to standard output")
            }
        })
}

/// Whether a write error means the pipe's reader is gone: `BrokenPipe` (EPIPE; Windows 109 and
/// 232), or on Windows `ERROR_PIPE_NOT_CONNECTED` (233), which std leaves uncategorised.
pub fn is_closed_pipe(kind: std::io::ErrorKind, raw: Option<i32>, windows: bool) -> bool {
    /// `ERROR_PIPE_NOT_CONNECTED`: "No process is on the other end of the pipe."
    const ERROR_PIPE_NOT_CONNECTED: i32 = 233;
    kind == std::io::ErrorKind::BrokenPipe || (windows && raw == Some(ERROR_PIPE_NOT_CONNECTED))
}

/// [`visible`] when stdout is a terminal; `text` unchanged when it goes to a pipe or a file, for
/// the command whose output is data (`call`).
pub fn visible_on_terminal(text: &str) -> Cow<'_, str> {
    if std::io::IsTerminal::is_terminal(&std::io::stdout()) {
        visible(text)
    } else {
        Cow::Borrowed(text)
    }
}

/// `println!` that returns [`StdoutClosed`] (with `?`) instead of panicking.
macro_rules! outln {
    ($($arg:tt)*) => {
        $crate::cli::out::line(format_args!($($arg)*))?
    };
}
pub(crate) use outln;

#[cfg(test)]
mod tests {
    use std::io::ErrorKind;

    use super::{inert, inert_lines, is_closed_pipe, visible};

    #[test]
    fn a_servers_stderr_keeps_its_lines_and_nothing_else() {
        assert_eq!(
            inert_lines("E\x1b[31mRED\x1b[2J\x1b]0;T\x07 \x1b[8mHID\r\nnext\tline"),
            "E\\x1b[31mRED\\x1b[2J\\x1b]0;T\\x07 \\x1b[8mHID\\x0d\nnext\\x09line"
        );
    }

    #[test]
    fn control_characters_are_shown_not_obeyed_and_colours_kept() {
        assert_eq!(visible("plain\ttext\n"), "plain\ttext\n");
        assert_eq!(
            visible("\x1b[2J\x1b]0;pwned\x07\x1b[31mred\x1b[0m \u{9b}x\r"),
            "\\x1b[2J\\x1b]0;pwned\\x07\x1b[31mred\x1b[0m \\x9bx\\x0d"
        );
        assert_eq!(visible("\x1b[1;32"), "\\x1b[1;32", "an unfinished sequence");
        assert_eq!(visible("del\x7f"), "del\\x7f");
        assert_eq!(
            inert("a\tb\nc\x1b[8mhidden\x1b[0m"),
            "a\\x09b\\x0ac\\x1b[8mhidden\\x1b[0m"
        );
    }

    #[test]
    fn a_closed_pipe_is_recognised_on_every_os() {
        assert!(is_closed_pipe(ErrorKind::BrokenPipe, Some(32), false));
        assert!(is_closed_pipe(ErrorKind::BrokenPipe, Some(232), true));
        // std maps 233 to an uncategorised kind: the raw code decides, on Windows only.
        assert!(is_closed_pipe(ErrorKind::Other, Some(233), true));
        assert!(!is_closed_pipe(ErrorKind::Other, Some(233), false));
        assert!(!is_closed_pipe(ErrorKind::PermissionDenied, Some(5), true));
    }
}
