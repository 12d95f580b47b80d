// Settings: API keys, secrets, billing, webhooks (the secret that signs asynchronous calls'
// callbacks) and connected apps (OAuth grants) of the signed-in user's organization.

import { ApiError, api, idempotencyKey, listAll } from '../api.js';
import { field, h, replace, table, toast, uid } from '../dom.js';
import { dateInputValue, day, parseUsd, usd, when } from '../format.js';
import { busy, clearErrors, errorNotice, fieldError, showProblem, skeleton } from '../forms.js';
import { clientLogo, copyButton, emptyState, endpointText, setPageTitle } from '../components.js';
import { budgetEditor, budgetSummary, getBudget } from '../budgets.js';
import { functionLink } from '../names.js';
import { chromeChanged, session } from '../state.js';

export function frame(container, current, title, ...content) {
  setPageTitle(title);
  const link = (href, text) => h('a', { href, aria: { current: href === current ? 'page' : null } }, text);
  replace(container,
    h('h1', {}, 'Settings'),
    h('p', { class: 'muted' }, `Organization ${session.me.organization.name}`),
    h('nav', { class: 'subnav', aria: { label: 'Settings' } },
      link('/settings/keys', 'API Keys'), link('/settings/secrets', 'Secrets'), link('/settings/billing', 'Billing'),
      link('/settings/earnings', 'Earnings'), link('/settings/webhooks', 'Webhooks'), link('/settings/apps', 'Connected apps')),
    h('h2', {}, title),
    content);
}

// An action that asks "are you sure?" in place instead of in a dialog.
function confirmButton(label, accessibleName, confirmLabel, action) {
  const box = h('span', { class: 'row' });
  const start = h('button', { type: 'button', class: 'small danger', aria: { label: accessibleName } }, label);
  const ask = () => {
    const yes = h('button', { type: 'button', class: 'small danger' }, confirmLabel);
    const no = h('button', { type: 'button', class: 'small' }, 'Cancel');
    yes.addEventListener('click', async () => {
      yes.disabled = true;
      no.disabled = true;
      try {
        await action();
      } catch (error) {
        replace(box, errorNotice(error));
      }
    });
    no.addEventListener('click', () => { replace(box, start); start.focus(); });
    replace(box, yes, no);
    yes.focus();
  };
  start.addEventListener('click', ask);
  box.append(start);
  return box;
}

const STATUS_BADGE = { active: 'ok', expiring: 'warn', expired: 'danger', revoked: 'danger' };

