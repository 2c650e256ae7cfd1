// How to call this loom: the base URL each SDK expects, the model names served here, and snippets to copy.
// The openai SDK's baseURL includes /v1 (it appends /chat/completions); @anthropic-ai/sdk's is the origin (it
// appends /v1/messages). Each API has model names of its own (a chat-completions name is a 404 on /v1/messages), so
// each snippet uses its API's name and the list says which name is which.
import { api } from "../api";
import { CodeBlock, ErrorMessage, Facts, Loading, useLoad, useReady, useTitle } from "../components";
import { href } from "../router";
import type { ApiFormat, ModelName } from "../types";

type Tab = "openai" | "anthropic" | "curl";

/** How the models list names each API. */
const API_NAMES: Record<ApiFormat, string> = { openai: "/v1/chat/completions and /v1/responses (openai)", anthropic: "/v1/messages (@anthropic-ai/sdk)" };

/** The name a snippet of `format` uses: that format's default, else its first name, else a placeholder. */
export function modelFor(list: readonly ModelName[], format: ApiFormat): string {
  const own = list.filter((each) => each.formats.includes(format));
  return (own.find((each) => each.default) ?? own[0])?.id ?? "MODEL";
}

export function QuickStartPage() {
  useTitle("Quick start");
  const models = useLoad((signal) => api<{ models: ModelName[] }>("GET", "/api/v1/dashboard/models", undefined, { signal }).then((answer) => answer.models), []);
  useReady(!models.loading);
  const list = models.data ?? [];
  const model = modelFor(list, "openai");
  const messagesModel = modelFor(list, "anthropic");
  const origin = location.origin;
  const openaiBase = `${origin}/v1`;
  const snippets: Record<Tab, { label: string; code: string }> = {
    openai: {
      label: "JavaScript, openai",
      code: `import OpenAI from "openai";

const client = new OpenAI({
  baseURL: ${JSON.stringify(openaiBase)},
  apiKey: process.env.LOOM_API_KEY,
});

const completion = await client.chat.completions.create({
  model: ${JSON.stringify(model)},
  messages: [{ role: "user", content: "Say hello in three languages." }],
});
console.log(completion.choices[0].message.content);
`,
    },
    anthropic: {
      label: "JavaScript, @anthropic-ai/sdk",
      code: `import Anthropic from "@anthropic-ai/sdk";

const client = new Anthropic({
  baseURL: ${JSON.stringify(origin)},
  apiKey: process.env.LOOM_API_KEY,
});

const message = await client.messages.create({
  model: ${JSON.stringify(messagesModel)},
  max_tokens: 512,
  messages: [{ role: "user", content: "Say hello in three languages." }],
});
console.log(message.content);
`,
    },
    curl: {
      label: "curl",
      code: `curl ${openaiBase}/chat/completions \\
  -H "Authorization: Bearer $LOOM_API_KEY" \\
  -H "Content-Type: application/json" \\
  -d '${JSON.stringify({ model, messages: [{ role: "user", content: "Say hello in three languages." }] })}'

curl ${origin}/v1/messages \\
  -H "x-api-key: $LOOM_API_KEY" \\
  -H "Content-Type: application/json" \\
  -d '${JSON.stringify({ model: messagesModel, max_tokens: 512, messages: [{ role: "user", content: "Say hello in three languages." }] })}'
`,
    },
  };
  const tabs: Tab[] = ["openai", "anthropic", "curl"];
  return (
    <>
      <h1>Quick start</h1>
      <p class="lead">
        loom speaks the OpenAI and Anthropic APIs. Create an inference key on the <a href={href("/keys")}>API keys</a> page, put it in <code>LOOM_API_KEY</code>, and point your client here.
      </p>
      <section class="card" aria-labelledby="urls-heading">
        <h2 id="urls-heading">Base URLs</h2>
        <Facts
          testId="quickstart-base-urls"
          items={[
            ["openai (OpenAI format)", <code class="break" data-testid="quickstart-openai-base">{openaiBase}</code>],
            ["@anthropic-ai/sdk (Anthropic format)", <code class="break" data-testid="quickstart-anthropic-base">{origin}</code>],
          ]}
        />
      </section>
      <section class="card" aria-labelledby="models-heading">
        <h2 id="models-heading">Models</h2>
        {models.error && <ErrorMessage>{models.error}</ErrorMessage>}
        {models.loading && !models.data && <Loading what="Loading models" />}
        {models.data && list.length === 0 && <p class="empty">No models are served here right now.</p>}
        {list.length > 0 && (
          <>
            <p class="muted">Each API takes its own names: send a name to the API it is listed under.</p>
            {(["openai", "anthropic"] as const).map((format) => {
              const names = list.filter((each) => each.formats.includes(format));
              return (
                <div key={format} data-testid={`quickstart-models-${format}`}>
                  <h3>{API_NAMES[format]}</h3>
                  {names.length === 0 ? (
                    <p class="empty">No model is served in this format.</p>
                  ) : (
                    <ul class="model-list">
                      {names.map((each) => (
                        <li key={each.id} data-testid="quickstart-model" data-format={format}>
                          <code>{each.id}</code>
                          {each.default && <span class="badge badge-default">default</span>}
                        </li>
                      ))}
                    </ul>
                  )}
                </div>
              );
            })}
          </>
        )}
      </section>
      <section class="card" aria-labelledby="snippets-heading">
        <h2 id="snippets-heading">Snippets</h2>
        {tabs.map((each) => (
          <div class="snippet" key={each}>
            <h3>{snippets[each].label}</h3>
            {each !== "curl" && (
              <p class="muted">
                <code>npm install {each === "openai" ? "openai" : "@anthropic-ai/sdk"}</code>: the {each === "openai" ? "openai client appends /chat/completions to a baseURL that ends in /v1" : "Anthropic client appends /v1/messages to the bare origin"}.
              </p>
            )}
            <CodeBlock code={snippets[each].code} label={snippets[each].label} testId={`quickstart-${each}`} />
          </div>
        ))}
      </section>
    </>
  );
}
