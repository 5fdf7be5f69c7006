/** Runs the built `hookagent` command as a child process, as users do. */
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const ROOT = join(__dirname, '..', '..');
export const BIN = join(ROOT, 'bin', 'hookagent.cjs');

/**
 * Builds dist/cli.cjs once per test run: the first test file that needs the CLI builds it and
 * leaves a marker in the run's temporary directory (tests/support/temp-dir.cjs), so the ~80
 * other e2e files do not each bundle it again. Outside a jest run (no run directory) it builds.
 */
export function buildCli(): void {
  const runDir = process.env.HOOKAGENT_TEST_TMPDIR;
  const marker = runDir === undefined ? undefined : join(runDir, 'cli-built');
  if (marker !== undefined && existsSync(marker)) return;
  execFileSync(process.execPath, [join(ROOT, 'scripts', 'build.mjs')], { cwd: ROOT, stdio: 'inherit' });
  if (marker !== undefined) writeFileSync(marker, '');
}

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the CLI; `input`, when given, is its stdin (else stdin is closed). */
export function runCli(args: string[], env: NodeJS.ProcessEnv = {}, input?: string): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], { env: { ...process.env, ...env }, stdio: [input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'] });
    if (input !== undefined) child.stdin?.end(input);
    let stdout = '';
    let stderr = '';
    child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** A fresh config dir holding `yaml` as its config.yaml. */
export function tempConfigDir(yaml = '', prefix = 'hookagent-cli-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  writeFileSync(join(dir, 'config.yaml'), yaml);
  return dir;
}

/** `hookagent --config-dir <dir> …`. */
export const hkIn = (dir: string, ...args: string[]): Promise<CliResult> => runCli(['--config-dir', dir, ...args]);
