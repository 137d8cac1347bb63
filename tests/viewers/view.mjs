// `jscalls view` end to end: the Firefox Profiler (the built app of ../shared/viewers, served
// here) opened at the URL `jscalls view --no-open` prints, in headless Chromium, shows the
// profile in its Call Tree and draws its Flame Graph; a client that guesses a path gets 404;
// the command ends once the viewer has it.
// usage: node view.mjs JSCALLS INPUT VIEWERS_DIR [--shot PNG]
// Prints one JSON line {outcome, rows, flame, guessed, exit}; exits 0 when all hold.
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import {spawn} from 'node:child_process';
import {createRequire} from 'node:module';

const [jscalls, input, viewers, ...rest] = process.argv.slice(2);
const shot = rest[0] === '--shot' ? rest[1] : null;
const {chromium} = createRequire(path.join(path.resolve(viewers), 'package.json'))('playwright-core');
const app = path.join(viewers, 'firefox-profiler');
const types = {'.html': 'text/html', '.js': 'text/javascript', '.css': 'text/css', '.json': 'application/json',
               '.svg': 'image/svg+xml', '.png': 'image/png', '.wasm': 'application/wasm', '.woff2': 'font/woff2'};
const server = http.createServer((req, res) => {
  const rel = decodeURIComponent(new URL(req.url, 'http://x').pathname);
  let file = path.join(app, rel);
  if (!file.startsWith(app) || !fs.existsSync(file) || fs.statSync(file).isDirectory()) file = path.join(app, 'index.html');
  res.writeHead(200, {'Content-Type': types[path.extname(file)] ?? 'application/octet-stream'});
  fs.createReadStream(file).pipe(res);
});
await new Promise(r => server.listen(0, '127.0.0.1', r));
const base = `http://127.0.0.1:${server.address().port}`;

const child = spawn(jscalls, ['view', input, '--no-open', '--viewer-url', base, '--timeout', '60', '--js-only']);
let err = '';
const url = await new Promise((resolve, reject) => {
  child.stderr.on('data', d => {
    err += d;
    const m = err.match(/jscalls: open (\S+)/);
    if (m) resolve(m[1]);
  });
  child.on('exit', c => reject(new Error(`jscalls view exited ${c}: ${err}`)));
});
const exited = new Promise(r => child.on('exit', c => r(c)));
// Another local client guessing the path.
const profileUrl = decodeURIComponent(url.split('/from-url/')[1].replace(/\/$/, ''));
const guessed = await fetch(profileUrl.replace(/\/[0-9a-f]{32}\//, '/00000000000000000000000000000000/')).then(r => r.status);

const browser = await chromium.launch({executablePath: '/usr/bin/chromium', args: ['--no-sandbox', '--headless', '--disable-gpu']});
const page = await (await browser.newContext({viewport: {width: 1400, height: 800}})).newPage();
await page.goto(url);
let outcome = 'timeout', rows = 0;
for (const deadline = Date.now() + 30000; Date.now() < deadline;) {
  rows = await page.evaluate(() => document.querySelectorAll('.treeViewRowScrolledColumns').length);
  if (rows > 0) { outcome = 'shown'; break; }
  await page.waitForTimeout(250);
}
// The flame graph: its tab drawn on a canvas.
let flame = false;
if (outcome === 'shown') {
  await page.click('text=Flame Graph');
  for (const deadline = Date.now() + 10000; Date.now() < deadline && !flame;) {
    flame = await page.evaluate(() => [...document.querySelectorAll('.flameGraphContent canvas, .chartCanvas')]
      .some(c => c.width > 0 && c.height > 0));
    if (!flame) await page.waitForTimeout(250);
  }
}
if (shot) await page.screenshot({path: shot});
await browser.close();
server.close();
const exit = await Promise.race([exited, new Promise(r => setTimeout(() => r('running'), 10000))]);
if (exit === 'running') child.kill();
console.log(JSON.stringify({outcome, rows, flame, guessed, exit}));
process.exit(outcome === 'shown' && flame && guessed === 404 && exit === 0 ? 0 : 1);
