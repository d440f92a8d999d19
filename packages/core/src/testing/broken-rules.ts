// Safety rules broken on purpose, one variant each, so tests can prove that the simulator and the
// invariant checks catch a rule being broken. A test hands `rulesBreaking(...)` to a reconcile's deps
// or to the simulator (SimOptions.rules); production code never sees these. Each variant wraps
// core's own rule and changes only what the rule forbids. Routing bugs (P6) are broken the same way,
// as data: sim/broken-routing.ts.
import { podNameOf, sourcePodOf } from '../api/claim-binding.ts';
import { ANNOTATION_DO_NOT_DISRUPT, ANNOTATION_SAFE_TO_EVICT, LABEL_CLAIMED_BY } from '../api/constants.ts';
import type { Write } from '../api/decision.ts';
import type { CaptureClaim } from '../api/types.ts';
import { takeForScaleIn } from '../claimset/scale-in.ts';
import { ANNOTATION_POD_METADATA_KEYS, readPodMetadataRecord } from '../pool/pod-metadata.ts';
import { SAFETY_RULES, type SafetyRules } from '../reconcile/safety-rules.ts';

export type BrokenRule =
  | 'C1-unfenced-result'
  | 'C2-takeover-unknown'
  | 'P1-bind-without-cas'
  | 'P2-lost-keeps-pod'
  | 'P3-finalize-skips-shared-pod'
  | 'P4-scale-in-picks-migrating'
  | 'P5-finalize-leaves-label'
  | 'P7-foreign-label-takes-pod'
  | 'M1-release-keeps-pod-metadata'
  | 'M2-release-keeps-hints'
  | 'L1-fail-claim-rebinds'
  | 'S1-seed-from-unfenced-result';

const real = SAFETY_RULES;

export const BROKEN_RULES: Record<BrokenRule, Partial<SafetyRules>> = {
  // A holder completes with whatever token it believes it has: no ClaimSuperseded.
  'C1-unfenced-result': {
    completeClaim: (status, token, ref, now) => {
      const open = status.claim ?? ({ holder: { name: '', uid: '' } } as CaptureClaim);
      return real.completeClaim({ ...status, claim: { ...open, token } }, token, ref, now);
    },
  },
  // A holder whose liveness could not be checked counts as gone: its claim is taken over.
  'C2-takeover-unknown': {
    classifyHolder: (holder, lookup) =>
      lookup && 'error' in lookup
        ? { state: 'dead', reason: 'HolderGone' }
        : real.classifyHolder(holder, lookup),
  },
  // The bind patch carries no resourceVersion: two claims can both win a pod.
  'P1-bind-without-cas': {
    bindPodWrite: (pod, claim, state) => {
      const w = real.bindPodWrite(pod, claim, state);
      return w.op === 'patch' ? { ...w, precondition: {} } : w;
    },
  },
  // A claim whose pod is gone goes Lost but keeps spec.podName.
  'P2-lost-keeps-pod': { dropPodReference: (spec) => spec },
  // A deleting claim that shares a pod with another claim never finishes finalizing.
  'P3-finalize-skips-shared-pod': {
    finalize: (s, index, byName, labelledOurs, policy, rules) => {
      const c = s.claim;
      const ns = c.metadata.namespace ?? '';
      const involved = [podNameOf(c), sourcePodOf(c), ...labelledOurs.map((p) => p.metadata.name)];
      const shared = involved.some((name) => name && byName.has(name) && index.otherReference(ns, name, c));
      if (shared) return { writes: [], events: [], requeueAfterMs: 1000 };
      return real.finalize(s, index, byName, labelledOurs, policy, rules);
    },
  },
  // Scale-in picks migrating claims like any other.
  'P4-scale-in-picks-migrating': {
    chooseScaleIn: (claims, count) =>
      takeForScaleIn(
        claims.filter((c) => !c.metadata.deletionTimestamp),
        count,
      ),
  },
  // A pod released to the pool keeps the claimed-by label of the claim that released it.
  'P5-finalize-leaves-label': {
    releasePodWrite: (pod, policy, why) => {
      const w = real.releasePodWrite(pod, policy, why);
      if (w.op !== 'patch') return w;
      const metadata = w.patch.metadata as { labels: Record<string, string | null> };
      const { [LABEL_CLAIMED_BY]: _kept, ...labels } = metadata.labels;
      return { ...w, patch: { ...w.patch, metadata: { ...metadata, labels } } };
    },
  },
  // Any claimed-by label naming another claim takes the pod away (seed B's bug).
  'P7-foreign-label-takes-pod': {
    judgeReferencedPod: (c, cur, index, labelHolder) => {
      const hold = real.judgeReferencedPod(c, cur, index, labelHolder);
      if (hold.kind !== 'foreignLabel' && hold.kind !== 'unknown') return hold;
      return { kind: 'lost', why: `is claimed by ${cur?.metadata.labels?.[LABEL_CLAIMED_BY]}` };
    },
  },
  // A recycled pod keeps what its claim's podMetadata set (and the record of it).
  'M1-release-keeps-pod-metadata': {
    releasePodWrite: (pod, policy, why) => {
      const record = readPodMetadataRecord(pod);
      return withoutKeys(real.releasePodWrite(pod, policy, why), Object.keys(record.labels), [
        ...Object.keys(record.annotations),
        ANNOTATION_POD_METADATA_KEYS,
      ]);
    },
  },
  // A recycled pod keeps the Bound pod's disruption hints.
  'M2-release-keeps-hints': {
    releasePodWrite: (pod, policy, why) =>
      withoutKeys(
        real.releasePodWrite(pod, policy, why),
        [],
        [ANNOTATION_DO_NOT_DISRUPT, ANNOTATION_SAFE_TO_EVICT],
      ),
  },
  // lostPolicy is ignored: every Lost claim binds again.
  'L1-fail-claim-rebinds': { isLostForGood: () => false },
  // A pool seeds its pods from whatever result stands, fenced or not (the fence is not checked).
  'S1-seed-from-unfenced-result': {
    judgePoolSource: (pool, capture) => {
      const judged = real.judgePoolSource(pool, capture);
      const result = capture?.status?.result;
      if (judged.kind !== 'notReady' || judged.reason !== 'ResultNotFenced' || !capture || !result)
        return judged;
      return {
        kind: 'fenced',
        seed: { captureName: capture.metadata.name, token: result.token, ref: result.ref },
      };
    },
  },
};

/** `w` (a pod patch) without the given label and annotation keys: a release that forgets them. */
function withoutKeys(w: Write, labels: string[], annotations: string[]): Write {
  if (w.op !== 'patch') return w;
  const md = w.patch.metadata as { labels: Record<string, unknown>; annotations: Record<string, unknown> };
  const drop = (m: Record<string, unknown>, keys: string[]) =>
    Object.fromEntries(Object.entries(m).filter(([k]) => !keys.includes(k)));
  return {
    ...w,
    patch: {
      ...w.patch,
      metadata: { ...md, labels: drop(md.labels, labels), annotations: drop(md.annotations, annotations) },
    },
  };
}

/** Core's safety rules with each of `broken` replaced by its broken variant. */
export function rulesBreaking(...broken: BrokenRule[]): SafetyRules {
  return Object.assign({}, SAFETY_RULES, ...broken.map((b) => BROKEN_RULES[b]));
}
