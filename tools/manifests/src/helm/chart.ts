// The Helm chart (deploy/helm/claimkit) as files, built from the same manifest objects as
// deploy/controller, deploy/webhook and deploy/policies, so the chart can never drift from them: each
// object is rendered to YAML, then the values a user sets (namespace, images, replicas, flags,
// certificates, the controller's identity, which components, resources, scheduling, pod metadata,
// pull secrets) are swapped for template expressions. Chart.yaml carries the release's version.
// apps/e2e/src/helm/chart.test.ts renders the committed chart with the real `helm`.
import {
  CAPTURE_AGENT_DATA_DIR,
  CAPTURE_AGENT_KUBELET_CHECKPOINT_DIR,
  CAPTURE_AGENT_REGISTRY_AUTH_DIR,
  CAPTURE_AGENT_REGISTRY_CA_DIR,
  type CaptureAgentImageOptions,
  CONTROLLER_NAMESPACE,
  captureAgentManifests,
  controllerManifests,
} from '@claimkit/controller';
import { type ImageComponent, imageRef, type ManifestFile, policiesManifests, toYaml } from '@claimkit/core';
import { WEBHOOK_NAMESPACE, WEBHOOK_TLS_SECRET, webhookManifests } from '@claimkit/webhook';
import { type GeneratedFile, generatedHeader } from '../generated-file.ts';
import { dashboardJson } from '../monitoring/dashboard.ts';
import { CHART_DASHBOARD, monitoringTemplates } from './monitoring.ts';
import { chartYaml, VALUES_SCHEMA, valuesYaml } from './values.ts';

export const CHART_DIR = 'deploy/helm/claimkit';
const HEADER = generatedHeader(
  '#',
  'the manifests of packages/controller and packages/webhook',
  'change the manifests',
);
const POLICIES_HEADER = generatedHeader(
  '#',
  'the admission policies of packages/core (src/policies)',
  'change the policies',
);
const MONITORING_HEADER = generatedHeader(
  '#',
  'the monitoring builders of tools/manifests (src/monitoring, src/helm/monitoring.ts)',
  'change them',
);
const CA_BUNDLE = '__CLAIMKIT_CA_BUNDLE__';

type Obj = Record<string, unknown>;

/** A file of the chart; `path` is inside the chart directory. */
interface ChartFile {
  path: string;
  text: string;
}

/** Wraps a template in `{{- if <cond> }} ... {{- end }}`. */
const when = (cond: string, text: string) => `{{- if ${cond} }}\n${text.trimEnd()}\n{{- end }}\n`;

function render(objects: Obj[]): string {
  return objects.map((o) => toYaml(o)).join('---\n');
}

/** The values of the release: the namespace everywhere the manifests name theirs, images, tags. */
function templated(text: string, component: 'controller' | 'webhook', version: string): string {
  const image = imageRef(component satisfies ImageComponent, version);
  const v = `.Values.${component}`;
  const escaped = image.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
  return text
    .replace(
      new RegExp(`\\n( +)image: ${escaped}\\n`, 'g'),
      (_m, ws: string) =>
        `\n${ws}image: "{{ ${v}.image.repository }}:{{ ${v}.image.tag | default .Chart.AppVersion }}"\n${ws}imagePullPolicy: {{ ${v}.image.pullPolicy }}\n`,
    )
    .replaceAll(CONTROLLER_NAMESPACE, '{{ .Release.Namespace }}')
    .replaceAll(WEBHOOK_NAMESPACE, '{{ .Release.Namespace }}');
}

/** Replaces `what` in `text` by `by`, and fails (rather than render a chart without the value) if absent. */
function must(text: string, what: RegExp, by: string | ((...m: string[]) => string), name: string): string {
  if (!what.test(text)) throw new Error(`chart: ${name} not found in the manifest to template`);
  return text.replace(what, by as (...m: string[]) => string);
}

/**
 * A Deployment's pod template with the component's pod values: annotations and labels merged in,
 * pull secrets (global's, then the chart's), scheduling, and the container's resources. Empty values
 * render nothing, so the default values render the manifest's own Deployment.
 */
