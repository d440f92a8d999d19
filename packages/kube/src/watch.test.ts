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
function decodeInPieces(text: string, size: number, omitManagedFields = false): WatchFrame[] {
  const all = bytes(text);
  const d = new WatchStreamDecoder({ omitManagedFields });
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

  it('with omitManagedFields: the same frames without metadata.managedFields, however the bytes are cut', () => {
    const managedFields = [{ manager: 'kwok', fieldsV1: { 'f:status': { 'k:{"type":"Ready"}': {} } } }];
    const withManaged = (o: ReturnType<typeof cm>) => ({ ...o, metadata: { ...o.metadata, managedFields } });
    const text =
      line({ type: 'ADDED', object: withManaged(cm('a', '1')) }) +
      line({ type: 'BOOKMARK', object: { metadata: { resourceVersion: '7' } } }) +
      line({ type: 'DELETED', object: withManaged(cm('a', '8')) });
    const frames: WatchFrame[] = [
      { type: 'ADDED', object: cm('a', '1') },
      { type: 'BOOKMARK', resourceVersion: '7' },
      { type: 'DELETED', object: cm('a', '8') },
    ];
    for (const size of [1, 7, 64, 1 << 20]) expect(decodeInPieces(text, size, true)).toEqual(frames);
    expect(decodeInPieces(text, 64)).toEqual([
      { type: 'ADDED', object: withManaged(cm('a', '1')) },
      frames[1],
      { type: 'DELETED', object: withManaged(cm('a', '8')) },
    ]);
  });
});
