// The lecture's formulas for the static page, in plain JavaScript (no dependencies, no build).
//
// Each function mirrors one function of the Python package (named in its JSDoc) with the same
// algorithm, the same tie-breaking and the same order of float operations where it matters;
// tests/test_page_parity.py checks every one against the package on seeded grids of inputs.
// Numbers are scalars (the page maps over its curves); bad input throws a RangeError or
// TypeError that names the argument and shows the value, as the package's ValueError does.
//
// Exported API (camelCase; the Python name in brackets):
//   reliability       chainSuccess(p, n)                 [reliability.chain_success]
//                     stepRate(success, n)               [reliability.step_rate]
//                     halfLife(p)                        [reliability.half_life]
//                     checkedStep(p, d)                  [reliability.checked_step]
//                     perfectCheckAttempts(p, k)         [reliability.perfect_check_attempts]
//                     undetectedFloor(p, d)              [reliability.undetected_floor]
//                     checkedStepLimit(p, d)             [reliability.checked_step_limit]
//                     expectedAttempts(p, d)             [reliability.expected_attempts]
//                     checkedStepFallible(p, d, phi)     [reliability.checked_step_fallible]
//                     checkHelps(d, phi) -> boolean      [reliability.check_helps]
//                     discriminationAccuracy(d, phi)     [reliability.discrimination_accuracy]
//                     perStepVsPerGraph(p, n, d) -> {perStep, perGraph}
//                                                        [reliability.per_step_vs_per_graph]
//   audited chain     successExact(n, p, q, budget)      [markov.success_exact]
//                     groundedSurvival(t, p, q)          [markov.grounded_survival]
//                     groundedHalfLife(p, q)             [markov.grounded_half_life]
//                     expectedRounds(n, p, q)            [markov.expected_rounds]
//                     minBudgetFactor(p)                 [markov.min_budget_factor]
//                     roundedBudget(budgetFactor, n)     [round(budget_factor * n), half to even]
//                     collapseHorizon(p, q, budgetFactor = 2, threshold = 0.5, grid = 5..200 by 5)
//                       -> n or null                     [markov.collapse_horizon]
//                     referenceRow(p, budgetFactor, q, ns = [10, 25, 50, 100, 200], grid)
//                       -> {q, success: {n: P}, collapseN, halfLife}  [a markov.ReferenceRow]
//   (the plan-DAG functions are in plans.js, the checks of their arguments in checks.js)
//
// Agreement with the package, measured by tests/test_page_parity.py on about 15,000 cases:
// orders, paths, cycles and schedules exactly; every number within 1e-12 relative, at worst
// 3e-13 (successExact with n in the thousands, where a one-ulp difference between V8's and
// glibc's log or exp moves an exponent of several hundred) and below 4e-15 over the horizon
// explorer's sliders.

import { count, largeCount, number, probability, shown } from "./checks.js";

// -- reliability of a chain of steps ------------------------------------------------------------

/** p^n: all n dependent steps succeed [reliability.chain_success]. */
export function chainSuccess(p, n) {
  return Math.pow(probability("p", p), largeCount("n", n));
}

/** success^(1/n), the per-step rate of a whole task [reliability.step_rate]. */
export function stepRate(success, n) {
  return Math.pow(probability("success", success), 1 / largeCount("n", n, 1));
}

/** ln 2 / -ln p, steps until success halves; inf at p = 1, 0 at p = 0 [reliability.half_life]. */
export function halfLife(p) {
  return Math.LN2 / Math.abs(Math.log(probability("p", p)));
}

/** p + (1 - p) d p: a check of detection d and one fresh retry [reliability.checked_step]. */
export function checkedStep(p, d) {
  probability("p", p);
  probability("d", d);
  return p + (1 - p) * d * p;
}

/** 1 - (1 - p)^k: a perfect check and up to k attempts [reliability.perfect_check_attempts]. */
export function perfectCheckAttempts(p, k) {
  probability("p", p);
  largeCount("k", k);
  return 1 - Math.pow(1 - p, k);
}

