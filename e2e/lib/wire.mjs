// Reading the gateway's streamed responses as they are on the wire, not
// as a client library smooths them over: multipart/mixed (@defer's
// incremental delivery, Apollo's multipart subscriptions) split by the
// boundary its Content-Type names, and Server-Sent Events through eventsource-parser, a parser that
// follows the HTML standard's event-stream rules (an event is dispatched
// only if it has a data line, as EventSource does).
import { createParser } from 'eventsource-parser';
import { recorder } from './live.mjs';

/**
 * A media type and its parameters (names lower-cased, quotes removed):
 * `multipart/mixed; boundary="-"; deferSpec=20220824` gives
 * { type: 'multipart/mixed', params: { boundary: '-', deferspec: '20220824' } }.
 */
export function mediaType(header) {
  if (!header) return { type: '', params: {} };
  const [type, ...rest] = header.split(';');
  const params = {};
  for (const p of rest) {
    const i = p.indexOf('=');
    if (i < 0) continue;
    let v = p.slice(i + 1).trim();
    if (v.startsWith('"') && v.endsWith('"')) v = v.slice(1, -1).replace(/\\(.)/g, '$1');
    params[p.slice(0, i).trim().toLowerCase()] = v;
  }
  return { type: type.trim().toLowerCase(), params };
}

/**
 * The parts of a complete multipart body (RFC 2046): each part's headers
 * (lower-cased names) and body, and whether the close delimiter ended it.
 */
export function splitMultipart(text, boundary) {
  // The first delimiter may open the body without a CRLF before it.
  const pieces = `\r\n${text}`.split(`\r\n--${boundary}`);
  const parts = [];
  let closed = false;
  for (const piece of pieces.slice(1)) {
    if (piece.startsWith('--')) {
      closed = true;
      break;
    }
    const start = piece.indexOf('\r\n'); // after the delimiter's transport padding
    const sep = piece.indexOf('\r\n\r\n', start);
    const headerText = sep < 0 ? '' : piece.slice(start + 2, sep);
    const headers = {};
    for (const line of headerText.split('\r\n')) {
      const i = line.indexOf(':');
      if (i > 0) headers[line.slice(0, i).trim().toLowerCase()] = line.slice(i + 1).trim();
    }
    parts.push({ headers, body: sep < 0 ? piece.slice(start + 2) : piece.slice(sep + 4) });
  }
  return { parts, closed };
}

/**
 * Fetches a request whose answer is multipart/mixed and returns its
 * Content-Type (parsed), its JSON parts in order, and whether the close
 * delimiter ended the body. Fails on any other answer.
 */
export async function fetchMultipart(url, init, ms) {
  const res = await fetch(url, { ...init, signal: AbortSignal.timeout(ms) });
  const text = await res.text();
  const ct = mediaType(res.headers.get('content-type'));
  if (res.status !== 200 || ct.type !== 'multipart/mixed') {
    throw new Error(`${init.method ?? 'GET'} ${url}: ${res.status} ${res.headers.get('content-type')}: ${text.slice(0, 500)}`);
  }
  if (!ct.params.boundary) throw new Error(`no boundary in ${res.headers.get('content-type')}`);
  const { parts, closed } = splitMultipart(text, ct.params.boundary);
  return {
    contentType: ct,
    rawContentType: res.headers.get('content-type'),
    parts: parts.map((p) => ({ headers: p.headers, json: JSON.parse(p.body) })),
    closed,
  };
}

/**
 * Opens a multipart/mixed stream (a subscription's) and hands over each
 * part's JSON as soon as the delimiter after it arrives (only then is a
 * part known to be whole). Fails unless the answer is 200
 * multipart/mixed with a boundary. Returns the response, its Content-Type
 * (parsed), until(pred, what) over the parts, and abort().
 */
