#!/usr/bin/env node
// A minimal `core` planner of durations in JavaScript, speaking the conformance protocol
// (durations-conformance/1): one JSON request per line on stdin, one JSON response per line on
// stdout. Written from docs/semantics.md (rules 1-7 and 13, and rule 8's call identity) and
// docs/units.md, with no dependency.
// Every number is exact: BigInt for whole numbers, Frac for epochs.
import { createInterface } from "node:readline";

// ---- exact numbers --------------------------------------------------------------------------
const gcd = (a, b) => { a = a < 0n ? -a : a; b = b < 0n ? -b : b; while (b) [a, b] = [b, a % b]; return a; };
const cdiv = (a, b) => (a <= 0n ? -(-a / b) : (a + b - 1n) / b); // ceil(a / b), b > 0
class Frac {
  constructor(n, d = 1n) { const g = gcd(n, d) || 1n; const s = d < 0n ? -1n : 1n; this.n = (s * n) / g; this.d = (s * d) / g; }
  static of(x) { return x instanceof Frac ? x : new Frac(BigInt(x)); }
  add(o) { o = Frac.of(o); return new Frac(this.n * o.d + o.n * this.d, this.d * o.d); }
  sub(o) { o = Frac.of(o); return new Frac(this.n * o.d - o.n * this.d, this.d * o.d); }
  mul(o) { o = Frac.of(o); return new Frac(this.n * o.n, this.d * o.d); }
  cmp(o) { o = Frac.of(o); const l = this.n * o.d, r = o.n * this.d; return l < r ? -1 : l > r ? 1 : 0; }
  floor() { return this.n >= 0n ? this.n / this.d : -cdiv(-this.n, this.d); }
  ceil() { return cdiv(this.n, this.d); }
  get whole() { return this.d === 1n; }
  toString() { return this.d === 1n ? `${this.n}` : `${this.n}/${this.d}`; }
}

class Refused extends Error {
  constructor(kind, code, why, phase = "parse") { super(why); this.kind = kind; this.code = code; this.phase = phase; }
}
const scenarioError = (why) => new Refused("error", "ScenarioError", why);
const unsupported = (why) => new Refused("unsupported", null, why);
// a script refused as a whole by the planner, after the file reads (rule 8: call identity)
const fitCallError = (why) => new Refused("error", "FitCallError", why, "plan");

// ---- time strings (docs/grammar.md) ---------------------------------------------------------
const DIGITS = "[0-9](?:_?[0-9])*";
const TIME = new RegExp(
  `^[ \\t\\r\\n\\f\\v]*(?:(?<num>${DIGITS})/(?<den>${DIGITS})` +
    `|(?<mant>${DIGITS}(?:\\.(?:${DIGITS})?)?|\\.${DIGITS})(?:[eE](?<exp>[+-]?${DIGITS}))?)` +
    `(?<unit>ba|ep|sp|tok|dur)[ \\t\\r\\n\\f\\v]*$`,
);
const WHOLE_UNITS = new Set(["ba", "sp", "tok"]);

function parseTime(text, where) {
  if (typeof text !== "string") throw scenarioError(`${where}: expected a time string, got ${JSON.stringify(text)}`);
  const m = text.length <= 256 ? TIME.exec(text) : null;
  if (!m) throw scenarioError(`${where}: invalid time ${JSON.stringify(text)}`);
  const g = m.groups;
  const numberPart = text.trim().slice(0, -g.unit.length);
  if (numberPart.length > 200) throw scenarioError(`${where}: number part longer than 200 characters`);
  let value;
  if (g.num !== undefined) {
    const den = BigInt(g.den.replaceAll("_", ""));
    if (den === 0n) throw scenarioError(`${where}: zero denominator`);
    value = new Frac(BigInt(g.num.replaceAll("_", "")), den);
  } else {
    const [intPart, fracPart = ""] = g.mant.replaceAll("_", "").split(".");
    const mantissa = BigInt((intPart || "0") + fracPart);
    let exp = BigInt((g.exp ?? "0").replaceAll("_", "")) - BigInt(fracPart.length);
    if (mantissa === 0n) exp = 0n;
    if (exp > 1000n || exp < -1000n) throw scenarioError(`${where}: exponent out of range`);
    value = exp >= 0n ? new Frac(mantissa * 10n ** exp) : new Frac(mantissa, 10n ** -exp);
  }
  if (WHOLE_UNITS.has(g.unit) && !value.whole) throw scenarioError(`${where}: ${g.unit} takes a whole number`);
  if (value.n.toString().length > 200 || value.d.toString().length > 200) throw scenarioError(`${where}: too long`);
  return { value, unit: g.unit };
}

