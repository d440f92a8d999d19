// The metric names the controller and the webhook export: what the dashboard's and the alert rules'
// queries may name (monitoring.test.ts). Read from the runtimes' own lists, which their tests prove
// equal to what their /metrics serve, so a metric renamed or removed there fails the test.
import { controllerMetricNames } from '@claimkit/controller';
import { webhookMetricNames } from '@claimkit/webhook';

/** Every metric name a query may name. */
export function exportedMetricNames(): ReadonlySet<string> {
  return new Set([...controllerMetricNames(), ...webhookMetricNames()]);
}
