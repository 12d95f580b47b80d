// Connecting an app (an MCP client such as Claude or VS Code) over OAuth: the consent page that
// /oauth/authorize sends the browser to, /connect?request=<request_id>. It shows who asks, where
// the answer goes and what for, and sends the browser on to the address the API answers with;
// it never takes a redirect target from its own query string.

import { api } from '../api.js';
import { field, h, replace, select } from '../dom.js';
import { parseUsd, when } from '../format.js';
import { clearErrors, errorNotice, fieldError, showProblem, skeleton } from '../forms.js';
import { clientLogo, endpointText, httpsUrl, setPageTitle } from '../components.js';
import { session } from '../state.js';

// How Toolgate knows the client, said to the person deciding.
const CLIENT_KINDS = {
  metadata_document: 'The app is identified by the address of its metadata document.',
  registered: 'The app registered itself with Toolgate; its name is its own claim, not verified.',
  pre_registered: 'The app is registered by the operators of this Toolgate.',
};

// `${scheme}//${host}${path}` of an address, or null when it does not parse.
function withoutQuery(address) {
  try {
    const u = new URL(address);
    return `${u.protocol}//${u.host}${u.pathname}`;
  } catch {
    return null;
  }
}

// The address an answer sends the browser to: the API's redirect_to, and only when it is the
// client's redirect_uri (same scheme, host and path) with the answer's parameters added.
function answerTarget(redirectTo, redirectUri) {
  if (typeof redirectTo !== 'string') return null;
  const target = withoutQuery(redirectTo);
  if (!target || /^(javascript|data|vbscript|blob|file):/i.test(target)) return null;
  return target === withoutQuery(redirectUri) ? redirectTo : null;
}

// A load error as the person deciding reads it: what happened and what to do, with no buttons.
// Any other problem (a tool the organization cannot use, one that does not exist) keeps the
// API's own title and detail, which say why.
function loadProblem(error) {
  if (error.code === 'oauth_request_not_found') {
    return {
      title: 'This connection request is no longer valid',
      detail: 'It has expired, was already answered, or never existed. Go back to the app and connect again.',
    };
  }
  return error;
}

