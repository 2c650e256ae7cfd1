// cpuByPart: each sample to the innermost claimed frame of its stack, idle apart, the rest "other".
import { describe, expect, it } from "vitest";
import { type CpuProfile, cpuByPart } from "./cpu-profile-summary.js";

const frame = (functionName: string, url = "") => ({ functionName, url });

// (root) -> admit (accountant) -> record (usage-writer) -> query (pg) -> parse (pg-protocol)
//        -> (idle)
//        -> handle (generation) -> stringify
const profile: CpuProfile = {
  nodes: [
    { id: 1, callFrame: frame("(root)"), children: [2, 6, 7] },
    { id: 2, callFrame: frame("admit", "file:///loom/dist/server/platform/accountant.js"), children: [3] },
    { id: 3, callFrame: frame("record", "file:///loom/dist/server/platform/store/usage-writer.js"), children: [4] },
    { id: 4, callFrame: frame("query", "file:///loom/node_modules/pg/lib/client.js"), children: [5] },
    { id: 5, callFrame: frame("parse", "file:///loom/node_modules/pg-protocol/dist/parser.js") },
    { id: 6, callFrame: frame("(idle)") },
    { id: 7, callFrame: frame("handle", "file:///loom/dist/server/inference/generation.js"), children: [8] },
    { id: 8, callFrame: frame("stringify") },
  ],
  startTime: 100,
  samples: [2, 3, 5, 5, 6, 8, 1],
  timeDeltas: [1000, 2000, 3000, 4000, 5000, 6000, 7000],
};

const parts = [
  { name: "accountant", url: /accountant\.js$/ },
  { name: "writer", url: /usage-writer\.js$/ },
  { name: "driver", url: /node_modules\/(pg|pg-protocol)\// },
];

describe("cpuByPart", () => {
  it("gives each sample to the innermost part on its stack, in milliseconds", () => {
    expect(Object.fromEntries(cpuByPart(profile, parts))).toEqual({ accountant: 1, writer: 2, driver: 7, idle: 5, other: 13 });
  });

  it("counts only the samples within the windows given (sample times: start + the deltas so far)", () => {
    // Samples at 1100, 3100, 6100, 10100, 15100, 21100, 28100 us.
    const totals = cpuByPart(profile, parts, [{ start: 0, end: 3100 }, { start: 6100, end: 10101 }]);
    expect(Object.fromEntries(totals)).toEqual({ accountant: 1, writer: 0, driver: 7, idle: 0, other: 0 });
  });

  it("matches a part's function name too, when it names one", () => {
    const totals = cpuByPart(profile, [{ name: "parse only", url: /pg-protocol/, functionName: /^parse$/ }, { name: "client", url: /node_modules\/pg\// }]);
    expect(totals.get("parse only")).toBe(7);
    expect(totals.get("client")).toBe(0);
    expect(totals.get("other")).toBe(16);
  });
});
