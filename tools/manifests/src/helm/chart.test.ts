// The chart's captureAgent.checkpointImages, without helm: the DaemonSet template's checkpointImages
// actions are evaluated here (a small evaluator of just those: `if` on the values, `fail`, the values
// themselves), and what is left must be the template the chart makes of captureAgentManifests() for
// the same image options (captureAgentTemplate), the other values still templated. Repository empty:
// the very text of the template without image options, so helm renders what it did before the values.
// apps/e2e/src/helm/chart.test.ts renders the chart with the real helm.
import {
  type CaptureAgentImageOptions,
  captureAgentManifests,
  parseImageRepository,
} from '@claimkit/controller';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { CHART_DIR, captureAgentTemplate, chartFiles } from './chart.ts';
import { IMAGE_REPOSITORY_PATTERN, VALUES_SCHEMA, valuesYaml } from './values.ts';

const VERSION = '0.0.0-chart-test';
const DAEMONSET = `${CHART_DIR}/templates/capture-agent-daemonset.yaml`;
const IMAGES = '$checkpointImages';

interface CheckpointImages {
  repository: string;
  caConfigMap: string;
  authSecret: string;
  insecureTLS: boolean;
  plainHTTP: boolean;
}
const OFF: CheckpointImages = {
  repository: '',
  caConfigMap: '',
  authSecret: '',
  insecureTLS: false,
  plainHTTP: false,
};

const chartDaemonSet = () => {
  const f = chartFiles([], VERSION).find((x) => x.path === DAEMONSET);
  if (!f) throw new Error(`no ${DAEMONSET}`);
  return f.text;
};

/** Go's truth of a value: empty string and false are false. */
const truthy = (v: string | boolean) => v !== '' && v !== false;

/**
 * Evaluates the template's actions on `$checkpointImages` (as Helm would with these values) and
 * leaves every other action as it is. Each action sits on a line of its own with `{{-`, so a line
 * dropped is what Helm prints for it.
 */
function evalCheckpointImages(template: string, values: CheckpointImages): string {
  const value = (key: string) => {
    if (!(key in values)) throw new Error(`unknown value ${key}`);
    return values[key as keyof CheckpointImages];
  };
  const cond = (expr: string) => {
    const terms = expr.startsWith('and ') ? expr.slice(4).split(' ') : [expr];
    return terms.every((t) => {
      if (!t.startsWith(`${IMAGES}.`)) throw new Error(`cannot evaluate ${expr}`);
      return truthy(value(t.slice(IMAGES.length + 1)));
    });
  };
  // One entry per open block: whether it is ours (its lines dropped) and whether its body is kept.
  const blocks: { ours: boolean; keep: boolean }[] = [];
  const keeping = () => blocks.every((b) => b.keep);
  const out: string[] = [];
  for (const line of template.split('\n')) {
    const action = /^\s*\{\{-\s*(.*?)\s*\}\}\s*$/.exec(line)?.[1];
    const block = action && /^(if|with|range) (.*)$/.exec(action);
    if (block) {
      const ours = block[2]!.includes(IMAGES);
      if (ours && block[1] !== 'if') throw new Error(`cannot evaluate ${line}`);
      blocks.push({ ours, keep: ours ? cond(block[2]!) : true });
      if (!ours && keeping()) out.push(line);
      continue;
    }
    if (action === 'end') {
      const b = blocks.pop();
      if (!b) throw new Error('unbalanced {{- end }}');
      if (!b.ours && keeping()) out.push(line);
      continue;
    }
    if (!keeping()) continue;
    if (action?.startsWith(`${IMAGES} := `)) continue;
    const fail = action && /^fail "(.*)"$/.exec(action);
    if (fail) throw new Error(fail[1]);
    out.push(
      line.replace(/\{\{ \$checkpointImages\.(\w+)( \| quote)? \}\}/g, (_m, key: string, quote?: string) =>
        quote ? JSON.stringify(value(key)) : String(value(key)),
      ),
    );
  }
  if (blocks.length) throw new Error('unclosed block');
  const text = out.join('\n');
  if (text.includes(IMAGES)) throw new Error(`${IMAGES} left in the evaluated template`);
  return text;
}

/** The body of `{{- if .Values.captureAgent.enabled }}` … `{{- end }}` in the chart's file. */
function body(text: string): string {
  const open = '{{- if .Values.captureAgent.enabled }}\n';
  const at = text.indexOf(open);
  if (at < 0 || !text.endsWith('\n{{- end }}\n')) throw new Error('not the capture agent template');
  return `${text.slice(at + open.length, -'\n{{- end }}\n'.length)}\n`;
}

/** captureAgentTemplate of captureAgentManifests()'s DaemonSet with these image options. */
function expectedTemplate(image?: CaptureAgentImageOptions): string {
  const f = captureAgentManifests({ version: VERSION, ...(image ? { image } : {}) }).find(
    (x) => x.file === 'daemonset.yaml',
  );
  if (!f) throw new Error('no daemonset.yaml');
  return captureAgentTemplate(f, VERSION);
}