// ---- the scenario (docs/scenario-files.md), core keys only ----------------------------------
const OUTSIDE_CORE = {
  top: new Set(["resume", "schedule", "events"]),
  loader: new Set(["world_size", "device_batch_size", "accumulation", "padding", "order", "seed", "sources", "stop", "unit", "restart"]),
};
const isTable = (x) => x !== null && typeof x === "object" && !Array.isArray(x);

function whole(x, where, min) {
  let v;
  if (typeof x === "number" && Number.isSafeInteger(x)) v = BigInt(x);
  else if (Number.isInteger(x)) throw unsupported(`${where}: ${x} is past 2**53; JSON.parse cannot read it exactly`);
  else throw scenarioError(`${where}: expected a whole number, got ${JSON.stringify(x)}`);
  if (v < min) throw scenarioError(`${where}: expected a whole number >= ${min}, got ${v}`);
  return v;
}
function bool(x, where) {
  if (typeof x !== "boolean") throw scenarioError(`${where}: expected a boolean, got ${JSON.stringify(x)}`);
  return x;
}
function keys(table, allowed, where) {
  if (!isTable(table)) throw scenarioError(`${where}: expected a table`);
  for (const k of Object.keys(table)) if (!allowed.includes(k)) throw scenarioError(`${where}.${k}: unknown key`);
}

// JSON.parse reads `samples = 100.0` as 100, the same number as `samples = 100`, but the scenario
// format refuses a float where a whole number goes (docs/scenario-files.md). The TOML text tells
// them apart: a whole-number key of the core level written with a float literal (a decimal point,
// an exponent, inf or nan), as `key = value` on its own line or inside an inline table, refuses
// the file. (A line inside a multi-line string that reads like one is taken for one.)
const WHOLE_KEYS = "samples|batch_size|tokens_per_sample";
const FLOAT_LITERAL = new RegExp(
  `(?:^[ \\t]*|[{,][ \\t]*)["']?(${WHOLE_KEYS})["']?[ \\t]*=[ \\t]*` +
    "([+-]?(?:inf|nan|[0-9][0-9_]*(?:\\.[0-9_]+)?(?:[eE][+-]?[0-9_]+)?))(?![0-9A-Za-z_.:-])",
  "gm",
);
function refuseFloats(text) {
  if (typeof text !== "string") return;
  for (const [, key, value] of text.matchAll(FLOAT_LITERAL)) {
    if (/[.eEin]/.test(value)) throw scenarioError(`${key} = ${value}: expected a whole number, got a float`);
  }
}

