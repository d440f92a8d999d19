import { describe, expect, it } from 'vitest';
import { CelError, compileCel, evaluateCel, evaluateCelBoolean } from './program.ts';
import { CelTyped, fromCelValue, toCelValue } from './values.ts';

const value = (expr: string, bindings: Record<string, unknown> = {}) => {
  const out = evaluateCel(expr, bindings);
  if (!out.ok) throw out.error;
  return out.value;
};

const failure = (expr: string, bindings: Record<string, unknown> = {}): CelError => {
  const out = evaluateCel(expr, bindings);
  if (out.ok) throw new Error(`${expr} evaluated to ${JSON.stringify(out.value)}`);
  return out.error;
};

describe('integers from JSON are CEL ints', () => {
  it('compare, add and divide as ints', () => {
    const b = { self: { epoch: 5 }, oldSelf: { epoch: 4 } };
    expect(value('self.epoch >= oldSelf.epoch', b)).toBe(true);
    expect(value('self.epoch < oldSelf.epoch', b)).toBe(false);
    expect(value('self.epoch + 1 == 6', b)).toBe(true);
    expect(value('self.epoch / 2', b)).toBe(2); // integer division, as on the server
    expect(value('self.epoch - oldSelf.epoch', b)).toBe(1);
    expect(value('type(self.epoch) == int', b)).toBe(true);
  });

  it('compare with double and uint literals across types', () => {
    expect(value('self.n > 4.5 && self.n < 5.5 && self.n == 5u', { self: { n: 5 } })).toBe(true);
    // Arithmetic across types has no overload in CEL: it is an error, never a silent coercion.
    expect(failure('self.n + 0.5', { self: { n: 5 } }).stage).toBe('evaluate');
  });

  it('a schema `number` is a double even when integral; an unknown number is an int only when integral', () => {
    expect(value('self + 0.5 == 2.5', { self: new CelTyped(toCelValue(2, { type: 'number' })) })).toBe(true);
    expect(value('type(self) == double', { self: 1.5 })).toBe(true);
    expect(value('type(self) == int', { self: 2 })).toBe(true);
  });

  it('overflow is an error, as in CEL', () => {
    expect(failure('self + 1', { self: 2n ** 63n - 1n }).message).toMatch(/overflow/);
  });
});

describe('maps, lists and strings', () => {
  const object = {
    metadata: { name: 'web-1', labels: { app: 'web', 'claimkit.dev/pool': 'web' } },
    spec: { containers: [{ name: 'a' }, { name: 'b' }] },
  };

  it('has(), `in`, indexing and macros', () => {
    expect(value('has(object.metadata.labels) && !has(object.metadata.annotations)', { object })).toBe(true);
    expect(value("'app' in object.metadata.labels && !('x' in object.metadata.labels)", { object })).toBe(
      true,
    );
    expect(value("object.metadata.labels['claimkit.dev/pool'] == 'web'", { object })).toBe(true);
    expect(value("object.spec.containers.exists(c, c.name == 'b')", { object })).toBe(true);
    expect(value('object.spec.containers.all(c, size(c.name) == 1)', { object })).toBe(true);
    expect(value('object.spec.containers.map(c, c.name)', { object })).toEqual(['a', 'b']);
    expect(value("object.spec.containers.filter(c, c.name != 'a').size()", { object })).toBe(1);
    expect(value("object.metadata.labels.exists_one(k, k.startsWith('claimkit.dev/'))", { object })).toBe(
      true,
    );
    expect(value("'b' in ['a', 'b']")).toBe(true);
  });

  it('a missing key is an evaluation error (guard with has)', () => {
    const e = failure("object.metadata.labels['missing']", { object });
    expect([e.name, e.stage]).toEqual(['CelError', 'evaluate']);
    expect(failure('object.metadata.annotations.x', { object }).stage).toBe('evaluate');
  });

  it('the string functions Kubernetes enables', () => {
    expect(
      value(
        "self.startsWith('web') && self.endsWith('-1') && self.contains('b-') && self.matches('^[a-z]+-[0-9]$')",
        { self: 'web-1' },
      ),
    ).toBe(true);
    expect(value("self.lowerAscii() + '/' + self.upperAscii()", { self: 'Ab' })).toBe('ab/AB');
    expect(value("self.split('/')", { self: 'claimkit.dev/pool' })).toEqual(['claimkit.dev', 'pool']);
    expect(
      value("self.indexOf('/') == 12 && self.substring(13) == 'pool'", { self: 'claimkit.dev/pool' }),
    ).toBe(true);
    expect(value("self.replace('-', '.') == 'a.b' && ' x '.trim() == 'x'", { self: 'a-b' })).toBe(true);
    expect(value("['a', 'b'].join(',')")).toBe('a,b');
    expect(value('string(self) + "x"', { self: 5 })).toBe('5x');
  });
});

