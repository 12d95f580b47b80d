// Spending limits (docs/api.md, "Spending limits"): a daily and a monthly limit in micro-USD for
// the organization and for each API key, over UTC days and months. This module reads and writes
// them, turns what was spent against a limit into a level (warning from 80 %, reached at 100 %),
// and builds the editor the API Keys and Billing pages share.

import { api } from './api.js';
import { field, h, replace, toast } from './dom.js';
import { usd, usdInput, when } from './format.js';
import { busy, clearErrors, fieldError, showProblem } from './forms.js';

const MICRO_PER_USD = 1000000n;
// Money arrives as JSON numbers, which JavaScript holds exactly only up to 2^53; a larger limit
// (the API allows up to 10^18 micro-USD) would be rounded on its way back, so the web app stops
// at $9 billion, far above any real spending limit.
export const MAX_LIMIT_MICRO_USD = 9000000000n * MICRO_PER_USD;
export const WARN_RATIO = 0.8;

export const PERIODS = [
  { id: 'daily', limit: 'daily_micro_usd', spent: 'spent_today_micro_usd', label: 'Daily', spentLabel: 'spent today' },
  { id: 'monthly', limit: 'monthly_micro_usd', spent: 'spent_this_month_micro_usd', label: 'Monthly', spentLabel: 'spent this month' },
];

// A limit typed in USD ("5", "2.50", "$0.000001", "1,000") as exact micro-USD, parsed from the
// decimal text with integer arithmetic (never through a float). Empty text is "no limit".
// Returns {micro: number|null} or {error: message for the field}.
export function parseLimitUsd(text) {
  const s = String(text ?? '').trim().replace(/^\$\s*/, '');
  if (s === '') return { micro: null };
  const m = /^(\d{1,3}(?:,\d{3})+|\d+)(?:\.(\d*))?$/.exec(s);
  if (!m) return { error: 'must be an amount in USD such as 5 or 2.50 (leave it empty for no limit)' };
  const fraction = m[2] || '';
  if (fraction.length > 6) return { error: 'has more than six decimals: a micro-USD ($0.000001) is the smallest amount' };
  const micro = BigInt(m[1].replace(/,/g, '')) * MICRO_PER_USD + BigInt(fraction.padEnd(6, '0'));
  if (micro === 0n) return { error: 'must be more than $0 (leave it empty for no limit)' };
  if (micro > MAX_LIMIT_MICRO_USD) return { error: `must be at most ${usd(Number(MAX_LIMIT_MICRO_USD))}` };
  return { micro: Number(micro) };
}

// When the UTC period that contains `now` ends: the next midnight, or the first of next month.
export function resetsAt(period, now = new Date()) {
  const y = now.getUTCFullYear();
  const mo = now.getUTCMonth();
  return period === 'daily' ? new Date(Date.UTC(y, mo, now.getUTCDate() + 1)) : new Date(Date.UTC(y, mo + 1, 1));
}

// Each limit that is set, with what was spent against it: {period, limit, spent, ratio, percent
// (whole, rounded down), level ('ok' | 'warn' | 'reached'), resetsAt}.
export function limitStates(budget, now = new Date()) {
  if (!budget) return [];
  return PERIODS.filter((p) => budget[p.limit] !== null && budget[p.limit] !== undefined).map((p) => {
    const limit = Number(budget[p.limit]);
    const spent = Number(budget[p.spent] || 0);
    const ratio = limit > 0 ? spent / limit : 1;
    // The 80 % test in integers (spent × 5 ≥ limit × 4), so that no rounding decides it.
    const warn = BigInt(spent) * 5n >= BigInt(limit) * 4n;
    return {
      period: p, limit, spent, ratio,
      percent: limit > 0 ? Number((BigInt(spent) * 100n) / BigInt(limit)) : 100,
      level: spent >= limit ? 'reached' : warn ? 'warn' : 'ok',
      resetsAt: resetsAt(p.id, now),
    };
  });
}

// A state's share of its limit as text: "80 %", rounded down (79.99 % is not yet 80 %).
export function percent(state) {
  return `${state.percent.toLocaleString('en-US')} %`;
}

// "Daily: $0.80 of $1.00 spent (80 %)" for each limit set; "No limits" when none is.
export function budgetSummary(budget) {
  const states = limitStates(budget);
  if (!states.length) return 'No limits';
  return states.map((s) => `${s.period.label}: ${usd(s.spent)} of ${usd(s.limit)} (${percent(s)})`).join(' · ');
}

const budgetPath = (keyId) => (keyId ? `/api-keys/${encodeURIComponent(keyId)}/budget` : '/billing/budget');

export function getBudget(keyId) {
  return api('GET', budgetPath(keyId));
}