function readScenario(data) {
  if (!isTable(data)) throw scenarioError("the scenario is not a table");
  for (const k of Object.keys(data)) {
    if (OUTSIDE_CORE.top.has(k)) throw unsupported(`[${k}] is outside the core level`);
    if (!["run", "loaders", "fit"].includes(k)) throw scenarioError(`${k}: unknown key`);
  }
  const run = data.run ?? {};
  keys(run, ["max_duration"], "run");
  const maxDuration = run.max_duration === undefined ? null : parseTime(run.max_duration, "run.max_duration");
  if (maxDuration?.unit === "dur") throw scenarioError("run.max_duration: cannot be in dur");
  const loaders = new Map();
  const loaderTables = data.loaders ?? {};
  if (!isTable(loaderTables)) throw scenarioError("loaders: expected a table");
  for (const [name, t] of Object.entries(loaderTables)) {
    const where = `loaders.${name}`;
    if (isTable(t)) for (const k of Object.keys(t)) if (OUTSIDE_CORE.loader.has(k)) throw unsupported(`${where}.${k} is outside the core level`);
    keys(t, ["samples", "batch_size", "drop_last", "tokens_per_sample"], where);
    if (t.batch_size === undefined) throw scenarioError(`${where}.batch_size: required`);
    const L = {
      name,
      samples: t.samples === undefined ? null : whole(t.samples, `${where}.samples`, 1n),
      batch: whole(t.batch_size, `${where}.batch_size`, 1n),
      dropLast: t.drop_last === undefined ? false : bool(t.drop_last, `${where}.drop_last`),
      tps: t.tokens_per_sample === undefined ? null : whole(t.tokens_per_sample, `${where}.tokens_per_sample`, 1n),
    };
    if (L.dropLast && L.samples !== null && L.samples < L.batch) throw scenarioError(`${where}: drop_last with fewer samples than one batch`);
    if (L.samples !== null) { // the epoch's geometry (units.md): steps, and samples trained
      L.steps = L.dropLast ? L.samples / L.batch : cdiv(L.samples, L.batch);
      L.trained = L.dropLast ? L.steps * L.batch : L.samples;
    }
    loaders.set(name, L);
  }
  const fits = data.fit;
  if (!Array.isArray(fits) || fits.length < 1 || fits.length > 1000) throw scenarioError("fit: expected 1 to 1000 [[fit]] tables");
  const names = new Set();
  const calls = fits.map((f, i) => {
    const where = `fit[${i}]`;
    keys(f, ["loader", "duration", "until", "reset_time", "name"], where);
    if (typeof f.loader !== "string" || !loaders.has(f.loader)) throw scenarioError(`${where}.loader: undefined loader ${JSON.stringify(f.loader)}`);
    if (f.duration !== undefined && f.until !== undefined) throw scenarioError(`${where}: both duration and until`);
    if (f.name !== undefined && (typeof f.name !== "string" || f.name.trim() === "" || f.name.startsWith("#"))) throw scenarioError(`${where}.name: invalid name`);
    const name = f.name ?? `#${i}`;
    return {
      name,
      loader: loaders.get(f.loader),
      duration: f.duration === undefined ? null : parseTime(f.duration, `${where}.duration`),
      until: f.until === undefined ? null : parseTime(f.until, `${where}.until`),
      reset: f.reset_time === undefined ? false : bool(f.reset_time, `${where}.reset_time`),
    };
  });
  // a call's identity is its name or its position (rule 8): two calls of one identity are one call
  for (const call of calls) {
    if (names.has(call.name)) throw fitCallError(`fit call names must be unique; repeated: ${call.name}`);
    names.add(call.name);
  }
  return { maxDuration, calls };
}

// ---- the planner (semantics.md rules 1-7, 13) ---------------------------------------------------
class PlanError extends Error {
  constructor(code) { super(code); this.code = code; }
}

