// Sign up and log in. Both set the tg_session cookie (HttpOnly); the app then reads /me.

import { api } from '../api.js';
import { field, h, replace } from '../dom.js';
import { busy, showProblem } from '../forms.js';
import { setPageTitle } from '../components.js';
import { chromeChanged, navigate, session } from '../state.js';

// Where to go after signing in: ?next= when it is a path of this app, else the marketplace.
// Only a path that starts with one "/" counts: "//host", "/\host" (browsers read "\" as "/"),
// "https://host" and anything that resolves to another origin are ignored, so a link to the
// login page can never send someone off the site.
function nextPath(query) {
  const next = query.get('next') || '';
  if (!next.startsWith('/') || next.startsWith('//') || /[\\\u0000-\u001f\u007f]/.test(next)) return '/';
  let url;
  try {
    url = new URL(next, window.location.origin);
  } catch {
    return '/';
  }
  if (url.origin !== window.location.origin || url.pathname.startsWith('/login') || url.pathname.startsWith('/signup')) return '/';
  return url.pathname + url.search + url.hash;
}

// The ?next= to hand on to the other of login and signup ('' without one).
function nextQuery(query) {
  return nextPath(query) === '/' ? '' : `?next=${encodeURIComponent(nextPath(query))}`;
}

// A word on why the visitor is asked to sign in, when they come to connect an app.
function connectNote(query) {
  return nextPath(query).startsWith('/connect?')
    ? h('p', { class: 'notice warn', data: { note: 'connect' } }, 'An app asks to connect to your Toolgate account. Sign in first; you then see what it asks for and decide.')
    : null;
}

async function signedIn(answer, query) {
  session.me = { user: answer.user, organization: answer.organization };
  chromeChanged();
  await navigate(nextPath(query), { replace: true });
}

export async function renderLogin(container, { query }) {
  setPageTitle('Log in');
  const email = h('input', { type: 'email', autocomplete: 'username', required: true });
  const password = h('input', { type: 'password', autocomplete: 'current-password', required: true });
  const form = h('form', { class: 'panel', novalidate: true, aria: { label: 'Log in' } },
    field('Email', email, { name: 'email' }),
    field('Password', password, { name: 'password' }),
    h('button', { type: 'submit', class: 'primary' }, 'Log in'));
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    busy(form, async () => {
      try {
        const answer = await api('POST', '/auth/login', { body: { email: email.value.trim(), password: password.value } });
        await signedIn(answer, query);
      } catch (error) {
        showProblem(form, error);
      }
    });
  });
  replace(container, h('div', { class: 'narrow' },
    h('h1', {}, 'Log in'),
    session.me ? h('p', { class: 'notice ok' }, `You are signed in as ${session.me.user.email}.`) : null,
    connectNote(query),
    form,
    h('p', {}, 'New to Toolgate? ', h('a', { href: `/signup${nextQuery(query)}` }, 'Create an account'))));
  email.focus();
}

export async function renderSignup(container, { query }) {
  setPageTitle('Sign up');
  const organization = h('input', { type: 'text', autocomplete: 'organization', required: true });
  const email = h('input', { type: 'email', autocomplete: 'email', required: true });
  const password = h('input', { type: 'password', autocomplete: 'new-password', required: true, minlength: '10' });
  const form = h('form', { class: 'panel', novalidate: true, aria: { label: 'Sign up' } },
    field('Organization', organization, { name: 'organization', hint: 'Your team or company; tools you publish appear under this name.' }),
    field('Email', email, { name: 'email' }),
    field('Password', password, { name: 'password', hint: 'At least 10 characters.' }),
    h('button', { type: 'submit', class: 'primary' }, 'Create account'));
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    busy(form, async () => {
      try {
        const answer = await api('POST', '/auth/signup', {
          body: { organization: organization.value.trim(), email: email.value.trim(), password: password.value },
        });
        await signedIn(answer, query);
      } catch (error) {
        if (error.code === 'email_taken') error.errors = [{ field: 'email', message: 'is already registered; log in instead' }];
        showProblem(form, error);
      }
    });
  });
  replace(container, h('div', { class: 'narrow' },
    h('h1', {}, 'Create your account'),
    connectNote(query),
    form,
    h('p', {}, 'Already have an account? ', h('a', { href: `/login${nextQuery(query)}` }, 'Log in'))));
  organization.focus();
}
