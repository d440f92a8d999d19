// Label selectors in specs (PodClaimSet, Capture): a usable shape, and never the empty selector.

import type { Violation } from '../api/admission-request.ts';
import type { LabelSelector } from '../api/meta.ts';
import { field, nonEmpty, obj } from './read.ts';

const OPERATORS = ['In', 'NotIn', 'Exists', 'DoesNotExist'];

/**
 * Checks a label selector's shape and that it selects something (an empty selector matches every
 * `what` in the namespace); returns it when usable.
 */
export function checkSelector(
  raw: unknown,
  path: string,
  v: Violation[],
  what: string,
): LabelSelector | undefined {
  const sel = obj(raw);
  if (sel === undefined) {
    v.push({ field: path, message: 'is required' });
    return undefined;
  }
  const out: LabelSelector = {};
  const before = v.length;
  const ml = sel.matchLabels;
  if (ml !== undefined && ml !== null) {
    const m = obj(ml);
    if (m === undefined || Object.values(m).some((x) => typeof x !== 'string')) {
      v.push({ field: `${path}.matchLabels`, message: 'must map label keys to string values' });
    } else out.matchLabels = m as Record<string, string>;
  }
  const me = sel.matchExpressions;
  if (me !== undefined && me !== null) {
    if (!Array.isArray(me)) v.push({ field: `${path}.matchExpressions`, message: 'must be a list' });
    else {
      out.matchExpressions = [];
      me.forEach((r, i) => {
        const p = `${path}.matchExpressions[${i}]`;
        const key = nonEmpty(field(r, 'key'));
        const op = field(r, 'operator');
        const values = field(r, 'values');
        if (key === undefined) v.push({ field: `${p}.key`, message: 'is required' });
        if (typeof op !== 'string' || !OPERATORS.includes(op)) {
          v.push({ field: `${p}.operator`, message: `must be one of ${OPERATORS.join('|')}` });
        }
        const vals = Array.isArray(values) && values.every((x) => typeof x === 'string') ? values : undefined;
        if (values !== undefined && values !== null && vals === undefined) {
          v.push({ field: `${p}.values`, message: 'must be a list of strings' });
        }
        if ((op === 'In' || op === 'NotIn') && (vals === undefined || vals.length === 0)) {
          v.push({ field: `${p}.values`, message: `must be non-empty for ${op}` });
        }
        if ((op === 'Exists' || op === 'DoesNotExist') && vals !== undefined && vals.length > 0) {
          v.push({ field: `${p}.values`, message: `must be empty for ${op}` });
        }
        if (key !== undefined && typeof op === 'string' && OPERATORS.includes(op)) {
          out.matchExpressions!.push({
            key,
            operator: op as 'In' | 'NotIn' | 'Exists' | 'DoesNotExist',
            values: vals ?? [],
          });
        }
      });
    }
  }
  if (v.length > before) return undefined;
  if (Object.keys(out.matchLabels ?? {}).length === 0 && (out.matchExpressions ?? []).length === 0) {
    v.push({ field: path, message: `an empty selector would select every ${what} in the namespace` });
    return undefined;
  }
  return out;
}
