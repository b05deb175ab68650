/**
 * Summarizes a V8 .cpuprofile (from `node --cpu-prof`): self and inclusive time per function, heaviest first.
 *
 *   node --import tsx bench/lib/cpuprofile.ts <file.cpuprofile> [url-filter] [top=30]
 *   node --import tsx bench/lib/cpuprofile.ts --callees=src/retry/ <file.cpuprofile> [top=40]
 *
 * With a url filter (e.g. `src/retry`), only functions whose script url contains it are listed, and the total
 * self/inclusive time of everything under that filter is printed as well.
 */
import { readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number; columnNumber: number };
  children?: number[];
}

interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

export interface FunctionTime {
  key: string;
  selfMs: number;
  inclusiveMs: number;
}

/** `name file:line`, with files shown as `grpc-js/x.js`, `<package>/path` or a path inside this repository. */
function keyOf(node: ProfileNode): string {
  const { functionName, url, lineNumber } = node.callFrame;
  let file = url.replace(/^file:\/\//, '');
  const nm = file.lastIndexOf('/node_modules/');
  if (nm >= 0) {
    file = file
      .slice(nm + '/node_modules/'.length)
      .replace(/^@grpc\/grpc-js\/build\/src\//, 'grpc-js/')
      .replace(/^@grpc\/proto-loader\/build\/src\//, 'proto-loader/');
  } else {
    file = file.replace(/^.*\/(src|bench|dist)\//, '$1/');
  }
  return `${functionName || '(anonymous)'} ${file || '(native)'}:${lineNumber + 1}`;
}

/**
 * For every sample whose stack holds a frame matching `filter`, the innermost such frame and what it was
 * running: `self`, or the direct callee (whose whole subtree is counted). Shows what our functions spend time on.
 */
export function calleeBreakdown(
  profile: Profile,
  filter: string,
): { frame: string; callee: string; ms: number }[] {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const out = new Map<string, { frame: string; callee: string; ms: number }>();
  for (let i = 0; i < profile.samples.length; i++) {
    const dt = Math.max(0, profile.timeDeltas[i + 1] ?? 0) / 1000;
    let child: number | undefined;
    for (let cur: number | undefined = profile.samples[i]; cur !== undefined; cur = parent.get(cur)) {
      const key = keyOf(byId.get(cur) as ProfileNode);
      if (key.includes(filter)) {
        const callee = child === undefined ? 'self' : keyOf(byId.get(child) as ProfileNode);
        const k = `${key}\u0000${callee}`;
        const entry = out.get(k) ?? { frame: key, callee, ms: 0 };
        entry.ms += dt;
        out.set(k, entry);
        break;
      }
      child = cur;
    }
  }
  return [...out.values()].sort((a, b) => b.ms - a.ms);
}

/** Self and inclusive time per function of `profile`, plus the profile's total sampled time. */
export function summarizeProfile(profile: Profile): { totalMs: number; functions: FunctionTime[] } {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const selfUs = new Map<number, number>();
  // timeDeltas[i] is the time before sample i; attribute the interval after a sample to that sample.
  for (let i = 0; i < profile.samples.length; i++) {
    const dt = profile.timeDeltas[i + 1] ?? 0;
    const id = profile.samples[i] as number;
    selfUs.set(id, (selfUs.get(id) ?? 0) + Math.max(0, dt));
  }
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const self = new Map<string, number>();
  const inclusive = new Map<string, number>();
  let totalUs = 0;
  for (const [id, us] of selfUs) {
    totalUs += us;
    const node = byId.get(id);
    if (!node) continue;
    const key = keyOf(node);
    self.set(key, (self.get(key) ?? 0) + us);
    // Walk up the stack once per distinct function so recursion is not counted twice.
    const seen = new Set<string>();
    for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
      const k = keyOf(byId.get(cur) as ProfileNode);
      if (seen.has(k)) continue;
      seen.add(k);
      inclusive.set(k, (inclusive.get(k) ?? 0) + us);
    }
  }
  const functions = [...inclusive.keys()].map((key) => ({
    key,
    selfMs: (self.get(key) ?? 0) / 1000,
    inclusiveMs: (inclusive.get(key) ?? 0) / 1000,
  }));
  functions.sort((a, b) => b.selfMs - a.selfMs);
  return { totalMs: totalUs / 1000, functions };
}

function main(): void {
  const args = process.argv.slice(2);
  const calleesArg = args.find((a) => a.startsWith('--callees='));
  const [file, filter, topText] = args.filter((a) => !a.startsWith('--'));
  if (!file) {
    console.error('usage: node --import tsx bench/lib/cpuprofile.ts <file.cpuprofile> [url-filter] [top]');
    process.exitCode = 2;
    return;
  }
  const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
  const { totalMs, functions } = summarizeProfile(profile);
  if (calleesArg) {
    const rows = calleeBreakdown(profile, calleesArg.slice('--callees='.length));
    console.log(`total sampled ${totalMs.toFixed(0)} ms; innermost matching frame -> what it was running`);
    for (const r of rows.slice(0, Number(topText ?? 40))) {
      console.log(`${r.ms.toFixed(1).padStart(8)} ms  ${r.frame}  ->  ${r.callee}`);
    }
    return;
  }
  const top = Number(topText ?? 30);
  const list = filter ? functions.filter((f) => f.key.includes(filter)) : functions;
  console.log(`total sampled ${totalMs.toFixed(0)} ms`);
  if (filter) {
    const selfSum = list.reduce((a, f) => a + f.selfMs, 0);
    console.log(
      `self time in functions matching "${filter}": ${selfSum.toFixed(1)} ms (${((selfSum / totalMs) * 100).toFixed(2)}%)`,
    );
  }
  console.log('self ms   self %   incl ms   function');
  for (const f of list.slice(0, top)) {
    console.log(
      `${f.selfMs.toFixed(1).padStart(7)}  ${((f.selfMs / totalMs) * 100).toFixed(2).padStart(6)}  ${f.inclusiveMs.toFixed(1).padStart(8)}   ${f.key}`,
    );
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) main();
