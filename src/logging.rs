//! Log output that never carries a secret (DESIGN §9).
//!
//! rmcp, reqwest and hyper log request URLs at debug and trace level, and a remote server's URL
//! may hold a token in its query, userinfo or fragment. Muting their targets one by one misses
//! the next one, so every formatted log line goes through [`crate::net::scrub`] on its way out:
//! URLs are cut to scheme, host and port, and the remembered secret values of remote servers
//! (URL parts, header values) are masked wherever they appear.
//!
//! Each event is one line: a control character in a field (a server's error text, its stderr)
//! is written as an escape and a newline inside the event as `\x0a` ([`crate::io::text::log_line`]),
//! so outside text cannot clear the terminal reading the log or forge a line of its own.
//!
//! rmcp's own warnings and errors print Rust `Debug` dumps of whole messages and errors
//! (`Received unexpected message message=Response(JsonRpcResponse { jsonrpc: … })`), which are
//! unbounded outside text and no help to a person. Those lines (target `rmcp…`, level WARN or
//! ERROR) are rewritten on the way out (`rmcp_line`): a known message gets our own words and
//! loses its dumped fields; any other loses everything from the first dump on.
//!
//! ```no_run
//! tracing_subscriber::fmt()
//!     .with_writer(mcp_companion::logging::Scrubbed::new(std::io::stderr))
//!     .init();
//! ```

use std::io::{self, Write};

use tracing_subscriber::fmt::MakeWriter;

/// A [`MakeWriter`] whose writers scrub each formatted event before passing it on.
#[derive(Clone, Debug)]
pub struct Scrubbed<M> {
    inner: M,
}

impl<M> Scrubbed<M> {
    /// Scrubs everything written through `inner`.
    pub fn new(inner: M) -> Scrubbed<M> {
        Scrubbed { inner }
    }
}

impl<'a, M: MakeWriter<'a>> MakeWriter<'a> for Scrubbed<M> {
    type Writer = ScrubbedWriter<M::Writer>;

    fn make_writer(&'a self) -> Self::Writer {
        ScrubbedWriter {
            inner: self.inner.make_writer(),
            pending: Vec::new(),
            rmcp_warning: false,
        }
    }

    fn make_writer_for(&'a self, meta: &tracing::Metadata<'_>) -> Self::Writer {
        ScrubbedWriter {
            inner: self.inner.make_writer_for(meta),
            pending: Vec::new(),
            rmcp_warning: meta.target().starts_with("rmcp")
                && *meta.level() <= tracing::Level::WARN,
        }
    }
}

/// One event's writer: collects the formatted bytes and writes them, scrubbed, on flush or
/// drop (the fmt layer makes one writer per event, so a URL is never split between writes).
#[derive(Debug)]
pub struct ScrubbedWriter<W: Write> {
    inner: W,
    pending: Vec<u8>,
    /// The event is one of rmcp's warnings or errors: rewritten by [`rmcp_line`].
    rmcp_warning: bool,
}

impl<W: Write> ScrubbedWriter<W> {
    fn emit(&mut self) -> io::Result<()> {
        if self.pending.is_empty() {
            return Ok(());
        }
        let text = String::from_utf8_lossy(&self.pending);
        let clean = if self.rmcp_warning {
            crate::net::scrub(&rmcp_line(&text))
        } else {
            crate::net::scrub(&text)
        };
        self.pending.clear();
        self.inner
            .write_all(crate::io::text::log_line(&clean).as_bytes())
    }
}

impl<W: Write> Write for ScrubbedWriter<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.pending.extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.emit()?;
        self.inner.flush()
    }
}

impl<W: Write> Drop for ScrubbedWriter<W> {
    fn drop(&mut self) {
        let _ = self.emit();
    }
}

/// rmcp's warnings that print a dump, by the start of their message, and what we say instead
/// (their fields are dropped).
const RMCP_WORDS: &[(&str, &str)] = &[
    (
        "Received unexpected message",
        "the server sent a message that does not fit this point of the session; it was ignored",
    ),
    (
        "response error",
        "a request from the server was answered with an error",
    ),
    (
        "Handle logging before handshake failed",
        "a log message the server sent before the handshake could not be handled",
    ),
    (
        "sse client event stream terminated with error",
        "the server's event stream ended with an error; it is opened again if the session goes on",
    ),
    (
        "worker quit with join error",
        "the connection's worker task ended abnormally",
    ),
    (
        "unexpected content type",
        "the server answered with a content type that is neither JSON nor an event stream",
    ),
];

/// One formatted rmcp warning or error line, with its Rust `Debug` dumps taken out: a message
/// of [`RMCP_WORDS`] is replaced and its fields dropped; any other line is cut where the first
/// dump begins (`Name { field: …`, `Name(…`, `Some(…`), with a note that a value was left out.
fn rmcp_line(text: &str) -> String {
    for (message, ours) in RMCP_WORDS {
        if let Some(at) = text.find(message) {
            // rmcp's `?message` field is printed before the message itself.
            let cut = first_dump(&text[..at]).unwrap_or(at);
            return format!("{} {ours}\n", text[..cut].trim_end());
        }
    }
    match first_dump(text) {
        Some(at) => format!("{} [a Rust value, left out]\n", text[..at].trim_end()),
        None => text.to_owned(),
    }
}

