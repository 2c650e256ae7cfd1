// TEST ONLY: a webhook receiver on 127.0.0.1 that verifies each request with the `standardwebhooks` package, as a
// customer's endpoint would, and answers as the test scripts it (a status, or never: a timeout for the sender).
import { createServer, type IncomingHttpHeaders, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { Webhook } from "standardwebhooks";

/** One request the receiver got. */
export interface ReceivedCallback {
  headers: IncomingHttpHeaders;
  body: string;
  /** The verified body parsed, or undefined when verification failed (see `verifyError`). */
  verified: unknown;
  verifyError: string | undefined;
}

/** What to answer the nth request (0-based): a status code, or "hang" to answer nothing (possibly after a wait). */
export type ReceiverScript = (index: number, received: ReceivedCallback) => number | "hang" | Promise<number | "hang">;

export interface WebhookReceiver {
  url: string;
  received: ReceivedCallback[];
  close(): Promise<void>;
}

/**
 * Listens on 127.0.0.1 (a free port) and verifies each request under the secret `secretOf` gives for it (the
 * secret may depend on the body, e.g. on its runId: several organizations may post to one receiver).
 */
export async function startWebhookReceiver(secretOf: (body: string) => string | Promise<string>, script: ReceiverScript = () => 204): Promise<WebhookReceiver> {
  const received: ReceivedCallback[] = [];
  const hanging = new Set<ServerResponse>();
  const server = createServer(async (incoming, response) => {
    const chunks: Buffer[] = [];
    for await (const chunk of incoming) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks).toString("utf8");
    let verified: unknown;
    let verifyError: string | undefined;
    try {
      verified = new Webhook(await secretOf(body)).verify(body, incoming.headers as Record<string, string>);
    } catch (error) {
      verifyError = (error as Error).message;
    }
    const entry = { headers: incoming.headers, body, verified, verifyError };
    const index = received.length;
    received.push(entry);
    const answer = await script(index, entry);
    if (answer === "hang") {
      hanging.add(response);
      return;
    }
    response.writeHead(answer).end();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hooks/runs`,
    received,
    async close() {
      for (const response of hanging) response.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