// A bar and a line of text per period: what was spent against the limit, or that none is set.
function usageLines(budget) {
  const states = new Map(limitStates(budget).map((s) => [s.period.id, s]));
  return h('ul', { class: 'budget-usage' }, PERIODS.map((p) => {
    const s = states.get(p.id);
    if (!s) {
      return h('li', { data: { period: p.id, level: 'none' } },
        `${p.label}: no limit · ${usd(budget?.[p.spent])} ${p.spentLabel}`);
    }
    return h('li', { data: { period: p.id, level: s.level } },
      h('span', {}, `${p.label}: ${usd(s.spent)} of ${usd(s.limit)} ${p.spentLabel} (${percent(s)})`,
        s.level === 'reached' ? ' · reached' : s.level === 'warn' ? ' · nearly reached' : '',
        ` · resets ${when(s.resetsAt.toISOString())}`),
      h('meter', { min: '0', max: String(s.limit), low: String(Math.floor(s.limit * WARN_RATIO)), high: String(Math.floor(s.limit * WARN_RATIO)),
        optimum: '0', value: String(Math.min(s.spent, s.limit)), aria: { label: `${p.label} limit used` } }));
  }));
}

// The limits editor: the usage against each limit and a form that sets or clears them. `keyId`
// null edits the organization's. `name` says whose limits they are, for the form's label.
// onSaved(budget) runs after a successful save.
export function budgetEditor({ keyId = null, name, budget, onSaved }) {
  const usage = h('div', { aria: { live: 'polite' } }, usageLines(budget));
  const inputs = {};
  for (const p of PERIODS) {
    inputs[p.id] = h('input', { type: 'text', inputmode: 'decimal', autocomplete: 'off',
      value: budget?.[p.limit] === null || budget?.[p.limit] === undefined ? '' : usdInput(budget[p.limit]) });
  }
  const form = h('form', { class: 'budget-form', novalidate: true, aria: { label: `Spending limits of ${name}` }, data: { budget: keyId || 'organization' } },
    usage,
    h('div', { class: 'grid-2' },
      field('Daily limit (USD)', inputs.daily, { name: 'daily_micro_usd', hint: 'Per UTC day. Empty: no daily limit.' }),
      field('Monthly limit (USD)', inputs.monthly, { name: 'monthly_micro_usd', hint: 'Per UTC calendar month. Empty: no monthly limit.' })),
    h('p', { class: 'small muted' }, keyId
      ? 'A call with this key that would pass a limit is refused (HTTP 402 budget_exceeded) and not charged. The organization’s own limits apply as well.'
      : 'Every call of the organization counts, whatever key, session or connected app makes it. A call that would pass a limit is refused (HTTP 402 budget_exceeded) and not charged.'),
    h('div', { class: 'row' },
      h('button', { type: 'submit', class: 'primary' }, 'Save limits'),
      h('button', { type: 'button', class: 'clear-limits' }, 'Remove both limits')));

  async function save(body) {
    try {
      const saved = await api('PUT', budgetPath(keyId), { body });
      replace(usage, usageLines(saved));
      for (const p of PERIODS) inputs[p.id].value = saved[p.limit] === null ? '' : usdInput(saved[p.limit]);
      toast(`Spending limits of ${name} saved: ${budgetSummary(saved)}.`);
      invalidateBudgetAlerts();
      if (onSaved) await onSaved(saved);
    } catch (error) {
      showProblem(form, error);
    }
  }

  form.addEventListener('submit', (e) => {
    e.preventDefault();
    clearErrors(form);
    const body = {};
    let firstBad = null;
    for (const p of PERIODS) {
      const parsed = parseLimitUsd(inputs[p.id].value);
      if (parsed.error) {
        fieldError(form, p.limit, parsed.error);
        firstBad = firstBad || inputs[p.id];
      } else {
        body[p.limit] = parsed.micro;
      }
    }
    if (firstBad) {
      firstBad.focus();
      return;
    }
    busy(form, () => save(body));
  });
  form.querySelector('.clear-limits').addEventListener('click', () => {
    clearErrors(form);
    busy(form, () => save({ daily_micro_usd: null, monthly_micro_usd: null }));
  });
  return form;
}

// ---- The banner's view of every limit, cached briefly ----

const ALERT_CACHE_MS = 30000;
let cached = null;  // {at, keysSig, promise}

// Drops the cached limits: after a limit is saved, the next navigation reads them again.
export function invalidateBudgetAlerts() {
  cached = null;
}

// The limits at or past 80 %: [{whose, keyId, state}], most used first. Reads the
// organization's budget and those of the active keys given, at most once per 30 seconds for the
// same keys (every navigation asks; a limit saved here invalidates it).
export function budgetAlerts(keys) {
  const active = (keys || []).filter((k) => k.status === 'active' || k.status === 'expiring');
  const keysSig = active.map((k) => k.id).join(',');
  if (cached && cached.keysSig === keysSig && Date.now() - cached.at < ALERT_CACHE_MS) return cached.promise;
  const promise = (async () => {
    const [org, ...perKey] = await Promise.allSettled([getBudget(null), ...active.map((k) => getBudget(k.id))]);
    const alerts = [];
    const add = (result, whose, keyId) => {
      if (result.status !== 'fulfilled') return;
      for (const state of limitStates(result.value)) if (state.level !== 'ok') alerts.push({ whose, keyId, state });
    };
    add(org, 'The organization’s', null);
    active.forEach((k, i) => add(perKey[i], `API key “${k.name}” (${k.prefix}…)`, k.id));
    alerts.sort((a, b) => b.state.ratio - a.state.ratio);
    return alerts;
  })();
  cached = { at: Date.now(), keysSig, promise };
  promise.catch(() => { cached = null; });
  return promise;
}
