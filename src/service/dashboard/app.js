// @ts-check
// The dashboard page: a section per device, a card per resource (presence, usage counters, last value, a
// chart or a list of recent values, a control to write a value). Every POLL_MS it reads the state of the
// devices it shows from the local API (DEVICES_PER_PAGE of them, and a pager when there are more, so a
// fleet's poll stays small), then, for each card whose resource has a newer last feed, only the feeds
// after the last one it shows (docs/dashboard.md says why polling). Every value from the service enters
// the page as text (textContent, attribute values), never as markup.
import { csvUrl, getFeeds, getState, writeFeed } from './api.js';
import { MAX_POINTS, SeriesChart } from './chart.js';
import { decimalsOf, formatNumber, moment, timeOfDay, withUnit } from './format.js';

/** @typedef {import('../local-wire').LocalResource} LocalResource */
/** @typedef {import('../local-wire').LocalDevice} LocalDevice */
/** @typedef {import('../local-wire').ValueKind} ValueKind */
/** @typedef {Pick<import('../local-wire').FeedPage, 'id_resource_feed' | 'created_at' | 'raw_data'>} Feeds feeds as columns */
/** @typedef {import('../../core/wire/wire').InputValue} InputValue */
/** @typedef {import('../local-wire').FeedPage} FeedPage */

const POLL_MS = 1_000;
/** Devices the page shows at a time. */
const DEVICES_PER_PAGE = 10;
/** Values a string resource lists, newest first. */
const LIST_LENGTH = 10;

const main = element('devices');
const status = element('status');
const windowChoice = /** @type {HTMLSelectElement} */ (element('window'));
const pager = element('pager');
const previous = /** @type {HTMLButtonElement} */ (element('previous'));
const next = /** @type {HTMLButtonElement} */ (element('next'));
const shownDevices = element('shown');

/** The page of devices shown, from 1. */
let devicePage = 1;
// The charts' window: the one the URL names (`?window=10m`, kept there when chosen, so that a reload or a
// shared link shows the same), else, at the first poll, the smallest that holds the oldest feed shown.
const asked = new URLSearchParams(location.search).get('window');
let windowSettled = [...windowChoice.options].some((option) => option.value === asked);
if (windowSettled) windowChoice.value = /** @type {string} */ (asked);
/** A device's section in the page, the element its cards go in, its status line, and the value axis its charts share. */
/** @type {Map<number, {section: HTMLElement, cards: HTMLElement, status: HTMLElement, axis: import('./chart.js').SharedAxis}>} */
const deviceSections = new Map();
/** @type {Map<number, Card>} */
const cards = new Map();

class Card {
  /** @param {LocalResource} resource */
  constructor(resource) {
    const r = resource.record;
    this.id = r.id_resource;
    this.kind = resource.kind;
    /** Whether it takes commands: the device polls it for them. */
    this.command = resource.command;
    /** Places a number of this resource shows. */
    this.decimals = decimalsOf(r.subtype);
    this.subtype = r.subtype;
    /**
     * The greatest feed id loaded: a feed stored later has a greater one, whatever its time (a backlog
     * arrives stamped where it was sampled). null until the first load.
     */
    /** @type {number | null} */
    this.newest = null;
    /** Bumped when the window changes, so that a load begun before it is not applied after. */
    this.generation = 0;
    this.presence = node('span', 'presence');
    this.facts = node('dl', 'facts');
    this.plot = node('div', 'plot');
    this.plot.dataset.points = '0';
    /** @type {SeriesChart | null} */
    this.chart = null;
    /** @type {HTMLOListElement | null} */
    this.list = null;
    /** The unit of a number (`°C`), as the service reads it from the subtype; null: none. */
    this.unit = resource.unit;
    this.message = node('output', 'message');
    /** The link to the window's feeds as CSV; its range follows the window at each poll. */
    this.csv = /** @type {HTMLAnchorElement} */ (node('a', 'csv', ['CSV']));
    this.csv.download = `resource-${this.id}-feeds.csv`;
    this.csv.title = "download this window's feeds as CSV";
    /** An actuator's switch (a binary or on/off subtype): its state is the last value. */
    /** @type {{button: HTMLButtonElement, state: HTMLElement, on: InputValue, off: InputValue, onWord: string} | null} */
    this.toggle = null;
    const rangeUnit = this.unit === null ? '' : ' ' + this.unit;
    this.root = node('article', 'card', [
      node('header', 'card-head', [node('h3', 'name', [r.name]), node('span', 'rid', ['#' + this.id]), this.presence]),
      node('p', 'subtype', [
        node('span', '', [`${r.subtype.name_i18n} · ${rule(r.subtype)}${rangeUnit} · lifetime ${r.lifetime} min`]),
        resource.command ? node('span', 'command', ['command']) : '',
        this.csv,
      ]),
      this.facts,
      this.plot,
      // Only a resource that takes commands offers to write one.
      ...(resource.command ? [this.commandForm(r)] : []),
    ]);
    this.root.dataset.resource = String(this.id);
  }