function podValues(text: string, component: 'controller' | 'webhook' | 'captureAgent'): string {
  const v = `.Values.${component}`;
  const pullSecrets = [
    '      {{- $pullSecrets := concat ((.Values.global | default dict).imagePullSecrets | default list) (.Values.imagePullSecrets | default list) }}',
    '      {{- with $pullSecrets }}',
    '      imagePullSecrets:',
    '      {{- range . }}',
    '      - name: {{ if kindIs "string" . }}{{ . }}{{ else }}{{ .name }}{{ end }}',
    '      {{- end }}',
    '      {{- end }}',
  ].join('\n');
  const withBlock = (key: string) =>
    `      {{- with ${v}.${key} }}\n      ${key}:\n        {{- toYaml . | nindent 8 }}\n      {{- end }}`;
  let out = must(
    text,
    /\n {2}template:\n {4}metadata:\n {6}labels:\n((?: {8}.*\n)+)/,
    (_m, labels) => {
      // The selector's labels are the manifest's: podLabels cannot override them.
      const own = [...labels.matchAll(/^ {8}([^:]+):/gm)].map((m) => JSON.stringify(m[1]));
      return `\n  template:\n    metadata:\n      {{- with ${v}.podAnnotations }}\n      annotations:\n        {{- toYaml . | nindent 8 }}\n      {{- end }}\n      labels:\n${labels}        {{- with omit (${v}.podLabels | default dict) ${own.join(' ')} }}\n        {{- toYaml . | nindent 8 }}\n        {{- end }}\n`;
    },
    `${component} pod template labels`,
  );
  out = must(
    out,
    /\n {6}containers:\n/,
    () =>
      `\n${pullSecrets}\n${withBlock('nodeSelector')}\n${withBlock('tolerations')}\n${withBlock('affinity')}\n      containers:\n`,
    `${component} containers`,
  );
  return must(
    out,
    /\n {8}resources:\n(?: {10}.*\n)+/,
    `\n        resources:\n          {{- toYaml ${v}.resources | nindent 10 }}\n`,
    `${component} container resources`,
  );
}

/** The container resources of a component's Deployment or DaemonSet (the chart's default values). */
export function deploymentResources(files: ManifestFile[]): Record<string, unknown> {
  const dep = files
    .flatMap((f) => f.objects)
    .find((o) => o.kind === 'Deployment' || o.kind === 'DaemonSet') as
    | { spec: { template: { spec: { containers: { resources?: Record<string, unknown> }[] } } } }
    | undefined;
  const resources = dep?.spec.template.spec.containers[0]?.resources;
  if (!resources) throw new Error('chart: no Deployment or DaemonSet with container resources');
  return resources;
}

function controllerTemplates(version: string): ChartFile[] {
  const out: ChartFile[] = [];
  for (const f of controllerManifests({ version })) {
    if (f.file === 'namespace.yaml' || f.file === 'kustomization.yaml') continue;
    let text = templated(render(f.objects), 'controller', version);
    if (f.file === 'deployment.yaml') {
      text = podValues(text, 'controller')
        .replace(/\n {2}replicas: \d+\n/, '\n  replicas: {{ .Values.controller.replicas }}\n')
        .replace(/--concurrency=\d+/, '--concurrency={{ .Values.controller.concurrency }}')
        .replace(/--max-concurrency=\d+/, '--max-concurrency={{ .Values.controller.maxConcurrency }}')
        .replace(/--log-level=\w+/, '--log-level={{ .Values.controller.logLevel }}');
      text = must(
        text,
        /(\n {8}- "--log-level=[^\n]*")\n/,
        '$1\n' +
          '        {{- with .Values.controller.otlpEndpoint }}\n' +
          '        - "--otlp-endpoint={{ . }}"\n' +
          '        {{- end }}\n' +
          '        {{- if .Values.controller.disableClaimEvents }}\n' +
          '        - "--disable-claim-events"\n' +
          '        {{- end }}\n' +
          '        {{- range .Values.controller.extraArgs }}\n' +
          '        - {{ . | quote }}\n' +
          '        {{- end }}\n',
        'controller args (otlpEndpoint, disableClaimEvents, extraArgs)',
      );
    }
    if (f.file === 'deployment.yaml') text = shardedDeployments(text);
    out.push({
      path: `templates/controller-${f.file}`,
      text: HEADER + when('.Values.controller.enabled', text),
    });
  }
  return out;
}

/**
 * controller.shards Deployments of the controller (one, the manifest's own, by default): shard i is
 * `claimkit-controller-shard-i` with `--shard=i/N`, and a `claimkit.dev/shard` label in its selector
 * so the Deployments' pods never overlap. Inside the range `.` is the shard, so the release's values
 * are read through `$`.
 */
