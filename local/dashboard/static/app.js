// The local dashboard: polls /api/state every second and renders it.
// Every value from the server goes into the page as text (textContent,
// attribute values), never as markup.
'use strict';

const POLL_MS = 1000;
const expanded = new Set(); // instance ids whose decision trace is open
const ending = new Set();   // instance ids whose End or Cancel is in flight
const draining = new Set(); // regions whose Drain or Refill is in flight

// el builds an element: attrs are attributes or on* handlers, children are
// nodes or strings (as text).
function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
    else e.setAttribute(k, v === true ? '' : String(v));
  }
  for (const c of children.flat(Infinity)) {
    if (c === undefined || c === null || c === false) continue;
    e.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return e;
}

function time(iso) {
  if (!iso) return '';
  const d = new Date(iso);
  return isNaN(d) ? iso : d.toLocaleTimeString([], { hour12: false });
}

function ago(iso, now) {
  if (!iso) return '';
  const s = Math.max(0, Math.round((new Date(now) - new Date(iso)) / 1000));
  return s < 90 ? s + ' s ago' : Math.round(s / 60) + ' min ago';
}

// until says how long until iso, from the server's now: "12 s left".
function until(iso, now, suffix) {
  const s = Math.round((new Date(iso) - new Date(now)) / 1000);
  if (isNaN(s)) return '';
  if (s <= 0) return 'due';
  return (s < 90 ? s + ' s' : Math.round(s / 60) + ' min') + (suffix === undefined ? ' left' : suffix);
}

function badge(state, title) {
  const s = state || 'unknown';
  return el('span', { class: 'badge badge-' + s.toLowerCase(), title: title }, s);
}

function ports(p) {
  return Object.entries(p || {}).sort().map(([k, v]) => k + ' ' + v).join(', ');
}

function flash(message, ok) {
  const f = document.getElementById('flash');
  f.textContent = message;
  f.className = 'flash ' + (ok ? 'ok' : 'bad');
  f.hidden = false;
}

async function post(path, body) {
  const r = await fetch(path, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  });
  let ans = {};
  try { ans = await r.json(); } catch (_) { ans = { message: r.status + ' ' + r.statusText }; }
  return { ok: r.ok && ans.ok !== false, ans };
}

// --- regions ---------------------------------------------------------------

function renderRegions(st) {
  const rows = st.regions.map((r) => {
    const health = el('td', {}, badge(r.health, r.healthReason || undefined),
      r.healthReason ? el('div', { class: 'muted' }, r.healthReason) : null,
      r.healthSince ? el('div', { class: 'muted' }, 'since ' + time(r.healthSince)) : null);
    const alloc = el('td', { 'data-kind': r.kind || 'gamefabric' }, r.allocator ? r.allocator : el('span', { class: 'muted' }, 'default'),
      r.regionString ? el('div', { class: 'muted' }, 'as ' + r.regionString) : null,
      el('div', { class: 'muted' }, r.kind === 'agones' ? 'Agones (mTLS)' : 'GameFabric'));
    const targets = el('td', {},
      r.pingTargets.length
        ? el('ul', { class: 'plain' }, r.pingTargets.map((t) => el('li', {}, t.address + ':' + t.port + ' ' + t.protocol)))
        : el('span', { class: 'muted' }, r.inPingCache ? 'none' : 'not in the ping cache'),
      r.zone ? el('div', { class: 'muted' }, 'zone ' + r.zone) : null);
    const servers = el('td', { 'data-servers': r.servers.length },
      el('strong', {}, String(r.servers.length)),
      el('ul', { class: 'plain' }, r.servers.map((s) => el('li', { title: 'Allocator ' + s.allocator + ', priority ' + s.priority },
        s.address, el('span', { class: 'muted' }, ' ' + ports(s.ports))))));
    return el('tr', { 'data-region': r.region }, el('th', { scope: 'row' }, r.region), health, alloc, targets, servers,
      el('td', {}, String(r.inGame)), capacity(r, st));
  });
  document.querySelector('#regions tbody').replaceChildren(...rows);
  const names = document.getElementById('region-names');
  names.replaceChildren(...st.regions.map((r) => el('option', { value: r.region })));
  document.getElementById('version-names').replaceChildren(...(st.versions || []).map((v) => el('option', { value: v })));
  const version = document.getElementById('alloc-version');
  if (!version.value && !version.dataset.touched && st.versions && st.versions.length) version.value = st.versions[0];
}