export async function renderKeys(container) {
  const name = h('input', { type: 'text', required: true, maxlength: '100' });
  const expires = h('input', { type: 'date', required: true, value: dateInputValue(90), min: dateInputValue(0), max: dateInputValue(730) });
  const invoke = h('input', { type: 'checkbox', name: 'scope', value: 'invoke', checked: true });
  const manage = h('input', { type: 'checkbox', name: 'scope', value: 'manage' });
  const created = h('div', { class: 'new-key' });
  const listBox = h('div', {}, skeleton('Loading keys', 3));
  const form = h('form', { class: 'panel', novalidate: true, aria: { label: 'Create an API key' } },
    h('h3', {}, 'Create a key'),
    h('div', { class: 'grid-2' },
      field('Name', name, { name: 'name', hint: 'Where the key is used, e.g. “billing service”.' }),
      field('Expires on', expires, { name: 'expires_at', hint: 'The key stops working at the end of this day (UTC); at most two years.' })),
    h('fieldset', { data: { field: 'scopes' } }, h('legend', {}, 'Scopes'),
      h('label', { class: 'choice' }, invoke, 'invoke: call tools'),
      h('label', { class: 'choice' }, manage, 'manage: use the management API (publish, keys, billing)')),
    h('button', { type: 'submit', class: 'primary' }, 'Create key'));

  // A key's limits open in a row below it; `open` remembers which one across reloads of the list.
  let open = null;
  const usable = (k) => k.status !== 'revoked' && k.status !== 'expired';

  function keyRow(k, budget, columns) {
    const limitsCell = h('td', { data: { limits: '' } }, budget ? budgetSummary(budget) : usable(k) ? '—' : 'None');
    const detail = h('tr', { class: 'budget-row', hidden: open !== k.id, data: { budgetOf: k.id } });
    const toggle = usable(k) && budget
      ? h('button', { type: 'button', class: 'small', aria: { expanded: String(open === k.id), label: `Spending limits of key ${k.name}` } }, 'Limits')
      : null;
    const fill = () => replace(detail, h('td', { colspan: String(columns) },
      h('h4', {}, `Spending limits of “${k.name}”`),
      budgetEditor({ keyId: k.id, name: `key ${k.name}`, budget, onSaved: (saved) => { budget = saved; limitsCell.textContent = budgetSummary(saved); chromeChanged(); } })));
    if (open === k.id && toggle) fill();
    toggle?.addEventListener('click', () => {
      const show = detail.hidden;
      if (show && !detail.firstChild) fill();
      detail.hidden = !show;
      toggle.setAttribute('aria-expanded', String(show));
      open = show ? k.id : null;
      if (show) detail.querySelector('input')?.focus();
    });
    return [h('tr', { data: { keyId: k.id } },
      h('td', {}, k.name),
      h('td', {}, h('code', {}, `${k.prefix}…`)),
      h('td', {}, (k.scopes || []).join(', ')),
      h('td', {}, day(k.expires_at)),
      h('td', {}, k.last_used_at ? when(k.last_used_at) : 'never'),
      h('td', {}, h('span', { class: `badge ${STATUS_BADGE[k.status] || ''}` }, k.status)),
      limitsCell,
      h('td', {}, h('div', { class: 'row' }, toggle, k.status === 'revoked' || k.status === 'expired' ? '—'
        : confirmButton('Revoke', `Revoke key ${k.name}`, 'Confirm revoke', async () => {
          await api('DELETE', `/api-keys/${encodeURIComponent(k.id)}`);
          toast(`Key ${k.name} is revoked.`);
          await loadList();
          chromeChanged();
        })))), detail];
  }

  async function loadList() {
    try {
      const keys = (await api('GET', '/api-keys')).items || [];
      // Each usable key's limits and spending; a key whose budget cannot be read shows "—".
      const budgets = await Promise.all(keys.map((k) => (usable(k) ? getBudget(k.id).catch(() => null) : null)));
      const headers = ['Name', 'Prefix', 'Scopes', 'Expires', 'Last used', 'Status', 'Spending limits', 'Actions'];
      replace(listBox, keys.length ? table('API keys', headers, keys.map((k, i) => keyRow(k, budgets[i], headers.length)))
        : emptyState('No keys yet. Create one to call tools from your code.'));
    } catch (error) {
      replace(listBox, errorNotice(error, () => { replace(listBox, skeleton('Loading', 3)); loadList(); }));
    }
  }

  form.addEventListener('submit', (e) => {
    e.preventDefault();
    clearErrors(form);
    const scopes = [invoke, manage].filter((c) => c.checked).map((c) => c.value);
    if (!expires.value) {
      fieldError(form, 'expires_at', 'is required');
      expires.focus();
      return;
    }
    busy(form, async () => {
      try {
        const key = await api('POST', '/api-keys', { body: { name: name.value.trim(), expires_at: `${expires.value}T23:59:59Z`, scopes } });
        const keyInput = h('input', { type: 'text', readonly: true, value: key.key, id: uid('key'), class: 'key-value', aria: { label: `The new key ${key.name}` } });
        const done = h('button', { type: 'button' }, 'I have stored it');
        done.addEventListener('click', () => { created.replaceChildren(); name.focus(); });
        replace(created, h('section', { class: 'notice warn', role: 'alert', aria: { label: 'New API key' } },
          h('h3', {}, `Key “${key.name}” is created`),
          h('p', {}, 'Copy it now and keep it somewhere safe: this is the only time Toolgate shows it.'),
          h('div', { class: 'secret-key' }, keyInput, copyButton(() => key.key, 'API key')),
          h('p', { class: 'small' }, `Expires ${day(key.expires_at)} · scopes ${(key.scopes || []).join(', ')}`),
          done));
        keyInput.focus();
        keyInput.select();
        form.reset();
        expires.value = dateInputValue(90);
        invoke.checked = true;
        await loadList();
        chromeChanged();
      } catch (error) {
        showProblem(form, error);
      }
    });
  });

  frame(container, '/settings/keys', 'API Keys',
    h('p', {}, 'Keys belong to the organization and work for every tool it owns or has added. Send a key as the ', h('code', {}, 'Authorization'), ' header. Rotate keys before they expire. Limits gives a key a daily and a monthly spending limit (UTC days and months).'),
    created, form, h('h3', {}, 'Your keys'), listBox);
  await loadList();
}

