// Loading uWebSockets.js: the build that fits this machine, or an error that says what to change or install.
import { describe, expect, it } from "vitest";
import { type LoadedUws, UWS_IDLE_TIMEOUT_SECONDS, UwsUnavailableError, alignTimeouts, describeUwsBuild, loadUws } from "./uws.js";
import { chooseUwsBuild, currentRuntime } from "./uws-builds.js";

const NODE_24_ON_DEBIAN_12 = { nodeVersion: "v24.21.0", abi: 137, platform: "linux", arch: "x64", glibc: "2.36" };
const NODE_24_ON_DEBIAN_13 = { ...NODE_24_ON_DEBIAN_12, glibc: "2.41" };

/** The error a load fails with. */
async function failure(loading: Promise<LoadedUws>): Promise<UwsUnavailableError> {
  const error = await loading.then(() => undefined, (caught: unknown) => caught);
  expect(error).toBeInstanceOf(UwsUnavailableError);
  return error as UwsUnavailableError;
}

describe("loadUws", () => {
  it("loads the build chosen for this process, once", async () => {
    const choice = chooseUwsBuild(currentRuntime());
    if ("refusal" in choice) {
      expect((await failure(loadUws())).message).toBe(choice.refusal);
      return;
    }
    const loaded = await loadUws();
    expect(loaded.build).toBe(choice.build);
    expect(typeof loaded.uws.App).toBe("function");
    expect(typeof loaded.uws.us_socket_local_port).toBe("function");
    expect(loadUws()).toBe(loadUws());
  });

  it("refuses before importing anything where no build loads", async () => {
    const imported: string[] = [];
    const error = await failure(loadUws({ runtime: NODE_24_ON_DEBIAN_12, importModule: async (name) => imported.push(name) }));
    expect(error.message).toBe((chooseUwsBuild(NODE_24_ON_DEBIAN_12) as { refusal: string }).refusal);
    expect(imported).toEqual([]);
  });

  it("imports the chosen build by its package.json name", async () => {
    const imported: string[] = [];
    const module = { App: () => undefined };
    const loaded = await loadUws({ runtime: NODE_24_ON_DEBIAN_13, importModule: async (name) => (imported.push(name), module) });
    expect(imported).toEqual(["@btc-vision/uwebsockets.js"]);
    expect(loaded.uws).toBe(module);
    expect(describeUwsBuild(loaded.build)).toBe("uWebSockets.js v20.57 (@btc-vision/uwebsockets.js 20.57.0)");
  });

  it("says how to install the chosen build when it is missing", async () => {
    const notFound = Object.assign(new Error("Cannot find package '@btc-vision/uwebsockets.js' imported from /loom/dist/server/http/uws.js"), { code: "ERR_MODULE_NOT_FOUND" });
    const error = await failure(loadUws({ runtime: NODE_24_ON_DEBIAN_13, importModule: () => Promise.reject(notFound) }));
    expect(error.message).toBe(
      "the uWebSockets.js build for Node.js v24.21.0 (ABI 137) on linux-x64 with glibc 2.41 is @btc-vision/uwebsockets.js " +
        "20.57.0, which is not installed: npm install without --omit=optional (it is an optional dependency)",
    );
    expect(error.cause).toBe(notFound);
  });

  it("passes on the dynamic linker's complaint when the binary does not load", async () => {
    const linker = new Error(
      "This version of uWS.js (v20.57.0) supports only Node.js versions 20, 22, 24 and 25 on (glibc) Linux, macOS and Windows.\n\n" +
        "Error: /lib/x86_64-linux-gnu/libc.so.6: version `GLIBC_2.38' not found (required by uws_linux_x64_137.node)\n",
    );
    const error = await failure(loadUws({ runtime: NODE_24_ON_DEBIAN_13, importModule: () => Promise.reject(linker) }));
    expect(error.message).toBe(
      "@btc-vision/uwebsockets.js 20.57.0 (uWebSockets.js v20.57) did not load on Node.js v24.21.0 (ABI 137) on linux-x64 " +
        "with glibc 2.41: Error: /lib/x86_64-linux-gnu/libc.so.6: version `GLIBC_2.38' not found (required by uws_linux_x64_137.node)",
    );
  });
});

describe("alignTimeouts", () => {
  it("sets the request and keep-alive idle timeouts to uws-pack's 10 s on a build that can set them", () => {
    const calls: string[] = [];
    alignTimeouts({ setIdleTimeout: (seconds: number) => calls.push(`idle ${seconds}`), setResponseTimeout: (seconds: number) => calls.push(`response ${seconds}`) });
    expect(UWS_IDLE_TIMEOUT_SECONDS).toBe(10);
    expect(calls).toEqual(["idle 10", "response 10"]);
  });

  it("leaves a build without the setters (uws-pack) as it is", () => {
    expect(() => alignTimeouts({})).not.toThrow();
  });
});
