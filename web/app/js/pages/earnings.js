// Settings → Earnings: what the organization's tools earned from other organizations' calls
// (GET /billing/earnings: the fees paid, less the platform's commission), per UTC day and per
// tool over a period, with the period's payouts, what can still be paid out, and the same
// statement as a CSV file.

import { ApiError, BASE, api, query as qs } from '../api.js';
import { field, h, replace, table } from '../dom.js';
import { count, day, usd, when } from '../format.js';
import { busy, clearErrors, errorNotice, fieldError, showProblem, skeleton } from '../forms.js';
import { emptyState } from '../components.js';
import { functionLink } from '../names.js';
import { navigate } from '../state.js';
import { frame } from './settings.js';

const DAY_MS = 86400000;
const DATE = /^\d{4}-\d{2}-\d{2}$/;

// "YYYY-MM-DD" of a time, in UTC.
const isoDay = (ms) => new Date(ms).toISOString().slice(0, 10);

// The period the page shows: ?from=&to= (UTC dates, both days included), else the last 30 days
// up to today, the API's default. The API's `to` is exclusive: the day after the last one.
export function periodOf(params, now = Date.now()) {
  const today = isoDay(now);
  const from = DATE.test(params.get('from') || '') ? params.get('from') : isoDay(Date.parse(`${today}T00:00:00Z`) - 29 * DAY_MS);
  const to = DATE.test(params.get('to') || '') ? params.get('to') : today;
  return { from, to, apiTo: isoDay(Date.parse(`${to}T00:00:00Z`) + DAY_MS) };
}

// Sums of the statement's rows by one of their members (date or function_id), in the order
// the API gives them (by date, then function).
function groupRows(items, key) {
  const groups = new Map();
  for (const row of items) {
    const id = row[key];
    const g = groups.get(id) || { id, function_name: row.function_name, calls: 0, gross: 0, commission: 0, net: 0 };
    g.calls += Number(row.calls);
    g.gross += Number(row.gross_micro_usd);
    g.commission += Number(row.commission_micro_usd);
    g.net += Number(row.net_micro_usd);
    groups.set(id, g);
  }
  return Array.from(groups.values());
}

const MONEY_HEADERS = [{ label: 'Calls', num: true }, { label: 'Fees paid', num: true }, { label: 'Commission', num: true }, { label: 'Earned', num: true }];
const moneyCells = (g) => [
  h('td', { class: 'num' }, Number(g.calls).toLocaleString('en-US')),
  h('td', { class: 'num' }, usd(g.gross)),
  h('td', { class: 'num' }, usd(g.commission)),
  h('td', { class: 'num', data: { net: '' } }, usd(g.net))];

// The file name the server gives (Content-Disposition), else one from the period.
function csvFilename(response, period) {
  const named = /filename="?([^";]+)"?/.exec(response.headers.get('Content-Disposition') || '');
  return named ? named[1] : `toolgate-earnings-${period.from}-${period.to}.csv`;
}