  /**
   * Called once the card is in the page, so that a chart takes its width.
   * @param {import('./chart.js').SharedAxis} axis the value axis of the device's charts
   */
  mount(axis) {
    if (this.kind === 'string') this.list = /** @type {HTMLOListElement} */ (this.plot.appendChild(node('ol', 'values')));
    else this.chart = new SeriesChart(this.plot, this.kind, this.decimals, axis, this.unit, bounds(this.subtype));
  }

  /**
   * The control of an actuator: a switch for a binary or on/off subtype, showing its last value; else a
   * field to write a value (and a button for each word of a pattern that only lists words).
   * @param {import('../../core/wire/wire').Resource} r
   */
  commandForm(r) {
    const subtype = r.subtype;
    const form = node('form', 'write');
    const words = choices(this.kind, subtype);
    const pair = switchValues(this.kind, words);
    if (pair !== null) {
      const button = /** @type {HTMLButtonElement} */ (node('button', 'switch', [node('span', 'knob')]));
      button.type = 'button';
      button.setAttribute('role', 'switch');
      button.setAttribute('aria-checked', 'false');
      button.setAttribute('aria-label', r.name);
      const state = node('span', 'switch-state', ['no command yet']);
      this.toggle = { button, state, ...pair };
      button.addEventListener('click', () => {
        const on = button.getAttribute('aria-checked') !== 'true';
        void this.write(on ? pair.on : pair.off).then((stored) => stored && this.showSwitch(String(on ? pair.on : pair.off)));
      });
      form.append(button, state);
    } else {
      const input = /** @type {HTMLInputElement} */ (node('input'));
      input.name = 'value';
      input.placeholder = rule(subtype);
      input.autocomplete = 'off';
      input.setAttribute('aria-label', 'value to write');
      form.append(input, button('Write', 'submit'));
      for (const [label, value] of words) form.append(button(label, 'button', () => void this.write(value)));
      form.addEventListener('submit', (event) => {
        event.preventDefault();
        void this.write(inputValue(input.value, this.kind));
      });
    }
    form.append(this.message);
    return form;
  }

  /**
   * Shows a value on the switch: on for the switch's "on" value (1, true, on), off for any other.
   * @param {string | null} raw the last value; null: none yet
   */
  showSwitch(raw) {
    if (this.toggle === null) return;
    const on = raw !== null && isOn(raw, this.toggle.onWord);
    this.toggle.button.setAttribute('aria-checked', String(on));
    this.toggle.state.textContent = raw === null ? 'no command yet' : on ? 'on' : 'off';
  }

  /**
   * @param {InputValue} value
   * @returns {Promise<boolean>} whether the service stored it
   */
  async write(value) {
    this.message.className = 'message';
    this.message.textContent = 'writing…';
    try {
      const feed = await writeFeed(this.id, value);
      this.message.className = 'message ok';
      this.message.textContent = `stored ${JSON.stringify(feed.raw_data)} as feed ${feed.id_resource_feed}`;
      return true;
    } catch (error) {
      this.message.className = 'message error';
      this.message.textContent = /** @type {Error} */ (error).message;
      return false;
    }
  }

  /**
   * @param {LocalResource} resource
   * @param {number} nowMs the service's clock
   */
  update(resource, nowMs) {
    const r = resource.record;
    const last = r.last_feed;
    const heard = r.lifetime_updated_at === null ? null : moment(parseTime(r.lifetime_updated_at), nowMs);
    const presence = presenceOf(r.is_alive, this.command, last !== null);
    this.presence.textContent = presence.word;
    this.presence.className = 'presence ' + presence.look;
    this.presence.title = `${presence.meaning} (lifetime ${r.lifetime} min); ${heard === null ? 'never heard from' : `last heard from at ${heard}`}`;
    const none = this.command ? 'no command yet' : 'none yet';
    this.facts.replaceChildren(
      ...fact('last value', last === null ? none : this.display(last.raw_data), last === null ? '' : `at ${moment(parseTime(last.created_at), nowMs)}`, last === null ? none : withUnit(last.raw_data, this.unit)),
      ...fact('requests', count(r.api_requests_usage), '', undefined, "the device's requests that concerned this resource, as the service counts them"),
      ...fact(
        'network',
        `${count(r.api_network_usage)} B`,
        `${count(r.api_network_outgoing_usage)} sent · ${count(r.api_network_income_usage)} received`,
        undefined,
        "bytes that concerned this resource: sent by the device in its requests' bodies, received in the service's answers",
      ),
    );
    this.showSwitch(last === null ? null : last.raw_data);
  }

