// What the schemas cannot see: references between objects, and loom's own command line. Each check returns its
// problems as messages (none: an empty list), so a test can show that it finds a deliberately broken one.
import { GATEWAY_OPTIONS } from "../server/cli/gateway-command.js";
import { WORKER_OPTIONS } from "../server/cli/worker-command.js";
import { type ContainerAt, type Manifest, type Obj, containers, ofKind, where } from "./manifests.js";

export const NAMESPACE = "loom";

/** loom's flags per command, as the commands parse them; true: the flag takes a value. */
export const FLAGS: Record<string, Record<string, boolean>> = { gateway: commandFlags(GATEWAY_OPTIONS), worker: commandFlags(WORKER_OPTIONS) };

function commandFlags(options: Record<string, { type: "string" | "boolean" }>): Record<string, boolean> {
  return Object.fromEntries(Object.entries(options).filter(([name]) => name !== "help").map(([name, option]) => [`--${name}`, option.type === "string"]));
}
const DEFAULT_PORT: Record<string, number> = { gateway: 8080, worker: 8081 };
export const POOL_LABEL = "loom/pool";
/** A worker's startup probe must allow this long for the model to load. */
export const MODEL_LOAD_SECONDS = 600;

export function namespaceProblems(manifests: Manifest[]): string[] {
  const problems = manifests
    .filter((m) => m.object.kind !== "Namespace" && m.object.metadata?.namespace !== NAMESPACE)
    .map((m) => `${where(m)}: namespace is ${m.object.metadata?.namespace ?? "unset"}, not ${NAMESPACE}`);
  if (!ofKind(manifests, "Namespace").some((m) => m.object.metadata?.name === NAMESPACE)) problems.push(`no Namespace ${NAMESPACE}`);
  return problems;
}

const podLabels = (deployment: Manifest): Obj => deployment.object.spec?.template?.metadata?.labels ?? {};

/** Whether a matchLabels-style selector selects these labels (an empty selector selects nothing here). */
function selects(selector: Obj | undefined, labels: Obj): boolean {
  const entries = Object.entries(selector ?? {});
  return entries.length > 0 && entries.every(([key, value]) => labels[key] === value);
}

/** The Deployments in the same namespace whose pods a Service or PodDisruptionBudget selects. */
function selected(manifests: Manifest[], m: Manifest): Manifest[] {
  const selector = m.object.kind === "Service" ? m.object.spec?.selector : m.object.spec?.selector?.matchLabels;
  return ofKind(manifests, "Deployment").filter((d) => d.object.metadata?.namespace === m.object.metadata?.namespace && selects(selector, podLabels(d)));
}

export function selectorProblems(manifests: Manifest[]): string[] {
  const problems: string[] = [];
  const deployments = ofKind(manifests, "Deployment");
  for (const m of [...deployments, ...ofKind(manifests, "PodDisruptionBudget")]) {
    if (m.object.spec?.selector?.matchExpressions) problems.push(`${where(m)}: matchExpressions are not checked here: use matchLabels`);
  }
  for (const d of deployments) {
    if (!selects(d.object.spec?.selector?.matchLabels, podLabels(d))) problems.push(`${where(d)}: its selector does not match its own pod labels`);
    for (const other of deployments) {
      if (other !== d && selects(d.object.spec?.selector?.matchLabels, podLabels(other))) problems.push(`${where(d)}: its selector also matches the pods of ${where(other)}`);
    }
  }
  for (const m of [...ofKind(manifests, "Service"), ...ofKind(manifests, "PodDisruptionBudget")]) {
    if (selected(manifests, m).length === 0) problems.push(`${where(m)}: its selector matches no Deployment's pods`);
  }
  return problems;
}

/** A probe's or Service's port, by name or number, among a container's ports. */
const declaresPort = (container: Obj, port: unknown) =>
  ((container.ports ?? []) as Obj[]).some((p) => (typeof port === "string" ? p.name === port : p.containerPort === port));

export function servicePortProblems(manifests: Manifest[]): string[] {
  return ofKind(manifests, "Service").flatMap((service) =>
    ((service.object.spec?.ports ?? []) as Obj[]).flatMap((port) => {
      const target = port.targetPort ?? port.port;
      return selected(manifests, service)
        .filter((d) => !((d.object.spec?.template?.spec?.containers ?? []) as Obj[]).some((c) => declaresPort(c, target)))
        .map((d) => `${where(service)}: port ${port.name ?? port.port} targets ${target}, which no container of ${where(d)} declares`);
    }),
  );
}