/** (1 - p)(1 - d): the failure no retry removes [reliability.undetected_floor]. */
export function undetectedFloor(p, d) {
  probability("p", p);
  probability("d", d);
  return (1 - p) * (1 - d);
}

/** 1 - d (1 - p) as (1 - d) + d p, which never cancels [reliability._retry_denominator]. */
function retryDenominator(p, d) {
  probability("p", p);
  probability("d", d);
  return 1 - d + d * p;
}

/** p / (1 - d (1 - p)), retried until the check passes; 0 at p = 0, d = 1
 * [reliability.checked_step_limit]. */
export function checkedStepLimit(p, d) {
  const denominator = retryDenominator(p, d);
  return denominator > 0 ? p / denominator : 0;
}

/** 1 / (1 - d (1 - p)) attempts on average; inf at p = 0, d = 1 [reliability.expected_attempts]. */
export function expectedAttempts(p, d) {
  return 1 / retryDenominator(p, d);
}

/** p + p (1 - p)(d - phi): one retry behind a check with false positives phi
 * [reliability.checked_step_fallible]. */
export function checkedStepFallible(p, d, phi) {
  probability("p", p);
  probability("d", d);
  probability("phi", phi);
  return p + p * (1 - p) * (d - phi);
}

/** d > phi: the fallible check raises success [reliability.check_helps]. */
export function checkHelps(d, phi) {
  return probability("d", d) > probability("phi", phi);
}

/** (1 - phi) d: a critic tells a right from a wrong candidate
 * [reliability.discrimination_accuracy]. */
export function discriminationAccuracy(d, phi) {
  probability("d", d);
  return (1 - probability("phi", phi)) * d;
}

/** {perStep: (p + (1-p)dp)^n, perGraph: p^n + (1 - p^n) d p^n}
 * [reliability.per_step_vs_per_graph]. */
export function perStepVsPerGraph(p, n, d) {
  probability("p", p);
  largeCount("n", n);
  probability("d", d);
  const chain = Math.pow(p, n);
  return {
    perStep: Math.pow(p + (1 - p) * d * p, n),
    perGraph: chain + (1 - chain) * d * chain,
  };
}

// -- the audited long-horizon chain (Manage-Execute-Audit) --------------------------------------

/** (1 - lambda)^t with lambda = (1-p)(1-q), written without cancellation
 * [markov.grounded_survival]. */
export function groundedSurvival(t, p, q) {
  largeCount("t", t);
  probability("p", p);
  probability("q", q);
  const lam = (1 - p) * (1 - q);
  return lam < 0.5 ? Math.exp(t * Math.log1p(-lam)) : Math.pow(p + q * (1 - p), t);
}

/** ln 2 / -ln(1 - lambda); inf at lambda = 0, 0 at lambda = 1 [markov.grounded_half_life]. */
export function groundedHalfLife(p, q) {
  probability("p", p);
  probability("q", q);
  return Math.LN2 / -Math.log1p(-((1 - p) * (1 - q)));
}

/** (1 - s^n) / lambda rounds until the chain absorbs, s = p / (p + lambda)
 * [markov.expected_rounds]. */
export function expectedRounds(n, p, q) {
  largeCount("n", n);
  probability("p", p);
  probability("q", q);
  const lam = (1 - p) * (1 - q);
  if (n === 0) return 0;
  if (p === 0) return 1 / lam; // never moves: corrupts with lambda = 1 - q, or stays forever
  if (!(lam > 0)) return n / p;
  return -Math.expm1(n * Math.log1p(-lam / (p + lam))) / lam;
}

/** 1/p, the budget factor full verification needs [markov.min_budget_factor]. */
export function minBudgetFactor(p) {
  return 1 / probability("p", p);
}

/** round(budgetFactor * n), half to even like Python's round and numpy.rint
 * [markov.horizon.rounded_budgets]. */
