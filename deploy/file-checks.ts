// Checks between the manifests and the other deploy files: kustomization.yaml's list, the Secret the README creates,
// and the Dockerfile's user, base image and entrypoint.
import { existsSync } from "node:fs";
import { join } from "node:path";
import { type Manifest, type Obj, ofKind } from "./manifests.js";

/** Never applied by `kubectl apply -k`: the Secret template (its placeholders would replace the real Secret). */
export const NEVER_KUSTOMIZED = ["secret.example.yaml"];
/** Listed in kustomization.yaml's resources or not, as the operator chooses (deploy/README.md step 6). */
export const OPTIONAL = ["worker-pool-acme.yaml"];

export function kustomizationProblems(kustomization: Obj, files: string[]): string[] {
  const problems: string[] = [];
  if (kustomization.apiVersion !== "kustomize.config.k8s.io/v1beta1" || kustomization.kind !== "Kustomization") problems.push("kustomization.yaml: not a kustomize.config.k8s.io/v1beta1 Kustomization");
  const known = ["apiVersion", "kind", "resources", "images"];
  for (const key of Object.keys(kustomization)) if (!known.includes(key)) problems.push(`kustomization.yaml: ${key} is not checked here (only ${known.join(", ")})`);
  const resources: unknown[] = kustomization.resources ?? [];
  for (const resource of resources) {
    if (typeof resource !== "string" || !files.includes(resource)) problems.push(`kustomization.yaml: resource ${String(resource)} is no manifest file here`);
    else if (NEVER_KUSTOMIZED.includes(resource)) problems.push(`kustomization.yaml: ${resource} is a template applied by hand (it must not be in resources)`);
  }
  for (const file of files) {
    if (!resources.includes(file) && !NEVER_KUSTOMIZED.includes(file) && !OPTIONAL.includes(file)) problems.push(`${file}: not in kustomization.yaml's resources`);
  }
  return problems;
}

/** The README's `kubectl create secret generic NAME --from-literal=KEY=...` must make the Secret the manifests read. */
export function readmeSecretProblems(readme: string, manifests: Manifest[]): string[] {
  const command = /kubectl(?: -n \S+)? create secret generic (\S+)((?:\s*\\?\s*--from-literal=[\w.-]+=\S*)+)/.exec(readme);
  if (!command) return ["README.md: no `kubectl create secret generic NAME --from-literal=KEY=...` command"];
  const keys = [...command[2]!.matchAll(/--from-literal=([\w.-]+)=/g)].map((match) => match[1]!).sort();
  const secret = ofKind(manifests, "Secret").find((m) => m.object.metadata?.name === command[1]);
  if (!secret) return [`README.md: creates Secret ${command[1]}, which no manifest defines`];
  const expected = Object.keys(secret.object.stringData ?? secret.object.data ?? {}).sort();
  return keys.join(",") === expected.join(",") ? [] : [`README.md: creates Secret ${command[1]} with keys ${keys.join(", ")}; the template defines ${expected.join(", ")}`];
}

export interface DockerfileFacts {
  /** The numeric user it runs as. */
  user: number | undefined;
  problems: string[];
}

/** The Dockerfile's runtime user, with problems in its base images, entrypoint and command. */
export function dockerfileFacts(dockerfile: string, repositoryRoot: string): DockerfileFacts {
  const problems: string[] = [];
  const lines = dockerfile.split("\n").map((line) => line.trim()).filter((line) => line && !line.startsWith("#"));
  const args = new Map<string, string>();
  for (const line of lines) {
    const arg = /^ARG (\w+)=(\S+)$/.exec(line);
    if (arg) args.set(arg[1]!, arg[2]!);
  }
  const froms = lines.filter((line) => line.startsWith("FROM ")).map((line) => line.split(/\s+/)[1]!.replace(/^\$\{(\w+)\}$/, (_, name: string) => args.get(name) ?? `\${${name}}`));
  if (froms.length === 0) problems.push("Dockerfile: no FROM");
  for (const image of froms) {
    if (!/^[\w./-]+:\d+\.\d+\.\d+-[\w.-]+$/.test(image)) problems.push(`Dockerfile: base image ${image} is not pinned to a full version (e.g. node:22.23.3-bookworm-slim)`);
  }
  const users = lines.filter((line) => line.startsWith("USER "));
  const user = /^USER (\d+)(:\d+)?$/.exec(users.at(-1) ?? "");
  if (!user) problems.push(`Dockerfile: the last USER (${users.at(-1) ?? "none"}) is not numeric, so Kubernetes cannot check runAsNonRoot`);
  else if (Number(user[1]) === 0) problems.push("Dockerfile: runs as root");
  const entrypoint = lines.find((line) => line.startsWith("ENTRYPOINT "));
  const command = JSON.parse(entrypoint?.slice("ENTRYPOINT ".length) ?? "null") as unknown;
  if (!Array.isArray(command) || command[0] !== "node" || typeof command[1] !== "string") {
    problems.push(`Dockerfile: ENTRYPOINT ${entrypoint} is not ["node", "<script>"]`);
  } else {
    // dist/server/cli/main.js is compiled from server/cli/main.ts.
    const source = command[1].replace(/^dist\//, "").replace(/\.js$/, ".ts");
    if (!existsSync(join(repositoryRoot, source))) problems.push(`Dockerfile: ENTRYPOINT runs ${command[1]}, but there is no ${source} to build it from`);
  }
  if (lines.find((line) => line.startsWith("CMD ")) !== 'CMD ["gateway"]') problems.push('Dockerfile: the default command is not CMD ["gateway"]');
  return { user: user ? Number(user[1]) : undefined, problems };
}