export function secretProblems(manifests: Manifest[]): string[] {
  const keys = new Map(ofKind(manifests, "Secret").map((s) => [`${s.object.metadata?.namespace}/${s.object.metadata?.name}`, new Set([...Object.keys(s.object.stringData ?? {}), ...Object.keys(s.object.data ?? {})])]));
  return containers(manifests).flatMap(({ manifest, container, at }) =>
    ((container.env ?? []) as Obj[]).flatMap((env) => {
      const ref = env.valueFrom?.secretKeyRef;
      if (!ref) return [];
      const secret = keys.get(`${manifest.object.metadata?.namespace}/${ref.name}`);
      if (!secret) return [`${at}: env ${env.name} reads Secret ${ref.name}, which no manifest defines`];
      if (!secret.has(ref.key)) return [`${at}: env ${env.name} reads key ${ref.key} of Secret ${ref.name}, which defines ${[...secret].join(", ")}`];
      return ref.optional ? [`${at}: env ${env.name} is optional: loom needs it`] : [];
    }),
  );
}

/** Seconds a probe allows before it fails for good (Kubernetes' defaults where unset). */
const probeBudget = (probe: Obj) => (probe.initialDelaySeconds ?? 0) + (probe.periodSeconds ?? 10) * (probe.failureThreshold ?? 3);

export function probeProblems(manifests: Manifest[]): string[] {
  return containers(manifests).flatMap(({ container, role, at }) => {
    const problems: string[] = [];
    const required = role === "worker" ? ["startupProbe", "readinessProbe", "livenessProbe"] : ["readinessProbe", "livenessProbe"];
    for (const name of required) if (!container[name]) problems.push(`${at}: no ${name}`);
    for (const name of ["startupProbe", "readinessProbe", "livenessProbe"]) {
      const probe: Obj | undefined = container[name];
      if (!probe) continue;
      if (probe.httpGet?.path !== "/health") problems.push(`${at}: ${name} does not GET /health`);
      if (!declaresPort(container, probe.httpGet?.port)) problems.push(`${at}: ${name} targets port ${probe.httpGet?.port}, which the container does not declare`);
    }
    if (role === "worker" && container.startupProbe && probeBudget(container.startupProbe) < MODEL_LOAD_SECONDS) {
      problems.push(`${at}: startupProbe allows ${probeBudget(container.startupProbe)} s, less than ${MODEL_LOAD_SECONDS} s to load a model`);
    }
    return problems;
  });
}

/** `--flag value` pairs of a container's args after the command; problems for anything else. */
function flagsOf(args: unknown[], role: string, at: string, problems: string[]): Map<string, string> {
  const flags = new Map<string, string>();
  for (let i = 1; i < args.length; i++) {
    const arg = String(args[i]);
    const [flag, inline] = arg.startsWith("--") && arg.includes("=") ? [arg.slice(0, arg.indexOf("=")), arg.slice(arg.indexOf("=") + 1)] : [arg, undefined];
    if (!(flag in FLAGS[role]!)) {
      problems.push(`${at}: loom ${role} has no ${arg.startsWith("--") ? `flag ${flag}` : `argument '${arg}'`} (its flags: ${Object.keys(FLAGS[role]!).join(" ")})`);
      continue;
    }
    if (!FLAGS[role]![flag]) {
      if (inline !== undefined) problems.push(`${at}: ${flag} takes no value`);
      else flags.set(flag, "");
      continue;
    }
    const value = inline ?? (typeof args[i + 1] === "string" && !(args[i + 1] as string).startsWith("--") ? String(args[++i]) : undefined);
    if (value === undefined) problems.push(`${at}: ${flag} has no value (args are strings: quote numbers)`);
    else if (flags.has(flag)) problems.push(`${at}: ${flag} is given twice`);
    else flags.set(flag, value);
  }
  return flags;
}

const envNamed = (container: Obj, name: string): Obj | undefined => ((container.env ?? []) as Obj[]).find((e) => e.name === name);

