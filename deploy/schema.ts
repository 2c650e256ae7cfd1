// The Kubernetes schemas, two ways. kubernetes-models' validate() checks types, required fields, enums and formats
// (quantities, ports) but lets unknown fields through, so `replicass: 2` or `imagee:` would pass it; a type check of
// each object against the same package's TypeScript interfaces catches those, through TypeScript's excess-property
// check on object literals (the API server rejects them too, under kubectl's default strict field validation).
import { join } from "node:path";
import { Deployment } from "kubernetes-models/apps/v1";
import { PodDisruptionBudget } from "kubernetes-models/policy/v1";
import { Namespace, PersistentVolumeClaim, Secret, Service } from "kubernetes-models/v1";
import ts from "typescript";
import { DEPLOY_DIR, type Manifest, type Obj, where } from "./manifests.js";

interface Kind {
  model: { new (data: never): { validate(): void } };
  /** The module and interface the type check assigns the object to. */
  module: string;
  type: string;
}

/** The kinds deploy/kubernetes may use; another one fails the tests until it is added here. */
export const KINDS: Record<string, Kind> = {
  "v1/Namespace": { model: Namespace, module: "kubernetes-models/v1/Namespace", type: "INamespace" },
  "v1/Secret": { model: Secret, module: "kubernetes-models/v1/Secret", type: "ISecret" },
  "v1/Service": { model: Service, module: "kubernetes-models/v1/Service", type: "IService" },
  "v1/PersistentVolumeClaim": { model: PersistentVolumeClaim, module: "kubernetes-models/v1/PersistentVolumeClaim", type: "IPersistentVolumeClaim" },
  "apps/v1/Deployment": { model: Deployment, module: "kubernetes-models/apps/v1/Deployment", type: "IDeployment" },
  "policy/v1/PodDisruptionBudget": { model: PodDisruptionBudget, module: "kubernetes-models/policy/v1/PodDisruptionBudget", type: "IPodDisruptionBudget" },
};

const kindOf = (object: Obj) => KINDS[`${object.apiVersion}/${object.kind}`];

/** validate() of kubernetes-models on every object. */
export function schemaProblems(manifests: Manifest[]): string[] {
  return manifests.flatMap((manifest) => {
    const kind = kindOf(manifest.object);
    if (!kind) return [`${where(manifest)}: no schema for ${manifest.object.apiVersion} ${manifest.object.kind} (add it to KINDS)`];
    try {
      new kind.model(manifest.object as never).validate();
      return [];
    } catch (error) {
      return [`${where(manifest)}: ${(error as Error).message}`];
    }
  });
}

/**
 * Type-checks every object as an object literal of its interface, in one program held in memory. TypeScript reports
 * the first error of each literal; a diagnostic outside every object (an import that does not resolve) counts too.
 */
export function typeProblems(manifests: Manifest[]): string[] {
  const file = join(DEPLOY_DIR, "manifest-types.generated.ts"); // never written: the compiler host serves it
  const known = manifests.filter((m) => kindOf(m.object));
  const imports = [...new Set(known.map((m) => kindOf(m.object)!))].map((kind) => `import type { ${kind.type} } from "${kind.module}";`);
  const blocks = [...imports];
  let lineCount = imports.length;
  const spans = known.map((manifest, i) => {
    const block = `export const o${i}: ${kindOf(manifest.object)!.type} = ${JSON.stringify(manifest.object, null, 2)};`;
    blocks.push(block);
    const start = lineCount;
    lineCount += block.split("\n").length;
    return { manifest, start, end: lineCount };
  });
  const text = blocks.join("\n");
  const options: ts.CompilerOptions = {
    strict: true, noEmit: true, skipLibCheck: true, types: [],
    target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext,
  };
  const host = ts.createCompilerHost(options);
  const { fileExists, readFile, getSourceFile } = host;
  host.fileExists = (name) => name === file || fileExists(name);
  host.readFile = (name) => (name === file ? text : readFile(name));
  host.getSourceFile = (name, language, ...rest) => (name === file ? ts.createSourceFile(name, text, language) : getSourceFile(name, language, ...rest));
  const program = ts.createProgram([file], options, host);
  return ts.getPreEmitDiagnostics(program).map((diagnostic) => {
    const message = ts.flattenDiagnosticMessageText(diagnostic.messageText, " ");
    if (diagnostic.file?.fileName !== file || diagnostic.start === undefined) return `types: ${message}`;
    const line = diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start).line;
    const span = spans.find((s) => line >= s.start && line < s.end);
    return `${span ? where(span.manifest) : "types"}: ${message}`;
  });
}
