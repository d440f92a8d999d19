// deploy/monitoring: the Grafana dashboard and the PrometheusRule (default thresholds) for users who
// do not install the chart; the chart carries the same dashboard and templates the rule's thresholds.
import { toYaml } from '@claimkit/core';
import { type GeneratedFile, generatedHeader } from '../generated-file.ts';
import { dashboardJson } from './dashboard.ts';
import { prometheusRule } from './rules.ts';

export const MONITORING_DIR = 'deploy/monitoring';
export const DASHBOARD_FILE = `${MONITORING_DIR}/claimkit-dashboard.json`;
export const RULE_FILE = `${MONITORING_DIR}/prometheus-rule.yaml`;

export function monitoringFiles(): GeneratedFile[] {
  const rule = prometheusRule();
  return [
    { path: DASHBOARD_FILE, text: dashboardJson() },
    {
      path: RULE_FILE,
      text:
        generatedHeader('#', 'the alert rules of tools/manifests (src/monitoring/rules.ts)', 'change them') +
        toYaml(rule),
      objects: [rule],
    },
  ];
}