/** loom's command line in each container: the command, its flags, and what they must agree with. */
export function argumentProblems(manifests: Manifest[]): string[] {
  return containers(manifests).flatMap((c) => {
    const { container, role, at } = c;
    if (container.command) return [`${at}: sets command: the image's entrypoint (node dist/server/cli/main.js) must run, with the command in args`];
    if (!role || !(role in FLAGS)) return [`${at}: args must start with ${Object.keys(FLAGS).join(" or ")}, not ${role}`];
    const problems: string[] = [];
    const flags = flagsOf(container.args, role, at, problems);
    const host = flags.get("--host");
    if (host !== "0.0.0.0" && host !== "::") problems.push(`${at}: --host must be 0.0.0.0 (or ::) so that other pods reach it`);
    const port = Number(flags.get("--port") ?? DEFAULT_PORT[role]);
    if (!declaresPort(container, port)) problems.push(`${at}: it listens on ${port}, which the container does not declare`);
    if (!envNamed(container, "LOOM_CLUSTER_TOKEN")) problems.push(`${at}: no LOOM_CLUSTER_TOKEN: gateways and workers must share it`);
    if (role === "gateway") {
      if (!flags.has("--database-url") && !envNamed(container, "LOOM_DATABASE_URL")) problems.push(`${at}: no --database-url or LOOM_DATABASE_URL`);
      if (!flags.has("--redis-url") && !envNamed(container, "LOOM_REDIS_URL")) problems.push(`${at}: no --redis-url or LOOM_REDIS_URL`);
    } else {
      problems.push(...workerProblems(c, flags, port));
    }
    return problems;
  });
}

function workerProblems({ manifest, container, at }: ContainerAt, flags: Map<string, string>, port: number): string[] {
  const problems: string[] = [];
  for (const flag of ["--model", "--register", "--advertise"]) if (!flags.has(flag)) problems.push(`${at}: loom worker needs ${flag}`);
  const advertise = flags.get("--advertise");
  const advertised = advertise === undefined ? undefined : /^http:\/\/(\$\(POD_IP\)|\[\$\(POD_IP\)\]):(\d+)$/.exec(advertise);
  if (advertise !== undefined && !advertised) problems.push(`${at}: --advertise ${advertise} is not http://$(POD_IP):PORT`);
  if (advertised && Number(advertised[2]) !== port) problems.push(`${at}: --advertise names port ${advertised[2]}, but the worker listens on ${port}`);
  if (envNamed(container, "POD_IP")?.valueFrom?.fieldRef?.fieldPath !== "status.podIP") problems.push(`${at}: POD_IP must come from the downward API (fieldRef status.podIP)`);
  const register = flags.get("--register");
  if (register !== undefined && !/^(\$\([A-Z_][A-Z0-9_]*\)|rediss?:\/\/.+)$/.test(register)) problems.push(`${at}: --register ${register} is not a redis:// URL`);
  const backend = flags.get("--backend");
  if (backend !== undefined && !["webgpu", "wasm", "auto"].includes(backend)) problems.push(`${at}: --backend ${backend} is not webgpu, wasm or auto`);
  const model = flags.get("--model");
  const mount = ((container.volumeMounts ?? []) as Obj[]).find((m) => model?.startsWith(`${m.mountPath}/`));
  if (model !== undefined && !mount) problems.push(`${at}: --model ${model} is on no volume mount`);
  else if (mount && !mount.readOnly) problems.push(`${at}: the model volume ${mount.name} is mounted writable`);
  const pool = flags.get("--pool") ?? "default";
  const label = manifest.object.spec?.template?.metadata?.labels?.[POOL_LABEL];
  if (label !== pool) problems.push(`${at}: pod label ${POOL_LABEL} is ${label}, but the worker's pool is ${pool}`);
  return problems;
}

/** Kubernetes leaves `$(NAME)` as it is when the container defines no NAME: the process would get the literal. */
export function envReferenceProblems(manifests: Manifest[]): string[] {
  return containers(manifests).flatMap(({ container, at }) =>
    [...(container.command ?? []), ...(container.args ?? [])].flatMap((arg: unknown) =>
      [...String(arg).matchAll(/\$\(([A-Za-z_][A-Za-z0-9_]*)\)/g)]
        .filter(([, name]) => !envNamed(container, name!))
        .map(([, name]) => `${at}: $(${name}) in its arguments, but it defines no env ${name}`),
    ),
  );
}

