// Money is an integer number of micro-US-dollars everywhere (contract section 1); these turn it
// into text and back without floating point.

const MICRO = 1000000;

// 2500 -> "$0.0025", 5000000 -> "$5.00", -1 -> "-$0.000001". At least two decimals, at most six.
export function usd(micro) {
  const n = Number(micro || 0);
  const sign = n < 0 ? '-' : '';
  const abs = Math.abs(n);
  const whole = Math.floor(abs / MICRO);
  let frac = String(abs % MICRO).padStart(6, '0').replace(/0+$/, '');
  if (frac.length < 2) frac = frac.padEnd(2, '0');
  return `${sign}$${whole.toLocaleString('en-US')}.${frac}`;
}

// "Free" for 0, else usd().
export function price(micro) {
  return Number(micro || 0) === 0 ? 'Free' : usd(micro);
}

// "5", "5.25", "$0.0025" -> micro-USD; null when not a non-negative amount with at most six
// decimals.
export function parseUsd(text) {
  const m = /^\s*\$?\s*(\d{1,9})(?:\.(\d{0,6}))?\s*$/.exec(String(text));
  if (!m) return null;
  return Number(m[1]) * MICRO + Number((m[2] || '').padEnd(6, '0'));
}

// micro-USD -> the plain decimal text an input shows ("0.0025").
export function usdInput(micro) {
  return usd(micro).replace('$', '').replace(/,/g, '');
}

// An RFC 3339 time as "31 Jan 2027, 14:05 UTC"; "—" when absent.
export function when(rfc3339) {
  if (!rfc3339) return '—';
  const d = new Date(rfc3339);
  if (Number.isNaN(d.getTime())) return rfc3339;
  return `${d.toLocaleString('en-GB', { day: 'numeric', month: 'short', year: 'numeric', hour: '2-digit', minute: '2-digit', timeZone: 'UTC' })} UTC`;
}

// An RFC 3339 time to the second, "31 Jan 2027, 14:05:09 UTC", for events seconds apart
// (callback attempts); "—" when absent.
export function whenPrecise(rfc3339) {
  if (!rfc3339) return '—';
  const d = new Date(rfc3339);
  if (Number.isNaN(d.getTime())) return rfc3339;
  return `${d.toLocaleString('en-GB', { day: 'numeric', month: 'short', year: 'numeric', hour: '2-digit', minute: '2-digit', second: '2-digit', timeZone: 'UTC' })} UTC`;
}

// An RFC 3339 time as "31 Jan 2027".
export function day(rfc3339) {
  if (!rfc3339) return '—';
  const d = new Date(rfc3339);
  if (Number.isNaN(d.getTime())) return rfc3339;
  return d.toLocaleDateString('en-GB', { day: 'numeric', month: 'short', year: 'numeric', timeZone: 'UTC' });
}

// Whole days from now until the time (0 when under a day, negative when past).
export function daysUntil(rfc3339) {
  return Math.floor((new Date(rfc3339).getTime() - Date.now()) / 86400000);
}

// "YYYY-MM-DD" of today plus `days`, in UTC, for <input type=date>.
export function dateInputValue(days) {
  const d = new Date(Date.now() + days * 86400000);
  return d.toISOString().slice(0, 10);
}

// 4.333 -> "★★★★☆"; the text alternative is given by the caller.
export function stars(average) {
  const full = Math.round(Number(average || 0));
  return '★'.repeat(full) + '☆'.repeat(Math.max(0, 5 - full));
}

export function count(n, one, many = `${one}s`) {
  const v = Number(n || 0);
  return `${v.toLocaleString('en-US')} ${v === 1 ? one : many}`;
}

export const RUNTIMES = { python: 'Python', javascript: 'JavaScript', lua: 'Lua' };
export function runtimeName(runtime) {
  return RUNTIMES[runtime] || runtime || '—';
}

// A version's egress declaration as its permissions read: "No network access", or the hosts it
// may connect to ("*" is any public host).
export function egressSummary(egress) {
  const hosts = Array.isArray(egress) ? egress : [];
  if (hosts.length === 0) return 'No network access';
  return `Can connect to: ${hosts.map((e) => (e === '*' ? 'any public host' : e)).join(', ')}`;
}

// The short form for a card badge: "Network: 2 hosts", "Network: any host"; null for none.
export function egressBadge(egress) {
  const hosts = Array.isArray(egress) ? egress : [];
  if (hosts.length === 0) return null;
  if (hosts.includes('*')) return 'Network: any host';
  return hosts.length === 1 ? `Network: ${hosts[0]}` : `Network: ${hosts.length} hosts`;
}

// Pretty JSON for display; strings that hold JSON are parsed first.
export function prettyJson(value) {
  if (typeof value === 'string') {
    try {
      return JSON.stringify(JSON.parse(value), null, 2);
    } catch {
      return value;
    }
  }
  return JSON.stringify(value, null, 2);
}