// capacity says whether the region's Allocator is drained, with the button
// that drains it for a while or refills it (emulated Allocators only).
function capacity(r, st) {
  const dry = Boolean(r.drainedUntil);
  const status = dry
    ? [badge('Drained', 'its Allocator answers "no game server" until then'),
      el('div', { class: 'muted' }, 'refills ' + time(r.drainedUntil) + ' (' + until(r.drainedUntil, st.now) + ')')]
    : [el('span', { class: 'muted' }, 'normal')];
  const seconds = dry ? 0 : st.drainForSeconds;
  const button = st.drainForSeconds && r.allocator && r.kind !== 'agones'
    ? el('button', {
      type: 'button', class: 'drain', 'data-drain': r.region, disabled: draining.has(r.region),
      title: dry ? 'Let its Allocator allocate again now' : 'Run its Allocator dry for ' + seconds + ' s: placements with a queue timeout wait',
      onclick: () => drain(r.region, seconds),
    }, dry ? 'Refill now' : 'Drain ' + seconds + ' s')
    : null;
  return el('td', { 'data-drained': String(dry) }, status, button ? el('div', {}, button) : null);
}

// --- rooms -----------------------------------------------------------------

// renderRooms lists, region by region, each game server that offered rooms:
// rooms in use of its capacity, whether it takes new games, and the game
// instances in its rooms with their states as the instances list has them.
function renderRooms(st) {
  const states = new Map(st.instances.map((i) => [i.gameInstanceId, i.state]));
  const rows = st.regions.flatMap((r) => r.roomServers.map((g) => {
    const closed = [g.closedReason, g.callbackFailures ? g.callbackFailures + ' failed callback(s) in a row' : '']
      .filter(Boolean).join(', ');
    const sessions = g.sessions.length
      ? el('ul', { class: 'plain' }, g.sessions.map((id) => el('li', { 'data-session': id },
        id, states.has(id) ? el('span', { class: 'muted' }, ' ' + states.get(id)) : null)))
      : el('span', { class: 'muted' }, 'none');
    return el('tr', { 'data-room-server': g.address, 'data-region': r.region, 'data-in-use': g.inUse, 'data-capacity': g.capacity },
      el('th', { scope: 'row' }, r.region),
      el('td', { class: 'mono' }, g.address),
      el('td', { class: 'rooms' }, el('strong', {}, g.inUse + '/' + g.capacity + ' rooms'), ' ',
        el('meter', { min: 0, max: Math.max(g.capacity, g.inUse, 1), value: g.inUse, title: g.inUse + ' of ' + g.capacity + ' in use' })),
      el('td', {}, badge(g.accepting ? 'Accepting' : 'Closed', closed || undefined),
        closed ? el('div', { class: 'muted' }, closed) : null),
      el('td', { 'data-sessions': g.sessions.length }, sessions));
  }));
  if (!rows.length) {
    rows.push(el('tr', {}, el('td', { colspan: 5, class: 'muted' },
      'No game server has offered rooms yet: a fleet entry with rooms: N offers them when its first game links.')));
  }
  document.querySelector('#rooms tbody').replaceChildren(...rows);
}

// --- instances -------------------------------------------------------------

