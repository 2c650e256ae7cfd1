// uWebSockets.js, loaded when a server starts rather than when the CLI loads: its native builds cover some Node.js
// releases only (uws-pack 20.0.8: Node 20 and 22 on Linux, macOS and Windows), and on another release `loom serve`
// should say so while `loom generate` and the engine keep working.
type Uws = typeof import("uWebSockets.js");

/**
 * The uWebSockets.js module. @throws Error naming the Node.js release, its ABI and the releases that work, when the
 * package has no build for this one.
 */
export async function loadUws(importer: () => Promise<Uws> = () => import("uWebSockets.js")): Promise<Uws> {
  try {
    return await importer();
  } catch (error) {
    const cause = String((error as Error)?.message ?? error).split("\n")[0];
    throw new Error(
      `the HTTP server needs uWebSockets.js (uws-pack 20.0.8), which has no build for Node.js ${process.version} ` +
        `(ABI ${process.versions.modules}, ${process.platform}-${process.arch}): run loom serve on Node.js 20 or 22 (${cause})`,
      { cause: error },
    );
  }
}
