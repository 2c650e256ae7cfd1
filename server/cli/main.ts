#!/usr/bin/env node
// The `loom` command line: dispatches to subcommands and turns errors into readable messages and exit codes.
import { UsageError } from "../../engine/cli/arguments.js";
import { GENERATE_USAGE, runGenerate } from "../../engine/cli/generate-command.js";
import { ADMIN_USAGE, runAdmin } from "./admin-command.js";
import { RELEASE_USAGE, runRelease } from "../release/release-command.js";
import { UPDATE_USAGE, runUpdate } from "../release/update-command.js";
import { GATEWAY_USAGE, runGateway } from "./gateway-command.js";
import { SERVE_USAGE, runServe } from "./serve-command.js";
import { WORKER_USAGE, runWorker } from "./worker-command.js";

const USAGE = `Usage: loom <command> [options]

Commands:
  serve      serve a model over HTTP in the OpenAI and Anthropic formats (loom serve --help)
  gateway    the same API in front of engine workers found in Redis (loom gateway --help)
  worker     an engine worker for gateways (loom worker --help)
  generate   continue a prompt with a local model (loom generate --help)
  admin      organizations, keys, usage and the search corpus of the platform database (loom admin --help)
  release    signing keys and signed releases of this loom into a feed folder (loom release --help)
  update     check, approve, apply and roll back signed releases; fetch released models (loom update --help)
`;

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  switch (command) {
    case "generate":
      await runGenerate(rest);
      return 0;
    case "serve":
      await runServe(rest);
      return 0;
    case "admin":
      await runAdmin(rest);
      return 0;
    case "gateway":
      await runGateway(rest);
      return 0;
    case "worker":
      await runWorker(rest);
      return 0;
    case "release":
      await runRelease(rest);
      return 0;
    case "update":
      return await runUpdate(rest);
    case undefined:
    case "help":
    case "--help":
    case "-h":
      process.stdout.write(USAGE);
      return command === undefined ? 2 : 0;
    default:
      throw new UsageError(`unknown command '${command}'\n\n${USAGE}`);
  }
}

main(process.argv.slice(2)).then(
  (code) => { process.exitCode = code; },
  (error: unknown) => {
    const e = error as Error & { code?: string };
    if (e instanceof UsageError || e.code === "ERR_PARSE_ARGS_UNKNOWN_OPTION" || e.code === "ERR_PARSE_ARGS_INVALID_OPTION_VALUE" || e.code === "ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL") {
      const usages: Record<string, string> = { serve: SERVE_USAGE, admin: ADMIN_USAGE, gateway: GATEWAY_USAGE, worker: WORKER_USAGE, release: RELEASE_USAGE, update: UPDATE_USAGE };
      const usage = usages[process.argv[2] ?? ""] ?? GENERATE_USAGE;
      process.stderr.write(`loom: ${e.message}\n${e instanceof UsageError ? "" : `\n${usage}`}`);
      process.exitCode = 2;
    } else {
      process.stderr.write(`loom: ${e.message ?? String(error)}\n`);
      process.exitCode = 1;
    }
    // A command that failed has ended, whatever it had started (a loaded model's threads, timers): exit now rather
    // than hang (stderr to a pipe or file is written synchronously on Linux, so the message is out).
    process.exit();
  },
);
