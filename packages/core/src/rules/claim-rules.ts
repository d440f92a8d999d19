// The rules of PodClaims and PodClaimSets (DESIGN.md "PodClaim", "PodClaimSet", invariants P1-P4,
// P6, P7 and L1) and who may write a claim's binding, each with every place that enforces or checks it.
import type { Rule } from './places.ts';
import { checker, controller, crdRule, doctor, inCore, policyRule, safetyRule, webhook } from './places.ts';

const CLAIMS = '/validate/podclaims';
const SETS = '/validate/podclaimsets';
const WRITERS = 'podclaim-writers';
const RESERVED_HINTS =
  'podMetadata may not set the disruption hints the controller owns (karpenter.sh/do-not-disrupt, cluster-autoscaler.kubernetes.io/safe-to-evict, controller.kubernetes.io/pod-deletion-cost)';

export const CLAIM_RULES: readonly Rule[] = [
  {
    id: 'P1.one-claim',
    invariant: 'P1',
    statement: 'a pod is referenced by at most one claim (a `podName` held by another claim)',
    places: [
      safetyRule('bindPodWrite'),
      webhook(CLAIMS, '(watched claim index)'),
      controller(
        'reconcile/podclaim/hold.ts',
        ['is also referenced by older claim'],
        'the oldest claim keeps the pod, the others go Lost',
      ),
      doctor('CK005'),
      checker(
        'checkSafety',
        'a pod two claims reference, or labelled for another claim than the one referencing it',
      ),
    ],
  },
  {
    id: 'pool-name-immutable',
    statement: '`poolName` immutable (PodClaim, PodClaimSet template)',
    places: [
      crdRule('PodClaim', 'poolName is immutable'),
      crdRule('PodClaimSet', 'poolName is immutable'),
      webhook(CLAIMS),
      webhook(SETS),
    ],
  },
  {
    id: 'binding-writer',
    statement:
      "only the controller's identity sets or changes the binding (`status.podName`, `nodeName`, `podUID`, `sourcePod`), in one status write with the phase; an earlier release's `spec` fields are only removed",
    places: [
      policyRule(WRITERS, 'status.podName: is written only by the claimkit controller'),
      policyRule(WRITERS, 'status.nodeName: is written only by the claimkit controller'),
      policyRule(WRITERS, 'status.podUID: is written only by the claimkit controller'),
      policyRule(WRITERS, 'status.sourcePod: is written only by the claimkit controller'),
      ...(['podName', 'nodeName', 'sourcePod'] as const).flatMap((f) => [
        policyRule(WRITERS, `spec.${f}: is written only by the claimkit controller`),
        crdRule(
          'PodClaim',
          `spec.${f} is no longer written: the binding is in status (it may only be removed)`,
        ),
      ]),
      crdRule('PodClaim', 'podUID needs podName'),
      webhook(CLAIMS),
      inCore(
        'reconcile/podclaim/claim-writes.ts',
        ['bindingWrite'],
        'every binding change is one status CAS',
      ),
    ],
  },
  {
    id: 'pod-uid-record',
    statement:
      "a claim holds only the pod it bound: the bind (and a migration's start) records the pod's UID in `status.podUID`, in the write that sets `podName` (an earlier release's claims: `claimkit.dev/pod-uid`, moved to status on upgrade); a pod deleted and created again under that name (`kubectl replace --force`, a person's delete + create) is not its pod, whatever its labels say; only the controller writes it",
    places: [
      inCore('reconcile/podclaim/claim-writes.ts', ['bindingTo'], 'the bind write records the pod'),
      policyRule(WRITERS, 'status.podUID: is written only by the claimkit controller'),
      policyRule(
        WRITERS,
        'metadata.annotations[claimkit.dev/pod-uid]: is set only by the claimkit controller; anyone may remove it',
      ),
      webhook(CLAIMS),
      controller(
        'reconcile/podclaim/hold.ts',
        ['isReplacement', 'was replaced'],
        'the claim goes Lost (`Lost` Event "was replaced"), `lostPolicy` decides whether it binds again; claims bound before the record existed are judged by name as before',
      ),
    ],
  },
  {
    id: 'binding-upgrade',
    statement:
      'a claim an earlier release stored (binding in `spec`, pod UID in `claimkit.dev/pod-uid`) keeps its pod across the upgrade: every reader takes the binding from status, else from spec; the controller moves it (a status CAS first, then spec and the annotation cleared) before it decides anything else for the claim',
    places: [
      inCore('api/claim-binding.ts', ['bindingOf', 'legacyBinding'], 'status, else the legacy spec'),
      inCore('reconcile/podclaim/legacy-binding.ts', ['moveLegacyBinding'], 'two writes, once per claim'),
      controller('reconcile/podclaim/decide.ts', ['moveBindingToStatus'], 'the first check after finalize'),
    ],
  },
  {
    id: 'pod-metadata-reserved',
    statement:
      "a claim's `podMetadata` sets no `claimkit.dev/` label or annotation and none of the disruption hints the controller owns; `lostPolicy` is `Rebind` or `Fail` (claim and set template)",
    places: [
      inCore('pool/pod-metadata.ts', ['isReservedPodMetadataKey'], 'the bind write skips such keys anyway'),
      ...(['PodClaim', 'PodClaimSet'] as const).flatMap((kind) => [
        crdRule(kind, 'podMetadata may not set claimkit.dev/ labels'),
        crdRule(kind, 'podMetadata may not set claimkit.dev/ annotations'),
        crdRule(kind, RESERVED_HINTS),
      ]),
      webhook(CLAIMS),
      webhook(SETS),
    ],
  },
  {
    id: 'P2',
    invariant: 'P2',
    statement:
      'a claim is never `Bound` to a pod that is gone (deleted, another UID, or finished: Succeeded/Failed): it becomes `Lost`, clears `podName` and `nodeName`, and binds again when an Idle pod exists',
    places: [
      safetyRule('judgeReferencedPod'),
      safetyRule('dropPodReference'),
      controller(
        'reconcile/podclaim/decide.ts',
        ["'Warning', 'Lost'", 'podLostCondition'],
        'Warning Event `Lost`, condition `Bound=False` (`PodLost`)',
      ),
      doctor('CK002'),
      checker('checkConvergence'),
    ],
  },
  {
    id: 'P3',
    invariant: 'P3',
    statement:
      "a deleting claim's finalizer always completes, mid-migration included: pods it owns are released; a pod another claim references keeps that claim, only our own label is removed",
    places: [safetyRule('finalize'), doctor('CK001'), checker('checkConvergence')],
  },
  {
    id: 'P4',
    invariant: 'P4',
    statement:
      'scale-in never deletes a migrating claim; it prefers Pending, then Lost, then the newest Bound',
    places: [
      safetyRule('chooseScaleIn'),
      controller(
        'reconcile/podclaimset/decide.ts',
        ["'ScaleInBlocked'"],
        'Warning Event `ScaleInBlocked` while the claims to remove are migrating',
      ),
      doctor('CK009'),
      checker('InvariantTracker'),
    ],
  },
  {
    id: 'P6',
    invariant: 'P6',
    statement: 'pod events reach claims through the recorded `podName`/`sourcePod`, not only through labels',
    places: [
      inCore(
        'loop/map-event.ts',
        ['mapEvent'],
        'a pod event goes to every claim that references the pod, deleting ones included',
      ),
      inCore('pool/claim-index.ts', ['ClaimIndex'], 'the references by `podName`/`sourcePod`'),
      checker('checkConvergence', 'no checker reports P6 itself: a missed event shows as P2 or P3'),
    ],
  },
  {
    id: 'P7.self-migration',
    invariant: 'P7',
    statement: '`sourcePod != podName`',
    places: [
      crdRule('PodClaim', 'sourcePod must differ from podName'),
      webhook(CLAIMS),
      controller(
        'reconcile/podclaim/migration.ts',
        ["'SelfMigrationRepaired'"],
        'clears `sourcePod` (never releases the pod), Warning Event `SelfMigrationRepaired`',
      ),
      doctor('CK012', 'at once'),
      checker('checkSelfMigrations'),
    ],
  },
  {
    id: 'P7',
    invariant: 'P7',
    statement:
      'a label naming a deleting, missing or non-referencing claim never takes a pod from the claim whose spec references it; no Bound/Draining pod is left that no live claim references',
    places: [
      safetyRule('judgeReferencedPod'),
      controller(
        'reconcile/podclaim/foreign-label.ts',
        ["'ForeignLabelRemoved'"],
        'the referencing claim drops the foreign label and keeps its pod (Warning Event `ForeignLabelRemoved`)',
      ),
      controller(
        'reconcile/podpool/decide.ts',
        ["'ResidueReleased'"],
        'the pool releases a pod nobody holds after a live read (`ResidueReleased`)',
      ),
      doctor('CK011'),
      doctor('CK012'),
      checker('checkNoLeakedPods'),
      checker('InvariantTracker', 'a claim gives up a pod no other live claim references'),
    ],
  },
  {
    id: 'migration-completes',
    statement:
      'a migration (annotation `claimkit.dev/migrate`) completes: the target is bound, the source drained and released, `sourcePod` and the annotation cleared; every step resumes after a crash',
    places: [
      inCore(
        'reconcile/podclaim/migration.ts',
        ['ANNOTATION_MIGRATE'],
        'each step is decided from what the claim and the pods record',
      ),
      controller(
        'reconcile/podclaim/decide.ts',
        ["'MigrationPending'"],
        'Warning Event `MigrationPending` while there is no target to bind',
      ),
      doctor('CK008'),
    ],
  },
  {
    id: 'L1',
    invariant: 'L1',
    statement: 'a `lostPolicy: Fail` claim never binds again by itself',
    places: [
      safetyRule('isLostForGood'),
      controller(
        'reconcile/podclaim/waiting.ts',
        ["'LostPolicyFail'"],
        'the claim stays Lost, reason `LostPolicyFail`',
      ),
      checker('InvariantTracker'),
    ],
  },
];
