// Opens an SVG flame graph in headless Chromium and says how it is drawn: per frame its name
// (its <title> up to " ("), the fill Chromium paints its box with, and the box's size on screen.
// With PNG it saves a screenshot of the whole drawing.
//
//   node tests/browser/svg-frames.mjs FLAME.svg [PNG] [VIEWERS_DIR]
//
// Prints one JSON line: {frames: [[name, "rgb(r, g, b)", width, height]]}.
// needs: Chromium (apt-get install chromium) and `npm ci` in VIEWERS_DIR (default ../shared/viewers).
import path from 'node:path';
import {pathToFileURL} from 'node:url';
import {createRequire} from 'node:module';

const [file, shot, viewersArg] = process.argv.slice(2);
if (!file) { console.error('usage: node svg-frames.mjs FLAME.svg [PNG] [VIEWERS_DIR]'); process.exit(2); }
const viewers = path.resolve(viewersArg ?? path.join(import.meta.dirname, '../../../shared/viewers'));
const {chromium} = createRequire(path.join(viewers, 'package.json'))('playwright-core');
const browser = await chromium.launch({executablePath: '/usr/bin/chromium',
  args: ['--no-sandbox', '--headless', '--disable-gpu', '--disable-background-networking']});
try {
  const page = await (await browser.newContext({viewport: {width: 1200, height: 520}})).newPage();
  await page.goto(pathToFileURL(path.resolve(file)).href);
  // inferno's script lays the frames out on load.
  await page.waitForFunction(() => document.querySelectorAll('g title').length > 0);
  // The whole drawing in view (its height grows with the deepest stack).
  const height = await page.evaluate(() => Math.ceil(document.documentElement.getBoundingClientRect().height));
  await page.setViewportSize({width: 1200, height: Math.min(Math.max(height, 200), 4000)});
  await page.waitForTimeout(500);
  const frames = await page.$$eval('g', gs => gs.flatMap(g => {
    const title = g.querySelector(':scope > title');
    const rect = g.querySelector(':scope > rect');
    if (!title || !rect) return [];
    const box = rect.getBoundingClientRect();
    const t = title.textContent;
    const cut = t.lastIndexOf(' (');
    return [[cut < 0 ? t : t.slice(0, cut), getComputedStyle(rect).fill, Math.round(box.width), Math.round(box.height)]];
  }));
  if (shot) await page.screenshot({path: shot});
  console.log(JSON.stringify({frames}));
} finally {
  await browser.close();
}