export function roundedBudget(budgetFactor, n) {
  checkBudgetFactor(budgetFactor);
  const x = budgetFactor * largeCount("n", n);
  if (!Number.isFinite(x)) {
    throw new RangeError(`budget_factor * n must stay within the float range, got ${x}`);
  }
  const whole = Math.floor(x);
  const rest = x - whole;
  return rest < 0.5 ? whole : rest > 0.5 ? whole + 1 : whole % 2 === 0 ? whole : whole + 1;
}

function checkBudgetFactor(value) {
  if (!(Number.isFinite(number("budget_factor", value)) && value >= 0)) {
    throw new RangeError(`budget_factor must be a finite number >= 0, got ${value}`);
  }
  return value;
}

// The long-sum engine [markov.longsum]: p^n sum_{k <= K} C(n-1+k, k) r^k, summed outwards from
// its largest term, the tail cut where it is below 1e-18 of the sum.
const TAIL_TOL = 1e-18;
const LONG = 2 ** 18;
const SEGMENT = 2 ** 16;
const MAX_TERMS = 2 ** 27;
const TINY = 1e-280;
const MAX_KEFF = 2 ** 62;
const ANCHOR = 4096;
const LOG_UNDERFLOW = -746;
const [S0, S1, S2, S3, S4] = [1 / 12, 1 / 360, 1 / 1260, 1 / 1680, 1 / 1188];
const STIRLING_TABLE = [
  0.0, 0.0810614667953272582196702, 0.0413406959554092940938221, 0.02767792568499833914878929,
  0.02079067210376509311152277, 0.01664469118982119216319487, 0.01387612882307074799874573,
  0.01189670994589177009505572, 0.010411265261972096497478567, 0.009255462182712732917728637,
  0.008330563433362871256469318, 0.007573675487951840794972024, 0.006942840107209529865664152,
  0.006408994188004207068439631, 0.005951370112758847735624416, 0.00555473355196280137103869,
];

/** Probability of finishing all n subtasks within budget rounds [markov.success_exact]. */
export function successExact(n, p, q, budget) {
  count("n", n);
  probability("p", p);
  probability("q", q);
  largeCount("budget", budget);
  if (n === 0) return 1;
  if (!(budget >= n)) return 0;
  const r = (1 - p) * q;
  if (r === 0) return Math.pow(p, n); // no caught errors: n advances in a row
  if (!(p > 0)) return 0;
  return series(n, p, q, r, budget);
}

/** [longsum._series] n >= 1, budget >= n, p > 0, r > 0. */
function series(n, p, q, r, budget) {
  const oneMinusR = p + (1 - p) * (1 - q);
  // Upper bounds (p/(1-r))^n and (e B p / n)^n: below e^-746 the answer rounds to 0.
  const logBound = n * Math.min(Math.log(p / oneMinusR), 1 + Math.log((budget * p) / n));
  if (!(logBound > LOG_UNDERFLOW)) return 0;
  if (n === 1) {
    const logR = oneMinusR < 0.5 ? Math.log1p(-Math.min(oneMinusR, 0.5)) : Math.log(r);
    return (p / oneMinusR) * -Math.expm1(budget * logR);
  }
  const keff = tailCut(n, r, oneMinusR, budget - n);
  if (keff > MAX_KEFF) throw tooLong(n, p, r);
  const mode = Math.min(Math.max(Math.ceil((r * n - 1) / oneMinusR), 0), keff);
  const sum =
    keff > LONG ? walkSum(n, p, q, r, oneMinusR, keff, mode) : blockSum(n, p, q, r, keff, mode);
  return Math.min(sum, 1);
}

function fmin(a, b) {
  return Number.isNaN(a) ? b : Number.isNaN(b) ? a : Math.min(a, b);
}

