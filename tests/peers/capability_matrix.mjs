// Capability probes of one MCP server session on the TypeScript SDK 2.x client, with
// ext-tasks (tasks) and the MCP Apps conventions (ext-apps: a tool's `_meta.ui.resourceUri`
// and the `resources/read` of that `ui://` resource): the TypeScript column of the companion's
// capability matrix (tests/integration/matrix.rs). Run once against a server directly and once
// through `mcp-companion bridge`; the two outputs are compared probe by probe.
//
// Usage: node capability_matrix.mjs [--tool-prefix P] [--prompt-prefix P] [--probes a,b]
//          (--url URL | -- COMMAND [ARGS...])
// `--url` speaks streamable HTTP to URL; otherwise COMMAND is spawned on stdio.
// Prints ONE JSON object: {"sdk", "probes": {NAME: {"ok", "detail"}}}; `detail` is what the
// two runs must agree on (names, kinds, counts), never timing. Needs node_modules with
// @modelcontextprotocol/client 2.3.1, ext-tasks and ext-apps beside it (the test links them).
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { createTaskSessionFromClient, resultFromTaskOutcome } from "@modelcontextprotocol/ext-tasks/client";
import { RESOURCE_URI_META_KEY } from "@modelcontextprotocol/ext-apps/server";
import { readFileSync } from "node:fs";

const args = process.argv.slice(2);
const dashes = args.indexOf("--") >= 0 ? args.indexOf("--") : args.length;
const opt = (name, fallback) => {
  const i = args.indexOf(name);
  return i >= 0 && i < dashes ? args[i + 1] : fallback;
};
const command = args.slice(dashes + 1);
const url = opt("--url", "");
const tp = opt("--tool-prefix", "");
const pp = opt("--prompt-prefix", "");
const only = opt("--probes", "").split(",").filter(Boolean);
const strip = (name, prefix) => (prefix && name.startsWith(prefix) ? name.slice(prefix.length) : name);
const kinds = (r) => [...new Set((r.content ?? []).map((c) => c.type))].sort();
const version = JSON.parse(
  readFileSync(new URL("./node_modules/@modelcontextprotocol/client/package.json", import.meta.url), "utf8"),
).version;

const logs = [];
// The client capabilities the companion's own session with a server declares (servers such as
// server-everything offer some tools only to clients that can answer them).
const client = new Client(
  { name: "capability-matrix-ts", version: "1" },
  { capabilities: { roots: { listChanged: true }, sampling: {}, elicitation: { form: {}, url: {} } } },
);
client.setNotificationHandler("notifications/message", (n) => logs.push(n.params.level));
client.setRequestHandler("roots/list", async () => ({ roots: [{ uri: "file:///tmp/probe-root", name: "probe-root" }] }));
client.setRequestHandler("sampling/createMessage", async () => ({
  role: "assistant",
  content: { type: "text", text: "sampled" },
  model: "probe-model",
}));
client.setRequestHandler("elicitation/create", async () => ({ action: "decline" }));
const out = { sdk: version, probes: {} };
try {
  await client.connect(
    url
      ? new StreamableHTTPClientTransport(new URL(url))
      : new StdioClientTransport({ command: command[0], args: command.slice(1), stderr: "ignore" }),
  );
} catch (e) {
  out.error = String(e?.message ?? e);
  console.log(JSON.stringify(out));
  process.exit(2);
}
const tool = (name) => tp + name;
const listed = {};

async function waitFor(test, ms = 20000) {
  const end = Date.now() + ms;
  while (!test() && Date.now() < end) await new Promise((r) => setTimeout(r, 50));
  return test();
}

