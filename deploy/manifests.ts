// Reads deploy/kubernetes: every object of every YAML file, and the kustomization, for the tests beside this file.
import { readFileSync, readdirSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { parseAllDocuments } from "yaml";

/** A parsed Kubernetes object: plain JSON, read loosely (the schema checks type it). */
export type Obj = { [key: string]: any };

export interface Manifest {
  /** Path under deploy/kubernetes. */
  file: string;
  /** Position of the document in its file (0-based). */
  index: number;
  object: Obj;
}

export interface Manifests {
  manifests: Manifest[];
  /** kustomization.yaml: a kubectl input, not a cluster object. */
  kustomization: Obj;
  /** Every YAML file under deploy/kubernetes except kustomization.yaml. */
  files: string[];
}

export const DEPLOY_DIR = fileURLToPath(new URL(".", import.meta.url));
export const KUBERNETES_DIR = join(DEPLOY_DIR, "kubernetes");

function yamlFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && /\.ya?ml$/.test(entry.name))
    .map((entry) => relative(dir, join(entry.parentPath, entry.name)))
    .sort();
}

const isObject = (value: unknown): value is Obj => typeof value === "object" && value !== null && !Array.isArray(value);

/**
 * Every document of a YAML file, read as Kubernetes reads it (YAML 1.1: `yes` is a boolean, `0644` octal), so that
 * what the checks see is what a cluster would get.
 * @throws Error naming the file and the parser's first error or warning.
 */
function parseDocuments(text: string, file: string): unknown[] {
  return parseAllDocuments(text, { version: "1.1", prettyErrors: true }).map((document, index) => {
    const problem = document.errors[0] ?? document.warnings[0];
    if (problem) throw new Error(`${file}#${index + 1}: ${problem.message}`);
    return document.toJS();
  });
}

export function loadManifests(dir = KUBERNETES_DIR): Manifests {
  const manifests: Manifest[] = [];
  let kustomization: Obj | undefined;
  const files: string[] = [];
  for (const file of yamlFiles(dir)) {
    const documents = parseDocuments(readFileSync(join(dir, file), "utf8"), file);
    if (file === "kustomization.yaml") {
      if (documents.length !== 1 || !isObject(documents[0]!)) throw new Error(`${file}: expected one mapping`);
      kustomization = documents[0];
      continue;
    }
    files.push(file);
    documents.forEach((object, index) => {
      if (!isObject(object) || typeof object.apiVersion !== "string" || typeof object.kind !== "string") {
        throw new Error(`${file}#${index + 1}: not a Kubernetes object (apiVersion and kind)`);
      }
      manifests.push({ file, index, object });
    });
  }
  if (!kustomization) throw new Error(`no kustomization.yaml in ${dir}`);
  return { manifests, kustomization, files };
}

/** Where an object is, for messages: `gateway.yaml#1 Deployment/loom-gateway`. */
export function where({ file, index, object }: Manifest): string {
  return `${file}#${index + 1} ${object.kind}/${object.metadata?.name ?? "?"}`;
}

export const ofKind = (manifests: Manifest[], kind: string) => manifests.filter((m) => m.object.kind === kind);

export interface ContainerAt {
  manifest: Manifest;
  pod: Obj;
  container: Obj;
  /** "gateway", "worker" or whatever the first argument is. */
  role: string | undefined;
  at: string;
}

/** Every container of every Deployment's pod template. */
export function containers(manifests: Manifest[]): ContainerAt[] {
  return ofKind(manifests, "Deployment").flatMap((manifest) => {
    const pod: Obj = manifest.object.spec?.template?.spec ?? {};
    return ((pod.containers ?? []) as Obj[]).map((container) => ({
      manifest, pod, container, role: container.args?.[0], at: `${where(manifest)} container ${container.name}`,
    }));
  });
}
