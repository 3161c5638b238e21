/**
 * Installed before the script: `console` and `fetch` built over the two host functions, which only ever
 * pass strings. Nothing of the host's is reachable from the script: no process, require, file system,
 * timers or host objects; `Function` and `eval` exist but compile inside the sandbox.
 *
 * Every string the host copies out is bounded here, inside the sandbox, with functions taken before the
 * script runs (so replacing `String.prototype.slice` or `JSON.stringify` changes nothing): a console line,
 * a fetch request, an error's name and message. A script's memory is then its WebAssembly memory plus
 * at most these bounded copies on the host. It returns two helpers for the host: `describe(error)` (JSON
 * `[name, message]`) and `output(value, max)` (the result's JSON text, or its length when over `max`).
 */
export const prelude = `(function (hostFetch, hostLog, maxLine, maxRequest) {
  'use strict';
  const slice = Function.prototype.call.bind(String.prototype.slice);
  const stringify = JSON.stringify, parse = JSON.parse, toText = String, freeze = Object.freeze, Err = Error;
  const text = (v) => { if (typeof v === 'string') return v; try { const j = stringify(v); return j === undefined ? toText(v) : j } catch { try { return toText(v) } catch { return '?' } } };
  const line = (level) => (...args) => {
    let s = '';
    for (let i = 0; i < args.length && s.length < maxLine; i++) { const t = text(args[i]); s += (i ? ' ' : '') + (t.length > maxLine ? slice(t, 0, maxLine) : t) }
    hostLog(level, s.length > maxLine ? slice(s, 0, maxLine) : s);
  };
  globalThis.console = freeze({ log: line('info'), info: line('info'), warn: line('warn'), error: line('error'), debug: line('debug') });
  const fetchError = (code, message) => { const e = new Err(message); e.name = 'FetchError'; e.code = code; return e };
  globalThis.fetch = async function fetch(url, init) {
    init = init || {};
    const request = stringify({ url: toText(url), method: toText(init.method || 'GET'), headers: init.headers || {}, body: init.body === undefined || init.body === null ? null : (typeof init.body === 'string' ? init.body : stringify(init.body)) });
    if (typeof request !== 'string' || request.length > maxRequest) throw fetchError('too_large', 'A request may be at most ' + maxRequest + ' characters (URL, headers and body as JSON)');
    const r = parse(await hostFetch(request));
    return freeze({ url: r.url, status: r.status, statusText: r.statusText, ok: r.status >= 200 && r.status < 300, headers: freeze(r.headers),
      text: async () => r.body, json: async () => parse(r.body) });
  };
  const describe = (e) => {
    let name = 'Error', message = 'The script failed';
    try {
      if ((typeof e === 'object' && e !== null) || typeof e === 'function') {
        const n = e.name, m = e.message;
        if (typeof n === 'string') name = n;
        if (typeof m === 'string') message = m;
      } else message = toText(e);
    } catch (_) {}
    return stringify([slice(name, 0, 200), slice(message, 0, 2000)]);
  };
  const output = (value, max) => { const json = stringify(value); if (typeof json !== 'string') return 'null'; return json.length > max ? json.length : json };
  return freeze({ describe, output });
})`