function shardedDeployments(text: string): string {
  const sharded = (body: string) => `{{- if gt $shards 1 }}\n${body}\n{{- end }}`;
  let out = text.replace(/(?<![\w$)])\.(Values|Release|Chart)\./g, '$$.$1.');
  out = must(
    out,
    /(\nkind: Deployment\nmetadata:\n {2}name: claimkit-controller)\n/,
    '$1{{ if gt $$shards 1 }}-shard-{{ $$shard }}{{ end }}\n',
    'controller Deployment name',
  );
  out = must(
    out,
    /(\n {2}selector:\n {4}matchLabels:\n(?: {6}.*\n)+)/,
    (m) => `${m}${sharded('      claimkit.dev/shard: "{{ $shard }}"')}\n`,
    'controller selector',
  );
  out = must(
    out,
    /(\n {6}labels:\n(?: {8}[^{\n].*\n)+)/,
    (m) => `${m}${sharded('        claimkit.dev/shard: "{{ $shard }}"')}\n`,
    'controller pod labels',
  );
  out = must(
    out,
    /(\n {8}- "--log-level=[^\n]*")\n/,
    (_m, line) => `${line}\n${sharded('        - "--shard={{ $shard }}/{{ $shards }}"')}\n`,
    'controller --shard',
  );
  return `{{- $shards := int ($.Values.controller.shards | default 1) }}\n{{- range $shard := until $shards }}\n---\n${out.trimEnd()}\n{{- end }}\n`;
}

/**
 * One file of the capture agent as the chart templates it, with the manifest's own image options
 * (literal): the controller's image, its pod values, the two host directories and the kubelet's TLS
 * verification from values. The chart's DaemonSet is this for captureAgentManifests() with
 * placeholder image options, then those made values (checkpointImagesValues); chart.test.ts compares
 * it, with the values evaluated, against this for the same image options.
 */
export function captureAgentTemplate(f: ManifestFile, version: string): string {
  const v = '.Values.captureAgent';
  let text = templated(render(f.objects), 'controller', version);
  if (f.file === 'daemonset.yaml') {
    text = must(
      podValues(text, 'captureAgent'),
      /\n( +)- "--kubelet-insecure-tls"\n/,
      (_m, ws: string) =>
        `\n{{- if ${v}.kubeletInsecureTLS }}\n${ws}- "--kubelet-insecure-tls"\n{{- end }}\n`,
      'capture agent --kubelet-insecure-tls',
    );
    // Each directory in its flag(s), its mount and its hostPath (mounted at the node's path).
    for (const [dir, value, times] of [
      [CAPTURE_AGENT_KUBELET_CHECKPOINT_DIR, 'kubeletCheckpointDir', 3],
      [CAPTURE_AGENT_DATA_DIR, 'dataDir', 4],
    ] as const) {
      if (text.split(dir).length - 1 !== times)
        throw new Error(`chart: want ${dir} ${times} times in the capture agent's DaemonSet`);
      text = text.replaceAll(dir, `{{ ${v}.${value} }}`);
    }
  }
  return text;
}

/**
 * Placeholders for captureAgentManifests()'s image options: the DaemonSet is rendered with them, and
 * each arg, mount and volume they bring is then kept only when its value is set.
 */
const CHECKPOINT_IMAGES_PLACEHOLDERS = {
  repository: 'claimkit-placeholder.invalid/checkpoint-images',
  caConfigMap: 'claimkit-placeholder-registry-ca',
  authSecret: 'claimkit-placeholder-registry-auth',
} as const satisfies CaptureAgentImageOptions;

/** The template variable the DaemonSet reads captureAgent.checkpointImages through. */
const IMAGES = '$checkpointImages';

/**
 * Wraps each YAML list item whose line is `- <start>` (with its continuation lines, indented
 * deeper) in `{{- if <cond> }}`, followed by `extra` (more items at its indent, each with its
 * condition); `times` items must match. Rendered with the condition true the item is as it was;
 * false, nothing.
 */
function optionalItems(
  text: string,
  start: string,
  cond: string,
  times: number,
  extra: { cond: string; item: string }[] = [],
): string {
  const escaped = start.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
  const re = new RegExp(`\\n( +)- ${escaped}\\n(?:\\1  [^\\n]*\\n)*`, 'g');
  const found = text.match(re)?.length ?? 0;
  if (found !== times)
    throw new Error(`chart: want ${times} "- ${start}" in the capture agent's DaemonSet, found ${found}`);
  return text.replace(
    re,
    (m, ws: string) =>
      `\n{{- if ${cond} }}${m}{{- end }}\n${extra
        .map((e) => `{{- if ${e.cond} }}\n${ws}- ${e.item}\n{{- end }}\n`)
        .join('')}`,
  );
}