/** [longsum._tail_cut] Terms to sum: extra, or fewer where the rest is negligible. */
function tailCut(n, r, oneMinusR, extra) {
  let cut = NaN;
  for (const theta of [0.25, 0.5, 0.75]) {
    const gap = (1 - theta) * oneMinusR; // 1 - rho, without cancellation
    const k1 = Math.max((r * n - (1 - gap)) / (theta * oneMinusR), 0);
    const m = (-Math.log(TAIL_TOL) - Math.log(gap)) / -Math.log1p(-gap);
    cut = fmin(cut, Math.ceil(k1) + Math.ceil(m));
  }
  return fmin(extra, cut);
}

/** NumPy's sum of a float64 array: 0 plus the pairwise sum (numpy's pairwise_sum, blocks of 128
 * summed in eight lanes). Its rounding differs from a running sum's by about the square root of
 * the number of terms in ulps, which the exponent of a long sum of logs would carry into the
 * result; summing the same way keeps the page to the package's digits. */
function numpySum(values) {
  return 0 + pairwise(values, 0, values.length);
}

function pairwise(a, lo, n) {
  if (n < 8) {
    let res = -0;
    for (let i = 0; i < n; i++) res += a[lo + i];
    return res;
  }
  if (n <= 128) {
    const lanes = Array.from(a.subarray(lo, lo + 8));
    let i = 8;
    for (; i < n - (n % 8); i += 8) for (let j = 0; j < 8; j++) lanes[j] += a[lo + i + j];
    let res = lanes[0] + lanes[1] + (lanes[2] + lanes[3]);
    res += lanes[4] + lanes[5] + (lanes[6] + lanes[7]);
    for (; i < n; i++) res += a[lo + i];
    return res;
  }
  const half = Math.floor(n / 2) - (Math.floor(n / 2) % 8);
  return pairwise(a, lo, half) + pairwise(a, lo + half, n - half);
}

/** [longsum._block_sum] for one point: ratios right of the mode, inverse ratios left of it. */
function blockSum(n, p, q, r, keff, mode) {
  const right = new Float64Array(keff - mode); // running products of a_{k+1}/a_k, k >= mode
  let run = 1;
  for (let k = mode; k < keff; k++) {
    run *= (r * (n + k)) / (k + 1);
    right[k - mode] = run;
  }
  const factors = new Float64Array(mode); // a_k/a_{k+1} for k = mode - 1, ..., 0
  const left = new Float64Array(mode);
  run = 1;
  for (let i = 0; i < mode; i++) {
    const k = mode - 1 - i;
    factors[i] = (k + 1) / (r * (n + k));
    run *= factors[i];
    left[i] = run;
  }
  // log a_mode = n log p - log(a_0 / a_mode); a tiny product is redone as a sum of logs.
  const logRatio = run < TINY ? numpySum(factors.map(Math.log)) : Math.log(Math.max(run, TINY));
  let logMode = n * Math.log(p) - logRatio;
  if (mode > 0 && n + mode > ANCHOR) logMode = logTerm(n, mode, p, q);
  return Math.exp(logMode) * (1 + numpySum(right) + numpySum(left));
}

/** [longsum._stirling_error] log(m!) - log(sqrt(2 pi m) (m/e)^m) for whole m >= 0. */
function stirlingError(m) {
  if (m <= 15) return STIRLING_TABLE[m];
  const mm = m * m;
  return (S0 - (S1 - (S2 - (S3 - S4 / mm) / mm) / mm) / mm) / m;
}

/** [longsum._deviance] x log(x / mean) + mean - x without cancellation near x = mean. */
function deviance(x, mean) {
  const d = x - mean;
  const s = x + mean;
  if (!(Math.abs(d) < 0.1 * s)) return x * Math.log(x / mean) + mean - x;
  const v = d / s;
  let total = d * v;
  let term = 2 * x * v;
  for (let j = 1; j < 12; j++) {
    term = term * v * v;
    total = total + term / (2 * j + 1);
  }
  return total;
}

