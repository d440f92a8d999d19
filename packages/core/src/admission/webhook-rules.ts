// The webhook's rules as data: which path judges which kind, what the ValidatingWebhookConfiguration
// registers for it (resources, operations, objectSelector), and the pure rule. The webhook package
// serves this table over HTTP and renders its registration from it; the in-memory model runs it as
// an admission step (`webhookAdmission`), matched as the API server matches a webhook, so the
// simulator's admission layer runs the same rules the webhook does.

import type {
  AdmissionRequest,
  ControllerIdentities,
  Operation,
  PodClaimIndex,
  Rule,
} from '../api/admission-request.ts';
import { GROUP, LABEL_POOL } from '../api/constants.ts';
import { matchesSelector } from '../api/labels.ts';
import type { KubeObject, LabelSelector } from '../api/meta.ts';
import { KIND_INFO, type Kind } from '../api/types.ts';
import type { AdmissionCheck, AdmissionStore } from '../model/admission.ts';
import { DEFAULT_CONTROLLER_USERNAME } from '../policies/options.ts';
import { validateCapture } from './captures.ts';
import { MemoryPodClaimIndex } from './claim-index.ts';
import { validatePodClaim } from './podclaims.ts';
import { validatePod } from './pods.ts';
import { validatePodClaimSet, validatePodPool } from './sets-pools.ts';

export interface WebhookRule {
  /** The URL path the webhook serves the rule on. */
  path: string;
  group: string;
  kind: Kind;
  /** The resources registered: the kind's plural, and `<plural>/status` where status is judged. */
  resources: readonly string[];
  operations: readonly Operation[];
  /** Registered only for objects matching it (old or new), as the API server matches it. */
  objectSelector?: LabelSelector;
  rule: Rule;
}

const route = (path: string, kind: Kind, rule: Rule, more: Partial<WebhookRule> = {}): WebhookRule => {
  const info = KIND_INFO[kind];
  return {
    path,
    group: info.apiVersion.includes('/') ? GROUP : '',
    kind,
    resources: [info.plural],
    operations: ['CREATE', 'UPDATE'],
    rule,
    ...more,
  };
};

export const WEBHOOK_RULES: readonly WebhookRule[] = [
  route('/validate/captures', 'Capture', validateCapture, { resources: ['captures', 'captures/status'] }),
  route('/validate/podclaims', 'PodClaim', validatePodClaim, {
    resources: ['podclaims', 'podclaims/status'],
  }),
  route('/validate/pods', 'Pod', validatePod, {
    objectSelector: { matchExpressions: [{ key: LABEL_POOL, operator: 'Exists' }] },
  }),
  route('/validate/podclaimsets', 'PodClaimSet', validatePodClaimSet),
  route('/validate/podpools', 'PodPool', validatePodPool),
];

/** The name the ValidatingWebhookConfiguration gives a rule's webhook (the API server quotes it). */
export function webhookName(r: WebhookRule): string {
  return `${KIND_INFO[r.kind].plural}.webhook.${GROUP}`;
}

function labelsOf(o: unknown): Record<string, string> {
  return (o as { metadata?: { labels?: Record<string, string> } } | undefined)?.metadata?.labels ?? {};
}

/** Whether the API server sends `req` to this rule's webhook. */
function webhookMatches(r: WebhookRule, req: AdmissionRequest): boolean {
  if (req.kind !== r.kind || !r.operations.includes(req.operation)) return false;
  const resource = req.subResource
    ? `${KIND_INFO[r.kind].plural}/${req.subResource}`
    : KIND_INFO[r.kind].plural;
  if (!r.resources.includes(resource)) return false;
  const sel = r.objectSelector;
  if (sel === undefined) return true;
  return (
    (req.object != null && matchesSelector(labelsOf(req.object), sel)) ||
    (req.oldObject != null && matchesSelector(labelsOf(req.oldObject), sel))
  );
}

/** The model's store as the webhook's claim index (always synced: the model has no watch lag). */
function storeClaimIndex(store: AdmissionStore): PodClaimIndex {
  return {
    enabled: true,
    synced: () => true,
    claimsReferencing: (namespace, pod) => {
      const index = new MemoryPodClaimIndex({ synced: true });
      index.replace(store.list('PodClaim', namespace));
      return index.claimsReferencing(namespace, pod);
    },
  };
}

/**
 * An admission check for the in-memory model that runs the webhook's rules as the API server would
 * call the webhook (default: claimkit's table and controller identity): a denial is every violation
 * of the rule, reason Forbidden (the webhook answers 403), from the rule's webhook.
 */
export function webhookAdmission(
  opts: {
    rules?: readonly WebhookRule[];
    controller?: ControllerIdentities;
    index?: (store: AdmissionStore) => PodClaimIndex;
  } = {},
): AdmissionCheck {
  const rules = opts.rules ?? WEBHOOK_RULES;
  const controller = opts.controller ?? { usernames: [DEFAULT_CONTROLLER_USERNAME], groups: [] };
  const indexOf = opts.index ?? storeClaimIndex;
  return (req: AdmissionRequest<KubeObject>, store) => {
    for (const r of rules) {
      if (!webhookMatches(r, req)) continue;
      const v = r.rule(req, { controller, index: indexOf(store) });
      if (!v.allowed) {
        const by = { webhook: webhookName(r) };
        return v.violations.map((x) => ({ ...x, reason: 'Forbidden' as const, by }));
      }
    }
    return [];
  };
}