/** The YAML of a template with its other actions blanked (the same in both compared): parsed. */
function objectOf(template: string): unknown {
  return parse(
    template
      .split('\n')
      .filter((l) => !/^\s*\{\{/.test(l))
      .join('\n')
      .replace(/\{\{.*?\}\}/g, 'TEMPLATED'),
  );
}

type DaemonSet = { spec: { template: { spec: { containers: { args: string[] }[] } } } };

describe('the chart: captureAgent.checkpointImages', () => {
  const template = chartDaemonSet();

  it('repository empty (the default): the template without image options, whatever else is set', () => {
    const want = expectedTemplate();
    expect(body(evalCheckpointImages(template, OFF))).toBe(want);
    // Without a repository the other values do nothing (every flag needs --image-repository).
    const rest = { caConfigMap: 'ca', authSecret: 'creds', insecureTLS: true, plainHTTP: true };
    expect(body(evalCheckpointImages(template, { ...OFF, ...rest, insecureTLS: false }))).toBe(want);
    expect(body(evalCheckpointImages(template, { ...OFF, ...rest, caConfigMap: '' }))).toBe(want);
  });

  it('set: the DaemonSet of captureAgentManifests({image}) for the same values (args, mounts, volumes)', () => {
    const cases: CaptureAgentImageOptions[] = [
      { repository: 'registry.example.com/claimkit' },
      { repository: 'localhost:5000/a/b', caConfigMap: 'registry-ca' },
      { repository: 'registry.example.com:8443/ck', authSecret: 'regcred' },
      // Names YAML would read as a bool and a number unquoted.
      { repository: '[::1]:5000/ck', caConfigMap: 'on', authSecret: '123' },
    ];
    for (const image of cases) {
      const got = body(evalCheckpointImages(template, { ...OFF, ...image }));
      const want = expectedTemplate(image);
      expect(got).not.toBe(expectedTemplate());
      expect(objectOf(got), JSON.stringify(image)).toEqual(objectOf(want));
      // Only the names' quoting differs from the manifest's YAML.
      const unquote = (t: string) => t.replace(/(name|secretName): "([^"]*)"\n/g, '$1: $2\n');
      if (image.caConfigMap !== 'on') expect(unquote(got), JSON.stringify(image)).toBe(want);
    }
  });

  it('insecureTLS and plainHTTP add --registry-insecure-tls and --registry-plain-http after the image args', () => {
    const image = { repository: 'registry.example.com/claimkit', authSecret: 'regcred' };
    const got = objectOf(
      body(evalCheckpointImages(template, { ...OFF, ...image, insecureTLS: true, plainHTTP: true })),
    ) as DaemonSet;
    const want = objectOf(expectedTemplate(image)) as DaemonSet;
    want.spec.template.spec.containers[0]!.args.push('--registry-insecure-tls', '--registry-plain-http');
    expect(got).toEqual(want);
    const onlyPlain = objectOf(
      body(evalCheckpointImages(template, { ...OFF, ...image, plainHTTP: true })),
    ) as DaemonSet;
    expect(onlyPlain.spec.template.spec.containers[0]!.args.slice(-2)).toEqual([
      '--registry-auth-file=/etc/claimkit/registry-auth/config.json',
      '--registry-plain-http',
    ]);
  });

  it('refuses caConfigMap with insecureTLS (the agent takes only one of them)', () => {
    expect(() =>
      evalCheckpointImages(template, {
        ...OFF,
        repository: 'registry.example.com/ck',
        caConfigMap: 'ca',
        insecureTLS: true,
      }),
    ).toThrow('captureAgent.checkpointImages: caConfigMap and insecureTLS: give one of them');
  });

  it('values.yaml has every checkpointImages value, off, and the schema has the same keys', () => {
    const values = parse(
      valuesYaml({ controllerResources: {}, webhookResources: {}, captureAgentResources: {} }),
    ) as { captureAgent: { checkpointImages: CheckpointImages } };
    expect(values.captureAgent.checkpointImages).toEqual(OFF);
    const schema = VALUES_SCHEMA.properties.captureAgent.properties.checkpointImages;
    expect(Object.keys(schema.properties).sort()).toEqual(Object.keys(OFF).sort());
    expect(schema.additionalProperties).toBe(false);
  });

  it("the schema's repository pattern takes exactly what --image-repository takes, and empty", () => {
    const re = new RegExp(IMAGE_REPOSITORY_PATTERN);
    const agentTakes = (s: string) => {
      try {
        parseImageRepository(s);
        return true;
      } catch {
        return false;
      }
    };
    for (const good of [
      '',
      'localhost',
      'localhost/ck',
      'localhost:5000/a/b',
      'registry.example.com',
      'Registry.Example.COM/claimkit',
      'reg:5000/a__b/c--d/e.f_g',
      '[::1]:5000/ck',
      '[fe80::1]/x',
    ])
      expect(re.test(good), good).toBe(true);
    for (const bad of [
      'claimkit/x',
      'registry',
      'registry.example.com/UPPER',
      'registry.example.com/',
      'registry.example.com//x',
      'registry.example.com/a b',
      'registry.example.com/a"b',
      '[abc]/x',
      '-reg.example.com/x',
      'https://registry.example.com/x',
    ])
      expect(re.test(bad), bad).toBe(false);
    const piece = fc.constantFrom(
      'a',
      'Z',
      '0',
      '9',
      '-',
      '.',
      '_',
      '__',
      ':',
      ':5000',
      '/',
      '[',
      ']',
      '::1',
      'f',
      'localhost',
      'example.com',
      ' ',
      '"',
    );
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 10 }), (parts) => {
        const s = parts.join('');
        expect(re.test(s), JSON.stringify(s)).toBe(s === '' || agentTakes(s));
      }),
      { numRuns: 3000 },
    );
  });
});
