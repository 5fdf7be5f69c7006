/** The README's bench table is generated from tests/bench/results.json and must say what the file says. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { currentSection, END, mergeRecorded, parseRecorded, renderTable, replaceSection, START, type Recorded, type RecordedMeasurement } from '../bench/readme-table';

const ROOT = join(__dirname, '..', '..');

const row = (bench: string, name: string, extra: Partial<RecordedMeasurement> = {}): RecordedMeasurement => ({
  bench, name, value: 1.5, unit: '×', target: '≤ 2×', met: true, at: '2026-11-24T04:00:00.000Z', node: 'v20.20.2', commit: 'abc1234', ...extra,
});

describe('the README bench table', () => {
  it('is the rendering of the committed results.json, every recorded figure in it', () => {
    const recorded = parseRecorded(readFileSync(join(ROOT, 'tests', 'bench', 'results.json'), 'utf8'));
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    expect(recorded.results.length).toBeGreaterThan(0);
    expect(currentSection(readme)).toBe(renderTable(recorded));
    // Every figure names what it is compared with, where it has a floor.
    for (const m of recorded.results.filter((r) => /÷/.test(r.name))) expect(m.floor).toEqual(expect.any(String));
  });

  it('renders each figure with its target, verdict, floor and run, and escapes table syntax', () => {
    const table = renderTable({
      results: [row('ingest-cpu', 'a | b', { value: 2.1339, met: false, floor: 'HMAC: 18.3 µs' }), row('serve-memory', 'rss', { value: 230.21, unit: 'MB' })],
      errors: [{ bench: 'local-server', at: '2026-11-24T05:00:00.000Z', error: 'a peer failed' }],
    });
    const lines = table.split('\n');
    expect(lines[0]).toBe('| bench | measurement | value | target | | compared with (same run) | run |');
    expect(lines[2]).toBe('| `ingest-cpu` | a \\| b | 2.13 × | ≤ 2× | **NOT met** | HMAC: 18.3 µs | 2026-11-24, abc1234, Node 20.20.2 |');
    expect(lines[3]).toBe('| `serve-memory` | rss | 230.2 MB | ≤ 2× | met | — | 2026-11-24, abc1234, Node 20.20.2 |');
    expect(renderTable({ results: [row('e2e-latency', 'p50', { target: '(reported)', value: 2.734, unit: 'ms' })], errors: [] }).split('\n')[2])
      .toBe('| `e2e-latency` | p50 | 2.73 ms | (reported) | — | — | 2026-11-24, abc1234, Node 20.20.2 |');
    expect(lines[4]).toBe('| `local-server` | could not be taken | a peer failed | | **failed** | | 2026-11-24 |');
  });

  it('a measurement run again replaces only its own rows, in the benches\' order', () => {
    const previous: Recorded = {
      results: [row('ingest-cpu', 'old ingest'), row('cold-start', 'size'), row('cold-start', 'init')],
      errors: [{ bench: 'e2e-latency', at: 'x', error: 'old failure' }],
    };
    const fresh: Recorded = { results: [row('cold-start', 'size again'), row('e2e-latency', 'latency')], errors: [] };
    const merged = mergeRecorded(previous, fresh, ['ingest-cpu', 'cold-start', 'e2e-latency']);
    expect(merged.results.map((r) => r.name)).toEqual(['old ingest', 'size again', 'latency']);
    expect(merged.errors).toEqual([]);
    const failed = mergeRecorded(merged, { results: [], errors: [{ bench: 'ingest-cpu', at: 'y', error: 'boom' }] }, ['ingest-cpu', 'cold-start', 'e2e-latency']);
    expect(failed.results.map((r) => r.name)).toEqual(['size again', 'latency']);
    expect(failed.errors).toEqual([{ bench: 'ingest-cpu', at: 'y', error: 'boom' }]);
  });

  it('replaces only the text between the markers, and says so when they are missing', () => {
    const readme = `# title\n\n${START}\nold table\n${END}\n\nafter\n`;
    const once = replaceSection(readme, '| new |');
    expect(once).toBe(`# title\n\n${START}\n| new |\n${END}\n\nafter\n`);
    expect(replaceSection(once, '| new |')).toBe(once);
    expect(currentSection(once)).toBe('| new |');
    expect(() => replaceSection('# no markers\n', '| x |')).toThrow(/no generated bench section/);
    expect(() => replaceSection(`${END}\n${START}\n`, '| x |')).toThrow(/no generated bench section/);
    expect(currentSection('# none')).toBeUndefined();
  });

  it('refuses a results file that is not JSON of its shape, and reads the earlier one-run format as empty', () => {
    expect(() => parseRecorded('{ not json')).toThrow(/results.json is not JSON/);
    expect(() => parseRecorded('[]')).toThrow(/no "results" list/);
    expect(() => parseRecorded('null')).toThrow(/no "results" list/);
    expect(parseRecorded(JSON.stringify({ node: 'v20', at: 'x', results: [{ name: 'old', value: 1, unit: '×', target: '', met: true }], errors: ['x: y'] })))
      .toEqual({ results: [], errors: [] });
    const kept = parseRecorded(JSON.stringify({ results: [row('a', 'kept'), { bench: 'b', name: 'no value' }], errors: [] }));
    expect(kept.results.map((r) => r.name)).toEqual(['kept']);
  });
});