function plan({ maxDuration, calls }) {
  // the position: lifetime totals and the place in the current epoch (token null: unknown)
  const pos = { epoch: 0n, batch: 0n, sample: 0n, token: 0n, batch_in_epoch: 0n, sample_in_epoch: 0n, token_in_epoch: 0n };
  // the run clock's origin, the loader that read the position, the target a relative call goes on from
  let origin = { ...pos }, clockId = 0, stream = null, anchor = null;
  const segments = [], codes = [], reads = [];

  // the run clock of `unit` at the position, measured on loader L (rule 5 for ep)
  const clock = (unit, L) => {
    if (unit === "ba") return new Frac(pos.batch - origin.batch);
    if (unit === "sp") return new Frac(pos.sample - origin.sample);
    if (unit === "tok") {
      if (pos.token === null || origin.token === null) throw new PlanError("tokens-unknown");
      return new Frac(pos.token - origin.token);
    }
    if (L.samples === null) throw new PlanError("cannot-convert");
    return new Frac(pos.sample_in_epoch, L.samples).add(pos.epoch - origin.epoch);
  };
  // steps of L until `need` more samples are trained (units.md rules 1-3)
  const stepsForSamples = (L, need) => {
    if (need <= 0n) return 0n;
    if (L.samples === null) return cdiv(need, L.batch);
    const s = pos.sample_in_epoch;
    const restSteps = L.dropLast ? (L.samples - s) / L.batch : cdiv(L.samples - s, L.batch);
    const restSamples = L.dropLast ? restSteps * L.batch : L.samples - s;
    if (need <= restSamples) return cdiv(need, L.batch);
    need -= restSamples;
    const epochs = (need - 1n) / L.trained;
    return restSteps + epochs * L.steps + cdiv(need - epochs * L.trained, L.batch);
  };
  const stepsTo = (L, unit, target) => {
    const now = clock(unit, L);
    if (now.cmp(target) >= 0) return 0n;
    if (unit === "ba") return target.n - now.n;
    if (unit === "sp") return stepsForSamples(L, target.n - now.n);
    if (unit === "tok") {
      // samples of unknown length: at most one step per sample, if each has one token (rule 13)
      return stepsForSamples(L, cdiv(target.n - now.n, L.tps ?? 1n));
    }
    // ep: close the current epoch, then whole epochs, then a fraction of one (units.md rule 4)
    const s = pos.sample_in_epoch;
    const restSteps = L.dropLast ? (L.samples - s) / L.batch : cdiv(L.samples - s, L.batch);
    const ahead = target.sub(pos.epoch - origin.epoch);
    const e = ahead.floor(), f = ahead.sub(e);
    const into = (from, limit) => { // steps until sample_in_epoch >= f * samples, a tail target closing the epoch
      const x = f.mul(L.samples).ceil();
      return x <= from ? 0n : [cdiv(x - from, L.batch), limit].reduce((a, b) => (a < b ? a : b));
    };
    if (e === 0n) return into(s, restSteps);
    return restSteps + (e - 1n) * L.steps + into(0n, L.steps);
  };
  // train n steps of L: the position moves and the reads are recorded as [start, stop) x times
  const advance = (L, n) => {
    if (n === 0n) return;
    const s = pos.sample_in_epoch;
    let trained, k;
    if (L.samples === null) {
      trained = n * L.batch;
      reads.push([L.name, s, s + trained, 1n]);
      pos.batch_in_epoch += n; pos.sample_in_epoch += trained;
    } else {
      const restSteps = L.dropLast ? (L.samples - s) / L.batch : cdiv(L.samples - s, L.batch);
      const restSamples = L.dropLast ? restSteps * L.batch : L.samples - s;
      if (n < restSteps) {
        trained = n * L.batch;
        reads.push([L.name, s, s + trained, 1n]);
        pos.batch_in_epoch += n; pos.sample_in_epoch += trained;
      } else {
        const after = n - restSteps, epochs = after / L.steps;
        k = after - epochs * L.steps;
        trained = restSamples + epochs * L.trained + k * L.batch;
        reads.push([L.name, s, s + restSamples, 1n], [L.name, 0n, L.trained, epochs], [L.name, 0n, k * L.batch, 1n]);
        pos.epoch += 1n + epochs; pos.batch_in_epoch = k; pos.sample_in_epoch = k * L.batch;
      }
    }
    pos.batch += n; pos.sample += trained;
    if (L.tps === null || pos.token === null) pos.token = pos.token_in_epoch = null;
    else { pos.token += trained * L.tps; pos.token_in_epoch = pos.sample_in_epoch * L.tps; }
  };

  for (const call of calls) {
    const L = call.loader, startStep = pos.batch;
    let abandoned = null, target = null, unit = null;
    // a new stream or a new clock starts a new epoch (rules 4, 7)
    if ((call.reset || (stream !== null && stream.name !== L.name)) && pos.sample_in_epoch > 0n) {
      abandoned = { epoch: `${pos.epoch}`, start: `${pos.sample_in_epoch}`, stop: `${stream.samples ?? pos.sample_in_epoch}` };
      pos.epoch += 1n; pos.batch_in_epoch = 0n; pos.sample_in_epoch = 0n;
      if (pos.token !== null) pos.token_in_epoch = 0n;
      codes.push("epoch-abandoned");
    }
    if (call.reset) { origin = { ...pos }; clockId += 1; codes.push("clock-reset"); }
    stream = L;
    const start = { ...pos };
    let steps = 0n;
    try {
      // the target on the run clock (rules 1, 3, 6)
      const asked = call.until ?? call.duration ?? maxDuration;
      if (asked === null) throw new PlanError("no-duration");
      let value = asked.value;
      unit = asked.unit;
      if (unit === "dur") {
        if (maxDuration === null) throw new PlanError("no-duration");
        value = value.mul(maxDuration.value); unit = maxDuration.unit;
        if (WHOLE_UNITS.has(unit)) value = new Frac(value.ceil());
      }
      const sameClock = (a) => a !== null && a.unit === unit && a.stream === L.name && a.clockId === clockId;
      target = value;
      if (call.duration !== null) target = value.add(sameClock(anchor) ? anchor.value : clock(unit, L));
      steps = stepsTo(L, unit, target);
      advance(L, steps);
      const atRuntime = unit === "tok" && L.tps === null && steps > 0n; // its stop is the latest possible
      const reached = atRuntime ? 1 : clock(unit, L).cmp(target);
      if (steps === 0n) codes.push("target-already-reached");
      else if (atRuntime) codes.push("token-stop-at-runtime");
      else if (reached > 0) codes.push("target-rounded");
      // the target anchors the next relative call (rule 3)
      const anchors = steps > 0n || reached === 0 || (sameClock(anchor) && target.cmp(anchor.value) >= 0);
      anchor = anchors ? { unit, value: target, stream: L.name, clockId } : null;
    } catch (e) {
      if (!(e instanceof PlanError)) throw e;
      codes.push(e.code); // passed over: the anchor stays the previous call's
      target = null; unit = null;
    }
    segments.push({
      name: call.name, action: "run", loader: L.name, steps: `${steps}`, start_step: `${startStep}`,
      start: progressJson(start), stop: progressJson(pos),
      target: target === null ? "0ba" : `${canonical(target)}${unit}`, abandoned, stop_at_runtime: unit === "tok" && L.tps === null,
    });
  }
  return { pos, segments, codes, reads };
}