const probes = {
  async tools() {
    for (const t of (await client.listTools()).tools) listed[strip(t.name, tp)] = t;
    const names = Object.keys(listed).sort();
    return [names.length > 0, names];
  },
  async tool_execution() {
    const e = Object.entries(listed).filter(([, t]) => t.execution).map(([n, t]) => `${n}=${t.execution.taskSupport}`).sort();
    return [true, e];
  },
  async prompts_list() {
    const caps = client.getServerCapabilities() ?? {};
    if (!caps.prompts) return [true, "none declared"];
    const names = (await client.listPrompts()).prompts.map((p) => strip(p.name, pp)).sort();
    return [names.length > 0, names];
  },
  async prompts_get() {
    if (!listed["echo"]) return [true, "not this server"];
    const r = await client.getPrompt({ name: pp + "args-prompt", arguments: { city: "Paris" } });
    return [JSON.stringify(r.messages).includes("Paris"), r.messages.length];
  },
  async resources_list() {
    const uris = (await client.listResources()).resources.map((r) => r.uri).sort();
    return [uris.length > 0, uris];
  },
  async resources_read() {
    const uri = (await client.listResources()).resources[0]?.uri;
    const r = await client.readResource({ uri });
    return [r.contents.length > 0 && r.contents[0].uri === uri, r.contents.map((c) => c.uri)];
  },
  async resource_templates() {
    const caps = client.getServerCapabilities() ?? {};
    const listedTemplates = (await client.listResourceTemplates()).resourceTemplates.map((t) => t.uriTemplate).sort();
    if (!listed["echo"]) return [!!caps.resources, listedTemplates];
    const r = await client.readResource({ uri: "demo://resource/dynamic/text/1" });
    return [listedTemplates.length > 0 && r.contents.length > 0, listedTemplates];
  },
  async completions() {
    if (!listed["echo"]) return [true, "not this server"];
    const r = await client.complete({
      ref: { type: "ref/prompt", name: pp + "completable-prompt" },
      argument: { name: "department", value: "E" },
    });
    return [r.completion.values.includes("Engineering"), r.completion.values];
  },
  async log_messages() {
    if (!listed["echo"]) return [true, "not this server"];
    await client.setLoggingLevel("debug");
    await client.callTool({ name: tool("toggle-simulated-logging"), arguments: {} });
    const got = await waitFor(() => logs.length > 0);
    await client.callTool({ name: tool("toggle-simulated-logging"), arguments: {} });
    return [got, got ? "messages" : "none"];
  },
  async tasks() {
    if (!listed["simulate-research-query"]) return [true, "not this server"];
    const session = createTaskSessionFromClient(client, { endpointId: "capability-matrix" });
    try {
      const execution = await session.callTool(tool("simulate-research-query"), { topic: "probe" });
      const { outcome } = await execution.settle();
      const result = resultFromTaskOutcome(outcome);
      return [kinds(result).includes("text"), { outcome: outcome.kind ?? outcome.status ?? "settled", kinds: kinds(result) }];
    } finally {
      await session.close();
    }
  },
  async apps() {
    const withUi = Object.entries(listed).filter(([, t]) => t._meta?.ui?.resourceUri ?? t._meta?.[RESOURCE_URI_META_KEY]);
    if (withUi.length === 0) return [true, "no app tools"];
    const read = [];
    for (const [name, t] of withUi) {
      const uri = t._meta?.ui?.resourceUri ?? t._meta[RESOURCE_URI_META_KEY];
      const r = await client.readResource({ uri });
      read.push(`${name}: ${uri.startsWith("ui://")} ${r.contents[0]?.mimeType}`);
    }
    return [read.length > 0, read.sort()];
  },
};

for (const [name, body] of Object.entries(probes)) {
  if (only.length && !only.includes(name)) continue;
  try {
    const [ok, detail] = await Promise.race([
      body(),
      new Promise((_, reject) => setTimeout(() => reject(new Error("probe timed out")), 60000)),
    ]);
    out.probes[name] = { ok: !!ok, detail };
  } catch (e) {
    // A decode error's causes (down to the schema's complaint) say what was wrong.
    let cause = "";
    for (let c = e?.cause, depth = 0; c && depth < 4; c = c.cause, depth++) {
      cause += ` (cause: ${String(c?.message ?? c).slice(0, 2000)})`;
    }
    out.probes[name] = { ok: false, detail: `${e?.name ?? "Error"}: ${e?.message ?? e}${cause}` };
  }
}
console.log(JSON.stringify(out));
await client.close();
process.exit(0);
