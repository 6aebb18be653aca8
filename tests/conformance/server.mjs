// The upstream for the MCP conformance SERVER scenarios (tests/conformance/servers.sh): a stdio
// server on the TypeScript SDK 2.x's low-level `Server` offering exactly the tools, resources,
// prompts and completions the scenarios of @modelcontextprotocol/conformance 0.1.16 name
// (`test_simple_text`, `test://static-text`, `test_simple_prompt`, …), each answering what the
// scenario's description asks for. The suite's own reference server is not in its npm package,
// so this one stands in; the scenarios judge it directly as well as through the companion.
// Run from a directory whose node_modules holds @modelcontextprotocol/server: node server.mjs
import { Server } from "@modelcontextprotocol/server";
import { StdioServerTransport } from "@modelcontextprotocol/server/stdio";

// A 1×1 red PNG, and a WAV of 8 silent 8-bit samples at 8 kHz.
const PNG =
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==";
function wav() {
  const samples = Buffer.alloc(8, 0x80);
  const head = Buffer.alloc(44);
  head.write("RIFF", 0);
  head.writeUInt32LE(36 + samples.length, 4);
  head.write("WAVEfmt ", 8);
  head.writeUInt32LE(16, 16); // fmt chunk size
  head.writeUInt16LE(1, 20); // PCM
  head.writeUInt16LE(1, 22); // mono
  head.writeUInt32LE(8000, 24); // sample rate
  head.writeUInt32LE(8000, 28); // byte rate
  head.writeUInt16LE(1, 32); // block align
  head.writeUInt16LE(8, 34); // bits per sample
  head.write("data", 36);
  head.writeUInt32LE(samples.length, 40);
  return Buffer.concat([head, samples]).toString("base64");
}
const WAV = wav();
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const none = { type: "object", properties: {} };
const text = (t) => ({ content: [{ type: "text", text: t }] });

const TOOLS = [
  { name: "test_simple_text", description: "Returns simple text", inputSchema: none },
  { name: "test_image_content", description: "Returns an image", inputSchema: none },
  { name: "test_audio_content", description: "Returns audio", inputSchema: none },
  { name: "test_embedded_resource", description: "Returns an embedded resource", inputSchema: none },
  { name: "test_multiple_content_types", description: "Returns text, image and resource", inputSchema: none },
  { name: "test_tool_with_logging", description: "Logs three messages while it runs", inputSchema: none },
  { name: "test_tool_with_progress", description: "Reports progress while it runs", inputSchema: none },
  { name: "test_error_handling", description: "Always fails", inputSchema: none },
  { name: "test_reconnection", description: "Answers after a pause (the HTTP side may close its stream meanwhile)", inputSchema: none },
  {
    name: "test_sampling",
    description: "Asks the client's LLM",
    inputSchema: { type: "object", properties: { prompt: { type: "string" } }, required: ["prompt"] },
  },
  {
    name: "test_elicitation",
    description: "Asks the user",
    inputSchema: { type: "object", properties: { message: { type: "string" } }, required: ["message"] },
  },
  { name: "test_elicitation_sep1034_defaults", description: "Asks with defaults", inputSchema: none },
  { name: "test_elicitation_sep1330_enums", description: "Asks with every enum form", inputSchema: none },
  {
    name: "json_schema_2020_12_tool",
    description: "Tool with JSON Schema 2020-12 features",
    inputSchema: {
      $schema: "https://json-schema.org/draft/2020-12/schema",
      type: "object",
      $defs: {
        address: { type: "object", properties: { street: { type: "string" }, city: { type: "string" } } },
      },
      properties: { name: { type: "string" }, address: { $ref: "#/$defs/address" } },
      additionalProperties: false,
    },
  },
];

async function elicited(ctx, requestedSchema) {
  const r = await ctx.mcpReq.elicitInput({ message: "Please review the values", requestedSchema });
  return text(`Elicitation completed: action=${r.action}, content=${JSON.stringify(r.content ?? {})}`);
}

