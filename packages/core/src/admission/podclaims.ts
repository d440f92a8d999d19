// /validate/podclaims (and podclaims/status) — invariant P1 on every writer (DESIGN.md "PodClaim"):
// poolName is immutable, sourcePod != podName, podMetadata sets no claimkit.dev/ keys or disruption
// hints, lostPolicy is Rebind or Fail, only the controller writes the binding (status.podName,
// nodeName, podUID, sourcePod; and what an earlier release's claims keep of it in spec and the
// claimkit.dev/pod-uid record, which anyone may remove and nobody sets again), and a pod already
// referenced by another claim (podName or sourcePod, per the watched claim index) cannot be taken.

import type { AdmissionRequest, RuleContext, Verdict, Violation } from '../api/admission-request.ts';
import { isController, verdict } from '../api/admission-request.ts';
import { ANNOTATION_POD_UID } from '../api/constants.ts';
import { claimSpecViolations } from './claim-spec.ts';
import { field, nonEmpty, obj, str } from './read.ts';

/** Where a request writes a claim's binding: status, or the legacy spec fields (removal only). */
const BINDING_FIELDS = {
  spec: ['podName', 'nodeName', 'sourcePod'],
  status: ['podName', 'nodeName', 'podUID', 'sourcePod'],
} as const;

export function validatePodClaim(input: AdmissionRequest, ctx: RuleContext): Verdict {
  if (input.operation !== 'CREATE' && input.operation !== 'UPDATE') return verdict([]);
  const v: Violation[] = [];
  const warnings: string[] = [];
  const spec = field(input.object, 'spec');
  if (obj(spec) === undefined) return verdict([{ field: 'spec', message: 'a PodClaim needs a spec object' }]);
  const part = input.subResource === 'status' ? 'status' : 'spec';
  const written = field(input.object, part);
  const before = input.operation === 'UPDATE' ? field(input.oldObject, part) : undefined;

  for (const f of BINDING_FIELDS[part]) {
    const raw = field(written, f);
    if (raw !== undefined && raw !== null && str(raw) === undefined) {
      v.push({ field: `${part}.${f}`, message: 'must be a string' });
    }
  }
  if (part === 'spec') {
    const oldSpec = before;
    const raw = field(spec, 'poolName');
    if (raw !== undefined && raw !== null && str(raw) === undefined) {
      v.push({ field: 'spec.poolName', message: 'must be a string' });
    }
    const poolName = nonEmpty(field(spec, 'poolName'));
    if (poolName === undefined) v.push({ field: 'spec.poolName', message: 'is required' });
    if (input.operation === 'UPDATE') {
      const oldPool = nonEmpty(field(oldSpec, 'poolName'));
      if (oldPool !== undefined && poolName !== oldPool) {
        v.push({
          field: 'spec.poolName',
          message: `is immutable: ${JSON.stringify(oldPool)} -> ${JSON.stringify(poolName ?? '')}`,
        });
      }
    }
    v.push(...claimSpecViolations(spec, 'spec'));
    // An earlier release's binding fields are kept or removed, never set (the CRD's CEL says so too).
    for (const f of BINDING_FIELDS.spec) {
      const after = nonEmpty(field(spec, f));
      if (after !== undefined && after !== nonEmpty(field(oldSpec, f))) {
        v.push({
          field: `spec.${f}`,
          message: 'is no longer written: the binding is in status (it may only be removed)',
        });
      }
    }
  }

  const podName = nonEmpty(field(written, 'podName'));
  const sourcePod = nonEmpty(field(written, 'sourcePod'));
  if (podName !== undefined && podName === sourcePod) {
    v.push({ field: `${part}.sourcePod`, message: `must differ from ${part}.podName (${podName})` });
  }

  const controller = isController(input.userInfo, ctx.controller);
  const changed: string[] = [];
  for (const f of BINDING_FIELDS[part]) {
    if ((nonEmpty(field(before, f)) ?? '') !== (nonEmpty(field(written, f)) ?? '')) changed.push(f);
  }
  if (!controller) {
    const who = input.userInfo.username ?? '<unknown>';
    for (const f of changed) {
      v.push({
        field: `${part}.${f}`,
        message: `is written only by the claimkit controller, not by ${JSON.stringify(who)}`,
      });
    }
    // The record of the pod the claim bound (a replaced pod is told apart by it): anyone may remove it.
    const annotationOf = (o: unknown) => nonEmpty(field(o, 'metadata', 'annotations', ANNOTATION_POD_UID));
    const newRecord = annotationOf(input.object);
    if (part === 'spec' && newRecord !== undefined && newRecord !== annotationOf(input.oldObject)) {
      v.push({
        field: `metadata.annotations[${ANNOTATION_POD_UID}]`,
        message: `is set only by the claimkit controller, not by ${JSON.stringify(who)}; anyone may remove it`,
      });
    }
  }

  // P1: a pod is referenced (podName or sourcePod) by at most one claim.
  const namespace = nonEmpty(field(input.object, 'metadata', 'namespace')) ?? input.namespace ?? '';
  const self = nonEmpty(field(input.object, 'metadata', 'name')) ?? input.name ?? '';
  const toCheck: [string, string][] = [];
  if (changed.includes('podName') && podName !== undefined) toCheck.push(['podName', podName]);
  if (changed.includes('sourcePod') && sourcePod !== undefined) toCheck.push(['sourcePod', sourcePod]);
  if (toCheck.length > 0) {
    if (!ctx.index.enabled) {
      warnings.push('the claim index is disabled: pod references were not checked against other claims');
    } else if (!ctx.index.synced()) {
      v.push({
        field: `${part}.${toCheck[0]![0]}`,
        message: 'cannot check pod references yet: the claim index has not synced; retry',
      });
    } else {
      for (const [f, pod] of toCheck) {
        const others = ctx.index.claimsReferencing(namespace, pod).filter((r) => r.name !== self);
        if (others.length > 0) {
          v.push({
            field: `${part}.${f}`,
            message: `pod ${JSON.stringify(pod)} is already referenced by claim ${others
              .map((r) => JSON.stringify(r.name))
              .join(', ')}`,
          });
        }
      }
    }
  }
  return verdict(v, warnings);
}
