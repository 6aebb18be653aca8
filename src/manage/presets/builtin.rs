//! The built-in presets, in display order: one table of data, with the small constructors
//! that keep its rows short.

use super::{InputTarget, Launcher, Preset, PresetInput};

const fn input(
    key: &'static str,
    label: &'static str,
    help: &'static str,
    target: InputTarget,
    secret: bool,
) -> PresetInput {
    PresetInput {
        key,
        label,
        help,
        target,
        secret,
        required: true,
        prefix: "",
    }
}

const fn npx(args: &'static [&'static str]) -> Launcher {
    Launcher::Stdio {
        command: "npx",
        args,
    }
}

const fn uvx(args: &'static [&'static str]) -> Launcher {
    Launcher::Stdio {
        command: "uvx",
        args,
    }
}

pub(super) static PRESETS: &[Preset] = &[
    Preset {
        id: "filesystem",
        title: "Filesystem",
        description: "Read, write and search files under the directories you allow",
        docs_url: "https://github.com/modelcontextprotocol/servers/tree/main/src/filesystem",
        launcher: npx(&["-y", "@modelcontextprotocol/server-filesystem"]),
        inputs: &[input(
            "directory",
            "Allowed directory",
            "Absolute path the server may access",
            InputTarget::Arg,
            false,
        )],
    },
    Preset {
        id: "memory",
        title: "Memory",
        description: "A knowledge-graph memory that persists across sessions",
        docs_url: "https://github.com/modelcontextprotocol/servers/tree/main/src/memory",
        launcher: npx(&["-y", "@modelcontextprotocol/server-memory"]),
        inputs: &[],
    },
    Preset {
        id: "fetch",
        title: "Fetch",
        description: "Fetch a web page and return it as Markdown",
        docs_url: "https://github.com/modelcontextprotocol/servers/tree/main/src/fetch",
        launcher: uvx(&["mcp-server-fetch"]),
        inputs: &[],
    },
    Preset {
        id: "time",
        title: "Time",
        description: "Current time and time-zone conversion",
        docs_url: "https://github.com/modelcontextprotocol/servers/tree/main/src/time",
        launcher: uvx(&["mcp-server-time"]),
        inputs: &[],
    },
    Preset {
        id: "git",
        title: "Git",
        description: "Read, search and edit a local Git repository",
        docs_url: "https://github.com/modelcontextprotocol/servers/tree/main/src/git",
        launcher: uvx(&["mcp-server-git", "--repository"]),
        inputs: &[input(
            "repository",
            "Repository path",
            "Absolute path of a Git working tree",
            InputTarget::Arg,
            false,
        )],
    },
    Preset {
        id: "everything",
        title: "Everything",
        description: "The MCP reference test server: tools, resources, prompts, sampling",
        docs_url: "https://github.com/modelcontextprotocol/servers/tree/main/src/everything",
        launcher: npx(&["-y", "@modelcontextprotocol/server-everything"]),
        inputs: &[],
    },
    Preset {
        id: "sequential-thinking",
        title: "Sequential thinking",
        description: "Structured, revisable step-by-step reasoning",
        docs_url: "https://github.com/modelcontextprotocol/servers/tree/main/src/sequentialthinking",
        launcher: npx(&["-y", "@modelcontextprotocol/server-sequential-thinking"]),
        inputs: &[],
    },
    Preset {
        id: "github",
        title: "GitHub",
        description: "Repositories, issues and pull requests through the GitHub API",
        docs_url: "https://github.com/github/github-mcp-server",
        launcher: npx(&["-y", "@modelcontextprotocol/server-github"]),
        inputs: &[input(
            "token",
            "Personal access token",
            "A GitHub token (or ${VAR} to read it from the environment)",
            InputTarget::Env("GITHUB_PERSONAL_ACCESS_TOKEN"),
            true,
        )],
    },
    Preset {
        id: "brave-search",
        title: "Brave Search",
        description: "Web and local search through the Brave Search API",
        docs_url: "https://github.com/brave/brave-search-mcp-server",
        launcher: npx(&["-y", "@modelcontextprotocol/server-brave-search"]),
        inputs: &[input(
            "apiKey",
            "API key",
            "Brave Search API key",
            InputTarget::Env("BRAVE_API_KEY"),
            true,
        )],
    },
    Preset {
        id: "playwright",
        title: "Playwright",
        description: "Drive a real browser: navigate, click, fill forms, take snapshots",
        docs_url: "https://github.com/microsoft/playwright-mcp",
        launcher: npx(&["-y", "@playwright/mcp@latest"]),
        inputs: &[],
    },
    Preset {
        id: "context7",
        title: "Context7",
        description: "Up-to-date library documentation and code examples",
        docs_url: "https://github.com/upstash/context7",
        launcher: npx(&["-y", "@upstash/context7-mcp"]),
        inputs: &[PresetInput {
            required: false,
            ..input(
                "apiKey",
                "API key (optional)",
                "Raises the rate limit; leave empty to use the free tier",
                InputTarget::Env("CONTEXT7_API_KEY"),
                true,
            )
        }],
    },
    Preset {
        id: "deepwiki",
        title: "DeepWiki (remote)",
        description: "Ask questions about public GitHub repositories; a remote streamable-HTTP server",
        docs_url: "https://docs.devin.ai/work-with-devin/deepwiki-mcp",
        launcher: Launcher::StreamableHttp {
            url: "https://mcp.deepwiki.com/mcp",
        },
        inputs: &[],
    },
    Preset {
        id: "github-remote",
        title: "GitHub (remote)",
        description: "GitHub's hosted MCP server over streamable HTTP",
        docs_url: "https://github.com/github/github-mcp-server",
        launcher: Launcher::StreamableHttp {
            url: "https://api.githubcopilot.com/mcp/",
        },
        inputs: &[PresetInput {
            prefix: "Bearer ",
            ..input(
                "token",
                "Personal access token",
                "Sent as the Authorization header",
                InputTarget::Header("Authorization"),
                true,
            )
        }],
    },
];
