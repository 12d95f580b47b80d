// The single-page app: routes, the header navigation, and the key-expiry banner shown on every
// page. Pages live in pages/*.js; each exports render(container, {params, query}).

import { api } from './api.js';
import { h, replace } from './dom.js';
import { budgetAlerts, percent } from './budgets.js';
import { day, daysUntil, usd, when } from './format.js';
import { errorNotice } from './forms.js';
import { chromeChanged, navigate, onChromeChange, requireLogin, session, setRouter } from './state.js';
import * as auth from './pages/auth.js';
import * as connect from './pages/connect.js';
import * as earnings from './pages/earnings.js';
import * as executions from './pages/executions.js';
import * as marketplace from './pages/marketplace.js';
import * as myTools from './pages/my_tools.js';
import * as publish from './pages/publish.js';
import * as settings from './pages/settings.js';
import * as tool from './pages/tool.js';

// [pattern, page, needs a signed-in user]
const ROUTES = [
  [/^\/(?:marketplace)?$/, marketplace.render, false],
  [/^\/login$/, auth.renderLogin, false],
  [/^\/signup$/, auth.renderSignup, false],
  [/^\/tools\/([^/]+)$/, tool.render, false],
  [/^\/connect$/, connect.render, true],
  [/^\/my-tools$/, myTools.render, true],
  [/^\/publish$/, publish.renderCreate, true],
  [/^\/publish\/([^/]+)$/, publish.renderVersion, true],
  [/^\/publish\/([^/]+)\/listing$/, publish.renderEditListing, true],
  [/^\/settings(?:\/keys)?$/, settings.renderKeys, true],
  [/^\/settings\/secrets$/, settings.renderSecrets, true],
  [/^\/settings\/billing$/, settings.renderBilling, true],
  [/^\/settings\/earnings$/, earnings.render, true],
  [/^\/settings\/webhooks$/, settings.renderWebhooks, true],
  [/^\/settings\/apps$/, settings.renderApps, true],
  [/^\/executions$/, executions.render, true],
];

const main = document.getElementById('main');
const nav = document.getElementById('site-nav');
const banners = document.getElementById('banners');
const navToggle = document.querySelector('.nav-toggle');

function renderNav() {
  const here = window.location.pathname;
  const link = (href, text, match = href) => {
    const current = match === '/' ? here === '/' || here === '/marketplace' || here.startsWith('/tools/') : here.startsWith(match);
    return h('li', {}, h('a', { href, aria: { current: current ? 'page' : null } }, text));
  };
  const items = [link('/', 'Marketplace')];
  if (session.me) {
    items.push(link('/my-tools', 'My Tools'), link('/publish', 'Publish'), link('/executions', 'Executions'),
      link('/settings/keys', 'Settings', '/settings'));
    items.push(h('li', { class: 'who' }, `${session.me.user.email} · ${session.me.organization.name}`));
    items.push(h('li', {}, h('button', { type: 'button', class: 'link', on: { click: logout } }, 'Log out')));
  } else {
    items.push(link('/login', 'Log in'), link('/signup', 'Sign up'));
  }
  replace(nav, h('ul', {}, items));
}

async function logout() {
  try {
    await api('POST', '/auth/logout');
  } catch {
    // Signed out either way: the cookie is cleared or was already stale.
  }
  session.me = null;
  chromeChanged();
  navigate('/login');
}

// The banners every page shows a signed-in member: API keys that expire within 14 days
// (contract: status "expiring"), and spending limits at 80 % or more (budgets.js; cached for
// 30 s, so navigating does not read every key's limits each time). Each has its own slot.
const keyBanner = h('div', { class: 'banner-slot' });
const budgetBanner = h('div', { class: 'banner-slot' });
let budgetBannerText = '';  // what the budget banner shows, to leave it alone when unchanged

async function renderBanner() {
  if (!session.me) {
    keyBanner.replaceChildren();
    budgetBanner.replaceChildren();
    budgetBannerText = '';
    banners.replaceChildren();
    return;
  }
  if (!banners.contains(keyBanner)) banners.replaceChildren(keyBanner, budgetBanner);
  let keys = [];
  try {
    keys = (await api('GET', '/api-keys')).items || [];
  } catch {
    return;  // a banner is not worth an error message
  }
  renderKeyBanner(keys);
  let alerts = [];
  try {
    alerts = await budgetAlerts(keys);
  } catch {
    alerts = [];
  }
  if (session.me) renderBudgetBanner(alerts);
}

