/**
 * Jest global setup/teardown: the whole run's temporary files (stores, config dirs, the
 * browser's profile, the children's files) go to one directory, removed when the run
 * ends. TMPDIR is set before the test workers start, so os.tmpdir() in every worker and
 * in every process the tests spawn points inside it. Without this each `npm test` left
 * thousands of small directories behind (3.5 GB had built up on the development machine).
 */
const { mkdtempSync, rmSync } = require('node:fs');
const { tmpdir } = require('node:os');
const { join } = require('node:path');

const KEY = 'HOOKAGENT_TEST_TMPDIR';

async function setup() {
  const dir = mkdtempSync(join(tmpdir(), 'hookagent-tests-'));
  process.env[KEY] = dir;
  process.env.TMPDIR = dir;
}

async function teardown() {
  const dir = process.env[KEY];
  if (dir) rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
}

module.exports = { setup, teardown };
