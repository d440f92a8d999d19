// What the in-memory API server enforces in the simulator's two admission modes.
// On: the CRDs' schema and CEL rules (evaluated from the generated CRDs' rules), then claimkit's
// ValidatingAdmissionPolicies (evaluated with the same CEL; DESIGN.md "Where each rule is
// enforced", layer 2), then the webhook's rules (core's admission/, as the webhook serves them,
// matched as its registration says). Off: the CRDs' structure only (pruning, defaulting) — a
// cluster without the policies, the webhook and the CEL rules, as with a legacy CRD or writer — and
// every write the "on" layers would have refused is reported instead, so the simulator knows when
// damage got in.
import { webhookAdmission } from '../admission/webhook-rules.ts';
import type { FieldCause } from '../api/errors.ts';
import type { KubeObject } from '../api/meta.ts';
import type { Kind } from '../api/types.ts';
import type { AdmissionCheck } from '../model/admission.ts';
import type { ApiModelOptions } from '../model/api-model.ts';
import { policyAdmission } from '../policies/evaluate.ts';
import { schemaModelOptions } from '../schema/validate.ts';

export type AdmissionMode = 'on' | 'off';

/** The admission layers: CRD schema and CEL rules, ValidatingAdmissionPolicies, the webhook's rules. */
export type AdmissionLayerName = 'crd' | 'policy' | 'webhook';

export interface Refusal {
  layer: AdmissionLayerName;
  kind: Kind;
  message: string;
  /** Known for policy and webhook refusals (admission sees the user; schema validation does not). */
  user?: string;
}

type Validator = (obj: KubeObject, old?: KubeObject) => FieldCause[];

/**
 * Model options for `mode`. `observe` hears every refusal of the "on" layers: enforced ones in mode
 * on, would-be ones (the write lands) in mode off. `admission` picks the admission layers after the
 * CRD's (default: the policies and the webhook's rules, as a cluster with both installed).
 */
export function admissionLayer(
  mode: AdmissionMode,
  observe: (r: Refusal) => void = () => {},
  admission: readonly Exclude<AdmissionLayerName, 'crd'>[] = ['policy', 'webhook'],
): Omit<ApiModelOptions, 'clock' | 'seed'> {
  const schema = schemaModelOptions();
  const enforce = mode === 'on';
  const validators: Partial<Record<Kind, Validator>> = {};
  for (const kind of Object.keys(schema.validators) as Kind[]) {
    const own = schema.validators[kind] as unknown as Validator;
    validators[kind] = (obj, old) => {
      const causes = own(obj, old);
      for (const c of causes) observe({ layer: 'crd', kind, message: `${c.field}: ${c.message}` });
      return enforce ? causes : [];
    };
  }
  const checks: Record<Exclude<AdmissionLayerName, 'crd'>, () => AdmissionCheck> = {
    policy: () => policyAdmission(),
    webhook: () => webhookAdmission(),
  };
  const layer =
    (name: Exclude<AdmissionLayerName, 'crd'>, check: AdmissionCheck): AdmissionCheck =>
    (req, store) => {
      const denials = check(req, store);
      // One refusal per policy (its first failing validation) or per webhook (all its violations).
      const bySource = new Map<string, string[]>();
      for (const d of denials) {
        const source = d.by === undefined ? name : 'webhook' in d.by ? d.by.webhook : d.by.policy;
        const text = d.field ? `${d.field}: ${d.message}` : d.message;
        bySource.set(source, [...(bySource.get(source) ?? []), text]);
      }
      for (const [source, texts] of bySource) {
        const refusal: Refusal = { layer: name, kind: req.kind, message: `${source}: ${texts.join('; ')}` };
        if (req.userInfo.username !== undefined) refusal.user = req.userInfo.username;
        observe(refusal);
      }
      return enforce ? denials : [];
    };
  return {
    defaulters: schema.defaulters,
    validators,
    admission: admission.map((name) => layer(name, checks[name]())),
  };
}
