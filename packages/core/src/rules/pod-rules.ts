// The rules of pool pods' labels and annotations (DESIGN.md "PodPool", invariants P1, P5, M1, M2),
// each with every place that enforces or checks it.
import { checker, controller, doctor, inCore, policyRule, type Rule, safetyRule, webhook } from './places.ts';

const PODS = '/validate/pods';
const labelPolicy = (message: string) => policyRule('pool-pod-labels', message);
const controllerOnly = (key: string) =>
  labelPolicy(`${key}: is set only by the claimkit controller; anyone may remove it`);

export const POD_RULES: readonly Rule[] = [
  {
    id: 'P1.no-handover',
    invariant: 'P1',
    statement: 'no direct A→B `claimed-by` (or claimed-by-uid) change on a pool pod',
    places: [
      inCore(
        'reconcile/podclaim/decide.ts',
        ['unlabelPodWrite'],
        'a foreign label is removed, never replaced, in one write',
      ),
      labelPolicy(
        'metadata.labels[claimkit.dev/claimed-by]: a pod is never relabelled from one claim to another in a single write; the label must be removed first',
      ),
      labelPolicy(
        'metadata.annotations[claimkit.dev/claimed-by-uid]: a pod is never handed from one claim to another in a single write; the annotation must be removed first',
      ),
      webhook(PODS, '(P1 stated once: `admission/claim-handover.ts`)'),
      doctor('CK004', 'the label then names a claim that does not reference the pod'),
      checker('InvariantTracker'),
    ],
  },
  {
    id: 'pod-labels-agree',
    statement: 'pool pod state label, `claimed-by` and its uid agree (checked when a write touches them)',
    places: [
      labelPolicy(
        'metadata.labels[claimkit.dev/state]: a pool pod needs claimkit.dev/state in Idle|Bound|Draining',
      ),
      labelPolicy(
        'metadata.labels[claimkit.dev/claimed-by]: an Idle pod must not be claimed; set the state first or remove the label',
      ),
      labelPolicy(
        'metadata.annotations[claimkit.dev/claimed-by-uid]: is required while claimkit.dev/claimed-by is set',
      ),
      labelPolicy(
        'metadata.annotations[claimkit.dev/claimed-by-uid]: must be removed together with claimkit.dev/claimed-by',
      ),
      webhook(PODS),
      doctor('CK003'),
      doctor('CK004'),
      doctor('CK010'),
    ],
  },
  {
    id: 'pod-marks-by-controller',
    statement:
      "only the controller's identity names a claim (`claimed-by`, its uid) or sets `claimkit.dev/template-hash` or the `claimkit.dev/source-capture`/`-ref`/`-token` annotations (the fenced Capture result a pod was started from, `spec.source`) on a pool pod; anyone may remove them",
    places: [
      controllerOnly('metadata.labels[claimkit.dev/claimed-by]'),
      controllerOnly('metadata.annotations[claimkit.dev/claimed-by-uid]'),
      controllerOnly('metadata.labels[claimkit.dev/template-hash]'),
      controllerOnly('metadata.annotations[claimkit.dev/source-capture]'),
      controllerOnly('metadata.annotations[claimkit.dev/source-ref]'),
      controllerOnly('metadata.annotations[claimkit.dev/source-token]'),
      webhook(PODS),
      controller(
        'reconcile/podclaim/decide.ts',
        ['labelOwnedPodWrite'],
        'a removed label: the claim labels its pod again',
      ),
      controller(
        'pool/template-hash.ts',
        ['isUpdatedPod'],
        'a pod without a template hash counts as outdated and is replaced while Idle',
      ),
    ],
  },
  {
    id: 'P5',
    invariant: 'P5',
    statement: 'no residue: every `claimed-by` label names a live claim that references that pod',
    places: [
      safetyRule('releasePodWrite'),
      controller(
        'reconcile/podclaim/foreign-label.ts',
        ["'ForeignLabelRemoved'"],
        'a label naming a claim that does not hold the pod is removed (`ForeignLabelRemoved`)',
      ),
      controller(
        'reconcile/podpool/decide.ts',
        ["'ResidueReleased'"],
        'a claimed pod no live claim holds is released after a live read (`ResidueReleased`)',
      ),
      doctor('CK003'),
      doctor('CK004'),
      checker('checkConvergence'),
    ],
  },
  {
    id: 'M1',
    invariant: 'M1',
    statement: "a claim's `podMetadata` leaves no residue on its pod after release",
    places: [
      inCore(
        'pool/pod-metadata.ts',
        ['podMetadataReleasePatch'],
        'the release write undoes exactly what the bind recorded on the pod',
      ),
      checker('checkClaimSide'),
    ],
  },
  {
    id: 'M2',
    invariant: 'M2',
    statement:
      "disruption hints follow the pod's state: Bound and Draining pods carry do-not-disrupt and safe-to-evict=false, Idle pods neither (a pod-deletion-cost instead)",
    places: [
      inCore(
        'pool/pods.ts',
        ['heldPodHints()', 'idlePodHints(pod)'],
        "the bind and the release write set the new state's hints",
      ),
      checker('checkClaimSide'),
      checker('checkHeldPodHints'),
    ],
  },
];