  /**
   * A value as the card shows it: a number rounded to the resource's places (the full value is the
   * tooltip's), text as it is.
   * @param {string} raw
   */
  display(raw) {
    const n = Number(raw);
    return this.kind === 'string' || raw.trim() === '' || !Number.isFinite(n) ? raw : withUnit(formatNumber(n, this.decimals), this.unit);
  }

  /**
   * Brings the chart or list up to the resource's last feed.
   * @param {LocalResource} resource
   * @param {number} nowMs the service's clock
   * @param {number} windowMs
   */
  async sync(resource, nowMs, windowMs) {
    const windowStart = stamp(nowMs - windowMs);
    this.csv.href = csvUrl(this.id, windowStart);
    const last = resource.record.id_last_feed;
    if (last === null || last === this.newest) {
      this.chart?.tick((nowMs - windowMs) / 1000, nowMs / 1000);
      return;
    }
    const generation = this.generation;
    const since = this.newest;
    // A step chart's state as the window begins, the last feed before it: read with every load, since a
    // backlog can bring a later one.
    const [previous, feeds] = await Promise.all([
      this.kind === 'boolean' ? getFeeds(this.id, { to: stamp(nowMs - windowMs - 1000), order: 'desc', limit: 1 }) : null,
      this.newestFeeds(windowStart, since === null || this.kind === 'string' ? null : since),
    ]);
    if (generation !== this.generation) return;
    // A full chart's state before its first point is the last it dropped (SeriesChart.tick), not this.
    if (previous !== null && this.chart !== null && this.chart.xs.length < MAX_POINTS) {
      this.chart.startWith(previous.raw_data.length > 0 ? numberOf(previous.raw_data[0]) : null);
    }
    // With no feed in the window, later loads start after the resource's last feed.
    let newest = Math.max(last, this.newest ?? 0);
    for (const id of feeds.id_resource_feed) if (id > newest) newest = id;
    this.newest = newest;
    this.show(feeds, nowMs, windowMs);
  }

  /**
   * The newest feeds of the window, in time order, as many as the card shows: a list needs ten, a chart a
   * page. With `since`, only those stored after that feed, whatever their time, and from the chart's
   * oldest point once it holds MAX_POINTS: it keeps its newest MAX_POINTS, so it would keep no feed older
   * than that, nor than the newest MAX_POINTS stored since. A list is read again whole when it has news,
   * since what arrived may fall anywhere among what it shows.
   * @param {string} windowStart
   * @param {number | null} since
   * @returns {Promise<Feeds>}
   */
  async newestFeeds(windowStart, since) {
    const points = this.chart?.xs ?? [];
    const from = since !== null && points.length >= MAX_POINTS ? stamp(points[0] * 1000) : windowStart;
    const limit = this.kind === 'string' ? LIST_LENGTH : MAX_POINTS;
    const newest = await getFeeds(this.id, { from, order: 'desc', limit, ...(since !== null && { since }) });
    return { id_resource_feed: newest.id_resource_feed.reverse(), created_at: newest.created_at.reverse(), raw_data: newest.raw_data.reverse() };
  }

  /**
   * @param {Feeds} feeds in time order: for a list, all it shows; for a chart, those to add
   * @param {number} nowMs the service's clock
   * @param {number} windowMs
   */
  show(feeds, nowMs, windowMs) {
    if (this.chart !== null) {
      const ys = feeds.raw_data.map(numberOf);
      this.chart.add(feeds.created_at.map((t) => parseTime(t) / 1000), ys, (nowMs - windowMs) / 1000, nowMs / 1000);
    } else if (this.list !== null) {
      const count = feeds.raw_data.length;
      const items = [];
      for (let i = count - 1; i >= Math.max(0, count - LIST_LENGTH); i--) {
        items.push(node('li', '', [node('span', 'value', [feeds.raw_data[i]]), node('time', '', [moment(parseTime(feeds.created_at[i]), nowMs)])]));
      }
      this.list.replaceChildren(...items);
      this.plot.dataset.points = String(items.length);
    }
  }

