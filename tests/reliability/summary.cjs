// globalSetup/globalTeardown of `npm run test:reliability`: one summary line per category.
const { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } = require('node:fs');
const { tmpdir } = require('node:os');
const { join } = require('node:path');

const CATEGORIES = ['fuzz', 'faults', 'load', 'security', 'copies', 'resume_races', 'oversized', 'kill-9', 'disk-full'];

module.exports.setup = async () => {
  const dir = mkdtempSync(join(tmpdir(), 'hookagent-tally-'));
  mkdirSync(dir, { recursive: true });
  process.env.HOOKAGENT_TALLY_DIR = dir;
};

module.exports.teardown = async () => {
  const dir = process.env.HOOKAGENT_TALLY_DIR;
  const totals = Object.fromEntries(CATEGORIES.map((c) => [c, { tried: 0, failed: 0 }]));
  for (const file of readdirSync(dir)) {
    for (const line of readFileSync(join(dir, file), 'utf8').split('\n').filter(Boolean)) {
      const { category, tried, failed } = JSON.parse(line);
      (totals[category] ??= { tried: 0, failed: 0 }).tried += tried;
      totals[category].failed += failed;
    }
  }
  rmSync(dir, { recursive: true, force: true });
  process.stdout.write('\nreliability summary\n');
  for (const c of CATEGORIES) process.stdout.write(`  ${c.padEnd(12)} ${String(totals[c].tried).padStart(6)} tried  ${String(totals[c].failed).padStart(4)} failed${totals[c].tried === 0 ? '  (not run)' : ''}\n`);
};
