// The index of a feed folder as the publisher's commands read it before adding a release to it.
import { readFile } from "node:fs/promises";
import { type FeedIndex, emptyIndex, parseFeedIndex } from "./feed-index.js";

/** The feed folder's index at `path`, or an empty one when the feed is new. @throws Error naming the file when it is unreadable or malformed. */
export async function readLocalIndex(path: string): Promise<FeedIndex> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return emptyIndex();
    throw new Error(`cannot read ${path}: ${(error as Error).message}`);
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new Error(`${path}: not JSON (${(error as Error).message})`);
  }
  return parseFeedIndex(value, path);
}