describe('admission-policy style bindings', () => {
  it('object, oldObject (null on create), request, params and variables are any names', () => {
    const bindings = {
      object: { metadata: { labels: { 'claimkit.dev/claimed-by': 'b' } } },
      oldObject: null,
      request: { operation: 'CREATE', userInfo: { username: 'system:serviceaccount:claimkit:controller' } },
      params: { allowed: ['system:serviceaccount:claimkit:controller'] },
      variables: { claimedBy: 'b' },
    };
    expect(
      value(
        "oldObject == null && request.operation == 'CREATE' && request.userInfo.username in params.allowed && variables.claimedBy == object.metadata.labels['claimkit.dev/claimed-by']",
        bindings,
      ),
    ).toBe(true);
    expect(compileCel('variables.a && object.x == oldObject.x').variables).toEqual(
      new Set(['variables', 'object', 'oldObject']),
    );
  });

  it('a name left unbound is an evaluation error', () => {
    expect(failure('oldObject.x', { object: {} }).stage).toBe('evaluate');
  });

  it('comprehension variables are not free variables; qualified functions are not variables', () => {
    expect(compileCel('self.all(x, x > 0) && self.exists(y, y == z)').variables).toEqual(
      new Set(['self', 'z']),
    );
    expect(compileCel('strings.quote(self)').variables).toEqual(new Set(['self']));
    expect(value('strings.quote(self)', { self: 'a"b' })).toBe('"a\\"b"');
  });
});

describe('timestamps', () => {
  it('date-time strings under their schema are timestamps, and come back as RFC 3339', () => {
    const schema = { type: 'string' as const, format: 'date-time' as const };
    const t = (s: string) => new CelTyped(toCelValue(s, schema));
    expect(
      value('self < other', { self: t('2026-01-01T00:00:00Z'), other: t('2026-01-01T00:00:00.5Z') }),
    ).toBe(true);
    expect(value("self == timestamp('2026-01-01T01:00:00Z')", { self: t('2026-01-01T02:00:00+01:00') })).toBe(
      true,
    );
    expect(value('self', { self: t('2026-01-01T00:00:00.25Z') })).toBe('2026-01-01T00:00:00.25Z');
    // Without the schema a date is a plain string.
    expect(value('type(self) == string', { self: '2026-01-01T00:00:00Z' })).toBe(true);
  });
});

describe('results and errors', () => {
  it('results come back as plain JSON', () => {
    expect(value("{'a': [1, 2.5, 'x', true, null], 'b': {'c': 3u}}")).toEqual({
      a: [1, 2.5, 'x', true, null],
      b: { c: 3 },
    });
    expect(fromCelValue(2n ** 60n)).toBe(2n ** 60n); // beyond 2^53 an int stays exact
  });

  it('a syntax error or a function the evaluator lacks is a compile error', () => {
    expect(() => compileCel('self.epoch >=')).toThrow(CelError);
    const syntax = failure('self.epoch >=', { self: {} });
    expect([syntax.stage, syntax.expression]).toEqual(['compile', 'self.epoch >=']);
    // Kubernetes libraries @bufbuild/cel does not have: refused, not silently false.
    expect(failure('self.isSorted()', { self: [1] }).message).toMatch(/not supported.*isSorted/);
    expect(failure("self.find('a')", { self: 'a' }).message).toMatch(/not supported.*find/);
    expect(failure('self.?x.orValue(1)', { self: {} }).stage).toBe('compile');
    expect(failure('   ', {}).stage).toBe('compile');
  });

  it('compiles an expression once', () => {
    expect(compileCel('self == 1')).toBe(compileCel('self == 1'));
  });

  it('evaluateCelBoolean: a bool, or an error for anything else', () => {
    expect(evaluateCelBoolean('self > 1', { self: 2 })).toBe(true);
    expect(evaluateCelBoolean('self > 1', { self: 0 })).toBe(false);
    const e = evaluateCelBoolean('self + 1', { self: 1 });
    expect(e).toBeInstanceOf(CelError);
    expect((e as CelError).message).toMatch(/expected a bool/);
  });
});