function renderKeyBanner(keys) {
  const expiring = keys.filter((k) => k.status === 'expiring' || (k.status === 'active' && daysUntil(k.expires_at) < 14));
  if (!expiring.length) {
    keyBanner.replaceChildren();
    return;
  }
  const lines = expiring.map((k) => {
    const days = Math.max(0, daysUntil(k.expires_at));
    const inDays = days === 0 ? 'today' : `in ${days} day${days === 1 ? '' : 's'}`;
    return h('li', {}, `API key “${k.name}” (${k.prefix}…) expires on ${day(k.expires_at)}, ${inDays}.`);
  });
  replace(keyBanner, h('div', { class: 'banner warn', role: 'status', data: { banner: 'key-expiry' } },
    h('div', { class: 'inner' },
      h('strong', {}, expiring.length === 1 ? 'An API key expires soon. ' : 'API keys expire soon. '),
      h('ul', { class: 'small' }, lines),
      h('span', { class: 'small' }, 'Create a new key, switch your callers to it, then revoke the old one: '),
      h('a', { href: '/settings/keys' }, 'Manage API keys'))));
}

// A reached limit refuses calls now, so it is an alert (read out at once); one at 80 % is a
// status message. A banner that says what it said before is left in place, so that moving
// between pages does not announce it again.
function renderBudgetBanner(alerts) {
  const text = JSON.stringify(alerts.map((a) => [a.keyId, a.whose, a.state.period.id, a.state.limit, a.state.spent]));
  if (text === budgetBannerText && budgetBanner.isConnected) return;
  budgetBannerText = text;
  if (!alerts.length) {
    budgetBanner.replaceChildren();
    return;
  }
  const reached = alerts.some((a) => a.state.level === 'reached');
  const lines = alerts.map(({ whose, state }) => h('li', { data: { level: state.level } },
    `${whose} ${state.period.id} spending limit of ${usd(state.limit)} is ${state.level === 'reached' ? 'reached' : `at ${percent(state)}`}`
      + ` (${usd(state.spent)} spent); it resets at ${when(state.resetsAt.toISOString())}.`));
  const orgOnly = alerts.every((a) => a.keyId === null);
  replace(budgetBanner, h('div', { class: `banner ${reached ? 'danger' : 'warn'}`, role: reached ? 'alert' : 'status', data: { banner: 'budget', level: reached ? 'reached' : 'warn' } },
    h('div', { class: 'inner' },
      h('strong', {}, reached ? 'A spending limit is reached: calls it covers are refused until it resets. ' : 'A spending limit is nearly reached. '),
      h('ul', { class: 'small' }, lines),
      h('a', { href: orgOnly ? '/settings/billing' : '/settings/keys' }, 'Review spending limits'))));
}

onChromeChange(() => {
  renderNav();
  renderBanner();
});

let started = false;  // false until the first view is shown

async function route() {
  const { pathname, search } = window.location;
  const query = new URLSearchParams(search);
  nav.classList.remove('open');
  document.getElementById('toast').textContent = '';  // it spoke of the page we left
  navToggle.setAttribute('aria-expanded', 'false');
  renderNav();
  renderBanner();
  const container = h('div', { class: 'view' });
  replace(main, container);
  // Keyboard and screen-reader users continue from the top of the new page (a page may then
  // focus its first field).
  if (started) main.focus({ preventScroll: true });
  started = true;
  for (const [pattern, page, needsUser] of ROUTES) {
    const m = pattern.exec(pathname);
    if (!m) continue;
    if (needsUser && !session.me) return requireLogin();
    try {
      await page(container, { params: m.slice(1).map(decodeURIComponent), query });
    } catch (error) {
      if (error.status === 401) return requireLogin();
      replace(container, errorNotice(error));
    }
    return undefined;
  }
  replace(container, h('h1', {}, 'Page not found'), h('p', {}, h('a', { href: '/' }, 'Go to the marketplace')));
  return undefined;
}

// Links inside the app change the view without a page load.
document.addEventListener('click', (e) => {
  if (e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
  const a = e.target.closest('a[href]');
  if (!a || a.target || a.hasAttribute('download')) return;
  const href = a.getAttribute('href');
  if (!href.startsWith('/') || href.startsWith('//') || href.startsWith('/api/')) return;
  e.preventDefault();
  window.scrollTo(0, 0);
  navigate(href);
});
window.addEventListener('popstate', () => route());
navToggle.addEventListener('click', () => {
  const open = nav.classList.toggle('open');
  navToggle.setAttribute('aria-expanded', String(open));
});

async function start() {
  setRouter(route);
  try {
    session.me = await api('GET', '/me');
  } catch {
    session.me = null;
  }
  await route();
}

start();