// a Progress as JSON: a token count the plan cannot know is bounded by 0 below, unbounded above
const progressJson = (p) => Object.fromEntries(Object.entries(p).map(([k, v]) => [k, v === null ? { min: "0", max: null } : `${v}`]));

// a time value's canonical form (docs/grammar.md): whole, a finite decimal, or a reduced ratio
function canonical(x) {
  if (x.d === 1n) return `${x.n}`;
  let twos = 0n, fives = 0n, d = x.d;
  while (d % 2n === 0n) { d /= 2n; twos += 1n; }
  while (d % 5n === 0n) { d /= 5n; fives += 1n; }
  if (d !== 1n) return `${x.n}/${x.d}`;
  const places = twos > fives ? twos : fives;
  const digits = `${(x.n * 10n ** places) / x.d}`.padStart(Number(places) + 1, "0");
  return `${digits.slice(0, -Number(places))}.${digits.slice(-Number(places))}`;
}

// how many times each sample is read: maximal runs of equal count > 0, by loader then start
function readRuns(reads) {
  const byLoader = new Map();
  for (const [name, start, stop, times] of reads) {
    if (start >= stop || times === 0n) continue;
    if (!byLoader.has(name)) byLoader.set(name, []);
    byLoader.get(name).push([start, times], [stop, -times]);
  }
  const runs = [];
  for (const name of [...byLoader.keys()].sort()) {
    const edges = byLoader.get(name).sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
    let count = 0n, prev = null;
    for (const [at, delta] of edges) {
      if (prev !== null && at > prev && count > 0n) {
        const last = runs.at(-1);
        if (last && last.loader === name && last.stop === prev && last.times === count) last.stop = at;
        else runs.push({ loader: name, start: prev, stop: at, times: count });
      }
      count += delta; prev = at;
    }
  }
  return runs.map((r) => ({ loader: r.loader, start: `${r.start}`, stop: `${r.stop}`, times: `${r.times}` }));
}

const PLAN_ERRORS = new Set(["no-duration", "cannot-convert", "tokens-unknown"]);

function answer(request) {
  const id = request.id;
  try {
    if (request.resume_from != null) throw unsupported("resume_from: resumes are outside the core level");
    if (request.world_size != null) throw unsupported("world_size: sharding is outside the core level");
    if (request.checkpoint != null) throw unsupported("checkpoint: taking a checkpoint up is outside the core level");
    const want = request.want ?? ["plan"];
    for (const w of want) if (w !== "plan" && w !== "reads") throw unsupported(`want ${w}: outside the core level`);
    refuseFloats(request.scenario);
    const p = plan(readScenario(request.scenario_data));
    const error = p.codes.find((c) => PLAN_ERRORS.has(c));
    if (error) return { id, error: { code: error, phase: "plan" } };
    const out = { id };
    if (want.includes("plan")) {
      const stop = progressJson(p.pos);
      out.plan = { total_steps: `${p.pos.batch}`, stop, segments: p.segments, diagnostics: [...new Set(p.codes)] };
    }
    if (want.includes("reads")) out.reads = readRuns(p.reads);
    return out;
  } catch (e) {
    if (!(e instanceof Refused)) throw e;
    return e.kind === "unsupported" ? { id, unsupported: e.message } : { id, error: { code: e.code, phase: e.phase } };
  }
}

const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
for await (const line of lines) {
  if (line.trim() === "") continue;
  let request;
  try {
    request = JSON.parse(line);
  } catch {
    process.stdout.write(JSON.stringify({ id: null, unsupported: "the request is not JSON" }) + "\n");
    continue;
  }
  let response;
  try {
    response = answer(request);
  } catch (e) {
    response = { id: request.id, unsupported: `internal error: ${e.message}` };
  }
  process.stdout.write(JSON.stringify(response) + "\n");
}
