// Hub model names and the choice of files among a repository's, as llama.cpp's -hf makes it.
import { describe, expect, it } from "vitest";
import { UsageError } from "../../engine/cli/arguments.js";
import { type HubFile, MissingQuantError, parseHubModelName, pickModelFiles, quantOf, quantsOf } from "./hub-files.js";

const file = (path: string): HubFile => ({ path, size: 1, sha256: undefined });

describe("parseHubModelName", () => {
  it("reads hf:<org>/<repo>[:<quant>], Q4_K_M by default", () => {
    expect(parseHubModelName("hf:Qwen/Qwen3-8B-GGUF")).toEqual({ repository: "Qwen/Qwen3-8B-GGUF", quant: "Q4_K_M", quantGiven: false, text: "hf:Qwen/Qwen3-8B-GGUF" });
    expect(parseHubModelName("hf:unsloth/gpt-oss-20b-GGUF:mxfp4")).toMatchObject({ repository: "unsloth/gpt-oss-20b-GGUF", quant: "mxfp4", quantGiven: true });
    expect(parseHubModelName("hf:unsloth/Qwen3-0.6B-GGUF:UD-Q4_K_XL").quant).toBe("UD-Q4_K_XL");
  });

  it("refuses names that are not a repository, naming the form", () => {
    for (const bad of ["hf:Qwen3-8B-GGUF", "hf:a/b/c", "hf:a/../b", "hf:a/b:Q4:K", "hf:/b", "hf:a/-b", "hf:a/b:Q4 K"]) {
      expect(() => parseHubModelName(bad), bad).toThrow(UsageError);
    }
    expect(() => parseHubModelName("hf:Qwen3-8B-GGUF")).toThrow("hf:Qwen3-8B-GGUF: not a Hub model name: it takes the form hf:<org>/<repo>[:<quant>], e.g. hf:Qwen/Qwen3-0.6B-GGUF:Q8_0");
  });
});

describe("choosing the files", () => {
  const name = (quant?: string) => parseHubModelName(`hf:org/repo${quant ? `:${quant}` : ""}`);

  it("reads quantization tags from file names, split or not", () => {
    expect(quantOf("Qwen3-8B-Q4_K_M-00001-of-00002.gguf")).toBe("Q4_K_M");
    expect(quantOf("sub/llama-2-7b.q5_k_s.gguf")).toBe("Q5_K_S");
    expect(quantOf("model.gguf")).toBeUndefined();
    expect(quantsOf([file("a-Q8_0.gguf"), file("a-Q4_K_M-00001-of-00002.gguf"), file("a-Q4_K_M-00002-of-00002.gguf"), file("mmproj-a-F16.gguf"), file("README.md")])).toEqual(["Q4_K_M", "Q8_0"]);
  });

  it("matches the tag between separators only, and prefers a whole file to a split one", () => {
    const files = [file("m-IQ4_K_M.gguf"), file("m-Q4_K_M-00001-of-00002.gguf"), file("m-Q4_K_M-00002-of-00002.gguf"), file("m-Q4_K.gguf"), file("imatrix-Q4_K_M.gguf")];
    expect(pickModelFiles(name(), files).map((f) => f.path)).toEqual(["m-Q4_K_M-00001-of-00002.gguf", "m-Q4_K_M-00002-of-00002.gguf"]);
    expect(pickModelFiles(name("q4_k"), files).map((f) => f.path)).toEqual(["m-Q4_K.gguf"]);
    expect(pickModelFiles(name(), [...files, file("m.Q4_K_M.gguf")]).map((f) => f.path)).toEqual(["m.Q4_K_M.gguf"]);
    expect(pickModelFiles(name("ud-q4_k_xl"), [file("m-Q4_K_XL.gguf"), file("m-UD-Q4_K_XL.gguf")]).map((f) => f.path)).toEqual(["m-UD-Q4_K_XL.gguf"]);
  });

  it("refuses a split model whose parts are not all listed", () => {
    const files = [file("Q8_0/m-Q8_0-00001-of-00003.gguf"), file("Q8_0/m-Q8_0-00003-of-00003.gguf")];
    expect(() => pickModelFiles(name("Q8_0"), files)).toThrow(new MissingQuantError("hf:org/repo:Q8_0: Q8_0/m-Q8_0-00001-of-00003.gguf is part 1 of 3, but the repository does not list part 2"));
  });
});
