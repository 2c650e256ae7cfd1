// The deployment files: every Kubernetes object against its schema (validate() and a type check), the references
// between objects and to loom's command line, and the Dockerfile, kustomization and README they depend on. Each check
// is also run on a copy broken on purpose, so a check that stopped finding anything would fail here.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  MODEL_LOAD_SECONDS, argumentProblems, envReferenceProblems, imageProblems, namespaceProblems, probeProblems,
  resourceProblems, secretProblems, securityProblems, selectorProblems, servicePortProblems, volumeProblems,
} from "./checks.js";
import { dockerfileFacts, kustomizationProblems, readmeSecretProblems } from "./file-checks.js";
import { DEPLOY_DIR, type Manifest, type Obj, loadManifests } from "./manifests.js";
import { schemaProblems, typeProblems } from "./schema.js";

const { manifests, kustomization, files } = loadManifests();
const REPOSITORY = join(DEPLOY_DIR, "..");
const dockerfile = readFileSync(join(DEPLOY_DIR, "Dockerfile"), "utf8");
const readme = readFileSync(join(DEPLOY_DIR, "README.md"), "utf8");
const imageUser = dockerfileFacts(dockerfile, REPOSITORY).user!;

/** A deep copy of the manifests with one object changed. */
function broken(file: string, kind: string, name: string, change: (object: Obj) => void): Manifest[] {
  const copy = structuredClone(manifests);
  const target = copy.find((m) => m.file === file && m.object.kind === kind && m.object.metadata?.name === name);
  if (!target) throw new Error(`no ${kind}/${name} in ${file}`);
  change(target.object);
  return copy;
}
const container = (deployment: Obj): Obj => deployment.spec.template.spec.containers[0];
const gateway = (change: (object: Obj) => void) => broken("gateway.yaml", "Deployment", "loom-gateway", change);
const worker = (change: (object: Obj) => void) => broken("worker.yaml", "Deployment", "loom-worker", change);
/** Removes `flag value` from a container's args. */
const dropFlag = (object: Obj, flag: string) => {
  const args: string[] = container(object).args;
  args.splice(args.indexOf(flag), 2);
};