  reset() {
    this.generation++;
    this.newest = null;
    this.chart?.clear();
    this.list?.replaceChildren();
  }
}

let ready = false;
let polling = false;
/** A poll was asked for while one ran: the next starts at once. */
let pollAgain = false;
let timer = 0;

async function poll() {
  polling = true;
  try {
    const state = await getState(devicePage, DEVICES_PER_PAGE);
    const nowMs = parseTime(state.now);
    if (!windowSettled) {
      windowChoice.value = await fittingWindow(state.devices, nowMs);
      windowSettled = true;
    }
    const windowMs = windowSeconds(windowChoice.value) * 1000;
    showPager(state.total, state.devices.length);
    dropOtherDevices(new Set(state.devices.map((d) => d.id_device)));
    const work = [];
    for (const device of state.devices) {
      const section = deviceSection(device);
      for (const resource of device.resources) {
        let card = cards.get(resource.record.id_resource);
        if (card === undefined) {
          card = new Card(resource);
          cards.set(card.id, card);
          section.cards.append(card.root);
          card.mount(section.axis);
        }
        card.update(resource, nowMs);
        work.push(card.sync(resource, nowMs, windowMs));
      }
      section.status.replaceChildren(...deviceStatus(device, nowMs));
    }
    await Promise.all(work);
    status.className = 'ok';
    status.textContent = `live · updated ${timeOfDay(nowMs)}`;
    if (!ready) {
      ready = true;
      // The charts are drawn on the next frame; the bench reads this mark (bench/dashboard.ts).
      requestAnimationFrame(() => {
        performance.mark('dashboard:drawn');
        document.body.dataset.ready = 'true';
      });
    }
  } catch (error) {
    status.className = 'error';
    status.textContent = `cannot read the service: ${/** @type {Error} */ (error).message}`;
  }
  polling = false;
  timer = setTimeout(poll, pollAgain ? 0 : POLL_MS);
  pollAgain = false;
}

/** Polls now, or as soon as the poll under way ends. */
function pollNow() {
  if (polling) {
    pollAgain = true;
    return;
  }
  clearTimeout(timer);
  void poll();
}

/**
 * The window (a choice of the select) that fits the feeds shown: the smallest that holds the oldest of
 * them, the largest when none does, the smallest when there is no feed (a fresh demo).
 * @param {LocalDevice[]} devices
 * @param {number} nowMs the service's clock
 */
async function fittingWindow(devices, nowMs) {
  const fed = devices.flatMap((d) => d.resources).filter((r) => r.record.id_last_feed !== null);
  const firsts = await Promise.all(fed.map((r) => getFeeds(r.record.id_resource, { order: 'asc', limit: 1 })));
  const oldestMs = Math.min(nowMs, ...firsts.flatMap((page) => page.created_at.map(parseTime)));
  const options = [...windowChoice.options];
  const fits = options.find((option) => windowSeconds(option.value) * 1000 >= nowMs - oldestMs);
  return (fits ?? options[options.length - 1]).value;
}

/**
 * A window's length from its name in the URL and the select: `10m`, `1h`, `24h`.
 * @param {string} name
 */
function windowSeconds(name) {
  const match = /^(\d+)([mh])$/.exec(name);
  if (match === null) throw new Error(`the page has a window named ${JSON.stringify(name)}`);
  return Number(match[1]) * (match[2] === 'h' ? 3600 : 60);
}

/**
 * The device-level line: online (a resource alive) or not, when the device was last heard from (the
 * newest presence update of its resources), and how many of its resources are alive.
 * @param {LocalDevice} device
 * @param {number} nowMs the service's clock
 * @returns {(Node | string)[]}
 */
function deviceStatus(device, nowMs) {
  const records = device.resources.map((r) => r.record);
  const alive = records.filter((r) => r.is_alive).length;
  const heard = records.map((r) => r.lifetime_updated_at).filter((t) => t !== null).map((t) => parseTime(/** @type {string} */ (t)));
  const state = alive > 0 ? 'online' : heard.length > 0 ? 'offline' : 'never seen';
  const parts = [node('span', 'device-state ' + (alive > 0 ? 'alive' : 'dead'), [state])];
  if (heard.length > 0) parts.push(node('span', '', [`last seen ${moment(Math.max(...heard), nowMs)}`]));
  parts.push(node('span', '', [`${alive} of ${records.length} resources alive`]));
  // Each part kept on one line; a narrow screen breaks the line between them.
  return parts.flatMap((part, i) => (i === 0 ? [part] : [' · ', part]));
}

