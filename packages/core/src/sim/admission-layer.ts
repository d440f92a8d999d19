// What the in-memory API server enforces in the simulator's two admission modes.
// On: the CRDs' schema and CEL rules (evaluated from the generated CRDs' rules), then claimkit's
// ValidatingAdmissionPolicies (evaluated with the same CEL; DESIGN.md "Where each rule is
// enforced", layer 2). Off: the CRDs' structure only (pruning, defaulting) — a
// cluster without the policies and without the CEL rules, as with a legacy CRD or writer — and
// every write the "on" layers would have refused is reported instead, so the simulator knows when
// damage got in.
import type { FieldCause } from '../api/errors.ts';
import type { KubeObject } from '../api/meta.ts';
import type { Kind } from '../api/types.ts';
import type { AdmissionRequest } from '../model/admission.ts';
import type { ApiModelOptions } from '../model/api-model.ts';
import { policyAdmission } from '../policies/evaluate.ts';
import { schemaModelOptions } from '../schema/validate.ts';

export type AdmissionMode = 'on' | 'off';

export interface Refusal {
  layer: 'crd' | 'policy';
  kind: Kind;
  message: string;
  /** Known for policy refusals (admission sees the user; schema validation does not). */
  user?: string;
}

type Validator = (obj: KubeObject, old?: KubeObject) => FieldCause[];

/**
 * Model options for `mode`. `observe` hears every refusal of the "on" layers: enforced ones in mode
 * on, would-be ones (the write lands) in mode off.
 */
export function admissionLayer(
  mode: AdmissionMode,
  observe: (r: Refusal) => void = () => {},
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
  const policies = policyAdmission();
  const policy = (req: AdmissionRequest) => {
    const denials = policies(req);
    for (const d of denials) {
      observe({
        layer: 'policy',
        kind: req.kind,
        message: `${d.policy}: ${d.message}`,
        user: req.user.username,
      });
    }
    return enforce ? denials : [];
  };
  return { defaulters: schema.defaulters, validators, admission: [policy] };
}
