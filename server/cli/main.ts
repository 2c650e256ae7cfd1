#!/usr/bin/env node
// The `loom` command line: dispatches to subcommands and turns errors into readable messages and exit codes.
// Each command's module is loaded only when that command runs, so `loom --version` and `loom help` start quickly.
import { UsageError } from "../../engine/cli/arguments.js";
import { LOOM_VERSION } from "../version.js";

/** A subcommand: what it runs and the usage text printed with its argument errors. */
interface Command {
  run(args: string[]): Promise<number | void>;
  usage: string;
}

const COMMANDS: Record<string, () => Promise<Command>> = {
  serve: async () => { const m = await import("./serve-command.js"); return { run: m.runServe, usage: m.SERVE_USAGE }; },
  gateway: async () => { const m = await import("./gateway-command.js"); return { run: m.runGateway, usage: m.GATEWAY_USAGE }; },
  worker: async () => { const m = await import("./worker-command.js"); return { run: m.runWorker, usage: m.WORKER_USAGE }; },
  generate: async () => {
    const m = await import("../../engine/cli/generate-command.js");
    // The engine's command takes paths; `hf:` names are downloaded here, as for loom serve.
    const localModelPath = async (model: string) => (await import("./default-model.js")).modelPath(model);
    return { run: (args) => m.runGenerate(args, { localModelPath }), usage: m.GENERATE_USAGE };
  },
  admin: async () => { const m = await import("./admin-command.js"); return { run: m.runAdmin, usage: m.ADMIN_USAGE }; },
  release: async () => { const m = await import("../release/release-command.js"); return { run: m.runRelease, usage: m.RELEASE_USAGE }; },
  update: async () => { const m = await import("../release/update-command.js"); return { run: m.runUpdate, usage: m.UPDATE_USAGE }; },
};

const USAGE = `Usage: loom <command> [options]

Commands:
  serve      serve a model over HTTP in the OpenAI and Anthropic formats (loom serve --help)
  gateway    the same API in front of engine workers found in Redis (loom gateway --help)
  worker     an engine worker for gateways (loom worker --help)
  generate   continue a prompt with a local model (loom generate --help)
  admin      organizations, keys, usage and the search corpus of the platform database (loom admin --help)
  release    signing keys and signed releases of this loom into a feed folder (loom release --help)
  update     check, approve, apply and roll back signed releases; fetch released models (loom update --help)
  version    print this loom's version (also --version, -v)
  help       this text (also --help, -h)
`;

/** The command that is running, once loaded: its usage goes with its argument errors. */
let running: Command | undefined;

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  switch (command) {
    case undefined:
    case "help":
    case "--help":
    case "-h":
      process.stdout.write(USAGE);
      return command === undefined ? 2 : 0;
    case "version":
    case "--version":
    case "-v":
      process.stdout.write(`loom ${LOOM_VERSION}\n`);
      return 0;
  }
  const load = Object.hasOwn(COMMANDS, command) ? COMMANDS[command] : undefined;
  if (load === undefined) throw new UsageError(`unknown command '${command}'\n\n${USAGE}`);
  running = await load();
  return (await running.run(rest)) ?? 0;
}

main(process.argv.slice(2)).then(
  (code) => { process.exitCode = code; },
  (error: unknown) => {
    const e = error as Error & { code?: string };
    if (e instanceof UsageError || e.code === "ERR_PARSE_ARGS_UNKNOWN_OPTION" || e.code === "ERR_PARSE_ARGS_INVALID_OPTION_VALUE" || e.code === "ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL") {
      const usage = running?.usage ?? USAGE;
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
