// README.md's generated part: the table under "Where each rule is enforced", rendered from core's
// index of the rules (packages/core/src/rules), between two marker lines. The rest of README is
// written by hand, so this file reads README from disk and replaces only what the markers enclose.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { renderRulesTable } from '@claimkit/core';
import { GENERATE_COMMAND, type GeneratedFile } from './generated-file.ts';

export const README_PATH = 'README.md';
export const RULES_BEGIN = `<!-- rules:begin (generated from packages/core/src/rules: change the index and run \`${GENERATE_COMMAND}\`) -->`;
export const RULES_END = '<!-- rules:end -->';

/** `text` with the lines between the `begin` and `end` marker lines replaced by `body` (newline-terminated). */
export function replaceSection(text: string, begin: string, end: string, body: string): string {
  const lines = text.split('\n');
  const at = (marker: string) => {
    const found = lines.flatMap((l, i) => (l === marker ? [i] : []));
    if (found.length !== 1)
      throw new Error(`${marker} must stand on a line of its own exactly once, found ${found.length}`);
    return found[0]!;
  };
  const from = at(begin);
  const to = at(end);
  if (to < from) throw new Error(`${end} comes before ${begin}`);
  return [...lines.slice(0, from + 1), ...body.replace(/\n$/, '').split('\n'), ...lines.slice(to)].join('\n');
}

/** README.md with its rules table as the index renders it. */
export function readmeFile(root: string): GeneratedFile {
  const text = readFileSync(join(root, README_PATH), 'utf8');
  return { path: README_PATH, text: replaceSection(text, RULES_BEGIN, RULES_END, renderRulesTable()) };
}
