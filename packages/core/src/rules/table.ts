// The markdown table of the rules index, as README.md shows it under "Where each rule is enforced"
// (tools/manifests writes it there; its test fails when README's copy differs). One row a rule, one
// column a layer of DESIGN.md's defence in depth, and a last column for the invariant checkers.
import { CHECKS } from '../doctor/checks.ts';
import { RULES } from './index.ts';
import type { Place, Rule } from './places.ts';

type At<K extends Place['at']> = Extract<Place, { at: K }>;
const placesAt = <K extends Place['at']>(r: Rule, at: K): At<K>[] =>
  r.places.filter((p): p is At<K> => p.at === at);
const unique = (xs: string[]): string[] => [...new Set(xs)];
const code = (s: string) => `\`${s}\``;
const withNote = (s: string, note: string | undefined) => (note ? `${s} (${note})` : s);

function coreCell(r: Rule): string {
  const safety = placesAt(r, 'safety-rule').map((p) => code(p.rule));
  const parts = safety.length > 0 ? [`safety rule${safety.length > 1 ? 's' : ''} ${safety.join(', ')}`] : [];
  for (const p of placesAt(r, 'core')) parts.push(`${p.note} (${code(p.file)})`);
  return parts.join('; ');
}

function crdCell(r: Rule): string {
  const kinds = unique(placesAt(r, 'crd').map((p) => p.kind));
  return kinds.length > 0 ? `✔ ${kinds.join(', ')}` : '';
}

function policyCell(r: Rule): string {
  const names = unique(placesAt(r, 'policy').map((p) => code(p.policy)));
  return names.length > 0 ? `✔ ${names.join(', ')}` : '';
}

function webhookCell(r: Rule): string {
  const paths = unique(
    placesAt(r, 'webhook').map((p) => (p.note ? `${code(p.path)} ${p.note}` : code(p.path))),
  );
  return paths.length > 0 ? `✔ ${paths.join(', ')}` : '';
}

function detectionCell(r: Rule): string {
  const parts: string[] = [];
  const controller = placesAt(r, 'controller').map((p) => p.note);
  if (controller.length > 0) parts.push(`controller: ${controller.join('; ')}`);
  const doctor = placesAt(r, 'doctor').map((p) =>
    withNote(code(CHECKS[p.code].name), p.note ? `${p.code}, ${p.note}` : p.code),
  );
  if (doctor.length > 0) parts.push(`doctor ${doctor.join(', ')}`);
  return parts.length > 0 ? parts.join('; ') : '—';
}

function checksCell(r: Rule): string {
  const checks = placesAt(r, 'check').map((p) => withNote(code(p.checker), p.note));
  return checks.length > 0 ? checks.join(', ') : '—';
}

const COLUMNS: { title: string; cell: (r: Rule) => string }[] = [
  { title: 'ids', cell: (r) => code(r.id) },
  { title: 'rule', cell: (r) => r.statement },
  { title: 'core (every writer that uses it)', cell: coreCell },
  { title: 'CRD CEL (`crds/`)', cell: crdCell },
  { title: 'policies (`policies/`)', cell: policyCell },
  { title: 'webhook (`webhook/`)', cell: webhookCell },
  { title: 'detection (controller, `claimctl doctor`)', cell: detectionCell },
  { title: 'invariant checks (`invariants/`: tests, simulator, e2e)', cell: checksCell },
];

/** A table cell: no line break, and a `|` that does not end the cell. */
const cell = (s: string) => s.replace(/\n/g, ' ').replace(/\|/g, '\\|');
const row = (cells: string[]) => `| ${cells.map(cell).join(' | ')} |`;

/** The table, ending with a newline. */
export function renderRulesTable(rules: readonly Rule[] = RULES): string {
  const lines = [
    row(COLUMNS.map((c) => c.title)),
    `| ${COLUMNS.map(() => '---').join(' | ')} |`,
    ...rules.map((r) => row(COLUMNS.map((c) => c.cell(r)))),
  ];
  return `${lines.join('\n')}\n`;
}