export async function render(container, { query }) {
  setPageTitle('Connect an app');
  const requestId = query.get('request') || '';
  if (!requestId) {
    replace(container, h('div', { class: 'narrow consent' }, h('h1', {}, 'Connect an app'),
      errorNotice({ title: 'No connection request', detail: 'Open this page from the app you are connecting to Toolgate.' })));
    return;
  }
  replace(container, h('div', { class: 'narrow consent' }, h('h1', {}, 'Connect an app'), skeleton('Loading the request', 4)));
  const path = `/oauth/requests/${encodeURIComponent(requestId)}`;
  let req;
  try {
    req = await api('GET', path);
  } catch (error) {
    if (error.status === 401) throw error;  // the router sends the visitor to log in, then back
    replace(container, h('div', { class: 'narrow consent' }, h('h1', {}, 'Connect an app'), errorNotice(loadProblem(error))));
    return;
  }

  const client = req.client || {};
  const name = client.name || 'An unnamed app';
  const redirectHost = client.redirect_host || '';
  const clientIdUrl = client.kind === 'metadata_document' ? httpsUrl(client.client_id) : null;
  const website = httpsUrl(client.client_uri);
  const organizations = Array.isArray(req.organizations) ? req.organizations : [];
  setPageTitle(`Connect ${name}`);

  const mine = organizations.some((o) => o.id === session.me?.organization?.id) ? session.me.organization.id : organizations[0]?.id;
  const org = select(organizations.map((o) => ({ value: o.id, label: o.name })), mine, { required: true });
  const cap = h('input', { type: 'text', inputmode: 'decimal', autocomplete: 'off', placeholder: 'No cap' });
  const approve = h('button', { type: 'submit', class: 'primary', disabled: !organizations.length }, 'Approve');
  const deny = h('button', { type: 'button' }, 'Deny');
  const status = h('p', { class: 'small', role: 'status' });
  const form = h('form', { class: 'consent-form', novalidate: true, aria: { label: `Answer ${name}` } },
    organizations.length
      ? field('Bill to organization', org, { name: 'organization_id', hint: 'The tools the app calls are charged to this organization.' })
      : h('p', { class: 'notice warn' }, 'None of your organizations can use this; you can only deny the request.'),
    field('Spending cap (USD, optional)', cap, { name: 'spending_cap_micro_usd', hint: 'The most the app may spend in all; leave it empty for no cap.' }),
    h('div', { class: 'row' }, approve, deny),
    status);

  // Sends the browser on with the answer; an address that is not the client's own is refused.
  let answered = false;
  function follow(answer) {
    const target = answerTarget(answer?.redirect_to, client.redirect_uri);
    if (!target) {
      showProblem(form, { title: 'Toolgate answered with an unexpected address', detail: 'Nothing was sent to the app. Go back to it and connect again.' });
      return;
    }
    answered = true;
    status.textContent = `Sending you back to ${redirectHost || 'the app'}… You can close this tab once the app has opened.`;
    window.location.assign(target);
  }

  // Both buttons wait while one answer is on its way; after it, neither works again.
  async function answer(send) {
    approve.disabled = true;
    deny.disabled = true;
    form.setAttribute('aria-busy', 'true');
    try {
      follow(await send());
    } catch (error) {
      showProblem(form, error);
    } finally {
      form.removeAttribute('aria-busy');
      if (!answered) {
        approve.disabled = !organizations.length;
        deny.disabled = false;
      }
    }
  }

  form.addEventListener('submit', (e) => {
    e.preventDefault();
    clearErrors(form);
    let capMicro = null;
    if (cap.value.trim()) {
      capMicro = parseUsd(cap.value);
      if (capMicro === null) {
        fieldError(form, 'spending_cap_micro_usd', 'must be an amount in dollars, such as 5 or 2.50, or empty for no cap');
        cap.focus();
        return;
      }
    }
    answer(() => api('POST', `${path}/approve`, { body: { organization_id: org.value, spending_cap_micro_usd: capMicro } }));
  });
  deny.addEventListener('click', () => {
    clearErrors(form);
    answer(() => api('POST', `${path}/deny`));
  });

  const endpoint = req.endpoint || {};
  const scopes = Array.isArray(req.scopes) ? req.scopes : [];
  replace(container, h('div', { class: 'narrow consent' },
    h('section', { class: 'panel', aria: { labelledby: 'consent-title' } },
      h('div', { class: 'consent-head' },
        clientLogo(client),
        h('h1', { id: 'consent-title', data: { consent: 'client-name' } }, `${name} wants to use your Toolgate account`)),
      h('p', { class: 'notice warn redirect-note', data: { consent: 'redirect-host' } },
        'Approving or denying sends you to ', h('strong', {}, redirectHost || 'the app'), '.',
        ' Continue only if you started this from that site or app.'),
      h('dl', { class: 'facts small' },
        clientIdUrl ? [h('dt', {}, 'Client ID'), h('dd', {}, h('code', { data: { consent: 'client-id' } }, clientIdUrl.href))] : null,
        website ? [h('dt', {}, 'Website'), h('dd', {}, h('a', { href: website.href, target: '_blank', rel: 'noopener noreferrer' }, website.host))] : null,
        h('dt', {}, 'Returns to'), h('dd', {}, h('code', {}, client.redirect_uri || '—'))),
      CLIENT_KINDS[client.kind] ? h('p', { class: 'small muted' }, CLIENT_KINDS[client.kind]) : null,
      h('h2', {}, 'It asks to'),
      h('ul', { class: 'consent-asks' },
        h('li', { data: { consent: 'endpoint' } },
          endpoint.kind === 'function'
            ? ['Use the tool ', h('strong', {}, endpointText(endpoint))]
            : [h('strong', {}, 'Use your whole workspace'), ': every tool your organization owns or has added']),
        scopes.map((s) => h('li', { data: { scope: s.name } }, h('code', {}, s.name), ': ', s.description || ''))),
      req.resource ? h('p', { class: 'small muted' }, 'Resource ', h('code', {}, req.resource)) : null,
      form,
      h('p', { class: 'small muted' }, req.expires_at ? `This request expires at ${when(req.expires_at)}. ` : '',
        'You can revoke the app at any time in Settings → Connected apps.'))));
}
