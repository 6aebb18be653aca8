//! Printing for the client commands: when the reader of stdout goes away (`status | head`,
//! `status | findstr x` on Windows), the command ends quietly instead of panicking as `println!`
//! does, on every OS.
//!
//! Unix also restores SIGPIPE's default for these commands (see `main`), so there the process
//! usually ends by the signal first; Windows has no such signal: a write to a closed pipe fails
//! with `ERROR_NO_DATA` (232) or `ERROR_PIPE_NOT_CONNECTED` (233, which std does not map to
//! [`std::io::ErrorKind::BrokenPipe`]), and this module is what ends the command there.

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

    use super::is_closed_pipe;

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
