// Status conditions, set the one way every reconciler and repair sets them (as cert-manager's
// pkg/api/util/conditions.go): other types stay where they are, and lastTransitionTime moves only
// when the status does.
import { type Condition, toTimestamp } from './meta.ts';

/** A condition to set: everything but lastTransitionTime, which setCondition decides. */
export type ConditionSpec = Omit<Condition, 'lastTransitionTime'>;

export function findCondition(
  conditions: readonly Condition[] | undefined,
  type: string,
): Condition | undefined {
  return (conditions ?? []).find((x) => x.type === type);
}

/** `conditions` with `want` set in place (appended when new); the input is not changed. */
export function setCondition(
  conditions: readonly Condition[] | undefined,
  want: ConditionSpec,
  now: number,
): Condition[] {
  const list = [...(conditions ?? [])];
  const i = list.findIndex((x) => x.type === want.type);
  const prev = i >= 0 ? list[i] : undefined;
  const lastTransitionTime = prev && prev.status === want.status ? prev.lastTransitionTime : toTimestamp(now);
  const next: Condition = { ...want, lastTransitionTime };
  if (i >= 0) list[i] = next;
  else list.push(next);
  return list;
}

/** True when the condition of that type already says exactly this (no write needed). */
export function hasCondition(conditions: readonly Condition[] | undefined, want: ConditionSpec): boolean {
  const cur = findCondition(conditions, want.type);
  return (
    cur !== undefined &&
    cur.status === want.status &&
    cur.reason === want.reason &&
    cur.message === want.message &&
    (want.observedGeneration === undefined || cur.observedGeneration === want.observedGeneration)
  );
}