/** Images: one loom image everywhere, under the name kustomization.yaml replaces, with a version tag. */
export function imageProblems(manifests: Manifest[], kustomization: Obj): string[] {
  const names = new Set(((kustomization.images ?? []) as Obj[]).map((image) => image.name));
  const problems: string[] = [];
  const images = new Set<string>();
  for (const { container, at } of containers(manifests)) {
    const image = String(container.image);
    images.add(image);
    const tagged = /^([^@]+?)(?::([\w][\w.-]*))?$/.exec(image);
    if (!tagged?.[2] || tagged[2] === "latest") problems.push(`${at}: image ${image} needs a version tag (not latest)`);
    if (!names.has(tagged?.[1] ?? image)) problems.push(`${at}: image ${image} is not one kustomization.yaml's images replace (${[...names].join(", ")})`);
  }
  if (images.size > 1) problems.push(`the containers use several images (${[...images].join(", ")}): gateways and workers run one loom image`);
  for (const image of (kustomization.images ?? []) as Obj[]) {
    if (!image.newTag || image.newTag === "latest") problems.push(`kustomization.yaml: image ${image.name} needs a newTag other than latest`);
  }
  return problems;
}

export function resourceProblems(manifests: Manifest[]): string[] {
  return containers(manifests).flatMap(({ container, role, at }) => {
    const { requests = {}, limits = {} } = container.resources ?? {};
    const problems: string[] = [];
    if (requests.cpu === undefined || requests.memory === undefined) problems.push(`${at}: requests no cpu or memory`);
    if (limits.memory === undefined) problems.push(`${at}: no memory limit`);
    const gpus = limits["nvidia.com/gpu"];
    if (role === "worker" && Number(gpus) !== 1) problems.push(`${at}: a worker needs limits nvidia.com/gpu: 1, has ${gpus}`);
    if (role !== "worker" && gpus !== undefined) problems.push(`${at}: only workers take a GPU`);
    return problems;
  });
}

/** Non-root, no privilege, a read-only root filesystem with a writable /tmp, and the image's user id. */
export function securityProblems(manifests: Manifest[], imageUser: number): string[] {
  const problems: string[] = [];
  for (const d of ofKind(manifests, "Deployment")) {
    const pod: Obj = d.object.spec?.template?.spec ?? {};
    if (pod.securityContext?.runAsNonRoot !== true) problems.push(`${where(d)}: the pod does not set runAsNonRoot`);
    if (pod.securityContext?.runAsUser !== imageUser) problems.push(`${where(d)}: runAsUser is ${pod.securityContext?.runAsUser}, the image's user is ${imageUser}`);
    if (pod.automountServiceAccountToken !== false) problems.push(`${where(d)}: mounts a service account token loom does not use`);
  }
  for (const { pod, container, at } of containers(manifests)) {
    const context: Obj = container.securityContext ?? {};
    if (context.allowPrivilegeEscalation !== false) problems.push(`${at}: allowPrivilegeEscalation is not false`);
    if (!(context.capabilities?.drop ?? []).includes("ALL")) problems.push(`${at}: does not drop ALL capabilities`);
    if (context.readOnlyRootFilesystem !== true) problems.push(`${at}: the root filesystem is writable`);
    const tmp = ((container.volumeMounts ?? []) as Obj[]).find((m) => m.mountPath === "/tmp");
    const volume = ((pod.volumes ?? []) as Obj[]).find((v) => v.name === tmp?.name);
    if (!volume?.emptyDir) problems.push(`${at}: no emptyDir at /tmp (the only writable place on a read-only root)`);
  }
  return problems;
}

export function volumeProblems(manifests: Manifest[]): string[] {
  const claims = new Set(ofKind(manifests, "PersistentVolumeClaim").map((m) => `${m.object.metadata?.namespace}/${m.object.metadata?.name}`));
  const problems: string[] = [];
  for (const d of ofKind(manifests, "Deployment")) {
    for (const volume of (d.object.spec?.template?.spec?.volumes ?? []) as Obj[]) {
      const claim = volume.persistentVolumeClaim?.claimName;
      if (claim && !claims.has(`${d.object.metadata?.namespace}/${claim}`)) problems.push(`${where(d)}: volume ${volume.name} claims ${claim}, which no manifest defines`);
    }
  }
  for (const { pod, container, at } of containers(manifests)) {
    for (const mount of (container.volumeMounts ?? []) as Obj[]) {
      if (!((pod.volumes ?? []) as Obj[]).some((v) => v.name === mount.name)) problems.push(`${at}: mounts ${mount.name}, which the pod does not declare`);
    }
  }
  return problems;
}
