//! Config (DESIGN §3).
