// Who is signed in, and navigation without a page load. main.js owns the router and registers it
// here so that pages can navigate without importing main.js.

export const session = {
  me: null,  // {user: {id, email}, organization: {id, name}} while signed in
};

let router = null;

export function setRouter(fn) {
  router = fn;
}

// Goes to a path of the app ("/tools/…?tab=x"); `replace` keeps it out of the history.
export function navigate(path, { replace = false } = {}) {
  if (replace) window.history.replaceState({}, '', path); else window.history.pushState({}, '', path);
  return router();
}

// Sends the visitor to the login page and back here afterwards.
export function requireLogin() {
  const next = window.location.pathname + window.location.search;
  return navigate(`/login?next=${encodeURIComponent(next)}`, { replace: true });
}

// Run whenever something that the page chrome shows changes (sign-in state, keys).
const listeners = new Set();
export function onChromeChange(fn) {
  listeners.add(fn);
}
export function chromeChanged() {
  for (const fn of listeners) fn();
}
