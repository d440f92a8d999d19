// README.md's rules table is the one core's index of the rules renders (drift test), and the
// marker-bounded replacement touches nothing outside the markers.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { GENERATE_COMMAND } from './generated-file.ts';
import { README_PATH, RULES_BEGIN, RULES_END, readmeFile, replaceSection } from './readme.ts';

const root = fileURLToPath(new URL('../../../', import.meta.url));

describe("README.md's rules table", () => {
  it('is the table rendered from packages/core/src/rules', () => {
    // Line by line, so that a failure shows the rows that differ.
    const onDisk = readFileSync(join(root, README_PATH), 'utf8').split('\n');
    expect(onDisk, `run: ${GENERATE_COMMAND}`).toEqual(readmeFile(root).text.split('\n'));
  });

  it('sits under "Where each rule is enforced"', () => {
    const text = readFileSync(join(root, README_PATH), 'utf8');
    const heading = text.indexOf('### Where each rule is enforced');
    expect(heading).toBeGreaterThan(0);
    expect(text.indexOf(RULES_BEGIN)).toBeGreaterThan(heading);
    expect(text.indexOf('\n## ', heading)).toBeGreaterThan(text.indexOf(RULES_END));
  });
});

describe('replaceSection', () => {
  const B = '<!-- b -->';
  const E = '<!-- e -->';

  it('replaces only the lines between the markers, and is stable', () => {
    const text = `intro\n${B}\nold 1\nold 2\n${E}\noutro\n`;
    const once = replaceSection(text, B, E, 'new\n');
    expect(once).toBe(`intro\n${B}\nnew\n${E}\noutro\n`);
    expect(replaceSection(once, B, E, 'new\n')).toBe(once);
    expect(replaceSection(`${B}\n${E}`, B, E, 'a\nb\n')).toBe(`${B}\na\nb\n${E}`);
  });

  it('refuses a missing, repeated or misordered marker', () => {
    expect(() => replaceSection(`${B}\n`, B, E, 'x')).toThrow(E);
    expect(() => replaceSection(`${B}\n${B}\n${E}\n`, B, E, 'x')).toThrow(B);
    expect(() => replaceSection(`${E}\n${B}\n`, B, E, 'x')).toThrow('comes before');
    expect(() => replaceSection(`text ${B}\n${E}\n`, B, E, 'x')).toThrow(B);
  });
});
