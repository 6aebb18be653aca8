//! Byte-level input and output shared by every room: the bounded line reader for input from
//! outside the process ([`lines`]), the one atomic file write ([`atomic`]), reading JSON
//! text without keeping it ([`json`]), and outside text made safe to show or log ([`text`]).

pub mod atomic;
pub mod json;
pub mod lines;
pub mod text;

pub use lines::{LineReader, Overflow, Read};
