import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { type Browser, chromium } from "playwright-core";

const ROOT = new URL("../../", import.meta.url).pathname;

/** Where the browser tests write their screenshots (ignored by git). */
export const SCREENSHOTS = join(ROOT, "test-results", "console");

/**
 * The system's Chromium: `CHROMIUM_PATH`, else Debian's package (`apt-get install chromium`, what
 * `.ci/run` installs), else Chrome or Chromium where macOS puts them. No browser is downloaded.
 */
export function chromiumPath(): string {
  const candidates = [
    process.env.CHROMIUM_PATH,
    "/usr/bin/chromium",
    "/usr/bin/chromium-browser",
    "/Applications/Chromium.app/Contents/MacOS/Chromium",
    "/Applications/Google Chrome.app/Contents/MacOS/Google Chrome",
  ];
  const found = candidates.find((c): c is string => c !== undefined && existsSync(c));
  if (!found)
    throw new Error(
      "no Chromium for the browser tests: install Debian's chromium package (what .ci/run does) or set CHROMIUM_PATH",
    );
  return found;
}

/** Headless Chromium, without the background connections a closed network refuses. */
export async function launchBrowser(): Promise<Browser> {
  mkdirSync(SCREENSHOTS, { recursive: true });
  return chromium.launch({
    executablePath: chromiumPath(),
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
}
