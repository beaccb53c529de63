// The official JS SDK as an oracle: node js_sdk_oracle.mjs SDK_DIR BASE_URL STREAM(0|1) prints
// the tool_use names it read from one answer (a policy header sent), or "!error:..." when it threw.
const [sdkDir, baseURL, stream] = process.argv.slice(2);
const { default: Anthropic } = await import(sdkDir + "/index.mjs");
const client = new Anthropic({ baseURL, apiKey: "k", maxRetries: 0 });
const request = { model: "claude-sonnet-4-5", max_tokens: 100,
  messages: [{ role: "user", content: "x" }],
  tools: [{ name: "bash", input_schema: { type: "object" } }, { name: "read", input_schema: { type: "object" } }] };
const opts = { headers: { "x-bridge-rules-policy": "no_exec" } };
const names = [];
try {
  if (stream === "1") {
    const s = await client.messages.create({ ...request, stream: true }, opts);
    for await (const ev of s) {
      if (ev.type === "content_block_start" && ev.content_block?.type === "tool_use") names.push(ev.content_block.name);
      if (ev.type === "message_start") for (const b of ev.message?.content ?? []) if (b.type === "tool_use") names.push(b.name);
    }
  } else {
    const m = await client.messages.create(request, opts);
    for (const b of m.content ?? []) if (b.type === "tool_use") names.push(b.name);
  }
} catch (e) { names.push("!error:" + (e?.constructor?.name ?? "?")); }
console.log(JSON.stringify(names));
