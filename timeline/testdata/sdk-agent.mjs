// An agent loop on the official TypeScript SDK (@anthropic-ai/sdk), used
// to record testdata/sdk-agent.json.gz against the scripted stand-in:
// tools (two deferred behind the server-side regex tool search), prompt
// caching on the system prompt and the tools, parallel tool calls,
// streaming and non-streaming requests, and a second conversation that
// ends on a stop sequence. ANTHROPIC_BASE_URL and ANTHROPIC_API_KEY come
// from the environment.
import Anthropic from "@anthropic-ai/sdk";

const client = new Anthropic({ maxRetries: 0 });
const model = "claude-sonnet-4-5";

const system = [{
  type: "text",
  text: "You are a travel assistant. Answer briefly. Use the tools to look things up; search for a tool when none of the loaded ones fits. " +
    "Keep answers to one or two sentences, name the city, and never guess a figure a tool can give. ".repeat(60),
  cache_control: { type: "ephemeral" },
}];

const tools = [
  { type: "tool_search_tool_regex_20251119", name: "tool_search_tool_regex" },
  {
    name: "get_weather", description: "Current weather for a city.", defer_loading: true,
    input_schema: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
  },
  {
    name: "get_exchange_rate", description: "Exchange rate between two currencies.", defer_loading: true,
    input_schema: { type: "object", properties: { from: { type: "string" }, to: { type: "string" } }, required: ["from", "to"] },
  },
  {
    name: "calculator", description: "Evaluate an arithmetic expression.",
    input_schema: { type: "object", properties: { expression: { type: "string" } }, required: ["expression"] },
    cache_control: { type: "ephemeral" },
  },
];

function run(name, input) {
  switch (name) {
    case "get_weather": return `Sunny, 21 degrees in ${input.city}.`;
    case "calculator": return "42";
    default: return `no such tool: ${name}`;
  }
}

const messages = [{ role: "user", content: "What is the weather in Paris, and what is 21*2?" }];
for (let turn = 0; turn < 6; turn++) {
  const params = { model, max_tokens: 1024, system, tools, messages };
  // Streamed and plain requests in turn, as apps mix them.
  const msg = turn % 2 === 0
    ? await client.beta.messages.stream({ ...params, betas: ["advanced-tool-use-2025-11-20"] }).finalMessage()
    : await client.beta.messages.create({ ...params, betas: ["advanced-tool-use-2025-11-20"] });
  messages.push({ role: "assistant", content: msg.content });
  if (msg.stop_reason !== "tool_use") break;
  const results = [];
  for (const block of msg.content) {
    if (block.type === "tool_use") {
      results.push({ type: "tool_result", tool_use_id: block.id, content: run(block.name, block.input) });
    }
  }
  messages.push({ role: "user", content: results });
}

// A second, unrelated conversation that stops on a stop sequence.
const poem = await client.messages.create({
  model, max_tokens: 200, stop_sequences: ["###"],
  system: "You are a poet. End every poem with ###.",
  messages: [{ role: "user", content: "A two-line poem about Paris." }],
});
console.log(JSON.stringify({ turns: messages.length, poem: poem.stop_reason }));
