//! The companion's own log: one line per event, inert and without secrets (DESIGN §9).
//!
//! | file | owns |
//! |---|---|
//! | `mod.rs` | [`layer`] (how `serve` and the desktop log), [`Scrubbed`]: every line scrubbed on its way out |
//! | `fields.rs` | [`InertFields`]: every field of an event or span written as inert text |
//! | `rmcp.rs` | rmcp's own warnings and errors: `Debug` dumps taken out, duplicates and agents' ordinary traffic dropped |
//!
//! **Secrets.** rmcp, reqwest and hyper log request URLs at debug and trace level, and a remote
//! server's URL may hold a token in its query, userinfo or fragment. Muting their targets one
//! by one misses the next one, so every formatted log line goes through [`crate::net::scrub`]
//! on its way out: URLs are cut to scheme, host and port, and the remembered secret values of
//! remote servers (URL parts, header values) are masked wherever they appear.
//!
//! **Outside text.** A field often holds what a server wrote (a stderr line, an error text that
//! quotes its stderr, its log message): every field is written through
//! [`crate::io::text::log_field`] ([`InertFields`]), so a colour, clear-screen or title
//! sequence, a carriage return or a bidirectional override in it is shown as an escape, not
//! obeyed by the terminal reading the log. The whole line then goes through
//! [`crate::io::text::log_line`], which keeps the formatter's own colours and escapes a newline
//! inside the event, so outside text cannot forge a line of its own.
//!
//! **rmcp.** rmcp's own warnings and errors print Rust `Debug` dumps of whole messages and
//! errors (`Received unexpected message message=Response(JsonRpcResponse { jsonrpc: … })`),
//! which are unbounded outside text and no help to a person. Those lines (target `rmcp…`,
//! level WARN or ERROR) are rewritten on the way out (`rmcp::rmcp_line`): a known message gets
//! our own words and loses its dumped fields; any other loses everything from the first dump
//! on; the errors an ordinary stop or a failed reconnect produce, which our own code
//! reports once with the server's name, are dropped; and so is an agent's ordinary traffic
//! (its requests answered with an error, its leaving while a call is answered), which rmcp
//! logs at WARN and ERROR and any agent could repeat to flood the log.
//!
//! ```no_run
//! use tracing_subscriber::layer::SubscriberExt as _;
//! use tracing_subscriber::util::SubscriberInitExt as _;
//!
//! tracing_subscriber::registry()
//!     .with(tracing_subscriber::EnvFilter::new("info"))
//!     .with(mcp_companion::logging::layer())
//!     .init();
//! ```

mod fields;
mod rmcp;

pub use fields::InertFields;

use std::io::{self, Write};

use tracing_subscriber::fmt::MakeWriter;
use tracing_subscriber::registry::LookupSpan;

/// The companion's log layer: events formatted one to a line on stderr, every field inert
/// ([`InertFields`]), every line scrubbed ([`Scrubbed`]), with colours only when stderr is a
/// terminal. `serve` and the desktop put their filter in front of it.
pub fn layer<S>() -> impl tracing_subscriber::Layer<S> + Send + Sync + 'static
where
    S: tracing::Subscriber + for<'a> LookupSpan<'a>,
{
    layer_to(
        std::io::stderr as fn() -> io::Stderr,
        std::io::IsTerminal::is_terminal(&std::io::stderr()),
    )
}

/// [`layer`] writing through `make_writer`, with colours when `ansi`.
fn layer_to<S, M>(
    make_writer: M,
    ansi: bool,
) -> impl tracing_subscriber::Layer<S> + Send + Sync + 'static
where
    S: tracing::Subscriber + for<'a> LookupSpan<'a>,
    M: for<'w> MakeWriter<'w> + Send + Sync + 'static,
{
    tracing_subscriber::fmt::layer()
        .fmt_fields(InertFields)
        .with_writer(Scrubbed::new(make_writer))
        .with_ansi(ansi)
}

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
    /// The event is one of rmcp's warnings or errors: rewritten or dropped by
    /// [`rmcp::rmcp_line`].
    rmcp_warning: bool,
}

impl<W: Write> ScrubbedWriter<W> {
    fn emit(&mut self) -> io::Result<()> {
        if self.pending.is_empty() {
            return Ok(());
        }
        let text = String::from_utf8_lossy(&self.pending);
        let clean = if self.rmcp_warning {
            rmcp::rmcp_line(&text).map(|line| crate::net::scrub(&line))
        } else {
            Some(crate::net::scrub(&text))
        };
        self.pending.clear();
        match clean {
            Some(clean) => self
                .inner
                .write_all(crate::io::text::log_line(&clean).as_bytes()),
            None => Ok(()),
        }
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

#[cfg(test)]
pub(crate) mod test_log {
    //! The companion's log layer ([`super::layer_to`]) writing into memory, at every level.

    use std::io::{self, Write};
    use std::sync::{Arc, Mutex};

    use tracing_subscriber::layer::SubscriberExt as _;

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

    /// What `f` logs through the companion's log layer (colours when `ansi`), all levels on.
    pub(crate) fn logged(ansi: bool, f: impl FnOnce()) -> String {
        let out = Capture::default();
        let sink = out.clone();
        let subscriber = tracing_subscriber::registry()
            .with(tracing_subscriber::filter::LevelFilter::TRACE)
            .with(super::layer_to(move || sink.clone(), ansi));
        tracing::subscriber::with_default(subscriber, f);
        String::from_utf8(out.0.lock().unwrap().clone()).unwrap()
    }
}

#[cfg(test)]
mod tests {
    use super::test_log::logged;

    /// A server's error text in a field cannot clear the screen, retitle the terminal or start
    /// a forged line; the formatter's own colours and the event's final newline stay.
    #[test]
    fn outside_text_in_a_field_stays_on_its_line_and_inert() {
        let text = logged(true, || {
            let said = "rpc says \u{1b}[2J\u{1b}]0;PWNED\u{7}\r\nFORGED INFO line";
            tracing::info!(error = %said, "call failed");
        });
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
        let text = logged(true, || {
            tracing::trace!(target: "rmcp::transport::worker", uri = "http://h:1/mcp?token=PLANTED-1", "post");
            tracing::debug!(target: "reqwest::connect", "starting new connection: https://u:PLANTED-2@h/");
            tracing::info!(url = ?url::Url::parse("http://h/p?q=PLANTED-3").ok(), "debug form");
        });
        assert_eq!(text.lines().count(), 3, "{text}");
        assert!(!text.contains("PLANTED"), "{text}");
        assert!(text.contains("http://h:1/..."), "{text}");
    }
}
