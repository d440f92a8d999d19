// The rules table README.md shows: one row a rule, every row as wide as the header, every rule's id
// and statement in it, and the detection and check columns saying so where there is none.
import { describe, expect, it } from 'vitest';
import { RULES } from './index.ts';
import { renderRulesTable } from './table.ts';

/** The cells of a markdown table row (`\|` is a pipe inside a cell). */
const cellsOf = (line: string) =>
  line
    .slice(2, -2)
    .split(/ (?<!\\)\| /)
    .map((c) => c.trim());

describe('renderRulesTable', () => {
  const lines = renderRulesTable().trimEnd().split('\n');

  it('has a header, its separator and one row a rule, all as wide as the header', () => {
    expect(lines).toHaveLength(RULES.length + 2);
    const width = cellsOf(lines[0]!).length;
    expect(width).toBe(8);
    for (const line of lines) expect(cellsOf(line), line).toHaveLength(width);
  });

  it("shows each rule's id and statement, in the index's order", () => {
    RULES.forEach((r, i) => {
      const [id, statement] = cellsOf(lines[i + 2]!);
      expect(id).toBe(`\`${r.id}\``);
      expect(statement).toBe(r.statement.replace(/\|/g, '\\|'));
    });
  });

  it('names doctor checks by name and code, and says — where nothing detects or checks a rule', () => {
    const row = (id: string) => cellsOf(lines[RULES.findIndex((r) => r.id === id) + 2]!);
    expect(row('C1.result')[6]).toContain('doctor `UnfencedResult` (CK013, ');
    expect(row('pool-name-immutable').slice(6)).toEqual(['—', '—']);
  });
});
