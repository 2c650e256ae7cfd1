// The hostile inputs against a real `loom serve` (the compiled CLI in a child process, the Qwen3-shaped test
// model on its engine thread): each one is answered, none ends the process, and a stream running beside them all
// finishes. Raw sockets where the HTTP parser is concerned. The finer rules are in server/http/hostile.test.ts.
import type { ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { REPOSITORY_ROOT, skipOutsideCi, titled } from "../../engine/testing/fixtures.js";
import { ensureTestModel } from "../../scripts/test-models.js";
import { startLoomServe } from "../testing/loom-process.js";
import { rawExchange, rawRequest } from "../testing/raw-http.js";

const CLI = join(REPOSITORY_ROOT, "dist", "server", "cli", "main.js");
/** Without a build the tests skip, saying so, except under CI=true, where they fail. */
const cliReason = existsSync(CLI) ? undefined : `${CLI} is missing: run \`npm run build\` first`;
const KEY = "sk-hostile-serve";
let child: ChildProcess;
let port: number;
let chat: string;

const post = (body: unknown) =>
  fetch(`http://127.0.0.1:${port}/v1/chat/completions`, { method: "POST", headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json" }, body: typeof body === "string" ? body : JSON.stringify(body) });

describe.skipIf(skipOutsideCi(cliReason))(titled("loom serve under hostile input", cliReason), () => {
  beforeAll(async () => {
    const model = await ensureTestModel("tiny-qwen3", "gguf", "q8_0");
    ({ child, port } = await startLoomServe(["--model", model, "--port", "0", "--threads", "1", "--context", "1024"], { env: { ...process.env, LOOM_API_KEYS: KEY } }));
    const models = await (await fetch(`http://127.0.0.1:${port}/v1/models`, { headers: { authorization: `Bearer ${KEY}` } })).json();
    chat = models.data.map((m: { id: string }) => m.id).find((id: string) => id.startsWith("service/tim-"));
  });
  afterAll(() => child?.kill());

  it("answers every one, stays up, and a stream beside them finishes", async () => {
    const user = [{ role: "user", content: "Tell me a long story" }];
    const beside = post({ model: chat, messages: user, max_tokens: 64, stream: true, temperature: 1, seed: 3 }).then((response) => response.text());

    // 1.1 A malformed percent-escape in a path.
    expect((await fetch(`http://127.0.0.1:${port}/v1/models/%ZZ`, { headers: { authorization: `Bearer ${KEY}` } })).status).toBe(400);
    // 1.2 A pattern no UTF-8 byte can match (a lone surrogate), escaped and literal.
    for (const pattern of ["^\\ud800$", "^\ud800$"]) {
      const response = await post({ model: chat, messages: user, max_tokens: 8, response_format: { type: "json_schema", json_schema: { name: "s", schema: { type: "string", pattern } } } });
      expect(response.status, pattern).toBe(400);
      expect((await response.json()).error.param).toBe("response_format.json_schema.schema");
    }
    // 1.4 A prompt far past the context, and a schema past the compile limits.
    const huge = await post({ model: chat, messages: [{ role: "user", content: "lorem ipsum ".repeat(600_000) }], max_tokens: 1 });
    expect(huge.status).toBe(400);
    expect((await huge.json()).error.message).toMatch(/more than 1023 tokens/);
    const properties = Object.fromEntries(Array.from({ length: 20_000 }, (_, i) => [`p${i}`, { type: "integer" }]));
    const schema = await post({ model: chat, messages: user, max_tokens: 4, response_format: { type: "json_schema", json_schema: { name: "big", schema: { type: "object", properties, required: Object.keys(properties) } } } });
    expect(schema.status).toBe(400);
    expect((await schema.json()).error.message).toMatch(/more than 1000 properties/);
    // 1.5 HTTP parsing: HTTP/1.0, many header lines, ambiguous framing with a request smuggled behind it.
    expect((await rawExchange(port, "GET /health HTTP/1.0\r\n\r\n")).responses[0]?.status).toBe(505);
    const lines = Object.fromEntries(Array.from({ length: 60 }, (_, i) => [`x-h${i}`, "v"]));
    expect((await rawExchange(port, rawRequest("GET", "/health", lines))).responses[0]?.status).toBe(200);
    const body = JSON.stringify({ model: chat, messages: user, max_tokens: 1 });
    const smuggled = await rawExchange(port, rawRequest("POST", "/v1/chat/completions", { authorization: `Bearer ${KEY}`, "content-type": "application/json", "content-length": [String(body.length), String(body.length)] }, body) + rawRequest("GET", "/health"));
    expect(smuggled.responses.map((response) => response.status)).not.toContain(200);
    expect(smuggled.closed).toBe(true);
    // 1.7 max_tokens the context cannot hold, top_p 0.
    const tooMany = await post({ model: chat, messages: user, max_tokens: 5000 });
    expect(tooMany.status).toBe(400);
    expect((await tooMany.json()).error).toMatchObject({ param: "max_tokens", message: expect.stringMatching(/the context holds 1024/) });
    expect((await post({ model: chat, messages: user, max_tokens: 2, top_p: 0 })).status).toBe(200);

    const stream = await beside;
    expect(stream).toContain("data: [DONE]");
    expect((await fetch(`http://127.0.0.1:${port}/health`)).status).toBe(200);
    expect(child.exitCode).toBeNull();
  });
});
