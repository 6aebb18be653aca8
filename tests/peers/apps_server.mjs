// A small MCP Apps server on the TypeScript SDK 2.x and ext-apps' own server helpers
// (registerAppTool / registerAppResource), over stdio: one tool whose `_meta.ui.resourceUri`
// names a `ui://` HTML resource, for the capability matrix (tests/integration/matrix.rs).
// Run with NODE_PATH unset from the directory holding node_modules: node apps_server.mjs
import { McpServer } from "@modelcontextprotocol/server";
import { StdioServerTransport } from "@modelcontextprotocol/server/stdio";
import {
  registerAppResource,
  registerAppTool,
  RESOURCE_MIME_TYPE,
} from "@modelcontextprotocol/ext-apps/server";

const UI = "ui://clock/view.html";
const server = new McpServer({ name: "apps-fixture", version: "1.0.0" });

registerAppTool(
  server,
  "show-clock",
  {
    title: "Show the clock",
    description: "Shows a clock rendered by the host from a ui:// resource",
    _meta: { ui: { resourceUri: UI } },
  },
  async () => ({ content: [{ type: "text", text: "12:00" }] }),
);

registerAppResource(server, "Clock View", UI, { description: "The clock's view" }, async () => ({
  contents: [{ uri: UI, mimeType: RESOURCE_MIME_TYPE, text: "<!doctype html><p>12:00</p>" }],
}));

await server.connect(new StdioServerTransport());
