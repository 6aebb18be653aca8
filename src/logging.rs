//! Log output that never carries a secret (DESIGN §9).
//!
//! rmcp, reqwest and hyper log request URLs at debug and trace level, and a remote server's URL
//! may hold a token in its query, userinfo or fragment. Muting their targets one by one misses
//! the next one, so every formatted log line goes through [`crate::net::scrub`] on its way out:
//! URLs are cut to scheme, host and port, and the remembered secret values of remote servers
//! (URL parts, header values) are masked wherever they appear.
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
        }
    }

    fn make_writer_for(&'a self, meta: &tracing::Metadata<'_>) -> Self::Writer {
        ScrubbedWriter {
            inner: self.inner.make_writer_for(meta),
            pending: Vec::new(),
        }
    }
}

/// One event's writer: collects the formatted bytes and writes them, scrubbed, on flush or
/// drop (the fmt layer makes one writer per event, so a URL is never split between writes).
#[derive(Debug)]
pub struct ScrubbedWriter<W: Write> {
    inner: W,
    pending: Vec<u8>,
}

impl<W: Write> ScrubbedWriter<W> {
    fn emit(&mut self) -> io::Result<()> {
        if self.pending.is_empty() {
            return Ok(());
        }
        let text = String::from_utf8_lossy(&self.pending);
        let clean = crate::net::scrub(&text);
        self.pending.clear();
        self.inner.write_all(clean.as_bytes())
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
}
