// A builder's manifest file (objects plus a comment, core's ManifestFile) as the text deploy/ holds.
import { type ManifestFile, toYaml } from '@claimkit/core';

/** The file's text: `header` (who generates it), the comment wrapped as `#` lines, the objects. */
export function renderManifestText(f: ManifestFile, header: string): string {
  const comment = wrapWords(f.comment)
    .map((l) => `# ${l}\n`)
    .join('');
  return `${header}${comment}${f.objects.map((o) => toYaml(o)).join('---\n')}`;
}

/** Greedy word wrap to `width` columns (a word longer than the width keeps its own line). */
export function wrapWords(s: string, width = 98): string[] {
  const out: string[] = [];
  let line = '';
  for (const w of s.split(' ')) {
    if (line && line.length + w.length + 1 > width) {
      out.push(line);
      line = w;
    } else line = line ? `${line} ${w}` : w;
  }
  if (line) out.push(line);
  return out;
}
