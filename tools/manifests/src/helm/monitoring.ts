// The chart's optional monitoring objects (all off by default): ServiceMonitors or PodMonitors for the
// controller and the webhook (Prometheus Operator), the PrometheusRule of monitoring/rules.ts with its
// thresholds from values, and the Grafana dashboard as a ConfigMap Grafana's sidecar picks up.
import { toYaml } from '@claimkit/core';
import { prometheusRule, RULE_DEFAULTS, type RuleThresholds } from '../monitoring/rules.ts';

/** The dashboard inside the chart (.Files.Get reads it untemplated: its `{{legend}}`s stay). */
export const CHART_DASHBOARD = 'dashboards/claimkit.json';

const V = '.Values.monitoring';
const when = (cond: string, text: string) => `{{- if ${cond} }}\n${text.trimEnd()}\n{{- end }}\n`;
const META_LABELS = (component: string, extra: string) =>
  `  labels:\n    app.kubernetes.io/name: claimkit\n    app.kubernetes.io/component: ${component}\n    {{- with ${extra} }}\n    {{- toYaml . | nindent 4 }}\n    {{- end }}`;

/**
 * One scrape endpoint per component. honorLabels: the claimkit metrics carry `namespace` and `pool`
 * of the claims and pools; without it Prometheus would rename them `exported_namespace` and the
 * dashboard and alerts would see the controller's namespace instead.
 */
function endpoint(component: 'controller' | 'webhook', key: 'serviceMonitor' | 'podMonitor'): string {
  const v = `${V}.${key}`;
  const common = [
    `  {{- with ${v}.interval }}\n    interval: {{ . }}\n  {{- end }}`,
    `  {{- with ${v}.scrapeTimeout }}\n    scrapeTimeout: {{ . }}\n  {{- end }}`,
    '    honorLabels: true',
  ].join('\n');
  const list = key === 'serviceMonitor' ? 'endpoints' : 'podMetricsEndpoints';
  if (component === 'controller')
    return `  ${list}:\n  - port: metrics\n    path: /metrics\n    scheme: http\n${common}`;
  // The webhook serves /metrics on its TLS port. With cert-manager its Secret holds ca.crt; else
  // the user's tlsConfig, else no verification (the metrics are not secret; the port is TLS-only).
  const tls = [
    `    {{- if ${V}.webhookTLSConfig }}`,
    '    tlsConfig:',
    `      {{- toYaml ${V}.webhookTLSConfig | nindent 6 }}`,
    '    {{- else if .Values.webhook.certManager.enabled }}',
    '    tlsConfig:',
    '      serverName: claimkit-webhook.{{ .Release.Namespace }}.svc',
    '      ca:',
    '        secret:',
    '          name: {{ .Values.webhook.tlsSecretName }}',
    '          key: ca.crt',
    '    {{- else }}',
    '    tlsConfig:',
    '      insecureSkipVerify: true',
    '    {{- end }}',
  ].join('\n');
  return `  ${list}:\n  - port: https\n    path: /metrics\n    scheme: https\n${tls}\n${common}`;
}

function monitor(kind: 'ServiceMonitor' | 'PodMonitor', component: 'controller' | 'webhook'): string {
  const key = kind === 'ServiceMonitor' ? 'serviceMonitor' : 'podMonitor';
  return when(
    `and ${V}.${key}.enabled .Values.${component}.enabled`,
    `apiVersion: monitoring.coreos.com/v1
kind: ${kind}
metadata:
  name: claimkit-${component}
  namespace: {{ .Release.Namespace }}
${META_LABELS(component, `${V}.${key}.labels`)}
spec:
  selector:
    matchLabels:
      app.kubernetes.io/name: claimkit
      app.kubernetes.io/component: ${component}
  namespaceSelector:
    matchNames:
    - {{ .Release.Namespace }}
${endpoint(component, key)}`,
  );
}

/** Prometheus's own `{{ ... }}` (alert annotations) as Helm literals, so Helm leaves them. */
const helmLiteral = (text: string) => text.replace(/\{\{(.*?)\}\}/g, (m) => `{{\`${m}\`}}`);

function ruleTemplate(): string {
  const keys = Object.keys(RULE_DEFAULTS) as (keyof RuleThresholds)[];
  const sentinel = (k: string) => `__claimkit_threshold_${k}__`;
  const rule = prometheusRule(
    Object.fromEntries(keys.map((k) => [k, sentinel(k)])) as unknown as RuleThresholds,
  );
  let text = helmLiteral(toYaml({ spec: rule.spec }));
  for (const k of keys) {
    if (!text.includes(sentinel(k))) throw new Error(`chart: threshold ${k} is used by no rule`);
    text = text.replaceAll(sentinel(k), `{{ ${V}.prometheusRule.${k} }}`);
  }
  return when(
    `${V}.prometheusRule.enabled`,
    `apiVersion: ${rule.apiVersion}
kind: ${rule.kind}
metadata:
  name: claimkit
  namespace: {{ .Release.Namespace }}
${META_LABELS('monitoring', `${V}.prometheusRule.labels`)}
${text}`,
  );
}

function dashboardTemplate(): string {
  return when(
    `${V}.dashboard.enabled`,
    `apiVersion: v1
kind: ConfigMap
metadata:
  name: claimkit-dashboard
  namespace: {{ .Values.monitoring.dashboard.namespace | default .Release.Namespace }}
${META_LABELS('monitoring', `${V}.dashboard.labels`)}
  {{- with ${V}.dashboard.annotations }}
  annotations:
    {{- toYaml . | nindent 4 }}
  {{- end }}
data:
  claimkit.json: |-
    {{- .Files.Get "${CHART_DASHBOARD}" | nindent 4 }}`,
  );
}

/** The monitoring templates (paths inside the chart), each with `header` first. */
export function monitoringTemplates(header: string): { path: string; text: string }[] {
  return [
    {
      path: 'templates/monitoring-servicemonitors.yaml',
      text: header + monitor('ServiceMonitor', 'controller') + '---\n' + monitor('ServiceMonitor', 'webhook'),
    },
    {
      path: 'templates/monitoring-podmonitors.yaml',
      text: header + monitor('PodMonitor', 'controller') + '---\n' + monitor('PodMonitor', 'webhook'),
    },
    { path: 'templates/monitoring-prometheusrule.yaml', text: header + ruleTemplate() },
    { path: 'templates/monitoring-dashboard.yaml', text: header + dashboardTemplate() },
  ];
}
