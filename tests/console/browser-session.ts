/**
 * A console fixture and a page of Debian's chromium (playwright-core) for one test file:
 * started before its tests, closed after them; a script error on the page fails the test
 * it happened in.
 */
import { existsSync } from 'node:fs';
import { chromium, type Browser, type Page } from 'playwright-core';
import { startConsoleFixture, type ConsoleFixture } from './fixture';

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const CHROMIUM_ARGS = ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-dev-shm-usage'];

export interface ConsoleBrowser {
  readonly fx: ConsoleFixture;
  readonly page: Page;
}

export function useConsoleBrowser(options: Parameters<typeof startConsoleFixture>[0] = {}): ConsoleBrowser {
  let fx: ConsoleFixture | undefined;
  let browser: Browser | undefined;
  let page: Page | undefined;
  const pageErrors: string[] = [];
  beforeAll(async () => {
    if (!existsSync(CHROMIUM)) throw new Error(`No browser at ${CHROMIUM}: install Debian's chromium (apt-get install -y chromium), or set CHROMIUM_PATH`);
    fx = await startConsoleFixture(options);
    browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS });
    page = await browser.newPage();
    page.on('pageerror', (error) => pageErrors.push(error.message));
  }, 60_000);
  afterEach(() => expect(pageErrors).toEqual([]));
  afterAll(async () => {
    await browser?.close();
    await fx?.close();
  });
  return {
    get fx() {
      if (!fx) throw new Error('the console fixture is not started (use it inside a test)');
      return fx;
    },
    get page() {
      if (!page) throw new Error('the browser page is not open (use it inside a test)');
      return page;
    },
  };
}