describe("deploy/kubernetes", () => {
  it("holds the objects an operator applies", () => {
    expect(manifests.map((m) => `${m.file} ${m.object.kind}/${m.object.metadata.name}`).sort()).toEqual([
      "gateway.yaml Deployment/loom-gateway",
      "gateway.yaml PodDisruptionBudget/loom-gateway",
      "gateway.yaml Service/loom-gateway",
      "models-pvc.yaml PersistentVolumeClaim/loom-models",
      "namespace.yaml Namespace/loom",
      "secret.example.yaml Secret/loom",
      "worker-pool-acme.yaml Deployment/loom-worker-pool-acme",
      "worker.yaml Deployment/loom-worker",
    ]);
  });

  it("every object passes kubernetes-models' validate()", () => {
    expect(schemaProblems(manifests)).toEqual([]);
  });

  it("validate() rejects a wrong type, and a kind without a schema is reported", () => {
    const problems = schemaProblems(gateway((o) => { container(o).ports[0].containerPort = "http"; }));
    expect(problems).toEqual([expect.stringMatching(/^gateway\.yaml#1 Deployment\/loom-gateway: .*containerPort must be integer/)]);
    const unknown = structuredClone(manifests);
    unknown[0]!.object.kind = "Ingress";
    expect(schemaProblems(unknown)).toEqual([expect.stringMatching(/no schema for .* Ingress/)]);
  });

  it("every object type-checks against kubernetes-models' interfaces (no unknown or misspelt field)", () => {
    expect(typeProblems(manifests)).toEqual([]);
  });

  it("the type check finds a misspelt field, which validate() lets through", () => {
    const misspelt = worker((o) => { container(o).imagee = container(o).image; });
    expect(schemaProblems(misspelt)).toEqual([]);
    expect(typeProblems(misspelt)).toEqual([expect.stringMatching(/^worker\.yaml#1 Deployment\/loom-worker: .*'"imagee"' does not exist/)]);
  });
});

type Check = (manifests: Manifest[]) => string[];

// [what, the check, the manifests broken for it, the problem it must report]
const CASES: Array<[string, Check, () => Manifest[], RegExp]> = [
  ["namespace", namespaceProblems, () => broken("gateway.yaml", "Service", "loom-gateway", (o) => { o.metadata.namespace = "default"; }), /Service\/loom-gateway: namespace is default/],
  ["Service selector", selectorProblems, () => broken("gateway.yaml", "Service", "loom-gateway", (o) => { o.spec.selector["app.kubernetes.io/component"] = "gateways"; }), /Service\/loom-gateway: its selector matches no Deployment/],
  ["Deployment selector and its pods", selectorProblems, () => gateway((o) => { o.spec.template.metadata.labels["app.kubernetes.io/component"] = "gw"; }), /loom-gateway: its selector does not match its own pod labels/],
  ["overlapping worker selectors", selectorProblems, () => worker((o) => { delete o.spec.selector.matchLabels["loom/pool"]; }), /loom-worker: its selector also matches the pods of .*loom-worker-pool-acme/],
  ["Service target port", servicePortProblems, () => broken("gateway.yaml", "Service", "loom-gateway", (o) => { o.spec.ports[0].targetPort = "metrics"; }), /targets metrics, which no container/],
  ["Secret key", secretProblems, () => gateway((o) => { container(o).env[0].valueFrom.secretKeyRef.key = "database_url"; }), /env LOOM_DATABASE_URL reads key database_url of Secret loom, which defines database-url/],
  ["probe path", probeProblems, () => gateway((o) => { container(o).readinessProbe.httpGet.path = "/healthz"; }), /container gateway: readinessProbe does not GET \/health/],
  ["probe port", probeProblems, () => worker((o) => { container(o).livenessProbe.httpGet.port = 9090; }), /livenessProbe targets port 9090/],
  ["time to load a model", probeProblems, () => worker((o) => { container(o).startupProbe.failureThreshold = 10; }), new RegExp(`startupProbe allows 110 s, less than ${MODEL_LOAD_SECONDS} s`)],
  ["a flag the gateway lacks", argumentProblems, () => gateway((o) => { container(o).args.push("--model", "/models/model.gguf"); }), /loom gateway has no flag --model/],
  ["worker without --register", argumentProblems, () => worker((o) => dropFlag(o, "--register")), /loom worker needs --register/],
  ["worker without --advertise", argumentProblems, () => worker((o) => dropFlag(o, "--advertise")), /loom worker needs --advertise/],
  ["advertised port", argumentProblems, () => worker((o) => { const a = container(o).args; a[a.indexOf("--advertise") + 1] = "http://$(POD_IP):9000"; }), /--advertise names port 9000, but the worker listens on 8081/],
  ["listening port", argumentProblems, () => gateway((o) => { const a = container(o).args; a[a.indexOf("--port") + 1] = "9000"; }), /listens on 9000, which the container does not declare/],
  ["pool and its label", argumentProblems, () => broken("worker-pool-acme.yaml", "Deployment", "loom-worker-pool-acme", (o) => { const a = container(o).args; a[a.indexOf("--pool") + 1] = "globex"; }), /label loom\/pool is acme, but the worker's pool is globex/],
  ["a number in args", argumentProblems, () => worker((o) => { const a = container(o).args; a[a.indexOf("--port") + 1] = 8081; }), /--port has no value/],
  ["the cluster token", argumentProblems, () => worker((o) => { container(o).env = container(o).env.filter((e: Obj) => e.name !== "LOOM_CLUSTER_TOKEN"); }), /no LOOM_CLUSTER_TOKEN/],
  ["$(VAR) without env", envReferenceProblems, () => worker((o) => { container(o).env = container(o).env.filter((e: Obj) => e.name !== "POD_IP"); }), /\$\(POD_IP\) in its arguments, but it defines no env POD_IP/],
  ["image tag", (m) => imageProblems(m, kustomization), () => gateway((o) => { container(o).image = "registry.example.com/loom:latest"; }), /image registry\.example\.com\/loom:latest needs a version tag/],
  ["image kustomize replaces", (m) => imageProblems(m, kustomization), () => worker((o) => { container(o).image = "example.org/other:1.0.0"; }), /example\.org\/other:1\.0\.0 is not one kustomization\.yaml's images replace/],
  ["GPU", resourceProblems, () => worker((o) => { delete container(o).resources.limits["nvidia.com/gpu"]; }), /a worker needs limits nvidia\.com\/gpu: 1/],
  ["read-only root", (m) => securityProblems(m, imageUser), () => gateway((o) => { container(o).securityContext.readOnlyRootFilesystem = false; }), /container gateway: the root filesystem is writable/],
  ["user id", (m) => securityProblems(m, imageUser), () => worker((o) => { o.spec.template.spec.securityContext.runAsUser = 1000; }), /runAsUser is 1000, the image's user is 10001/],
  ["writable /tmp", (m) => securityProblems(m, imageUser), () => worker((o) => { container(o).volumeMounts = container(o).volumeMounts.filter((v: Obj) => v.mountPath !== "/tmp"); }), /no emptyDir at \/tmp/],
  ["model volume claim", volumeProblems, () => worker((o) => { o.spec.template.spec.volumes[0].persistentVolumeClaim.claimName = "models"; }), /volume models claims models, which no manifest defines/],
];

describe("references the schemas cannot check", () => {
  it.each(CASES)("%s: none in the manifests, and a broken copy is caught", (_, check, brokenManifests, problem) => {
    expect(check(manifests)).toEqual([]);
    expect(check(brokenManifests())).toEqual(expect.arrayContaining([expect.stringMatching(problem)]));
  });
});

describe("the files around the manifests", () => {
  it("kustomization.yaml lists every manifest but the Secret template (and, as the operator chooses, the pool example)", () => {
    expect(kustomizationProblems(kustomization, files)).toEqual([]);
    const withResources = (...more: string[]) => ({ ...kustomization, resources: [...kustomization.resources, ...more] });
    expect(kustomizationProblems(withResources("worker-pool-acme.yaml"), files)).toEqual([]);
    expect(kustomizationProblems(withResources("secret.example.yaml"), files))
      .toEqual(["kustomization.yaml: secret.example.yaml is a template applied by hand (it must not be in resources)"]);
    expect(kustomizationProblems(withResources("missing.yaml"), files)).toEqual(["kustomization.yaml: resource missing.yaml is no manifest file here"]);
    expect(kustomizationProblems(kustomization, [...files, "ingress.yaml"])).toEqual(["ingress.yaml: not in kustomization.yaml's resources"]);
  });

  it("the README creates the Secret with the keys the pods read", () => {
    expect(readmeSecretProblems(readme, manifests)).toEqual([]);
    expect(readmeSecretProblems(readme.replace("--from-literal=cluster-token=", "--from-literal=cluster_token="), manifests))
      .toEqual([expect.stringMatching(/with keys cluster_token, database-url, redis-url; the template defines cluster-token, database-url, redis-url/)]);
  });

  it("the Dockerfile runs loom's CLI as a numeric non-root user, on a pinned base image", () => {
    expect(dockerfileFacts(dockerfile, REPOSITORY)).toEqual({ user: 10001, problems: [] });
    const problemsOf = (text: string) => dockerfileFacts(text, REPOSITORY).problems;
    expect(problemsOf(dockerfile.replace(/^USER .*$/m, "USER loom"))).toEqual([expect.stringMatching(/USER \(USER loom\) is not numeric/)]);
    expect(problemsOf(dockerfile.replace(/^ARG NODE_IMAGE=.*$/m, "ARG NODE_IMAGE=node:22-bookworm-slim"))).toEqual(
      Array(3).fill("Dockerfile: base image node:22-bookworm-slim is not pinned to a full version (e.g. node:22.23.3-bookworm-slim)"),
    );
    expect(problemsOf(dockerfile.replace("dist/server/cli/main.js", "dist/server/cli/missing.js"))).toEqual([expect.stringMatching(/no server\/cli\/missing\.ts to build it from/)]);
    expect(problemsOf(dockerfile.replace('CMD ["gateway"]', 'CMD ["worker"]'))).toEqual(['Dockerfile: the default command is not CMD ["gateway"]']);
  });

  it("the README builds the image from the repository root with this Dockerfile", () => {
    expect(readme).toContain("docker build -f deploy/Dockerfile");
  });
});
