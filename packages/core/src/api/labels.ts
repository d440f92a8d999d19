// Label selectors: matching and the string syntax kubectl and the API server accept.
import type { LabelSelector, LabelSelectorRequirement } from './meta.ts';

export function matchesSelector(
  labels: Record<string, string> | undefined,
  sel: LabelSelector | string,
): boolean {
  const selector = typeof sel === 'string' ? parseSelector(sel) : sel;
  const l = labels ?? {};
  for (const [k, v] of Object.entries(selector.matchLabels ?? {})) {
    if (l[k] !== v) return false;
  }
  for (const r of selector.matchExpressions ?? []) {
    if (!matchesRequirement(l, r)) return false;
  }
  return true;
}

function matchesRequirement(l: Record<string, string>, r: LabelSelectorRequirement): boolean {
  const has = Object.hasOwn(l, r.key);
  switch (r.operator) {
    case 'In':
      return has && (r.values ?? []).includes(l[r.key]!);
    case 'NotIn':
      return !has || !(r.values ?? []).includes(l[r.key]!);
    case 'Exists':
      return has;
    case 'DoesNotExist':
      return !has;
  }
}

/** Parses `a=b,c!=d,e in (f,g),h notin (i),j,!k`; throws on bad syntax with a clear message. */
export function parseSelector(s: string): LabelSelector {
  const matchLabels: Record<string, string> = {};
  const matchExpressions: LabelSelectorRequirement[] = [];
  const parts = splitTopLevel(s.trim());
  for (const raw of parts) {
    const p = raw.trim();
    if (p === '') continue;
    const setBased = p.match(/^([\w./-]+)\s+(in|notin)\s+\(([^)]*)\)$/);
    const notEqual = p.match(/^([\w./-]+)\s*!=\s*([\w./-]*)$/);
    const equal = p.match(/^([\w./-]+)\s*==?\s*([\w./-]*)$/);
    const absent = p.match(/^!([\w./-]+)$/);
    const present = p.match(/^([\w./-]+)$/);
    if (setBased) {
      const values = setBased[3]!
        .split(',')
        .map((v) => v.trim())
        .filter((v) => v !== '');
      matchExpressions.push({ key: setBased[1]!, operator: setBased[2] === 'in' ? 'In' : 'NotIn', values });
    } else if (notEqual) {
      matchExpressions.push({ key: notEqual[1]!, operator: 'NotIn', values: [notEqual[2]!] });
    } else if (equal) {
      matchLabels[equal[1]!] = equal[2]!;
    } else if (absent) {
      matchExpressions.push({ key: absent[1]!, operator: 'DoesNotExist' });
    } else if (present) {
      matchExpressions.push({ key: present[1]!, operator: 'Exists' });
    } else {
      throw new Error(`invalid label selector ${JSON.stringify(s)}: cannot parse ${JSON.stringify(p)}`);
    }
  }
  const out: LabelSelector = {};
  if (Object.keys(matchLabels).length > 0) out.matchLabels = matchLabels;
  if (matchExpressions.length > 0) out.matchExpressions = matchExpressions;
  return out;
}

function splitTopLevel(s: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let cur = '';
  for (const ch of s) {
    if (ch === '(') depth++;
    if (ch === ')') depth--;
    if (ch === ',' && depth === 0) {
      out.push(cur);
      cur = '';
    } else cur += ch;
  }
  out.push(cur);
  return out;
}

export function formatSelector(sel: LabelSelector): string {
  const parts: string[] = [];
  for (const [k, v] of Object.entries(sel.matchLabels ?? {}).sort(([a], [b]) => a.localeCompare(b))) {
    parts.push(`${k}=${v}`);
  }
  for (const r of sel.matchExpressions ?? []) {
    const vals = (r.values ?? []).join(',');
    if (r.operator === 'In') parts.push(`${r.key} in (${vals})`);
    else if (r.operator === 'NotIn') parts.push(`${r.key} notin (${vals})`);
    else if (r.operator === 'Exists') parts.push(r.key);
    else parts.push(`!${r.key}`);
  }
  return parts.join(',');
}
