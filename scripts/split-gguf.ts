// Splits a GGUF file into parts as llama.cpp's gguf-split does with --split-max-tensors: `<prefix>-00001-of-0000N.gguf`
// and so on, the first part carrying the model's metadata byte for byte, every part `split.no`, `split.count` and
// `split.tensors.count`, tensors in their original order. For tests of split models (loom's loader, the Hub download)
// and to check that llama.cpp reads the same parts.
//
//   npm run build && node dist/scripts/split-gguf.js <model.gguf> <output-prefix> <parts>
import { closeSync, openSync, writeSync } from "node:fs";
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { readGgufHeader } from "../engine/model/gguf/reader.js";
import { SPLIT_KEYS, splitPartPath } from "../engine/model/gguf/split.js";
import { type GgufTypedValue, encodeGgufHeader } from "../engine/model/gguf/writer.js";
import { GGUF_DEFAULT_ALIGNMENT } from "../engine/model/gguf/format.js";
import { openForReading, readFully } from "../engine/model/file-io.js";

/**
 * Writes `model` as `parts` files named `<prefix>-0000K-of-0000N.gguf` (tensors shared out as evenly as their count
 * allows, each part at least one) and returns their paths, first part first.
 * @throws Error when the model is split already, uses an alignment other than 32, or has fewer tensors than parts.
 */
export function splitGguf(model: string, prefix: string, parts: number): string[] {
  const header = readGgufHeader(model);
  if ([...header.metadata.keys()].some((key) => key.startsWith("split."))) throw new Error(`${model} is a part of a split model already`);
  const alignment = header.metadata.get("general.alignment") ?? GGUF_DEFAULT_ALIGNMENT;
  if (alignment !== GGUF_DEFAULT_ALIGNMENT) throw new Error(`${model}: general.alignment ${String(alignment)}; this splitter writes ${GGUF_DEFAULT_ALIGNMENT}`);
  if (!Number.isInteger(parts) || parts < 2 || parts > header.tensors.length) throw new Error(`parts must be 2 to ${header.tensors.length} (the tensors of ${model}), got ${parts}`);
  const copied = { count: header.metadata.size, bytes: new Uint8Array(header.metadataEnd - 24) };
  const input = openForReading(model);
  const paths: string[] = [];
  try {
    readFully(input, model, copied.bytes, 24);
    const perPart = Math.ceil(header.tensors.length / parts);
    for (let part = 0; part < parts; part++) {
      const tensors = header.tensors.slice(part * perPart, (part + 1) * perPart);
      if (tensors.length === 0) throw new Error(`${parts} parts of ${header.tensors.length} tensors would leave part ${part + 1} empty`);
      const splitMetadata: Array<[string, GgufTypedValue]> = [
        [SPLIT_KEYS.number, { type: "u16", value: part }],
        [SPLIT_KEYS.count, { type: "u16", value: parts }],
        [SPLIT_KEYS.tensorsCount, { type: "i32", value: header.tensors.length }],
      ];
      const encoded = encodeGgufHeader(splitMetadata, tensors, part === 0 ? copied : undefined);
      const path = splitPartPath(prefix, part + 1, parts);
      const output = openSync(path, "w");
      try {
        writeSync(output, encoded.header);
        let written = 0;
        tensors.forEach((tensor, i) => {
          if (encoded.sizes[i] !== tensor.byteLength) throw new Error(`tensor '${tensor.name}': ${tensor.byteLength} bytes in ${model}, ${encoded.sizes[i]} encoded`);
          if (encoded.offsets[i] > written) writeSync(output, Buffer.alloc(encoded.offsets[i] - written));
          const bytes = new Uint8Array(tensor.byteLength);
          readFully(input, model, bytes, tensor.fileOffset);
          writeSync(output, bytes);
          written = encoded.offsets[i] + bytes.length;
        });
      } finally {
        closeSync(output);
      }
      paths.push(path);
    }
  } finally {
    closeSync(input);
  }
  return paths;
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  const [model, prefix, parts] = process.argv.slice(2);
  if (!model || !prefix || !parts) {
    process.stderr.write("usage: node dist/scripts/split-gguf.js <model.gguf> <output-prefix> <parts>\n");
    process.exit(2);
  }
  for (const path of splitGguf(model, prefix, Number(parts))) process.stdout.write(`${path}\n`);
}
