// Headless Chromium for the console's end-to-end tests: Debian's `chromium` package driven by playwright-core (no
// browser download: none can be fetched here). Each page records what its console and its uncaught errors said, so
// a test can require a clean console, and saves a screenshot of what it showed under test/screenshots/.
import { existsSync, mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { type Browser, type BrowserContext, type Page, chromium } from 'playwright-core';

export const CHROMIUM = process.env.NOMOS_CHROMIUM ?? '/usr/bin/chromium';
const SCREENSHOTS = fileURLToPath(new URL('../screenshots/', import.meta.url));
const DIST = process.env.NOMOS_TEST_CONSOLE_DIR ? `${process.env.NOMOS_TEST_CONSOLE_DIR}/index.html` : fileURLToPath(new URL('../../web/dist/index.html', import.meta.url));

export interface ConsolePage {
  readonly page: Page;
  readonly context: BrowserContext;
  /** Console errors and uncaught exceptions seen so far, in order. */
  readonly errors: string[];
  /** Saves a full-page screenshot as test/screenshots/<name>.png and returns its path. */
  readonly screenshot: (name: string) => Promise<string>;
}

export interface TestBrowser {
  open(url: string, options?: { width?: number; height?: number; colorScheme?: 'light' | 'dark'; token?: string }): Promise<ConsolePage>;
  close(): Promise<void>;
}

export async function launchBrowser(): Promise<TestBrowser> {
  if (!existsSync(CHROMIUM)) throw new Error(`no Chromium at ${CHROMIUM}: install Debian's chromium package (apt-get install chromium); .ci/run does`);
  if (!existsSync(DIST)) throw new Error(`the console is not built (${DIST} is missing): run npm run build:web (npm ci runs it)`);
  const browser: Browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-dev-shm-usage'],
  });
  mkdirSync(SCREENSHOTS, { recursive: true });
  const contexts: BrowserContext[] = [];
  return {
    async open(url, options = {}) {
      const context = await browser.newContext({
        viewport: { width: options.width ?? 1280, height: options.height ?? 800 },
        colorScheme: options.colorScheme ?? 'light',
        // Nothing but the server under test may be reached: a CDN reference would fail here, as on an offline homelab.
        offline: false,
      });
      contexts.push(context);
      const origin = new URL(url).origin;
      await context.route('**/*', (route) => (route.request().url().startsWith(origin) ? route.continue() : route.abort('blockedbyclient')));
      if (options.token !== undefined) {
        const token = options.token;
        // Runs in the page, where sessionStorage exists; written as text so this file needs no DOM types.
        await context.addInitScript(`sessionStorage.setItem('nomos.token', ${JSON.stringify(token)})`);
      }
      const page = await context.newPage();
      const errors: string[] = [];
      page.on('console', (message) => {
        if (message.type() === 'error') errors.push(`console: ${message.text()}`);
      });
      page.on('pageerror', (error) => errors.push(`page: ${error.message}`));
      page.on('requestfailed', (request) => {
        if (!request.url().startsWith(origin)) errors.push(`blocked request to another origin: ${request.url()}`);
      });
      await page.goto(url);
      return {
        page,
        context,
        errors,
        screenshot: async (name) => {
          const path = `${SCREENSHOTS}${name}.png`;
          await page.screenshot({ path, fullPage: true });
          return path;
        },
      };
    },
    async close() {
      for (const c of contexts) await c.close().catch(() => undefined);
      await browser.close();
    },
  };
}