/** @param {LocalDevice} device */
function deviceSection(device) {
  let shown = deviceSections.get(device.id_device);
  if (shown === undefined) {
    const cardsOf = node('div', 'cards');
    const status = node('p', 'device-status');
    const head = node('header', 'device-head', [node('h2', '', [device.name || 'unnamed device']), node('p', 'key', ['public key ', node('code', '', [device.public_key])]), status]);
    shown = { section: node('section', 'device', [head, cardsOf]), cards: cardsOf, status, axis: { px: 0 } };
    main.append(shown.section);
    deviceSections.set(device.id_device, shown);
  }
  return shown;
}

/**
 * Removes the sections (and cards) of devices that are not on the page of devices shown.
 * @param {Set<number>} keep device ids
 */
function dropOtherDevices(keep) {
  for (const [id, shown] of deviceSections) {
    if (keep.has(id)) continue;
    shown.section.remove();
    deviceSections.delete(id);
  }
  for (const [id, card] of cards) if (!card.root.isConnected) cards.delete(id);
}

/**
 * The pager, when the service has more devices than a page shows. (Devices are never removed, so the
 * page the next button leads to always has some.)
 * @param {number} total devices in the service
 * @param {number} onPage devices on this page
 */
function showPager(total, onPage) {
  pager.hidden = total <= DEVICES_PER_PAGE;
  const first = (devicePage - 1) * DEVICES_PER_PAGE;
  shownDevices.textContent = `devices ${count(first + 1)}–${count(first + onPage)} of ${count(total)}`;
  previous.disabled = devicePage === 1;
  next.disabled = first + DEVICES_PER_PAGE >= total;
}

windowChoice.addEventListener('change', () => {
  windowSettled = true;
  const url = new URL(location.href);
  url.searchParams.set('window', windowChoice.value);
  history.replaceState(null, '', url);
  for (const card of cards.values()) card.reset();
});
for (const [button, step] of /** @type {const} */ ([[previous, -1], [next, 1]])) {
  button.addEventListener('click', () => {
    devicePage = Math.max(1, devicePage + step);
    pollNow();
  });
}

void poll();

// ---- small helpers ----

/**
 * An element with a class and children; strings become text nodes, never markup.
 * @param {string} tag
 * @param {string} [className]
 * @param {(Node | string)[]} [children]
 */
function node(tag, className = '', children = []) {
  const el = document.createElement(tag);
  if (className !== '') el.className = className;
  el.append(...children);
  return el;
}

/**
 * @param {string} label
 * @param {'submit' | 'button'} type
 * @param {() => void} [onClick]
 */
function button(label, type, onClick) {
  const b = /** @type {HTMLButtonElement} */ (node('button', '', [label]));
  b.type = type;
  if (onClick !== undefined) b.addEventListener('click', onClick);
  return b;
}

/**
 * A term and its value (with a note) for a card's list of facts.
 * @param {string} term
 * @param {string} value
 * @param {string} [note]
 * @param {string} [full] the value unrounded, as a tooltip when it differs
 * @param {string} [meaning] what the term counts, as its tooltip
 */
function fact(term, value, note = '', full = value, meaning = '') {
  const shown = node('span', 'value', [value]);
  if (full !== value) shown.title = full;
  const dt = node('dt', '', [term]);
  if (meaning !== '') dt.title = meaning;
  return [dt, node('dd', '', [shown, note === '' ? '' : node('small', '', [note])])];
}

/**
 * A card's presence: the service's (alive while the device was heard from within the lifetime), said of
 * what it rests on. A resource that takes commands is alive while the device polls it for them: it is
 * listening, fed or not. Any other with no feed was only named in a request (a lookup): alive by the
 * service's count, it has sent no value.
 * @param {boolean} alive
 * @param {boolean} command
 * @param {boolean} fed
 * @returns {{word: string, look: string, meaning: string}}
 */
