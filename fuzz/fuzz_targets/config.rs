//! Fuzzes config parsing (`config::parse`): any text must parse or fail with a `ConfigError`
//! without panicking, and a syntax error must name a line.
#![no_main]

use std::path::Path;

use libfuzzer_sys::fuzz_target;
use mcp_companion::config::{ConfigError, parse};

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    if let Err(ConfigError::Syntax { line, .. }) = parse(&text, Path::new("config.json")) {
        assert!(line >= 1);
    }
});
