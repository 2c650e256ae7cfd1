// A loopback port that nothing listens on: for tests of a peer that cannot be reached (connections are refused).
import { createServer } from "node:net";

/** A port on 127.0.0.1 that was free a moment ago and is closed now. */
export function closedLoopbackPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const listener = createServer();
    listener.once("error", reject);
    listener.listen(0, "127.0.0.1", () => {
      const { port } = listener.address() as { port: number };
      listener.close(() => resolve(port));
    });
  });
}
