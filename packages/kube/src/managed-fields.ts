// managedFields cut out of an answer's JSON text before it is parsed. They are the API server's
// field-ownership bookkeeping (server-side apply), which nothing in claimkit reads, and the informer
// dropped them right after parsing anyway; in a pod they are a third of the bytes and most of the
// objects (one per field each manager wrote), so parsing them cost the controller about as much
// as parsing the rest of the pod, and made garbage on every watch event and write answer.
//
// Only the API server's compact form is cut: `,"managedFields":[` or `{"managedFields":[`. Those
// bytes are always an object member in valid JSON: their first quote follows `,` or `{`, so it is not
// escaped and not inside a string (a quote inside a string is written `\"`), and a string there is a
// key, never an array element (a colon follows it). The array's end is found by walking it with its
// strings skipped. Text in any other shape, or not well formed, is returned as it is: the parse then
// sees the managedFields (and the informer drops them), or fails as it would have.

const KEY = '"managedFields":[';
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const OPEN_BRACE = 0x7b;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const CLOSE_BRACE = 0x7d;

/** `text` without its `"managedFields": [...]` members (any object's, at any depth). */
export function withoutManagedFields(text: string): string {
  let at = text.indexOf(KEY);
  if (at < 0) return text;
  let out = '';
  let from = 0;
  while (at >= 0) {
    const close = endOfArray(text, at + KEY.length);
    if (close < 0) return text;
    const before = text.charCodeAt(at - 1);
    if (before === COMMA) {
      // `,"managedFields":[...]` goes; what follows (`,` or `}`) closes up on the member before.
      out += text.slice(from, at - 1);
      from = close + 1;
    } else if (before === OPEN_BRACE) {
      // The first member: it goes with the comma after it, if any.
      out += text.slice(from, at);
      from = text.charCodeAt(close + 1) === COMMA ? close + 2 : close + 1;
    }
    at = text.indexOf(KEY, close + 1);
  }
  return out + text.slice(from);
}

/** The index of the `]` closing the array whose items start at `i`, or -1 when it does not close. */
function endOfArray(s: string, i: number): number {
  let depth = 1;
  for (const n = s.length; i < n; i++) {
    const c = s.charCodeAt(i);
    if (c === QUOTE) {
      i = endOfString(s, i + 1);
      if (i < 0) return -1;
    } else if (c === OPEN_BRACKET || c === OPEN_BRACE) depth++;
    else if (c === CLOSE_BRACKET || c === CLOSE_BRACE) {
      depth--;
      if (depth === 0) return c === CLOSE_BRACKET ? i : -1;
    }
  }
  return -1;
}

/** The index of the quote closing the string whose characters start at `i`, or -1. */
function endOfString(s: string, i: number): number {
  for (;;) {
    const q = s.indexOf('"', i);
    if (q < 0) return -1;
    // Escaped when an odd number of backslashes stand before it.
    let b = q - 1;
    while (s.charCodeAt(b) === BACKSLASH) b--;
    if ((q - 1 - b) % 2 === 0) return q;
    i = q + 1;
  }
}