/**
 * captureAgent.checkpointImages in the DaemonSet rendered with CHECKPOINT_IMAGES_PLACEHOLDERS:
 * repository empty (the default) renders none of what the image options add, so the chart renders
 * what it did before them; set, the args, mounts and volumes of captureAgentManifests({image}) for
 * the values given, plus --registry-insecure-tls and --registry-plain-http (the agent's flags, which
 * captureAgentManifests does not take) after them.
 */
function checkpointImagesValues(text: string): string {
  const p = CHECKPOINT_IMAGES_PLACEHOLDERS;
  const on = `${IMAGES}.repository`;
  const and = (key: string) => `and ${on} ${IMAGES}.${key}`;
  let out = optionalItems(text, `"--image-repository=${p.repository}"`, on, 1);
  out = optionalItems(out, `"--registry-ca=${CAPTURE_AGENT_REGISTRY_CA_DIR}/ca.crt"`, and('caConfigMap'), 1);
  out = optionalItems(
    out,
    `"--registry-auth-file=${CAPTURE_AGENT_REGISTRY_AUTH_DIR}/config.json"`,
    and('authSecret'),
    1,
    [
      { cond: and('insecureTLS'), item: '"--registry-insecure-tls"' },
      { cond: and('plainHTTP'), item: '"--registry-plain-http"' },
    ],
  );
  // Each one's mount and volume.
  out = optionalItems(out, 'name: registry-ca', and('caConfigMap'), 2);
  out = optionalItems(out, 'name: registry-auth', and('authSecret'), 2);
  for (const [key, value] of Object.entries(p)) {
    // The repository sits in a quoted arg (the schema's pattern has no quote or backslash); the
    // names are quoted (a name such as "on" or "123" is no string to YAML otherwise).
    const expr = key === 'repository' ? `{{ ${IMAGES}.${key} }}` : `{{ ${IMAGES}.${key} | quote }}`;
    const at = key === 'repository' ? value : `: ${value}\n`;
    if (out.split(at).length !== 2)
      throw new Error(`chart: want ${key} once in the capture agent's DaemonSet`);
    out = out.replace(at, key === 'repository' ? expr : `: ${expr}\n`);
  }
  return (
    `{{- ${IMAGES} := .Values.captureAgent.checkpointImages | default dict }}\n` +
    `{{- if and ${on} ${IMAGES}.caConfigMap ${IMAGES}.insecureTLS }}\n` +
    `{{- fail "captureAgent.checkpointImages: caConfigMap and insecureTLS: give one of them" }}\n` +
    '{{- end }}\n' +
    out
  );
}

/**
 * The capture agent (optional, off by default; not in deploy/): captureAgentTemplate of each file,
 * the DaemonSet's checkpoint image push from captureAgent.checkpointImages.
 */
function captureAgentTemplates(version: string): ChartFile[] {
  const plain = captureAgentManifests({ version });
  const files = captureAgentManifests({ version, image: CHECKPOINT_IMAGES_PLACEHOLDERS });
  if (files.map((f) => f.file).join() !== plain.map((f) => f.file).join())
    throw new Error('chart: the capture agent has other files with image options');
  return files.map((f, i) => {
    let text = captureAgentTemplate(f, version);
    if (f.file === 'daemonset.yaml') text = checkpointImagesValues(text);
    else if (text !== captureAgentTemplate(plain[i]!, version))
      throw new Error(`chart: image options change the capture agent's ${f.file}: template them`);
    return {
      path: `templates/capture-agent-${f.file}`,
      text: HEADER + when('.Values.captureAgent.enabled', text),
    };
  });
}