export async function openMultipart(url, init) {
  const ctrl = new AbortController();
  const res = await fetch(url, { ...init, signal: ctrl.signal });
  const ct = mediaType(res.headers.get('content-type'));
  if (res.status !== 200 || ct.type !== 'multipart/mixed' || !ct.params.boundary) {
    const text = await res.text();
    throw new Error(`${init.method ?? 'GET'} ${url}: ${res.status} ${res.headers.get('content-type')}, not a multipart stream: ${text.slice(0, 500)}`);
  }
  const parts = recorder();
  const delimiter = `\r\n--${ct.params.boundary}`;
  (async () => {
    const reader = res.body.getReader();
    const decoder = new TextDecoder();
    let buffer = '\r\n'; // the first delimiter may open the body without a CRLF
    let opened = false;
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += decoder.decode(value, { stream: true });
      for (let i = buffer.indexOf(delimiter); i >= 0; i = buffer.indexOf(delimiter)) {
        const piece = buffer.slice(0, i);
        buffer = buffer.slice(i + delimiter.length);
        if (opened) {
          const sep = piece.indexOf('\r\n\r\n');
          parts.next(JSON.parse(sep < 0 ? piece : piece.slice(sep + 4)));
        }
        opened = true;
        if (buffer.startsWith('--')) return;
      }
    }
  })().then(() => parts.complete(), (err) => parts.error(err));
  return { res, contentType: ct, parts: parts.events, until: parts.until, abort: () => ctrl.abort() };
}

/**
 * The events a stream's text holds, counted as the standard's parsing
 * model delimits them: blocks ended by a blank line that have at least
 * one field line (comment lines, starting with ':', are not fields). A
 * block without a data line is still an event the server sent, which a
 * standard parser drops: comparing this count with the dispatched events
 * shows it.
 */
export function sentEvents(raw) {
  const complete = raw.slice(0, Math.max(raw.lastIndexOf('\n\n'), raw.lastIndexOf('\r\n\r\n')) + 1);
  return complete.split(/\r?\n\r?\n|\r\r/).map((block) => block.split(/\r?\n|\r/).filter((l) => l !== '' && !l.startsWith(':')))
    .filter((fields) => fields.length > 0)
    .map((fields) => fields.join('\n'));
}

/**
 * Opens an event stream (fetch with `Accept: text/event-stream`) and
 * feeds its body to eventsource-parser as it arrives; fails unless the
 * answer is 200 text/event-stream. Returns the
 * response, the dispatched events ({ event, data, id }), the comment
 * lines, the raw text so far, until(pred, what) over the events,
 * ended(what) (the server closed the stream; rejects after the
 * deadline), and abort().
 */
export async function openEventStream(url, { method = 'GET', body, headers = {} } = {}) {
  const ctrl = new AbortController();
  const res = await fetch(url, {
    method,
    body,
    signal: ctrl.signal,
    headers: { accept: 'text/event-stream', ...(body ? { 'content-type': 'application/json' } : {}), ...headers },
  });
  if (res.status !== 200 || mediaType(res.headers.get('content-type')).type !== 'text/event-stream') {
    const text = await res.text();
    throw new Error(`${method} ${url}: ${res.status} ${res.headers.get('content-type')}, not an event stream: ${text.slice(0, 500)}`);
  }
  const events = recorder();
  const comments = [];
  let raw = '';
  const parser = createParser({
    onEvent: (e) => events.next(e),
    onComment: (c) => comments.push(c),
    onError: (err) => events.error(err),
  });
  (async () => {
    const reader = res.body.getReader();
    const decoder = new TextDecoder();
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      const text = decoder.decode(value, { stream: true });
      raw += text;
      parser.feed(text);
    }
  })().then(() => events.complete(), (err) => events.error(err));
  return {
    res,
    events: events.events,
    comments,
    raw: () => raw,
    until: events.until,
    async ended(what) {
      const r = await events.settled(what);
      if (r.error) throw r.error;
      return r.events;
    },
    abort: () => ctrl.abort(),
  };
}
