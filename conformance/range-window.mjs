#!/usr/bin/env node
// The window, in ms as `oracle.mjs --tree-range START,END` takes it, of a range that DevTools
// cannot select by itself, read straight from a trace (independently of jscalls):
//   --marks A#K,B#K   from the K-th performance.mark A to the K-th B (ph R or I, blink.user_timing)
//   --node-time L#K   the K-th Node console.time span labelled L (b/e pairs, cat node.console)
// usage: node range-window.mjs TRACE.json[.gz] --marks A#0,B#0 | --node-time L#0
import fs from 'node:fs';
import zlib from 'node:zlib';

const [file, opt, arg] = process.argv.slice(2);
let text = fs.readFileSync(file);
if (text[0] === 0x1f && text[1] === 0x8b) text = zlib.gunzipSync(text);
const doc = JSON.parse(text);
const events = Array.isArray(doc) ? doc : doc.traceEvents;
const nameIndex = s => { const m = /^(.*)#(\d+)$/.exec(s); return m ? [m[1], Number(m[2])] : [s, 0]; };
const byTs = (a, b) => a.ts - b.ts;

function mark(spec) {
  const [name, k] = nameIndex(spec);
  const found = events.filter(e => e.cat === 'blink.user_timing' && (e.ph === 'R' || e.ph === 'I') && e.name === name)
    .sort(byTs);
  if (!found[k]) throw new Error(`no mark ${spec}`);
  return found[k].ts;
}

let start, end;
if (opt === '--marks') {
  const [a, b] = arg.split(',');
  [start, end] = [mark(a), mark(b)];
} else if (opt === '--node-time') {
  const [label, k] = nameIndex(arg);
  const evs = events.filter(e => String(e.cat).split(',').includes('node.console') && e.name === `time::${label}`)
    .sort(byTs);
  const open = [], spans = [];
  for (const e of evs) {
    if (e.ph === 'b') open.push(e);
    else if (e.ph === 'e' && open.length) { const b = open.pop(); spans.push([b.ts, e.ts]); }
  }
  spans.sort((x, y) => x[0] - y[0]);
  if (!spans[k]) throw new Error(`no console.time span ${arg}`);
  [start, end] = spans[k];
} else {
  console.error('usage: node range-window.mjs TRACE --marks A#K,B#K | --node-time LABEL#K');
  process.exit(2);
}
console.log(`${start / 1000},${end / 1000}`);