function trace(i) {
  const facts = [
    ['desired region', i.desiredRegion || '(none: ranked by the ping cache)'],
    ['version', i.gameServerVersion || '(the fallback)'],
    ['allocated in', i.region ? i.region + (i.fallbackUsed ? ' (fallback)' : '') : ''],
    ['latency filter relaxed', i.latencyFilterRelaxed ? 'yes' : ''],
    ['server name', (i.linkedServer && i.linkedServer.serverName) || ''],
    ['linked', time(i.linkedAt)],
    ['last heartbeat', time(i.lastHeartbeatAt)],
    ['ended', i.endedAt ? time(i.endedAt) + ' (' + (i.endReason || '?') + ')' : ''],
    ['unhealthy', i.unhealthyAt ? time(i.unhealthyAt) + ' (' + (i.unhealthyReason || '?') + ')' : ''],
    ['queued until', i.queuedUntil ? time(i.queuedUntil) : ''],
    ['error', i.error ? i.error.code + ': ' + i.error.message : ''],
  ].filter(([, v]) => v);
  const dl = el('dl', { class: 'facts' }, facts.flatMap(([k, v]) => [el('dt', {}, k), el('dd', {}, v)]));
  const attempts = i.attempts.length
    ? el('table', { class: 'trace' },
      el('thead', {}, el('tr', {}, ['#', 'Region', 'Why', 'Answer', 'Took', 'Notes'].map((h) => el('th', {}, h)))),
      el('tbody', {}, i.attempts.map((a, n) => el('tr', { class: a.status >= 200 && a.status < 300 ? 'won' : '' },
        el('td', {}, String(n + 1)),
        el('td', {}, a.region, a.allocatorRegion ? el('span', { class: 'muted' }, ' as ' + a.allocatorRegion) : null),
        el('td', {}, a.reason || ''),
        el('td', {}, a.status ? String(a.status) : '—', a.error ? el('div', { class: 'muted' }, a.error) : null),
        el('td', {}, a.durationMs + ' ms'),
        el('td', {}, [a.placement === 'room' ? 'a room on ' + a.server : '', a.rateLimited ? 'rate limited' : '',
          a.suspectedOrphan ? 'suspected orphan' : '', a.maxPlayerLatencyMs ? 'latency cap ' + a.maxPlayerLatencyMs + ' ms' : '']
          .filter(Boolean).join(', '))))))
    : el('p', { class: 'muted' }, 'No attempts recorded (yet).');
  return el('div', { class: 'trace-box' }, el('h3', {}, 'Decision trace'), attempts, dl);
}

function endButton(i) {
  const can = (i.state === 'Linked' || i.state === 'Allocated') && !ending.has(i.gameInstanceId);
  return el('button', {
    type: 'button', class: 'end', 'data-end': i.gameInstanceId, disabled: !can,
    title: 'Send IWON to the game port, as the winning player would',
    onclick: () => end(i.gameInstanceId),
  }, ending.has(i.gameInstanceId) ? 'Ending…' : 'End (IWON)');
}

// cancelButton cancels a Queued placement (DELETE: Failed, PLACEMENT_CANCELLED).
function cancelButton(i) {
  const busy = ending.has(i.gameInstanceId);
  return el('button', {
    type: 'button', class: 'end', 'data-cancel': i.gameInstanceId, disabled: busy,
    title: 'Stop waiting: the placement fails with PLACEMENT_CANCELLED and never reaches GameFabric',
    onclick: () => cancelPlacement(i.gameInstanceId),
  }, busy ? 'Cancelling…' : 'Cancel');
}

// queueNote is a placement's queue under its state: its deadline and
// attempts while Queued, that it waited once it no longer does.
function queueNote(i, now) {
  if (!i.queuedUntil) return null;
  if (i.state !== 'Queued') {
    return el('div', { class: 'muted queue', title: 'queued until ' + time(i.queuedUntil) }, 'was queued');
  }
  const next = i.nextAttemptAt ? ', next in ' + until(i.nextAttemptAt, now, '') : '';
  return el('div', { class: 'muted queue', 'data-queued-until': i.queuedUntil },
    el('div', { class: 'deadline' }, 'until ' + time(i.queuedUntil) + ' (' + until(i.queuedUntil, now) + ')'),
    el('div', { class: 'tries' }, i.attempts.length + (i.attempts.length === 1 ? ' attempt' : ' attempts') + next));
}

