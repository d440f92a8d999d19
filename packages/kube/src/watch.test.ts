// The watch stream decoder on its own: how the API server's bytes become frames, whatever way the
// network cuts them. (client.test.ts drives whole watches over HTTP.)
import { describe, expect, it } from 'vitest';
import { type WatchFrame, WatchStreamDecoder } from './watch.ts';

const bytes = (s: string) => new TextEncoder().encode(s);
const line = (o: unknown) => `${JSON.stringify(o)}\n`;
const cm = (name: string, rv: string) => ({
  metadata: { name, namespace: 'ns', resourceVersion: rv },
  data: {},
});

/** Feeds `text` to a decoder cut at every `size` bytes. */
function decodeInPieces(text: string, size: number): WatchFrame[] {
  const all = bytes(text);
  const d = new WatchStreamDecoder();
  const out: WatchFrame[] = [];
  for (let i = 0; i < all.length; i += size) out.push(...d.push(all.subarray(i, i + size)));
  return [...out, ...d.end()];
}

describe('WatchStreamDecoder', () => {
  const stream =
    line({ type: 'ADDED', object: cm('a', '1') }) +
    '\n  \n' + // blank lines between events
    line({ type: 'MODIFIED', object: { ...cm('a', '2'), data: { text: 'grüße, 世界' } } }) +
    'not json at all\n' +
    line({ type: 'BOOKMARK', object: { metadata: { resourceVersion: '7' } } }) +
    line({ type: 'BOOKMARK', object: { metadata: {} } }) + // no version: nothing to resume from
    line({ type: 'SOMETHING_NEW', object: {} }) +
    line({ type: 'DELETED', object: cm('a', '8') }) +
    line({ type: 'ERROR', object: { kind: 'Status', code: 410, reason: 'Expired', message: 'too old' } });

  const want: WatchFrame[] = [
    { type: 'ADDED', object: cm('a', '1') },
    { type: 'MODIFIED', object: { ...cm('a', '2'), data: { text: 'grüße, 世界' } } },
    { type: 'BOOKMARK', resourceVersion: '7' },
    { type: 'DELETED', object: cm('a', '8') },
    { type: 'ERROR', status: { kind: 'Status', code: 410, reason: 'Expired', message: 'too old' } },
  ];

  it('decodes events, bookmarks and errors; skips blank, garbled and unknown lines', () => {
    expect(decodeInPieces(stream, 1 << 20)).toEqual(want);
  });

  it('gives the same frames however the bytes are cut (mid-line, mid-character)', () => {
    for (const size of [1, 2, 3, 5, 13, 64]) expect(decodeInPieces(stream, size)).toEqual(want);
  });

  it('a last line without its newline still counts when the stream ends; a half line does not', () => {
    const d = new WatchStreamDecoder();
    expect(d.push(bytes(JSON.stringify({ type: 'ADDED', object: cm('b', '3') })))).toEqual([]);
    expect(d.end()).toEqual([{ type: 'ADDED', object: cm('b', '3') }]);
    const cut = new WatchStreamDecoder();
    cut.push(bytes('{"type":"ADDED","obj'));
    expect(cut.end()).toEqual([]);
  });
});