export async function renderSecrets(container) {
  const name = h('input', { type: 'text', required: true, maxlength: '100' });
  const value = h('input', { type: 'password', required: true, autocomplete: 'off' });
  const listBox = h('div', {}, skeleton('Loading secrets', 3));
  const form = h('form', { class: 'panel', novalidate: true, aria: { label: 'Create a secret' } },
    h('h3', {}, 'Create a secret'),
    h('div', { class: 'grid-2' },
      field('Name', name, { name: 'name', hint: 'Letters, digits, _ . and -, e.g. weather-api-token.' }),
      field('Value', value, { name: 'value', hint: 'Stored encrypted; never shown again, not even to you.' })),
    h('button', { type: 'submit', class: 'primary' }, 'Create secret'));

  function replaceForm(secret, cell) {
    const input = h('input', { type: 'password', autocomplete: 'off', required: true, id: uid('v') });
    const f = h('form', { novalidate: true, class: 'row', aria: { label: `Replace the value of ${secret.name}` } },
      h('div', { class: 'field', data: { field: 'value' } }, h('label', { for: input.id }, `New value for ${secret.name}`), input),
      h('button', { type: 'submit', class: 'primary small' }, 'Save'),
      h('button', { type: 'button', class: 'small', on: { click: () => loadList() } }, 'Cancel'));
    f.addEventListener('submit', (e) => {
      e.preventDefault();
      busy(f, async () => {
        try {
          await api('PUT', `/secrets/${encodeURIComponent(secret.id)}`, { body: { value: input.value } });
          toast(`The value of ${secret.name} is replaced.`);
          await loadList();
        } catch (error) {
          showProblem(f, error);
        }
      });
    });
    replace(cell, f);
    input.focus();
  }

  async function loadList() {
    try {
      const secrets = await listAll('/secrets');
      replace(listBox, secrets.length ? table('Secrets', ['Name', 'Secret ID', 'Created', 'Updated', 'Actions'],
        secrets.map((s) => {
          const actions = h('td', {});
          const replaceButton = h('button', { type: 'button', class: 'small', aria: { label: `Replace the value of ${s.name}` } }, 'Replace value');
          replaceButton.addEventListener('click', () => replaceForm(s, actions));
          actions.append(h('div', { class: 'row' }, replaceButton,
            confirmButton('Delete', `Delete secret ${s.name}`, 'Confirm delete', async () => {
              await api('DELETE', `/secrets/${encodeURIComponent(s.id)}`);
              toast(`Secret ${s.name} is deleted.`);
              await loadList();
            })));
          return h('tr', { data: { secretId: s.id } },
            h('td', {}, s.name),
            h('td', {}, h('span', { class: 'id-line' }, h('code', {}, s.id), copyButton(() => s.id, `secret ID of ${s.name}`))),
            h('td', {}, when(s.created_at)),
            h('td', {}, when(s.updated_at)),
            actions);
        }))
        : emptyState('No secrets yet. Tools that declare keys (such as an API token) read them from your secrets.'));
    } catch (error) {
      replace(listBox, errorNotice(error, () => { replace(listBox, skeleton('Loading', 3)); loadList(); }));
    }
  }

  form.addEventListener('submit', (e) => {
    e.preventDefault();
    busy(form, async () => {
      try {
        const s = await api('POST', '/secrets', { body: { name: name.value.trim(), value: value.value } });
        form.reset();
        clearErrors(form);
        toast(`Secret ${s.name} is created.`);
        await loadList();
      } catch (error) {
        showProblem(form, error);
      }
    });
  });

  frame(container, '/settings/secrets', 'Secrets',
    h('p', {}, 'When a tool declares keys, you pass the ', h('em', {}, 'ids'), ' of your secrets in the ', h('code', {}, 'X-Env-Keys'),
      ' header (for example ', h('code', {}, 'WEATHER_API_KEY=<secret_id>'), '); the values never leave Toolgate in clear.'),
    form, h('h3', {}, 'Your secrets'), listBox);
  await loadList();
}