const placementTitle = {
  room: 'a free room on a game server already in play',
  allocator: 'a whole game server from GameFabric\'s Allocator',
};

function renderInstances(st) {
  const rows = [];
  for (const i of st.instances) {
    const open = expanded.has(i.gameInstanceId);
    const toggle = el('button', {
      type: 'button', class: 'link', 'aria-expanded': String(open), 'data-trace': i.gameInstanceId,
      onclick: () => { open ? expanded.delete(i.gameInstanceId) : expanded.add(i.gameInstanceId); renderInstances(last); },
    }, (open ? '▾ ' : '▸ ') + i.gameInstanceId);
    const match = i.match ? el('span', { class: 'tag tag-match', title: 'a FlexMatch match\'s game instance: its id is the matchId' }, 'match') : null;
    const region = el('td', {}, i.region || el('span', { class: 'muted' }, i.desiredRegion || '—'),
      i.fallbackUsed ? el('span', { class: 'tag', title: 'desired ' + (i.desiredRegion || '?') }, 'fallback') : null);
    const server = el('td', {}, i.server ? i.server.address : '',
      i.placement ? el('span', { class: 'tag tag-' + i.placement, title: placementTitle[i.placement] }, i.placement) : null,
      i.server && i.server.ports ? el('div', { class: 'muted' }, ports(i.server.ports)) : null);
    rows.push(el('tr', { 'data-instance': i.gameInstanceId, 'data-state': i.state, 'data-placement': i.placement || null, 'data-match': i.match || null },
      el('td', {}, toggle, match), el('td', { class: 'state' }, badge(i.state), queueNote(i, st.now)), region, server,
      el('td', { title: i.createdAt || '' }, time(i.createdAt)), el('td', { title: i.updatedAt || '' }, ago(i.updatedAt, st.now)),
      el('td', {}, i.state === 'Queued' ? cancelButton(i) : endButton(i))));
    if (open) rows.push(el('tr', { class: 'detail', 'data-trace-of': i.gameInstanceId }, el('td', { colspan: 7 }, trace(i))));
  }
  if (!rows.length) rows.push(el('tr', {}, el('td', { colspan: 7, class: 'muted' }, 'No game instances yet: allocate one above.')));
  document.querySelector('#instances tbody').replaceChildren(...rows);
  document.getElementById('instances-note').textContent =
    st.moreInstances ? 'the newest ' + st.maxInstancesShown + ' of more' : st.instances.length + ' in the table';
}

// --- events ----------------------------------------------------------------

function renderEvents(st) {
  const items = st.events.map((e) => el('li', { 'data-seq': e.seq, 'data-detail-type': e.detailType, 'data-instance': e.gameInstanceId || null },
    el('time', { datetime: e.received }, time(e.received)), ' ',
    el('strong', {}, e.detailType), ' ',
    e.gameInstanceId || (e.region ? 'region ' + e.region : ''), ' ',
    e.address && !e.state
      ? el('span', { class: 'muted', 'data-address': e.address }, 'players connect to ' + e.address)
      : el('span', { class: 'muted' }, (e.previousState || '–') + ' → ' + (e.state || '?'))));
  if (!items.length) items.push(el('li', { class: 'muted' }, 'No events yet.'));
  document.getElementById('events').replaceChildren(...items);
}

// --- actions ---------------------------------------------------------------

