// An agent loop on the official TypeScript SDK (@anthropic-ai/sdk) that
// meets every failure the stand-in can script, used to record
// testdata/sdk-flaky.json.gz: an overload the SDK retries by itself, a
// server-side search that finds nothing, a call to a deferred tool never
// loaded and to a tool that does not exist, a stream cut off (asked again
// by hand), a cache entry lost, and an empty reply ending on a stop
// sequence the request never set (asked again with a nudge).
import Anthropic from "@anthropic-ai/sdk";

const client = new Anthropic({ maxRetries: 2 });
const model = "claude-sonnet-4-5";
const betas = ["advanced-tool-use-2025-11-20"];

const system = [{
  type: "text",
  text: "You are a travel assistant. Use the tools; search for one when none of the loaded ones fits. ".repeat(200),
  cache_control: { type: "ephemeral" },
}];
const tools = [
  { type: "tool_search_tool_regex_20251119", name: "tool_search_tool_regex" },
  {
    name: "get_exchange_rate", description: "Exchange rate between two currencies.", defer_loading: true,
    input_schema: { type: "object", properties: { from: { type: "string" }, to: { type: "string" } } },
  },
  {
    name: "calculator", description: "Evaluate an arithmetic expression.",
    input_schema: { type: "object", properties: { expression: { type: "string" } } },
    cache_control: { type: "ephemeral" },
  },
];

function run(block) {
  if (block.name === "calculator") return { type: "tool_result", tool_use_id: block.id, content: "42" };
  return { type: "tool_result", tool_use_id: block.id, content: `Error: tool ${block.name} is not available`, is_error: true };
}

async function ask(turn, messages) {
  const params = { model, max_tokens: 2048, system, tools, messages, betas };
  for (let attempt = 1; ; attempt++) {
    try {
      return turn % 2 === 1
        ? await client.beta.messages.stream(params).finalMessage()
        : await client.beta.messages.create(params);
    } catch (e) {
      if (attempt >= 2) throw e;
      console.log(`turn ${turn}: ${e.message}; asking again`);
    }
  }
}

const messages = [{ role: "user", content: "How many euros is 100 dollars, and book me a flight to Rome." }];
for (let turn = 0; turn < 8; turn++) {
  const msg = await ask(turn, messages);
  if (msg.content.length === 0) {
    // Nothing came back: ask again with a nudge.
    messages[messages.length - 1] = {
      role: "user",
      content: [...[].concat(messages[messages.length - 1].content).map((b) => typeof b === "string" ? { type: "text", text: b } : b),
        { type: "text", text: "Please continue." }],
    };
    continue;
  }
  messages.push({ role: "assistant", content: msg.content });
  if (msg.stop_reason !== "tool_use") break;
  messages.push({ role: "user", content: msg.content.filter((b) => b.type === "tool_use").map(run) });
}
console.log(JSON.stringify({ messages: messages.length }));