const ENTRY_TYPES = {
  top_up: 'Top-up', charge: 'Charge', revenue: 'Revenue', grant: 'Grant',
  payment: 'Payment', refund: 'Refund', dispute: 'Dispute', payout: 'Payout',
};
// Entries that move money in or out without a call: no compute or function cost to show.
const CREDIT_TYPES = new Set(['top_up', 'grant', 'payment', 'refund', 'dispute', 'payout']);

// What the return pages of a checkout say (the provider sends the browser back to
// /settings/billing?checkout=success or ?checkout=cancelled). Credit arrives only with the
// provider's confirmation to billing (its webhook), never with this redirect, so success says so.
function checkoutReturnNotice(outcome, recheck) {
  if (outcome === 'success') {
    const again = h('button', { type: 'button', class: 'small' }, 'Check the balance again');
    again.addEventListener('click', recheck);
    return h('div', { class: 'notice ok', role: 'status', data: { checkout: 'success' } },
      h('strong', {}, 'Thank you: checkout is complete. '),
      'Your balance goes up when the payment provider confirms the payment to Toolgate, usually within a minute, not at this return. Coming back to this page again credits nothing twice. ',
      again);
  }
  if (outcome === 'cancelled') {
    return h('div', { class: 'notice warn', role: 'status', data: { checkout: 'cancelled' } },
      h('strong', {}, 'Checkout cancelled. '), 'Nothing was paid and your balance is unchanged. You can start again below.');
  }
  return null;
}

// Where a payment, refund or dispute came from: the provider and its checkout session (the ids
// its own records answer for).
function paymentSource(e) {
  const p = e.payment;
  const what = { payment: 'Checkout', refund: 'Refund of checkout', dispute: 'Dispute of checkout' }[e.type] || 'Checkout';
  return [`${what} with ${p.provider} `, h('code', {}, p.checkout_session_id || p.event_id)];
}

