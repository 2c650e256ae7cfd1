// Module resolution hook for a child process that runs one pinned llama.cpp CPU build (bench/llama-cpp-builds.ts):
// node-llama-cpp finds its prebuilt binaries by importing the platform package (`@node-llama-cpp/linux-x64`); this
// hook answers that one import with the pinned copy of the package, whose bins folder holds a single CPU library.
// Plain JavaScript: loader hooks run in their own thread, where the TypeScript sources cannot be loaded under tests.

/** @type {{ packageName: string, entryUrl: string } | undefined} */
let redirect;

/** Receives the package to redirect from `module.register`'s `data`. */
export function initialize(data) {
  redirect = data;
}

export async function resolve(specifier, context, nextResolve) {
  if (redirect !== undefined && specifier === redirect.packageName) return { url: redirect.entryUrl, shortCircuit: true };
  return nextResolve(specifier, context);
}
