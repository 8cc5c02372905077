// Talks to `ctxprobe serve` with the official `openai` npm package, as a user's code would, and prints what the
// client saw as one JSON object for OpenAiClientIT to check. BASE is the server's root URL.
import OpenAI from "openai";

const client = new OpenAI({ baseURL: process.env.BASE + "/v1", apiKey: "unused", maxRetries: 0 });
const model = "ctxprobe-micro";
const out = {};

async function refusal(call) {
  try {
    await call();
    return null;
  } catch (e) {
    return { status: e.status, kind: e.constructor.name, message: e.message, type: e.type, param: e.param, code: e.code };
  }
}

const models = await client.models.list();
out.models = models.data.map((m) => ({ id: m.id, object: m.object, created: typeof m.created, owned_by: m.owned_by }));
out.retrieved = (await client.models.retrieve(model)).id;

const ids = await client.completions.create({ model, prompt: Array(1000).fill(65), max_tokens: 4 });
out.ids = { usage: ids.usage, choices: ids.choices.length, finish: ids.choices[0].finish_reason, object: ids.object };

const text = await client.completions.create({ model, prompt: "hello", max_tokens: 2 });
out.text = { usage: text.usage };

const stream = await client.completions.create({
  model,
  prompt: [5, 6, 7],
  max_tokens: 3,
  stream: true,
  stream_options: { include_usage: true },
});
let events = 0;
let usage = null;
for await (const chunk of stream) {
  if (chunk.choices.length > 0) events++;
  if (chunk.usage) usage = chunk.usage;
}
out.stream = { events, usage };

out.unknownModel = await refusal(() => client.completions.create({ model: "gpt-4", prompt: [5], max_tokens: 1 }));
out.tooLong = await refusal(() => client.completions.create({ model, prompt: Array(4096).fill(5), max_tokens: 1 }));
out.severalChoices = await refusal(() => client.completions.create({ model, prompt: [5], max_tokens: 1, n: 2 }));
out.batch = await refusal(() => client.completions.create({ model, prompt: ["a", "b"], max_tokens: 1 }));
out.unknownPath = await refusal(() => client.get("/no/such/path"));

console.log(JSON.stringify(out));
