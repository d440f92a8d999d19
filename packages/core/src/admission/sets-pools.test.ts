// PodClaimSet's selector rule judges the labels the set's claims will carry: its template labels
// and the claim-set label the controller adds (the simulator's cluster selects on that label).
import { describe, expect, it } from 'vitest';
import type { AdmissionRequest } from '../api/admission-request.ts';
import { LABEL_CLAIM_SET } from '../api/constants.ts';
import { validatePodClaimSet } from './sets-pools.ts';

const set = (selector: unknown, labels: Record<string, string>, name?: string): AdmissionRequest => ({
  operation: 'CREATE',
  kind: 'PodClaimSet',
  userInfo: { username: 'alice' },
  object: {
    metadata: { ...(name ? { name } : {}), namespace: 'default' },
    spec: { replicas: 2, selector, template: { metadata: { labels }, spec: { poolName: 'web' } } },
  },
  oldObject: undefined,
});

describe('a PodClaimSet selector', () => {
  it('may select the claim-set label the controller gives every claim of the set', () => {
    const bySet = { matchLabels: { [LABEL_CLAIM_SET]: 'set' } };
    expect(validatePodClaimSet(set(bySet, { tier: 'sim' }, 'set')).allowed).toBe(true);
    // Another set's name is still a selector that never finds the claims.
    const other = validatePodClaimSet(set({ matchLabels: { [LABEL_CLAIM_SET]: 'other' } }, {}, 'set'));
    expect(other.allowed ? [] : other.violations.map((v) => v.field)).toEqual([
      'spec.template.metadata.labels',
    ]);
    // Without a name (generateName) only the template's labels are known.
    expect(validatePodClaimSet(set(bySet, { tier: 'sim' })).allowed).toBe(false);
  });
});
