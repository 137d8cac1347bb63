#!/usr/bin/env node
// Where midway's errors on real recordings come from (docs/accuracy.md, "Against the goals"):
// true calls of 0.2 ms or more, matched by midway on the stripped trace, on the recording's
// .cpuprofile and by DevTools on the stripped trace, split by whether midway's end on the trace
// is an event's end (DevTools' end too, to 0.5 µs: an exact time) and whether its start is
// DevTools' own. Prints median |Δdur| of each, and how late the ends are on the median.
//
// usage: node bench/event-ends.mjs REAL_WORK_DIR NAME...
//   REAL_WORK_DIR  the real-work directory of bench/accuracy.sh (OUT_DIR/real-work)
//   NAME           a recording's name there (real-marks, real-marks2, real-lores)
// Needs ../shared/truth beside the project (JSCALLS_SHARED to put it elsewhere).
import path from 'node:path';
import {fileURLToPath} from 'node:url';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const SHARED = process.env.JSCALLS_SHARED ?? path.join(HERE, '..', '..', 'shared');
const {readJson} = await import(path.join(SHARED, 'truth/lib/io.mjs'));
const {Pool} = await import(path.join(SHARED, 'truth/lib/score.mjs'));
const {scoreCase} = await import(path.join(SHARED, 'truth/lib/case.mjs'));

const [dir, ...recordings] = process.argv.slice(2);
if (!dir || recordings.length === 0) {
  console.error('usage: node bench/event-ends.mjs REAL_WORK_DIR NAME...');
  process.exit(2);
}
// The matches scoreCase makes, per estimate: for each true call, the estimate it matched.
let matched = {};
const addMatch = Pool.prototype.addMatch;
Pool.prototype.addMatch = function (name, role, trues, ests, m) {
  matched[name] = trues.map((t, i) => ({t, e: m.tMatch[i] >= 0 ? ests[m.tMatch[i]] : null}));
  return addMatch.call(this, name, role, trues, ests, m);
};
const median = a => [...a].sort((x, y) => x - y)[a.length >> 1];
const groups = new Map();
for (const name of recordings) {
  matched = {};
  const at = f => path.join(dir, `${name}.${f}`);
  const truth = readJson(at('truth.json.gz'));
  const score = (input, est, file) => scoreCase(new Pool(), {truth, input: readJson(at(input)), estimates: [{name: est, oracle: readJson(at(file))}]});
  score('stripped.json.gz', 'midway', 'est-jscalls-midway-stripped.json');
  score('stripped.json.gz', 'devtools', 'dt-stripped.json');
  score('cpuprofile.gz', 'midway-cpu', 'est-cpu-jscalls-midway.json');
  matched.midway.forEach(({t, e: m}, i) => {
    const d = matched.devtools[i].e, c = matched['midway-cpu'][i].e;
    if (t.dur < 200 || !m || !d || !c) return;
    const key = `${Math.abs(m.end - d.end) < 0.5 ? "an event's end" : 'sampled'} | ${Math.abs(m.start - d.start) < 0.5 ? "DevTools' start" : 'moved'}`;
    if (!groups.has(key)) groups.set(key, {trace: [], cpu: [], dt: [], lateTrace: [], lateCpu: []});
    const g = groups.get(key);
    g.trace.push(Math.abs(m.end - m.start - t.dur));
    g.cpu.push(Math.abs(c.end - c.start - t.dur));
    g.dt.push(Math.abs(d.end - d.start - t.dur));
    g.lateTrace.push(m.end - t.end);
    g.lateCpu.push(c.end - t.end);
  });
}
console.log('| midway end on the trace | its start | true calls | median abs Δdur µs: midway, trace / .cpuprofile / DevTools, trace | median Δend µs: midway, trace / .cpuprofile |');
console.log('|---|---|---:|---:|---:|');
for (const [key, g] of [...groups].sort((a, b) => b[1].trace.length - a[1].trace.length)) {
  const [end, start] = key.split(' | ');
  console.log(`| ${end} | ${start} | ${g.trace.length} | ${median(g.trace)} / ${median(g.cpu)} / ${median(g.dt)} | ${median(g.lateTrace)} / ${median(g.lateCpu)} |`);
}
