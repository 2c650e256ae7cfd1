// Names of cached token chains that another process can compute from a prompt alone: the hash of a full block
// chains its parent's, so one hash names the whole chain of blocks up to it, as the prefix index's tree does. A
// gateway hashes a prompt's leading full blocks and looks them up among the hashes each worker reported.
import { createHash } from "node:crypto";

/**
 * The chain hash of the block `tokens[start .. start + length)` following the block hashed `parent` (null: the
 * chain's first block): 128 bits of SHA-256, base64url.
 */
export function chainHash(parent: string | null, tokens: ArrayLike<number>, start = 0, length = tokens.length): string {
  const block = new Int32Array(length);
  for (let i = 0; i < length; i++) block[i] = tokens[start + i]!;
  const hash = createHash("sha256");
  if (parent !== null) hash.update(parent);
  hash.update(new Uint8Array(block.buffer));
  return hash.digest("base64url").slice(0, 22);
}

/** The chain hashes of the leading full blocks of `tokens`, first block first. */
export function chainHashes(tokens: ArrayLike<number>, blockSize: number): string[] {
  const hashes: string[] = [];
  let parent: string | null = null;
  for (let start = 0; start + blockSize <= tokens.length; start += blockSize) {
    parent = chainHash(parent, tokens, start, blockSize);
    hashes.push(parent);
  }
  return hashes;
}