async function allocate(ev) {
  ev.preventDefault();
  const button = document.getElementById('alloc-submit');
  const body = {
    region: document.getElementById('alloc-region').value,
    version: document.getElementById('alloc-version').value,
    gameInstanceId: document.getElementById('alloc-id').value,
    dedicated: document.getElementById('alloc-dedicated').checked,
  };
  const queue = document.getElementById('alloc-queue').value.trim();
  if (queue !== '') body.queueTimeoutSeconds = Number(queue);
  button.disabled = true;
  flash('Allocating' + (body.gameInstanceId ? ' ' + body.gameInstanceId : '') + ' in ' + body.region + '…', true);
  try {
    const { ok, ans } = await post('api/allocate', body);
    flash((ok ? '' : 'Allocation failed: ') + (ans.code ? ans.code + ': ' : '') + (ans.message || ''), ok);
    if (ok) document.getElementById('alloc-id').value = '';
  } catch (e) {
    flash('Allocation failed: ' + e, false);
  } finally {
    button.disabled = false;
    poll.now();
  }
}

async function playMatch(ev) {
  ev.preventDefault();
  const button = document.getElementById('match-submit');
  const body = {
    players: Number(document.getElementById('match-players').value || 0),
    near: document.getElementById('match-near').value,
  };
  button.disabled = true;
  flash('Matching ' + (body.players || 4) + ' players…', true);
  try {
    const { ok, ans } = await post('api/match', body);
    flash((ok ? '' : 'Match failed: ') + (ans.message || ''), ok);
  } catch (e) {
    flash('Match failed: ' + e, false);
  } finally {
    button.disabled = false;
    poll.now();
  }
}

async function end(id) {
  ending.add(id);
  if (last) renderInstances(last);
  try {
    const { ok, ans } = await post('api/end', { gameInstanceId: id });
    flash((ok ? '' : 'End failed: ') + (ans.message || ''), ok);
  } catch (e) {
    flash('End failed: ' + e, false);
  } finally {
    ending.delete(id);
    poll.now();
  }
}

async function cancelPlacement(id) {
  ending.add(id);
  if (last) renderInstances(last);
  try {
    const { ok, ans } = await post('api/cancel', { gameInstanceId: id });
    flash((ok ? '' : 'Cancel failed: ') + (ans.message || ''), ok);
  } catch (e) {
    flash('Cancel failed: ' + e, false);
  } finally {
    ending.delete(id);
    poll.now();
  }
}

async function drain(region, seconds) {
  draining.add(region);
  if (last) renderRegions(last);
  try {
    const { ok, ans } = await post('api/drain', { region, seconds });
    flash((ok ? '' : 'Drain failed: ') + (ans.message || ''), ok);
  } catch (e) {
    flash('Drain failed: ' + e, false);
  } finally {
    draining.delete(region);
    poll.now();
  }
}

// --- polling ---------------------------------------------------------------

let last = null;

function render(st) {
  last = st;
  renderRegions(st);
  renderRooms(st);
  renderInstances(st);
  renderEvents(st);
  document.getElementById('match-form').hidden = !st.playMatch;
  const status = document.getElementById('status');
  const gameServers = st.gameServers ? ' · game servers link back to ' + st.gameServers : '';
  status.replaceChildren('API ' + st.api + gameServers + ' · updated ' + time(st.now),
    ...(st.problems || []).map((p) => el('span', { class: 'problem' }, ' · ' + p)));
  status.className = 'status' + ((st.problems || []).length ? ' warn' : '');
}

const poll = (() => {
  let timer = null;
  let running = false;
  async function tick() {
    clearTimeout(timer);
    if (running) return;
    running = true;
    try {
      const r = await fetch('api/state', { cache: 'no-store' });
      if (!r.ok) throw new Error(r.status + ' ' + r.statusText);
      render(await r.json());
    } catch (e) {
      const status = document.getElementById('status');
      status.textContent = 'dashboard unreachable (is make dev still running?): ' + e.message;
      status.className = 'status bad';
    } finally {
      running = false;
      timer = setTimeout(tick, POLL_MS);
    }
  }
  return { start: tick, now: tick };
})();

document.addEventListener('DOMContentLoaded', () => {
  document.getElementById('allocate-form').addEventListener('submit', allocate);
  document.getElementById('match-form').addEventListener('submit', playMatch);
  document.getElementById('alloc-version').addEventListener('input', (e) => { e.target.dataset.touched = '1'; });
  poll.start();
});