export async function render(container, { query } = {}) {
  const period = periodOf(query || new URLSearchParams());
  const fromInput = h('input', { type: 'date', value: period.from, required: true });
  const toInput = h('input', { type: 'date', value: period.to, required: true });
  const download = h('button', { type: 'button', data: { download: 'csv' } }, 'Download CSV');
  const periodForm = h('form', { class: 'panel', novalidate: true, aria: { label: 'Period' } },
    h('div', { class: 'period-form' },
      field('From (UTC)', fromInput, { name: 'from' }),
      field('To (UTC, included)', toInput, { name: 'to', hint: 'At most 366 days.' }),
      h('div', { class: 'row field' }, h('button', { type: 'submit', class: 'primary' }, 'Show'), download)));
  const statusBox = h('div', { aria: { live: 'polite' } });
  const body = h('div', {}, skeleton('Loading earnings', 4));

  periodForm.addEventListener('submit', (e) => {
    e.preventDefault();
    clearErrors(periodForm);
    if (!DATE.test(fromInput.value)) { fieldError(periodForm, 'from', 'is required'); fromInput.focus(); return; }
    if (!DATE.test(toInput.value)) { fieldError(periodForm, 'to', 'is required'); toInput.focus(); return; }
    if (toInput.value < fromInput.value) { fieldError(periodForm, 'to', 'must not be before From'); toInput.focus(); return; }
    navigate(`/settings/earnings${qs({ from: fromInput.value, to: toInput.value })}`);
  });

  // The CSV statement of the period shown: the API answers it for Accept: text/csv, which a
  // plain link cannot ask for, so it is fetched and handed to the browser as a file.
  download.addEventListener('click', () => busy(periodForm, async () => {
    download.disabled = true;
    try {
      let response;
      try {
        response = await fetch(`${BASE}/billing/earnings${qs({ from: period.from, to: period.apiTo })}`,
          { credentials: 'same-origin', headers: { Accept: 'text/csv' } });
      } catch {
        throw new ApiError(0, { title: 'Network error', detail: 'Toolgate could not be reached; check your connection and retry.' });
      }
      if (!response.ok) {
        let problem = null;
        try { problem = await response.json(); } catch { problem = null; }
        throw new ApiError(response.status, problem);
      }
      const blob = await response.blob();
      const link = h('a', { href: URL.createObjectURL(blob), download: csvFilename(response, period), class: 'sr-only' }, 'CSV');
      document.body.append(link);
      link.click();
      link.remove();
      setTimeout(() => URL.revokeObjectURL(link.href), 60000);
      replace(statusBox, h('p', { class: 'small muted' }, `Downloaded the statement from ${day(period.from)} to ${day(period.to)}.`));
    } catch (error) {
      showProblem(periodForm, error);
    } finally {
      download.disabled = false;
    }
  }));

  frame(container, '/settings/earnings', 'Earnings',
    h('p', {}, 'What your tools earned when other organizations ran them: the fees they paid, less the platform’s commission, per UTC day and per tool. An operator pays out earnings; each payout is listed with its reference.'),
    periodForm, statusBox, body);

  let statement;
  try {
    statement = await api('GET', `/billing/earnings${qs({ from: period.from, to: period.apiTo })}`);
  } catch (error) {
    // A period the API refuses (400 invalid_period) names its bad bound: shown at that field.
    if (error.status === 400 && error.errors.length) {
      showProblem(periodForm, error);
      replace(body);
    } else if (error.status === 400 || error.status === 422) {
      replace(body, errorNotice(error));
    } else {
      replace(body, errorNotice(error, () => render(container, { query })));
    }
    return;
  }
  const items = statement.items || [];
  const totals = statement.totals || {};
  const payouts = statement.payouts || [];
  const card = (label, micro, hint, key) => h('section', { class: 'panel', aria: { label }, data: { money: key } },
    h('p', { class: 'muted small' }, label), h('p', { class: 'amount' }, usd(micro)), h('p', { class: 'small muted' }, hint));
  replace(body,
    h('div', { class: 'money-cards' },
      card('Earned in the period', totals.net_micro_usd, `${count(totals.calls, 'paid call')}; fees ${usd(totals.gross_micro_usd)} less commission ${usd(totals.commission_micro_usd)}.`, 'earned'),
      card('Paid out in the period', statement.payouts_micro_usd, `${count(payouts.length, 'payout')} from ${day(period.from)} to ${day(period.to)}.`, 'paid-out'),
      card('Payable now', statement.payable_micro_usd, `All-time earnings ${usd(statement.earned_micro_usd)} less payouts ${usd(statement.paid_out_micro_usd)}, at most the balance (${usd(statement.balance_micro_usd)}).`, 'payable')),
    h('h3', {}, 'Per day'),
    items.length ? table('Earnings per day', [{ label: 'Day (UTC)' }, ...MONEY_HEADERS],
      groupRows(items, 'date').map((g) => h('tr', { data: { day: g.id } }, h('td', {}, day(`${g.id}T00:00:00Z`)), moneyCells(g))))
      : emptyState('No earnings in this period. Tools earn when other organizations run your paid versions.'),
    h('h3', {}, 'Per tool'),
    items.length ? table('Earnings per tool', [{ label: 'Tool' }, ...MONEY_HEADERS],
      groupRows(items, 'function_id').map((g) => h('tr', { data: { functionId: g.id } },
        h('td', {}, g.function_name ? h('a', { href: `/tools/${encodeURIComponent(g.id)}` }, g.function_name) : functionLink(g.id)), moneyCells(g))))
      : emptyState('No tool earned anything in this period.'),
    h('h3', {}, 'Payouts'),
    payouts.length ? table('Payouts', ['Date', { label: 'Amount', num: true }, 'Reference'],
      payouts.map((p) => h('tr', { data: { payoutId: p.payout_id } },
        h('td', {}, when(p.created_at)), h('td', { class: 'num' }, usd(p.amount_micro_usd)), h('td', {}, p.reference))))
      : emptyState('No payouts in this period.'));
}