function webhookTemplates(version: string): ChartFile[] {
  const out: ChartFile[] = [];
  for (const f of webhookManifests({ version })) {
    if (f.file === 'namespace.yaml' || f.file === 'kustomization.yaml') continue;
    let objects = f.objects;
    if (f.file === 'validatingwebhookconfiguration.yaml') {
      // A placeholder caBundle on every webhook, kept only without cert-manager.
      objects = objects.map((o) => ({
        ...o,
        webhooks: (o.webhooks as Obj[]).map((w) => ({
          ...w,
          clientConfig: { ...(w.clientConfig as Obj), caBundle: CA_BUNDLE },
        })),
      }));
    }
    let text = templated(render(objects), 'webhook', version).replaceAll(
      WEBHOOK_TLS_SECRET,
      '{{ .Values.webhook.tlsSecretName }}',
    );
    if (f.file === 'deployment.yaml') {
      text = podValues(text, 'webhook').replace(
        /\n {2}replicas: \d+\n/,
        '\n  replicas: {{ .Values.webhook.replicas }}\n',
      );
    }
    if (f.file === 'validatingwebhookconfiguration.yaml') {
      text = text
        .replace(
          /\n( +)cert-manager\.io\/inject-ca-from: (.*)\n/,
          (_m, ws: string, v: string) =>
            `\n{{- if .Values.webhook.certManager.enabled }}\n${ws}cert-manager.io/inject-ca-from: ${v}\n{{- end }}\n`,
        )
        .replaceAll(
          new RegExp(`\\n( +)caBundle: ${CA_BUNDLE}\\n`, 'g'),
          (_m, ws: string) =>
            `\n{{- if not .Values.webhook.certManager.enabled }}\n${ws}caBundle: {{ required "webhook.caBundle is required when webhook.certManager.enabled is false" .Values.webhook.caBundle }}\n{{- end }}\n`,
        );
    }
    const cond =
      f.file === 'certificate.yaml'
        ? '(and .Values.webhook.enabled .Values.webhook.certManager.enabled)'
        : '.Values.webhook.enabled';
    out.push({ path: `templates/webhook-${f.file}`, text: HEADER + when(cond, text) });
  }
  return out;
}

/**
 * The policies with the controller's identity from values: the two CEL list variables become the
 * JSON of the values (a JSON list of strings is a CEL list literal), the ServiceAccount first.
 */
function policiesTemplates(): ChartFile[] {
  const sa = '.Values.policies.controllerServiceAccount';
  const users = `concat (list (printf "system:serviceaccount:%s:%s" (${sa}.namespace | default .Release.Namespace) ${sa}.name)) .Values.policies.controllerUsers | uniq`;
  const out: ChartFile[] = [];
  for (const f of policiesManifests()) {
    if (f.file === 'kustomization.yaml') continue;
    const text = render(f.objects)
      .replace(
        /\n( +)- name: controllerUsernames\n( +)expression: .*\n/,
        (_m, a: string, b: string) =>
          `\n${a}- name: controllerUsernames\n${b}expression: {{ ${users} | toJson | quote }}\n`,
      )
      .replace(
        /\n( +)- name: controllerGroups\n( +)expression: .*\n/,
        (_m, a: string, b: string) =>
          `\n${a}- name: controllerGroups\n${b}expression: {{ .Values.policies.controllerGroups | toJson | quote }}\n`,
      );
    if (text.includes('name: controllerUsernames') && !text.includes('.Values.policies.controllerGroups')) {
      throw new Error(`policies/${f.file}: the controller identity variables were not found to template`);
    }
    out.push({
      path: `templates/policies-${f.file}`,
      text: POLICIES_HEADER + when('.Values.policies.enabled', text),
    });
  }
  return out;
}

/**
 * Every file of deploy/helm/claimkit, for the release `version` (the chart's version and appVersion,
 * the images' default tag); the chart's crds/ are the given files of deploy/crds.
 */
export function chartFiles(crds: readonly GeneratedFile[], version: string): GeneratedFile[] {
  const chartCrds = [...crds]
    .map((f) => ({ path: `crds/${f.path.slice(f.path.lastIndexOf('/') + 1)}`, text: f.text }))
    .sort((a, b) => (a.path < b.path ? -1 : 1));
  const files: ChartFile[] = [
    { path: 'Chart.yaml', text: HEADER + chartYaml(version) },
    {
      path: 'values.yaml',
      text:
        HEADER +
        valuesYaml({
          controllerResources: deploymentResources(controllerManifests({ version })),
          webhookResources: deploymentResources(webhookManifests({ version })),
          captureAgentResources: deploymentResources(captureAgentManifests({ version })),
        }),
    },
    { path: 'values.schema.json', text: `${JSON.stringify(VALUES_SCHEMA, null, 2)}\n` },
    ...chartCrds,
    ...controllerTemplates(version),
    ...webhookTemplates(version),
    ...captureAgentTemplates(version),
    ...policiesTemplates(),
    ...monitoringTemplates(MONITORING_HEADER),
    { path: CHART_DASHBOARD, text: dashboardJson() },
  ];
  return files.map((f) => ({ path: `${CHART_DIR}/${f.path}`, text: f.text }));
}
