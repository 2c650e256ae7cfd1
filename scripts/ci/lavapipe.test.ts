// What scripts/ci/lavapipe.sh would do on Debian 12 and 13, run with --dry-run against made-up system roots (their
// os-release, apt sources, dpkg database and Vulkan ICD folder), so its decisions are tested without root.
import { execFileSync, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { REPOSITORY_ROOT } from "../../engine/testing/fixtures.js";

const SCRIPT = join(REPOSITORY_ROOT, "scripts", "ci", "lavapipe.sh");
const HAS_DPKG = spawnSync("dpkg-query", ["--version"]).status === 0;

const BOOKWORM = `PRETTY_NAME="Debian GNU/Linux 12 (bookworm)"\nNAME="Debian GNU/Linux"\nVERSION_ID="12"\nVERSION="12 (bookworm)"\nVERSION_CODENAME=bookworm\nID=debian\n`;
const TRIXIE = `PRETTY_NAME="Debian GNU/Linux 13 (trixie)"\nNAME="Debian GNU/Linux"\nVERSION_ID="13"\nVERSION="13 (trixie)"\nVERSION_CODENAME=trixie\nDEBIAN_VERSION_FULL=13.1\nID=debian\n`;
const DEBIAN_SOURCES = (suite: string) =>
  `Types: deb\nURIs: http://mirror.example/debian\nSuites: ${suite} ${suite}-updates\nComponents: main\n\n` +
  `Types: deb\nURIs: http://mirror.example/debian-security\nSuites: ${suite}-security\nComponents: main\n`;
const BOOKWORM_MESA = "22.3.6-1+deb12u1";
const BACKPORTS_MESA = "25.0.7-2~bpo12+1";

const roots: string[] = [];
afterAll(() => { for (const root of roots) rmSync(root, { recursive: true, force: true }); });

/** A made-up system root: its files, and mesa-vulkan-drivers in dpkg's database when a version is given. */
function systemRoot(files: Record<string, string>, mesa?: string): string {
  const root = mkdtempSync(join(tmpdir(), "loom-lavapipe-"));
  roots.push(root);
  const status = mesa === undefined ? "" :
    `Package: mesa-vulkan-drivers\nStatus: install ok installed\nMaintainer: Debian X Strike Force\nArchitecture: amd64\nVersion: ${mesa}\nDescription: Mesa Vulkan graphics drivers\n\n`;
  for (const [path, text] of Object.entries({ ...files, "var/lib/dpkg/status": status })) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  return root;
}

/** The script's dry run against `root`: what it prints, with the root taken out of paths. */
function dryRun(root: string): string {
  return execFileSync("bash", [SCRIPT, "--dry-run", "--root", root], { encoding: "utf8" }).replaceAll(root, "");
}

const INSTALL = "env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends";

describe.skipIf(!HAS_DPKG)("scripts/ci/lavapipe.sh", () => {
  it("bookworm with Mesa 22: adds bookworm-backports on the machine's mirror and installs Mesa from it", () => {
    const root = systemRoot({ "etc/os-release": BOOKWORM, "etc/apt/sources.list.d/debian.sources": DEBIAN_SOURCES("bookworm") }, BOOKWORM_MESA);
    const output = dryRun(root);
    expect(output).toContain(`lavapipe: Mesa ${BOOKWORM_MESA} on bookworm; Dawn needs 25 or newer`);
    expect(output).toContain(
      "write /etc/apt/sources.list.d/bookworm-backports.sources:\n  Types: deb\n  URIs: http://mirror.example/debian\n" +
        "  Suites: bookworm-backports\n  Components: main\n  Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg\n",
    );
    expect(output).toMatch(/^(sudo )?apt-get update -qq$/m);
    expect(output).toMatch(new RegExp(`^(sudo )?${INSTALL} -t bookworm-backports mesa-vulkan-drivers libvulkan1$`, "m"));
  });

  it("bookworm with the one-line sources.list and backports already there: installs without adding it again", () => {
    const root = systemRoot({
      "etc/os-release": BOOKWORM,
      "etc/apt/sources.list": "deb http://old.example/debian bookworm main\ndeb http://old.example/debian bookworm-backports main\n",
    });
    const output = dryRun(root);
    expect(output).toContain("lavapipe: Mesa not installed on bookworm");
    expect(output).not.toContain("write ");
    expect(output).toMatch(new RegExp(`^(sudo )?${INSTALL} -t bookworm-backports mesa-vulkan-drivers libvulkan1$`, "m"));
  });

  it("bookworm with the one-line sources.list only: the backports source uses its mirror", () => {
    const root = systemRoot({ "etc/os-release": BOOKWORM, "etc/apt/sources.list": "deb http://old.example/debian bookworm main\n" }, BOOKWORM_MESA);
    expect(dryRun(root)).toContain("  URIs: http://old.example/debian\n  Suites: bookworm-backports\n");
  });

  it("trixie: installs Mesa from trixie itself, without backports", () => {
    const root = systemRoot({ "etc/os-release": TRIXIE, "etc/apt/sources.list.d/debian.sources": DEBIAN_SOURCES("trixie") });
    const output = dryRun(root);
    expect(output).toContain("lavapipe: Mesa not installed on trixie");
    expect(output).not.toContain("backports");
    expect(output).toMatch(/^(sudo )?apt-get update -qq$/m);
    expect(output).toMatch(new RegExp(`^(sudo )?${INSTALL} mesa-vulkan-drivers libvulkan1$`, "m"));
  });

  it("Mesa 25 or newer with its ICD file: does nothing, on either suite", () => {
    for (const [release, mesa] of [[BOOKWORM, BACKPORTS_MESA], [TRIXIE, "25.0.7-2+deb13u1"]] as const) {
      const root = systemRoot({ "etc/os-release": release, "usr/share/vulkan/icd.d/lvp_icd.x86_64.json": "{}" }, mesa);
      expect(dryRun(root)).toBe(`lavapipe: Mesa ${mesa} is installed; nothing to do\n`);
    }
  });

  it("Mesa 25 without lavapipe's ICD file: installs", () => {
    const root = systemRoot({ "etc/os-release": TRIXIE }, "25.0.7-2+deb13u1");
    expect(dryRun(root)).toMatch(new RegExp(`^(sudo )?${INSTALL} mesa-vulkan-drivers libvulkan1$`, "m"));
  });

  it("stops, saying so, where os-release names no codename", () => {
    const root = systemRoot({ "etc/os-release": 'NAME="Something"\nID=something\n' });
    const result = spawnSync("bash", [SCRIPT, "--dry-run", "--root", root], { encoding: "utf8" });
    expect(result.status).toBe(1);
    expect(result.stderr).toContain("no VERSION_CODENAME in");
    expect(result.stdout).not.toContain("apt-get");
  });
});