function presenceOf(alive, command, fed) {
  if (!alive) return { word: 'dead', look: 'dead', meaning: 'not heard from within its lifetime' };
  if (command) return { word: 'listening', look: 'alive', meaning: 'alive: the device polls it for commands' };
  if (!fed) return { word: 'no value', look: 'idle', meaning: 'alive by the service, as the device named it in a request, but it has sent no value' };
  return { word: 'alive', look: 'alive', meaning: 'alive: the device was heard from within its lifetime' };
}

/**
 * The range a number of the subtype must lie in, for its chart's value axis; null when a pattern rules
 * instead (an empty one is none: the range applies).
 * @param {Pick<import('../../core/wire/wire').Subtype, 'data_restriction_regex' | 'data_restriction_begin_range' | 'data_restriction_end_range'>} s
 * @returns {[number, number] | null}
 */
function bounds(s) {
  return s.data_restriction_regex ? null : [s.data_restriction_begin_range, s.data_restriction_end_range];
}

/** @param {Pick<import('../../core/wire/wire').Subtype, 'data_restriction_regex' | 'data_restriction_begin_range' | 'data_restriction_end_range'>} s */
function rule(s) {
  // An empty regex is none (core/validate.ts): the range applies.
  return s.data_restriction_regex || `${s.data_restriction_begin_range}..${s.data_restriction_end_range}`;
}

/**
 * The values a resource takes that get a button of their own: off and on for a boolean, and each word of a
 * regex that is only a list of words (`on|off`, `/^(open|closed)$/i`).
 * @param {ValueKind} kind
 * @param {import('../../core/wire/wire').Subtype} subtype
 * @returns {[string, InputValue][]}
 */
function choices(kind, subtype) {
  if (kind === 'boolean') return [['Off', 0], ['On', 1]];
  const words = kind === 'string' && /^\/?\^?\(?([\w-]+(?:\|[\w-]+)+)\)?\$?(?:\/i?)?$/.exec(subtype.data_restriction_regex ?? '');
  return words ? words[1].split('|').map((word) => [word, word]) : [];
}

/**
 * The two values of an actuator's switch: 1 and 0 for a boolean, the words of an on/off pattern (`on|off`,
 * in either order and case); null for any other resource, which gets a field instead.
 * @param {ValueKind} kind
 * @param {[string, InputValue][]} words the resource's choices
 * @returns {{on: InputValue, off: InputValue, onWord: string} | null}
 */
function switchValues(kind, words) {
  if (kind === 'boolean') return { on: 1, off: 0, onWord: '1' };
  if (words.length !== 2) return null;
  const on = words.find(([w]) => w.toLowerCase() === 'on');
  const off = words.find(([w]) => w.toLowerCase() === 'off');
  return on && off ? { on: on[1], off: off[1], onWord: on[0] } : null;
}

/**
 * Whether a value puts a switch on: its "on" word, 1 or true (a boolean's values, as stored or as sent).
 * @param {string} raw
 * @param {string} onWord
 */
function isOn(raw, onWord) {
  const text = raw.trim().toLowerCase();
  return text === onWord.toLowerCase() || text === '1' || text === 'true';
}

/**
 * What the text of a write control sends: a number when the resource takes numbers and the text is one,
 * else the text; the service's check decides either way.
 * @param {string} text
 * @param {ValueKind} kind
 * @returns {InputValue}
 */
function inputValue(text, kind) {
  const trimmed = text.trim();
  return kind !== 'string' && trimmed !== '' && Number.isFinite(Number(trimmed)) ? Number(trimmed) : text;
}

let lastStamp = '';
let lastStampMs = 0;

/**
 * A timestamp in ms. Feeds stored together share their second, so the last answer is kept: with 10,000
 * feeds per chart, most parses are skipped.
 * @param {string} stampText the interface's `YYYY-MM-DD HH:MM:SS`, UTC
 */
function parseTime(stampText) {
  if (stampText !== lastStamp) {
    lastStamp = stampText;
    lastStampMs = Date.parse(stampText.replace(' ', 'T') + 'Z');
  }
  return lastStampMs;
}

/**
 * A value as a chart plots it: null where it is not a number.
 * @param {string} raw
 */
function numberOf(raw) {
  const n = Number(raw);
  return raw.trim() !== '' && Number.isFinite(n) ? n : null;
}

/** @param {number} ms */
function stamp(ms) {
  return new Date(ms).toISOString().slice(0, 19).replace('T', ' ');
}

/** @param {number} n */
function count(n) {
  return formatNumber(n, 0);
}

/** @param {string} id */
function element(id) {
  const el = document.getElementById(id);
  if (el === null) throw new Error(`the page has no #${id}`);
  return el;
}
