//! The `instructions` an agent gets at `initialize` (MCP 2025-11-25 lifecycle,
//! `InitializeResult.instructions`): the companion's own line, then each running server's
//! own instructions, labelled with the server's name, so an agent learns what it would have
//! learned connected to each server directly.

use std::collections::HashSet;

use super::Hub;

/// The companion's own line, first in every agent's instructions.
pub const COMPANION_INSTRUCTIONS: &str = "MCP Companion: every tool, prompt and resource of the user's MCP servers; tools are named mcp_<server>_<name>, prompts <server>_<name>.";

/// At most this many bytes of one server's instructions are passed on (cut at a character
/// boundary, "…" marking the cut).
pub const SERVER_INSTRUCTIONS_MAX: usize = 4 * 1024;

/// At most this many bytes of servers' instructions in all; servers past it are left out.
pub const ALL_INSTRUCTIONS_MAX: usize = 32 * 1024;

impl Hub {
    /// The instructions for an agent of this hub's session: the companion's own line, then,
    /// for each running server that offers the session a tool, in config order,
    /// `Server "<name>":` and its instructions (bounded as above).
    pub fn instructions(&self) -> String {
        let catalog = self.catalog();
        let offered: HashSet<&str> = catalog
            .tools()
            .iter()
            .filter_map(|t| catalog.route(&t.name))
            .map(|r| &*r.server)
            .collect();
        let mut out = COMPANION_INSTRUCTIONS.to_owned();
        let mut budget = ALL_INSTRUCTIONS_MAX;
        for server in self.servers() {
            if !offered.contains(&**server.name()) {
                continue;
            }
            let Some(live) = server.live() else { continue };
            let Some(text) = live
                .peer
                .peer_info()
                .and_then(|info| info.instructions.clone())
                .filter(|t| !t.trim().is_empty())
            else {
                continue;
            };
            let text = cut(text.trim(), SERVER_INSTRUCTIONS_MAX);
            let part = format!("\n\nServer \"{}\":\n{text}", server.name());
            if part.len() > budget {
                break;
            }
            budget -= part.len();
            out.push_str(&part);
        }
        out
    }
}

/// `text` cut to at most `max` bytes at a character boundary, "…" marking a cut.
fn cut(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_owned();
    }
    let mut end = max - '…'.len_utf8();
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &text[..end])
}

#[cfg(test)]
mod tests {
    use super::cut;

    #[test]
    fn long_instructions_are_cut_at_a_character_boundary() {
        assert_eq!(cut("short", 10), "short");
        let cut_text = cut(&"é".repeat(10), 8);
        assert!(cut_text.len() <= 8, "{cut_text}");
        assert!(cut_text.ends_with('…'), "{cut_text}");
    }
}
