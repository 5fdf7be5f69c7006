/**
 * The test run's temporary directory (tests/support/temp-dir.cjs): every worker and every
 * process the tests spawn write their temporary files inside one directory per run,
 * which the run removes when it ends.
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';

describe('the test run temporary directory', () => {
  const runDir = process.env.HOOKAGENT_TEST_TMPDIR as string;

  it('is set up before the workers start, and is where os.tmpdir() points', () => {
    expect(runDir).toMatch(/hookagent-tests-/);
    expect(existsSync(runDir)).toBe(true);
    expect(tmpdir()).toBe(runDir);
  });

  it('is inherited by child processes', () => {
    const childTmp = execFileSync(process.execPath, ['-e', 'process.stdout.write(require("node:os").tmpdir())'], { encoding: 'utf8' });
    expect(childTmp).toBe(runDir);
  });
});