/** [longsum._log_term] log(C(n-1+k, k) p^n r^k) by Loader's saddle-point form. */
function logTerm(n, k, p, q) {
  const bigN = n - 1 + k;
  const lam = (1 - p) * (1 - q);
  const pPlusR = p + (1 - p) * q;
  const bigP = p / pPlusR;
  const bigR = ((1 - p) * q) / pPlusR;
  const logBinomial =
    stirlingError(bigN) -
    stirlingError(k) -
    stirlingError(n - 1) -
    deviance(k, bigN * bigR) -
    deviance(n - 1, bigN * bigP) +
    0.5 * Math.log(bigN / (2 * Math.PI * k * (n - 1)));
  return logBinomial + Math.log(bigP) + (n + k) * Math.log1p(-lam);
}

/** [longsum._walk_sum] One long point: walk out from the mode until the terms underflow. */
function walkSum(n, p, q, r, oneMinusR, keff, mode) {
  const reach = (40 * Math.sqrt(n * r)) / oneMinusR + 64;
  if (Math.min(keff - mode, reach) + Math.min(mode, reach) > 4 * MAX_TERMS) throw tooLong(n, p, r);
  const logMode = mode === 0 ? n * Math.log(p) : logTerm(n, mode, p, q);
  let total = 1;
  let walked = 0;
  for (const up of [true, false]) {
    let carry = 1;
    let k = mode;
    while (carry > 0 && (up ? k < keff : k > 0)) {
      // One segment as the package takes it: the running product, then times the carry.
      const size = up ? Math.min(SEGMENT, keff - k) : Math.min(SEGMENT, k);
      const segment = new Float64Array(size);
      let product = 1;
      for (let i = 0; i < size; i++) {
        const j = up ? k + i : k - 1 - i;
        product *= up ? (r * (n + j)) / (j + 1) : (j + 1) / (r * (n + j));
        segment[i] = carry * product;
      }
      total += numpySum(segment);
      carry = segment[size - 1];
      k += up ? size : -size;
      walked += size;
      if (walked > MAX_TERMS) throw tooLong(n, p, r);
    }
  }
  return Math.exp(logMode) * total;
}

function tooLong(n, p, r) {
  return new RangeError(
    `success_exact needs more than ${MAX_TERMS} terms at n=${n}, p=${p} with (1-p)q=${r}: ` +
      "the executor almost never advances while nearly every error is caught, over a huge " +
      "budget; use a smaller budget",
  );
}

function defaultGrid() {
  return Array.from({ length: 40 }, (_, i) => 5 * (i + 1));
}

/** Smallest n on grid whose success within round(budgetFactor n) rounds is below threshold,
 * or null [markov.collapse_horizon]. */
export function collapseHorizon(p, q, budgetFactor = 2, threshold = 0.5, grid = defaultGrid()) {
  probability("p", p);
  probability("q", q);
  probability("threshold", threshold);
  checkBudgetFactor(budgetFactor);
  if (!Array.isArray(grid) || grid.length === 0) {
    throw new RangeError(`grid must hold at least one horizon, got ${shown(grid)}`);
  }
  const ns = grid.map((n) => count("grid", n)).sort((a, b) => a - b);
  const budgets = ns.map((n) => roundedBudget(budgetFactor, n));
  for (let i = 0; i < ns.length; i++) {
    if (successExact(ns[i], p, q, budgets[i]) < threshold) return ns[i];
  }
  return null;
}

/** One row of the lecture's reference table [markov.reference_table(...).rows[0]]. */
export function referenceRow(p, budgetFactor, q, ns = [10, 25, 50, 100, 200], grid = undefined) {
  const success = {};
  for (const n of ns) {
    success[n] = successExact(count("n", n), p, q, roundedBudget(budgetFactor, n));
  }
  return {
    q,
    success,
    collapseN: collapseHorizon(p, q, budgetFactor, 0.5, grid),
    halfLife: groundedHalfLife(p, q),
  };
}
