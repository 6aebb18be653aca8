//! Built-in demo/test server.