const CALLS = {
  test_simple_text: async () => text("This is a simple text response for testing."),
  test_image_content: async () => ({ content: [{ type: "image", data: PNG, mimeType: "image/png" }] }),
  test_audio_content: async () => ({ content: [{ type: "audio", data: WAV, mimeType: "audio/wav" }] }),
  test_embedded_resource: async () => ({
    content: [
      {
        type: "resource",
        resource: { uri: "test://embedded-resource", mimeType: "text/plain", text: "This is an embedded resource content." },
      },
    ],
  }),
  test_multiple_content_types: async () => ({
    content: [
      { type: "text", text: "Multiple content types test:" },
      { type: "image", data: PNG, mimeType: "image/png" },
      {
        type: "resource",
        resource: {
          uri: "test://mixed-content-resource",
          mimeType: "application/json",
          text: JSON.stringify({ test: "data", value: 123 }),
        },
      },
    ],
  }),
  test_tool_with_logging: async (_args, ctx) => {
    await ctx.mcpReq.log("info", "Tool execution started");
    await sleep(50);
    await ctx.mcpReq.log("info", "Tool processing data");
    await sleep(50);
    await ctx.mcpReq.log("info", "Tool execution completed");
    return text("Tool with logging executed successfully");
  },
  test_tool_with_progress: async (_args, ctx) => {
    const token = ctx.mcpReq._meta?.progressToken;
    for (const progress of [0, 50, 100]) {
      if (token !== undefined) {
        await ctx.mcpReq.notify({
          method: "notifications/progress",
          params: { progressToken: token, progress, total: 100 },
        });
      }
      if (progress < 100) await sleep(50);
    }
    return text("Tool with progress executed successfully");
  },
  test_error_handling: async () => ({
    isError: true,
    content: [{ type: "text", text: "This tool intentionally returns an error for testing" }],
  }),
  test_reconnection: async () => {
    await sleep(200);
    return text("Reconnection test completed");
  },
  test_sampling: async (args, ctx) => {
    const r = await ctx.mcpReq.requestSampling({
      messages: [{ role: "user", content: { type: "text", text: String(args.prompt ?? "") } }],
      maxTokens: 100,
    });
    const said = Array.isArray(r.content) ? r.content.map((c) => c.text ?? "").join("") : r.content?.text;
    return text(`LLM response: ${said ?? ""}`);
  },
  test_elicitation: async (args, ctx) => {
    const r = await ctx.mcpReq.elicitInput({
      message: String(args.message ?? ""),
      requestedSchema: {
        type: "object",
        properties: {
          username: { type: "string", description: "User's response" },
          email: { type: "string", description: "User's email address" },
        },
        required: ["username", "email"],
      },
    });
    return text(`User response: action=${r.action}, content=${JSON.stringify(r.content ?? {})}`);
  },
  test_elicitation_sep1034_defaults: (_args, ctx) =>
    elicited(ctx, {
      type: "object",
      properties: {
        name: { type: "string", description: "Name", default: "John Doe" },
        age: { type: "integer", description: "Age", default: 30 },
        score: { type: "number", description: "Score", default: 95.5 },
        status: { type: "string", description: "Status", enum: ["active", "inactive", "pending"], default: "active" },
        verified: { type: "boolean", description: "Verified", default: true },
      },
    }),
  test_elicitation_sep1330_enums: (_args, ctx) =>
    elicited(ctx, {
      type: "object",
      properties: {
        untitledSingle: { type: "string", enum: ["option1", "option2", "option3"] },
        titledSingle: {
          type: "string",
          oneOf: [
            { const: "value1", title: "First Option" },
            { const: "value2", title: "Second Option" },
            { const: "value3", title: "Third Option" },
          ],
        },
        legacyEnum: {
          type: "string",
          enum: ["opt1", "opt2", "opt3"],
          enumNames: ["Option One", "Option Two", "Option Three"],
        },
        untitledMulti: { type: "array", items: { type: "string", enum: ["option1", "option2", "option3"] } },
        titledMulti: {
          type: "array",
          items: {
            anyOf: [
              { const: "value1", title: "First Choice" },
              { const: "value2", title: "Second Choice" },
              { const: "value3", title: "Third Choice" },
            ],
          },
        },
      },
    }),
};

const RESOURCES = [
  { uri: "test://static-text", name: "static-text", description: "A static text resource", mimeType: "text/plain" },
  { uri: "test://static-binary", name: "static-binary", description: "A static PNG", mimeType: "image/png" },
  { uri: "test://watched-resource", name: "watched-resource", description: "A resource to subscribe to", mimeType: "text/plain" },
];
const TEMPLATE = /^test:\/\/template\/([^/]+)\/data$/;