/// Where the first `Debug` dump in `text` starts: an identifier that begins with a capital
/// letter followed by ` { ` or `(`.
fn first_dump(text: &str) -> Option<usize> {
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let starts_word = i == 0 || !(bytes[i - 1].is_ascii_alphanumeric() || bytes[i - 1] == b'_');
        if starts_word && bytes[i].is_ascii_uppercase() {
            let end = bytes[i..]
                .iter()
                .position(|b| !(b.is_ascii_alphanumeric() || *b == b'_'))
                .map_or(bytes.len(), |n| i + n);
            let rest = &text[end..];
            if rest.starts_with(" { ") || rest.starts_with('(') {
                return Some(i);
            }
            i = end;
        } else {
            i += 1;
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};

    #[derive(Clone, Default)]
    struct Capture(Arc<Mutex<Vec<u8>>>);

    impl Write for Capture {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    /// A server's error text in a field cannot clear the screen, retitle the terminal or start
    /// a forged line; the formatter's own colours and the event's final newline stay.
    #[test]
    fn outside_text_in_a_field_stays_on_its_line_and_inert() {
        let out = Capture::default();
        let sink = out.clone();
        let subscriber = tracing_subscriber::fmt()
            .with_ansi(true)
            .with_writer(Scrubbed::new(move || sink.clone()))
            .finish();
        tracing::subscriber::with_default(subscriber, || {
            let said = "rpc says \u{1b}[2J\u{1b}]0;PWNED\u{7}\r\nFORGED INFO line";
            tracing::info!(error = %said, "call failed");
        });
        let text = String::from_utf8(out.0.lock().unwrap().clone()).unwrap();
        assert_eq!(text.lines().count(), 1, "{text:?}");
        assert!(text.ends_with('\n'), "{text:?}");
        assert!(
            text.contains("\\x1b[2J\\x1b]0;PWNED\\x07\\x0d\\x0aFORGED"),
            "{text:?}"
        );
        assert!(
            text.contains("\u{1b}[32m"),
            "the INFO colour is kept: {text:?}"
        );
    }

    #[test]
    fn every_log_line_is_scrubbed_at_trace_level_whatever_its_target() {
        let out = Capture::default();
        let sink = out.clone();
        let subscriber = tracing_subscriber::fmt()
            .with_max_level(tracing::Level::TRACE)
            .with_ansi(true)
            .with_writer(Scrubbed::new(move || sink.clone()))
            .finish();
        tracing::subscriber::with_default(subscriber, || {
            tracing::trace!(target: "rmcp::transport::worker", uri = "http://h:1/mcp?token=PLANTED-1", "post");
            tracing::debug!(target: "reqwest::connect", "starting new connection: https://u:PLANTED-2@h/");
            tracing::info!(url = ?url::Url::parse("http://h/p?q=PLANTED-3").ok(), "debug form");
        });
        let text = String::from_utf8(out.0.lock().unwrap().clone()).unwrap();
        assert_eq!(text.lines().count(), 3, "{text}");
        assert!(!text.contains("PLANTED"), "{text}");
        assert!(text.contains("http://h:1/..."), "{text}");
    }

    #[test]
    fn rmcp_warnings_lose_their_debug_dumps() {
        let out = Capture::default();
        let sink = out.clone();
        let subscriber = tracing_subscriber::fmt()
            .with_max_level(tracing::Level::TRACE)
            .with_ansi(false)
            .with_writer(Scrubbed::new(move || sink.clone()))
            .finish();
        #[derive(Debug)]
        #[allow(dead_code, reason = "only its Debug form is logged")]
        struct JsonRpcResponse {
            jsonrpc: &'static str,
            result: &'static str,
        }
        let dump = JsonRpcResponse {
            jsonrpc: "2.0",
            result: "OUTSIDE-TEXT",
        };
        tracing::subscriber::with_default(subscriber, || {
            tracing::warn!(target: "rmcp::service::client", message = ?Some(&dump), "Received unexpected message");
            tracing::warn!(target: "rmcp::transport::streamable_http_client", "sse client event stream terminated with error: {:?}", Err::<(), _>(&dump));
            tracing::error!(target: "rmcp::service", "something new: {:?}", &dump);
            tracing::warn!(target: "mcp_companion::hub", value = ?Some(&dump), "ours keep their fields");
        });
        let text = String::from_utf8(out.0.lock().unwrap().clone()).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 4, "{text}");
        assert!(
            lines[0].ends_with("the server sent a message that does not fit this point of the session; it was ignored"),
            "{text}"
        );
        assert!(
            lines[1].contains("the server's event stream ended with an error"),
            "{text}"
        );
        assert!(
            lines[2].ends_with("something new: [a Rust value, left out]"),
            "{text}"
        );
        assert!(
            lines[..3]
                .iter()
                .all(|l| !l.contains("OUTSIDE-TEXT") && !l.contains("JsonRpc")),
            "{text}"
        );
        assert!(lines[3].contains("OUTSIDE-TEXT"), "{text}");
    }

    #[test]
    fn a_dump_starts_at_a_capitalised_name_followed_by_a_brace_or_parenthesis() {
        let cases = [
            ("failed: Some(3)", Some(8)),
            ("x=Response(JsonRpc { a: 1 })", Some(2)),
            ("Error { kind: X }", Some(0)),
            ("HTTP 500 Internal Server Error", None),
            ("the connection closed (EOF)", None),
        ];
        for (text, want) in cases {
            assert_eq!(first_dump(text), want, "{text}");
        }
    }
}
