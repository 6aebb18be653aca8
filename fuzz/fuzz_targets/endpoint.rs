//! Fuzzes how the local endpoint judges one line from an agent (`endpoint::line::judge`): any bytes
//! must give a verdict without panicking, and an answer must be a JSON-RPC error.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mcp_companion::endpoint::line::{Verdict, judge};

fuzz_target!(|data: &[u8]| {
    for line in data.split(|b| *b == b'\n') {
        if let Verdict::Answer { error, .. } = judge(line) {
            assert!(matches!(error.code.0, -32700 | -32600 | -32602));
        }
    }
});