function read(uri) {
  if (uri === "test://static-text") {
    return { uri, mimeType: "text/plain", text: "This is the content of the static text resource." };
  }
  if (uri === "test://static-binary") return { uri, mimeType: "image/png", blob: PNG };
  if (uri === "test://watched-resource") return { uri, mimeType: "text/plain", text: "Watched content." };
  const m = TEMPLATE.exec(uri);
  if (m) {
    const id = decodeURIComponent(m[1]);
    return { uri, mimeType: "application/json", text: JSON.stringify({ id, templateTest: true, data: `Data for ID: ${id}` }) };
  }
  return undefined;
}

const PROMPTS = [
  { name: "test_simple_prompt", description: "A prompt without arguments" },
  {
    name: "test_prompt_with_arguments",
    description: "A prompt with two arguments",
    arguments: [
      { name: "arg1", description: "First test argument", required: true },
      { name: "arg2", description: "Second test argument", required: true },
    ],
  },
  {
    name: "test_prompt_with_embedded_resource",
    description: "A prompt embedding a resource",
    arguments: [{ name: "resourceUri", description: "URI of the resource to embed", required: true }],
  },
  { name: "test_prompt_with_image", description: "A prompt with an image" },
];
const user = (content) => ({ role: "user", content });
const GETS = {
  test_simple_prompt: () => [user({ type: "text", text: "This is a simple prompt for testing." })],
  test_prompt_with_arguments: (a) => [
    user({ type: "text", text: `Prompt with arguments: arg1='${a.arg1 ?? ""}', arg2='${a.arg2 ?? ""}'` }),
  ],
  test_prompt_with_embedded_resource: (a) => [
    user({
      type: "resource",
      resource: { uri: String(a.resourceUri ?? ""), mimeType: "text/plain", text: "Embedded resource content for testing." },
    }),
    user({ type: "text", text: "Please process the embedded resource above." }),
  ],
  test_prompt_with_image: () => [
    user({ type: "image", data: PNG, mimeType: "image/png" }),
    user({ type: "text", text: "Please analyze the image above." }),
  ],
};

const server = new Server(
  { name: "conformance-upstream", version: "1.0.0" },
  {
    capabilities: {
      tools: {},
      resources: { subscribe: true },
      prompts: {},
      logging: {},
      completions: {},
    },
  },
);
const subscribed = new Set();

server.setRequestHandler("tools/list", async () => ({ tools: TOOLS }));
server.setRequestHandler("tools/call", async (req, ctx) => {
  const call = CALLS[req.params.name];
  if (!call) throw new Error(`unknown tool: ${req.params.name}`);
  return call(req.params.arguments ?? {}, ctx);
});
server.setRequestHandler("resources/list", async () => ({ resources: RESOURCES }));
server.setRequestHandler("resources/templates/list", async () => ({
  resourceTemplates: [
    {
      uriTemplate: "test://template/{id}/data",
      name: "template",
      description: "Data for an id",
      mimeType: "application/json",
    },
  ],
}));
server.setRequestHandler("resources/read", async (req) => {
  const content = read(req.params.uri);
  if (!content) throw new Error(`resource not found: ${req.params.uri}`);
  return { contents: [content] };
});
server.setRequestHandler("resources/subscribe", async (req) => {
  subscribed.add(req.params.uri);
  return {};
});
server.setRequestHandler("resources/unsubscribe", async (req) => {
  subscribed.delete(req.params.uri);
  return {};
});
server.setRequestHandler("prompts/list", async () => ({ prompts: PROMPTS }));
server.setRequestHandler("prompts/get", async (req) => {
  const get = GETS[req.params.name];
  if (!get) throw new Error(`unknown prompt: ${req.params.name}`);
  return { messages: get(req.params.arguments ?? {}) };
});
server.setRequestHandler("completion/complete", async (req) => {
  const prefix = String(req.params.argument?.value ?? "");
  const values = ["paris", "park", "party", "test", "testing"].filter((v) => v.startsWith(prefix));
  return { completion: { values, total: values.length, hasMore: false } };
});

await server.connect(new StdioServerTransport());