export async function renderBilling(container, { query } = {}) {
  const balanceBox = h('div', { class: 'money-cards', aria: { live: 'polite' } });
  const limitsBox = h('div', {}, skeleton('Loading spending limits', 2));
  const revenueBox = h('div', {});
  const grantsBox = h('div', {});
  const ledgerBox = h('div', {});
  const more = h('button', { type: 'button', hidden: true }, 'Load more');
  const amount = h('input', { type: 'text', inputmode: 'decimal', value: '10.00', required: true });
  const amountField = field('Amount (USD)', amount, { name: 'amount_micro_usd', hint: ' ' });
  const amountHint = amountField.querySelector('.hint');  // says what Top up does in this mode
  let pendingKey = idempotencyKey();  // reused until a top-up succeeds, so a retry credits once
  const formTitle = h('h3', {}, 'Top up');
  const form = h('form', { class: 'panel', novalidate: true, aria: { label: 'Top up' } },
    formTitle,
    h('div', { class: 'grid-2' }, amountField),
    h('button', { type: 'submit', class: 'primary' }, 'Top up'));
  // Where credit comes from (GET /billing/balance's funding): play money in demo, bought
  // through the payment provider in checkout, granted by an operator in grants (no form).
  const fundingNote = h('p', { class: 'small muted', data: { funding: '' }, aria: { live: 'polite' } });
  form.hidden = true;
  let funding = null;
  let cursor = null;

  function showFunding(mode) {
    funding = mode || 'grants';
    fundingNote.dataset.funding = funding;
    form.hidden = funding === 'grants';
    if (funding === 'demo') {
      formTitle.textContent = 'Top up with play money';
      amountHint.textContent = 'Free play money, added at once: this system runs in demo mode and takes no payments.';
      fundingNote.textContent = 'This system runs on play money (demo funding): top-ups are free and not real payments.';
    } else if (funding === 'checkout') {
      formTitle.textContent = 'Buy credit';
      amountHint.textContent = 'You pay on the payment provider’s page, then come back here.';
      fundingNote.textContent = 'Credit is bought through the payment provider: Top up takes you to its checkout page. Your balance goes up when the provider confirms the payment to Toolgate, not when you return here. An operator may also grant credit; grants show in the ledger.';
    } else {
      fundingNote.textContent = 'Credit comes from the operator of this system, who grants it to your organization; ask them for more. You cannot top up yourself here. Each grant shows below with who granted it and why.';
    }
  }

  async function loadBalance() {
    try {
      const b = await api('GET', '/billing/balance');
      showFunding(b.funding);
      const card = (label, micro, hint, key) => h('section', { class: 'panel', aria: { label }, data: { money: key } },
        h('p', { class: 'muted small' }, label), h('p', { class: 'amount' }, usd(micro)), h('p', { class: 'small muted' }, hint));
      replace(balanceBox,
        card('Balance', b.balance_micro_usd, 'Everything granted, topped up and earned, less what was charged.', 'balance'),
        card('Held', b.reserved_micro_usd, 'Reserved for executions still running.', 'held'),
        card('Available', b.available_micro_usd, 'What new executions can use.', 'available'));
    } catch (error) {
      replace(balanceBox, errorNotice(error));
    }
  }

  async function loadLimits() {
    try {
      const budget = await getBudget(null);
      replace(limitsBox, h('section', { class: 'panel', aria: { label: 'Organization spending limits' }, data: { limits: 'organization' } },
        h('h3', {}, 'Spending limits'),
        budgetEditor({ name: 'the organization', budget, onSaved: () => chromeChanged() })));
    } catch (error) {
      replace(limitsBox, errorNotice(error, () => { replace(limitsBox, skeleton('Loading spending limits', 2)); loadLimits(); }));
    }
  }

  const row = (e) => h('tr', { data: { type: e.type } },
    h('td', {}, when(e.created_at)),
    h('td', {}, ENTRY_TYPES[e.type] || e.type),
    h('td', {}, e.function_id ? functionLink(e.function_id)
      : e.type === 'grant' ? `${e.reason} (granted by ${e.granted_by ? e.granted_by.email : 'the operator'})`
        : e.payment ? paymentSource(e) : '—'),
    h('td', {}, e.version || '—'),
    h('td', { class: 'num' }, CREDIT_TYPES.has(e.type) ? '—' : usd(e.compute_micro_usd)),
    h('td', { class: 'num' }, CREDIT_TYPES.has(e.type) ? '—' : usd(e.function_micro_usd)),
    h('td', { class: 'num' }, usd(e.amount_micro_usd)));
  const headers = ['Date', 'Type', 'Tool or reason', 'Version', { label: 'Compute cost', num: true }, { label: 'Function cost', num: true }, { label: 'Amount', num: true }];

  async function loadLedger(append) {
    try {
      const page = await api('GET', `/billing/ledger?limit=50${append && cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      cursor = page.next_cursor || null;
      const items = page.items || [];
      if (append) ledgerBox.querySelector('tbody').append(...items.map(row));
      else replace(ledgerBox, items.length ? table('Ledger', headers, items.map(row)) : emptyState('No entries yet.'));
      more.hidden = !cursor;
    } catch (error) {
      replace(ledgerBox, errorNotice(error));
    }
  }

  // Revenue and the operator's grants, from the same read of the ledger.
  async function loadRevenueAndGrants() {
    try {
      const entries = await listAll('/billing/ledger', 5000);
      const revenue = entries.filter((e) => e.type === 'revenue');
      const total = revenue.reduce((sum, e) => sum + Number(e.amount_micro_usd), 0);
      replace(revenueBox, h('section', { class: 'panel', aria: { label: 'Revenue' }, data: { money: 'revenue' } },
        h('p', { class: 'muted small' }, 'Revenue earned by your tools (after the platform commission)'),
        h('p', { class: 'amount' }, usd(total)),
        h('p', { class: 'small' }, revenue.length ? 'Per day and per tool, with payouts: ' : 'Earned when other organizations run your paid tools. ',
          h('a', { href: '/settings/earnings' }, 'Earnings'))));
      const grants = entries.filter((e) => e.type === 'grant');
      replace(grantsBox, funding === 'grants' || grants.length
        ? [h('h3', {}, 'Grants'), grants.length
          ? table('Grants', ['Date', { label: 'Amount', num: true }, 'Reason', 'Granted by'], grants.map((g) => h('tr', { data: { grantId: g.id } },
            h('td', {}, when(g.created_at)),
            h('td', { class: 'num' }, usd(g.amount_micro_usd)),
            h('td', {}, g.reason || '—'),
            h('td', {}, g.granted_by ? g.granted_by.email : 'the operator'))))
          : emptyState('No credit granted yet. Ask the operator of this system to grant your organization credit.')]
        : []);
    } catch (error) {
      replace(revenueBox, errorNotice(error));
    }
  }

  async function topUp(micro) {
    const t = await api('POST', '/billing/top-ups', { body: { amount_micro_usd: micro }, headers: { 'Idempotency-Key': pendingKey } });
    pendingKey = idempotencyKey();
    toast(`Added ${usd(t.amount_micro_usd)} of play money. Balance ${usd(t.balance_micro_usd)}.`);
    await Promise.all([loadBalance(), loadLedger(false)]);
  }

  // Checkout: billing opens a session with the payment provider and the browser goes to its
  // page; the same Idempotency-Key until that works, so a double click opens one session.
  async function checkout(micro) {
    const session = await api('POST', '/billing/checkout-sessions', { body: { amount_micro_usd: micro }, headers: { 'Idempotency-Key': pendingKey } });
    if (!session || typeof session.checkout_url !== 'string' || !/^https?:\/\//.test(session.checkout_url)) {
      throw new ApiError(502, { title: 'The payment provider gave no checkout page', detail: 'Nothing was charged; try again in a moment.' });
    }
    pendingKey = idempotencyKey();
    window.location.assign(session.checkout_url);
  }

  form.addEventListener('submit', (e) => {
    e.preventDefault();
    clearErrors(form);
    const micro = parseUsd(amount.value);
    if (!micro) {
      fieldError(form, 'amount_micro_usd', 'must be a positive amount in dollars, such as 10 or 2.50');
      amount.focus();
      return;
    }
    // The provider takes whole cents (docs/api.md, "Checkout").
    if (funding === 'checkout' && micro % 10000 !== 0) {
      fieldError(form, 'amount_micro_usd', 'must be whole cents, such as 25 or 12.50');
      amount.focus();
      return;
    }
    busy(form, async () => {
      try {
        if (funding === 'checkout') await checkout(micro); else await topUp(micro);
      } catch (error) {
        showProblem(form, error);
      }
    });
  });
  more.addEventListener('click', () => loadLedger(true));

  frame(container, '/settings/billing', 'Billing',
    checkoutReturnNotice(query?.get('checkout'), () => Promise.all([loadBalance(), loadLedger(false)])),
    balanceBox, fundingNote, form, limitsBox, revenueBox, grantsBox,
    h('h3', {}, 'Ledger'),
    h('p', { class: 'small muted' }, 'Every grant, top-up, payment, charge, revenue and payout entry. A charge is compute cost plus, for another organization’s tool, its function cost.'),
    ledgerBox, more);
  await loadBalance();
  await Promise.all([loadLedger(false), loadRevenueAndGrants(), loadLimits()]);
}

// The organization's webhook secret (docs/api.md, "Callbacks"): it signs the callbacks of
// asynchronous calls (X-Callback-Url). Making it shows it once; rotating replaces it after a
// confirmation, and the previous one signs beside it until previous_valid_until. GET never
// returns the secret, only when it was made.
export async function renderWebhooks(container) {
  const box = h('section', { class: 'panel', aria: { label: 'Webhook secret' }, data: { webhookSecret: '' } },
    h('h3', {}, 'Webhook secret'), skeleton('Loading the webhook secret', 2));
  const revealed = h('div', { class: 'new-key' });

  // The secret just made, shown this once with a copy button.
  function reveal(answer, rotated) {
    const input = h('input', { type: 'text', readonly: true, value: answer.secret, id: uid('whsec'), class: 'key-value', aria: { label: 'The new webhook secret' } });
    const done = h('button', { type: 'button' }, 'I have stored it');
    done.addEventListener('click', () => { revealed.replaceChildren(); box.querySelector('button')?.focus(); });
    replace(revealed, h('section', { class: 'notice warn', role: 'alert', aria: { label: 'New webhook secret' }, data: { newWebhookSecret: '' } },
      h('h3', {}, rotated ? 'The webhook secret is rotated' : 'The webhook secret is made'),
      h('p', {}, 'Copy it now and give it to the receivers of your callbacks: this is the only time Toolgate shows it.'),
      h('div', { class: 'secret-key' }, input, copyButton(() => answer.secret, 'webhook secret')),
      rotated && answer.previous_valid_until
        ? h('p', { class: 'small' }, `The previous secret also signs until ${when(answer.previous_valid_until)}; switch your receivers before then.`)
        : null,
      done));
    input.focus();
    input.select();
  }

  async function make(rotated) {
    const answer = await api('POST', '/webhooks/secret');
    reveal(answer, rotated);
    show(answer);
  }

  function show(secret) {
    if (!secret) {
      const makeButton = h('button', { type: 'button', class: 'primary' }, 'Make a webhook secret');
      makeButton.addEventListener('click', async () => {
        makeButton.disabled = true;
        try {
          await make(false);
        } catch (error) {
          makeButton.disabled = false;
          replace(box, h('h3', {}, 'Webhook secret'), errorNotice(error));
        }
      });
      replace(box, h('h3', {}, 'Webhook secret'),
        h('p', { data: { webhookSecretState: 'none' } }, 'Your organization has no webhook secret yet. An asynchronous call with a callback URL needs one: it signs every callback.'),
        makeButton);
      return;
    }
    replace(box, h('h3', {}, 'Webhook secret'),
      h('dl', { class: 'facts', data: { webhookSecretState: 'made' } },
        h('dt', {}, 'Made'), h('dd', { data: { createdAt: secret.created_at } }, when(secret.created_at)),
        h('dt', {}, 'Previous secret'), h('dd', { data: { previousValidUntil: secret.previous_valid_until || '' } },
          secret.previous_valid_until ? `also signs until ${when(secret.previous_valid_until)}` : 'none signs any more')),
      h('p', { class: 'small muted' }, 'Toolgate never shows the secret again. Rotate it when it may have leaked: the new one signs every callback from then on, and the old one beside it for 24 hours, so your receivers can switch without missing one.'),
      confirmButton('Rotate secret', 'Rotate the webhook secret', 'Confirm rotate', () => make(true)));
  }

  async function load() {
    try {
      show(await api('GET', '/webhooks/secret'));
    } catch (error) {
      if (error.status === 404) show(null);
      else replace(box, h('h3', {}, 'Webhook secret'), errorNotice(error, () => { replace(box, h('h3', {}, 'Webhook secret'), skeleton('Loading the webhook secret', 2)); load(); }));
    }
  }

  frame(container, '/settings/webhooks', 'Webhooks',
    h('p', {}, 'An asynchronous call (', h('code', {}, 'Prefer: respond-async'), ') may name an ', h('code', {}, 'X-Callback-Url'),
      ': once it has finished, Toolgate POSTs its outcome there, signed with this secret the Standard Webhooks way (',
      h('code', {}, 'webhook-id'), ', ', h('code', {}, 'webhook-timestamp'), ', ', h('code', {}, 'webhook-signature'), '). See ',
      // target: a page of its own, outside the app's router.
      h('a', { href: '/docs#callbacks', target: '_blank', rel: 'noopener' }, 'Callbacks'), ' in the API reference for how to verify one.'),
    revealed, box);
  await load();
}

// The apps (MCP clients) someone allowed to use Toolgate over OAuth, each with what it reaches,
// who pays, and what it has used; revoking one stops its tokens at once.
export async function renderApps(container) {
  const listBox = h('div', {}, skeleton('Loading connected apps', 3));
  const headers = ['App', 'Access', 'Scopes', 'Bills to', { label: 'Cap', num: true }, 'Connected', 'Last used',
    { label: 'Calls', num: true }, { label: 'Spent', num: true }, 'Status', 'Actions'];

  const row = (g) => {
    const client = g.client || {};
    const name = client.name || 'An unnamed app';
    const endpoint = g.endpoint || {};
    return h('tr', { data: { grantId: g.grant_id } },
      h('td', {}, h('span', { class: 'client-cell' }, clientLogo(client, { small: true }),
        h('span', {}, h('span', { class: 'client-name' }, name), h('br'), h('span', { class: 'small muted' }, client.redirect_host || '')))),
      h('td', {}, endpoint.kind !== 'function' || !endpoint.function_id ? endpointText(endpoint)
        : endpoint.function_name ? h('a', { href: `/tools/${encodeURIComponent(endpoint.function_id)}` }, endpointText(endpoint))
          : [functionLink(endpoint.function_id), ' ', endpoint.version || '(latest version)']),
      h('td', {}, (g.scopes || []).map((scope, i) => [i ? ', ' : '', h('code', {}, scope)])),
      h('td', {}, g.organization?.name || '—'),
      h('td', { class: 'num' }, g.spending_cap_micro_usd === null || g.spending_cap_micro_usd === undefined ? 'No cap' : usd(g.spending_cap_micro_usd)),
      h('td', {}, when(g.created_at)),
      h('td', {}, g.last_used_at ? when(g.last_used_at) : 'never'),
      // null: billing did not say this time.
      h('td', { class: 'num' }, g.calls === null || g.calls === undefined ? '—' : Number(g.calls).toLocaleString('en-US')),
      h('td', { class: 'num' }, g.spent_micro_usd === null || g.spent_micro_usd === undefined ? '—' : usd(g.spent_micro_usd)),
      h('td', {}, h('span', { class: `badge ${STATUS_BADGE[g.status] || ''}` }, g.status)),
      h('td', {}, g.status !== 'active' ? '—'
        : confirmButton('Revoke', `Revoke ${name}`, 'Confirm revoke', async () => {
          await api('DELETE', `/oauth/grants/${encodeURIComponent(g.grant_id)}`);
          toast(`${name} is disconnected: its access is revoked.`);
          await loadList();
        })));
  };

  async function loadList() {
    try {
      const grants = (await api('GET', '/oauth/grants')).items || [];
      replace(listBox, grants.length ? table('Connected apps', headers, grants.map(row))
        : emptyState('No connected apps. When an MCP client such as Claude, ChatGPT or VS Code asks to use Toolgate and you approve, it is listed here.'));
    } catch (error) {
      replace(listBox, errorNotice(error, () => { replace(listBox, skeleton('Loading', 3)); loadList(); }));
    }
  }

  frame(container, '/settings/apps', 'Connected apps',
    h('p', {}, 'Apps you allowed to use Toolgate on your behalf. Their calls are charged to the organization you chose, up to its cap. Revoke an app to stop it at once; connect it again from the app when you need it.'),
    listBox);
  await loadList();
}
