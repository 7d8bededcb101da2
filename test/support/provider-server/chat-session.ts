// A seeded chat session for the chat assistant (assistant.ts): what a user types over 100+ turns,
// with the answer each question expects, and a judge of the replies. A chat benchmark drives a
// model through `chatSession()` and scores every question's reply with `judgeRecall()`: how many
// facts given earlier the model still answers right once the conversation was compacted.
//
// Turns:
// - `fact`: a sentence stating one fact (`My order number is A-4471.`), now and then a correction
//   of one stated before (`Sorry, I got that wrong — my order number is actually A-4480.`);
// - `document`: a pasted document (an invoice, a shipping notice...) of `pasteChars` characters,
//   whose fields are lines `Name: value` among rows of filler, each kind of document at most once;
// - `paste`: a pasted log excerpt of `pasteChars` characters with nothing in it to remember;
// - `question`: a question about a fact given at least two turns before, with the value it
//   expects (the newest one given) and the values it replaced;
// - `chat`: a short line of small talk.
// Every fact's name is unique in the session and never part of another one's name, so a question
// names exactly one fact.

import { alnum, hex, int, pick, rng, shuffle } from './random';

/** A fact as the user gives it. */
export interface SessionFact {
  /** As the user writes it (`order number`, `Invoice total`). */
  name: string;
  value: string;
}

/** What a question asks, and the answers it takes. */
export interface RecallQuestion {
  /** The fact's name, lower case (the chat assistant's `factKey`). */
  key: string;
  /** The newest value the user gave. */
  expected: string;
  /** Values of that fact the user gave before and then corrected. */
  stale: string[];
  /** The turn (index into the session) that gave the expected value. */
  givenAt: number;
}

export type ChatTurn =
  | { kind: 'fact'; text: string; facts: SessionFact[]; correction: boolean }
  | { kind: 'document'; text: string; facts: SessionFact[] }
  | { kind: 'paste'; text: string }
  | { kind: 'question'; text: string; question: RecallQuestion }
  | { kind: 'chat'; text: string };

export interface ChatSessionOptions {
  seed: number | string;
  /** User turns (default 120). */
  turns?: number;
  /** Characters of a pasted document or log, at least and at most (default 1,500 to 4,000). */
  pasteChars?: [number, number];
}

type Random = () => number;
const MONTHS = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];
const FIRST = ['Priya', 'Jonas', 'Amara', 'Luca', 'Mei', 'Tomás', 'Ingrid', 'Kwame', 'Sofia', 'Dmitri', 'Aiko', 'Rafael'];
const LAST = ['Raman', 'Okafor', 'Lindqvist', 'Moreau', 'Tanaka', 'Haddad', 'Novak', 'Castillo', 'Brennan', 'Sato', 'Adeyemi', 'Keller'];
const digits = (random: Random, length: number) => Array.from({ length }, () => int(random, 0, 9)).join('');
const upper = (random: Random, length: number) => alnum(random, length * 3).replace(/[^A-Z0-9]/g, '').padEnd(length, 'X').slice(0, length);
const date = (random: Random) => `2025-${String(int(random, 1, 12)).padStart(2, '0')}-${String(int(random, 1, 28)).padStart(2, '0')}`;
const person = (random: Random) => `${pick(random, FIRST)} ${pick(random, LAST)}`;
const euros = (random: Random, min: number, max: number) => `€${int(random, min, max).toLocaleString('en-US')}`;

/** Facts a user states in a sentence. */
const STATED: Array<{ name: string; value: (random: Random) => string }> = [
  { name: 'order number', value: (r) => `A-${int(r, 1000, 9999)}` },
  { name: 'booking reference', value: (r) => upper(r, 6) },
  { name: 'flight number', value: (r) => `${pick(r, ['LH', 'BA', 'AF', 'KL', 'IB', 'SK'])} ${int(r, 100, 9999)}` },
  { name: 'seat number', value: (r) => `${int(r, 1, 40)}${pick(r, ['A', 'B', 'C', 'D', 'E', 'F'])}` },
  { name: 'membership number', value: (r) => `M-${digits(r, 7)}` },
  { name: 'customer ID', value: (r) => `CU-${digits(r, 6)}` },
  { name: 'licence plate', value: (r) => `${upper(r, 2).replace(/\d/g, 'K')}-${upper(r, 2).replace(/\d/g, 'T')} ${int(r, 100, 9999)}` },
  { name: 'parking spot', value: (r) => `P${int(r, 1, 4)}-${int(r, 10, 99)}` },
  { name: 'locker code', value: (r) => digits(r, 4) },
  { name: 'wifi password', value: (r) => alnum(r, 10) },
  { name: 'meeting room', value: (r) => `Room ${int(r, 1, 9)}.${int(r, 10, 40)}` },
  { name: "manager's name", value: person },
  { name: "sister's birthday", value: (r) => `${int(r, 1, 28)} ${pick(r, MONTHS)}` },
  { name: 'favourite colour', value: (r) => pick(r, ['teal', 'ochre', 'crimson', 'lavender', 'olive', 'amber']) },
  { name: 'postcode', value: (r) => digits(r, 5) },
  { name: 'phone extension', value: (r) => String(int(r, 100, 999)) },
  { name: 'dentist appointment', value: date },
  { name: 'boarding gate', value: (r) => `${pick(r, ['A', 'B', 'C', 'D'])}${int(r, 1, 60)}` },
  { name: 'trip budget', value: (r) => euros(r, 1_200, 9_800) },
  { name: 'email address', value: (r) => `${pick(r, FIRST).toLowerCase().normalize('NFD').replace(/[^a-z]/g, '')}.${hex(r, 4)}@example.com` },
  { name: 'account number', value: (r) => digits(r, 8) },
  { name: 'hotel', value: (r) => `the ${pick(r, ['Grand', 'Royal', 'Harbour', 'Alpine', 'Garden'])} ${pick(r, ['Palace', 'Lodge', 'Inn', 'House'])}` },
  { name: 'gym locker number', value: (r) => String(int(r, 10, 399)) },
  { name: 'library card number', value: (r) => `LC-${digits(r, 6)}` },
];

const STATEMENTS = [
  (name: string, value: string) => `My ${name} is ${value}.`,
  (name: string, value: string) => `By the way, my ${name} is ${value}.`,
  (name: string, value: string) => `Note that my ${name} is ${value}.`,
  (name: string, value: string) => `Keep this in mind — my ${name} is ${value}.`,
];
const CORRECTIONS = [
  (name: string, value: string) => `Sorry, I got that wrong — my ${name} is actually ${value}.`,
  (name: string, value: string) => `Update — my ${name} is now ${value}.`,
];

/** Documents a user pastes, each with its fields; the rows pad it to its length. */
const DOCUMENTS: Array<{ kind: string; title: string; intro: string; fields: Array<[string, (random: Random) => string]>; row: (random: Random, n: number) => string }> = [
  {
    kind: 'invoice',
    title: 'INVOICE',
    intro: 'Here is the invoice from the print shop',
    fields: [['Invoice number', (r) => `INV-${int(r, 10000, 99999)}`], ['Invoice total', (r) => `${euros(r, 100, 4_999)}.${int(r, 10, 99)}`], ['Invoice due date', date]],
    row: (r, n) => `${String(n).padStart(4, '0')}  ${pick(r, ['Flyers A5', 'Posters A2', 'Business cards', 'Letterheads', 'Banners'])}  x${int(r, 1, 500)}  €${int(r, 5, 900)}.${int(r, 10, 99)}`,
  },
  {
    kind: 'shipping notice',
    title: 'SHIPPING NOTICE',
    intro: 'This is the shipping notice for the desk',
    fields: [['Tracking number', (r) => `1Z${hex(r, 12).toUpperCase()}`], ['Carrier', (r) => pick(r, ['DHL Express', 'UPS', 'GLS', 'DPD'])], ['Delivery date', date]],
    row: (r, n) => `${date(r)} ${String(int(r, 0, 23)).padStart(2, '0')}:${String(int(r, 0, 59)).padStart(2, '0')}  scan ${n}  ${pick(r, ['departed hub', 'arrived at hub', 'in transit', 'sorted', 'loaded'])}  ${pick(r, ['Leipzig', 'Cologne', 'Venlo', 'Lyon', 'Milan'])}`,
  },
  {
    kind: 'lease summary',
    title: 'LEASE SUMMARY',
    intro: 'Pasting the summary of the flat lease',
    fields: [['Unit number', (r) => `${int(r, 1, 12)}${pick(r, ['A', 'B', 'C'])}`], ['Monthly rent', (r) => euros(r, 700, 2_400)], ['Lease start date', date]],
    row: (r, n) => `${n}. ${pick(r, ['the tenant keeps the stairwell free', 'pets are allowed with consent', 'rent is paid by transfer', 'notice is three months', 'keys are returned at the end'])}`,
  },
  {
    kind: 'insurance certificate',
    title: 'INSURANCE CERTIFICATE',
    intro: 'Here is the insurance certificate for the car',
    fields: [['Policy number', (r) => `PL-${digits(r, 8)}`], ['Insurance excess', (r) => euros(r, 100, 900)], ['Policy renewal date', date]],
    row: (r, n) => `${n}. cover ${pick(r, ['third party', 'fire and theft', 'glass', 'breakdown', 'legal costs'])} up to €${int(r, 1, 90)}0,000`,
  },
  {
    kind: 'travel itinerary',
    title: 'TRAVEL ITINERARY',
    intro: 'This is the travel itinerary for next week',
    fields: [['Train number', (r) => `ICE ${int(r, 100, 999)}`], ['Departure time', (r) => `${String(int(r, 5, 22)).padStart(2, '0')}:${String(int(r, 0, 59)).padStart(2, '0')}`], ['Coach number', (r) => String(int(r, 1, 14))]],
    row: (r, n) => `${String(int(r, 5, 23)).padStart(2, '0')}:${String(int(r, 0, 59)).padStart(2, '0')}  stop ${n}  ${pick(r, ['Hamburg', 'Hanover', 'Kassel', 'Frankfurt', 'Mannheim', 'Basel'])}  platform ${int(r, 1, 20)}`,
  },
  {
    kind: 'bank details',
    title: 'BANK DETAILS',
    intro: 'Here are the bank details for the deposit',
    fields: [['IBAN', (r) => `DE${digits(r, 2)} ${digits(r, 4)} ${digits(r, 4)} ${digits(r, 4)} ${digits(r, 4)} ${digits(r, 2)}`], ['Account holder', person]],
    row: (r, n) => `${date(r)}  transfer ${n}  ${pick(r, ['rent', 'groceries', 'utilities', 'refund', 'salary'])}  ${pick(r, ['-', '+'])}€${int(r, 5, 2_000)}.${int(r, 10, 99)}`,
  },
  {
    kind: 'appointment letter',
    title: 'APPOINTMENT LETTER',
    intro: 'This is the letter from the clinic',
    fields: [['Appointment date', date], ['Clinic room', (r) => String(int(r, 1, 30))], ['Doctor', (r) => `Dr ${pick(r, LAST)}`]],
    row: (r, n) => `${n}. ${pick(r, ['bring the referral', 'arrive ten minutes early', 'parking is behind the building', 'no food two hours before', 'cancel a day ahead'])}`,
  },
  {
    kind: 'project brief',
    title: 'PROJECT BRIEF',
    intro: 'Here is the project brief from the agency',
    fields: [['Project code', (r) => `PRJ-${upper(r, 4)}`], ['Project budget', (r) => `${euros(r, 10, 250)},000`], ['Project deadline', date]],
    row: (r, n) => `${n}. ${pick(r, ['wireframes for the landing page', 'copy for the newsletter', 'three logo drafts', 'a style guide', 'photos of the team'])} by week ${int(r, 1, 30)}`,
  },
  {
    kind: 'event ticket',
    title: 'EVENT TICKET',
    intro: 'This is the ticket for the concert',
    fields: [['Ticket number', (r) => `TK-${digits(r, 7)}`], ['Seat row', (r) => `${pick(r, ['F', 'G', 'H', 'K'])}${int(r, 1, 30)}`], ['Venue', (r) => `${pick(r, ['Riverside', 'Elbe', 'Crystal', 'Northern'])} Hall`]],
    row: (r, n) => `${n}. ${pick(r, ['doors open an hour before', 'no large bags', 'the cloakroom is downstairs', 're-entry is not possible', 'the bar takes cards only'])}`,
  },
  {
    kind: 'car service report',
    title: 'CAR SERVICE REPORT',
    intro: 'Here is the report from the garage',
    fields: [['Service reference', (r) => `SR-${digits(r, 6)}`], ['Mileage', (r) => `${int(r, 10, 180)},${digits(r, 3)} km`], ['Next service date', date]],
    row: (r, n) => `${String(n).padStart(3, '0')}  ${pick(r, ['oil changed', 'brake pads checked', 'tyres rotated', 'filter replaced', 'lights tested'])}  ok`,
  },
  {
    kind: 'warranty card',
    title: 'WARRANTY CARD',
    intro: 'This is the warranty card of the washing machine',
    fields: [['Warranty number', (r) => `W-${digits(r, 9)}`], ['Warranty expiry', date]],
    row: (r, n) => `${n}. ${pick(r, ['keep the receipt', 'register within 30 days', 'misuse voids the cover', 'repairs are done on site', 'parts are covered'])}`,
  },
  {
    kind: 'utility bill',
    title: 'UTILITY BILL',
    intro: 'Here is the electricity bill',
    fields: [['Meter number', (r) => `MTR-${digits(r, 7)}`], ['Amount due', (r) => `${euros(r, 40, 600)}.${int(r, 10, 99)}`], ['Customer reference', (r) => `CR-${digits(r, 8)}`]],
    row: (r, n) => `${date(r)}  reading ${n}  ${int(r, 1_000, 99_999)} kWh`,
  },
];

const LOG_WORDS = ['worker', 'queue', 'retry', 'timeout', 'GET', 'POST', '/api/orders', '/api/users', 'cache', 'miss', 'hit', 'db', 'pool', 'latency', 'ms', 'ok', 'WARN', 'INFO', 'ERROR', 'payload', 'shard', 'lease', 'token', 'refresh'];
const CHAT = ['Thanks!', 'Good morning.', "That's all for now, thanks.", 'Hello again.', 'Thank you, that helps.', 'Great, carry on.'];

/** Rows of filler until the text reaches `chars` characters. */
function padded(head: string[], rows: (n: number) => string, chars: number): string[] {
  const lines = [...head];
  let length = lines.join('\n').length;
  for (let n = 1; length < chars; n++) {
    const line = rows(n);
    lines.push(line);
    length += line.length + 1;
  }
  return lines;
}

function documentText(random: Random, document: (typeof DOCUMENTS)[number], facts: SessionFact[], chars: number): string {
  const rows = padded([], (n) => document.row(random, n), Math.max(0, chars - 200));
  // the fields stand among the rows, in their order
  const at = facts.map(() => int(random, 0, rows.length)).sort((a, b) => a - b);
  const body: string[] = [];
  let next = 0;
  rows.forEach((row, index) => {
    while (next < facts.length && at[next] === index) body.push(`${facts[next]!.name}: ${facts[next++]!.value}`);
    body.push(row);
  });
  while (next < facts.length) body.push(`${facts[next]!.name}: ${facts[next++]!.value}`);
  return [`${document.intro}, keep the values in it:`, '', document.title, ...body, '', 'Please keep this document with the others.'].join('\n');
}

function logText(random: Random, chars: number): string {
  const day = String(int(random, 1, 28)).padStart(2, '0');
  const lines = padded(
    ["Here's a log excerpt, just for context, nothing to keep from it:", ''],
    (n) => `2025-03-${day}T10:${String(n % 60).padStart(2, '0')}:${String(int(random, 0, 59)).padStart(2, '0')}Z ${Array.from({ length: int(random, 6, 13) }, () => pick(random, LOG_WORDS)).join(' ')} id=${int(random, 0, 99_999)}`,
    chars,
  );
  return lines.join('\n').slice(0, chars);
}

/** The session: `turns` user turns (see the top of this file), the same for the same options. */
export function chatSession(options: ChatSessionOptions): ChatTurn[] {
  const count = options.turns ?? 120;
  const [minChars, maxChars] = options.pasteChars ?? [1_500, 4_000];
  if (!Number.isInteger(count) || count < 1) throw new RangeError(`chatSession: turns must be a positive whole number, got ${count}`);
  if (!(minChars > 0 && maxChars >= minChars)) throw new RangeError(`chatSession: pasteChars must be [min, max] with 0 < min <= max, got [${minChars}, ${maxChars}]`);
  const order = rng('chat-session order', options.seed);
  const stated = shuffle(order, STATED);
  const documents = shuffle(order, DOCUMENTS);
  /** Every fact given so far, by key: its values in order and the turn of the newest. */
  const given = new Map<string, { name: string; values: string[]; at: number; statedAt?: number }>();
  const turns: ChatTurn[] = [];

  for (let i = 0; i < count; i++) {
    const random = rng('chat-session turn', options.seed, i);
    const askable = [...given.entries()].filter(([, fact]) => fact.at <= i - 2);
    const correctable = [...given.entries()].filter(([, fact]) => fact.statedAt !== undefined);
    const chars = int(random, minChars, maxChars);
    const roll = i < 2 ? 0 : random();
    if (roll < 0.2 && stated.length > 0) {
      const { name, value } = stated.shift()!;
      const fact = { name, value: value(random) };
      given.set(name.toLowerCase(), { name, values: [fact.value], at: i, statedAt: i });
      turns.push({ kind: 'fact', text: pick(random, STATEMENTS)(name, fact.value), facts: [fact], correction: false });
    } else if (roll < 0.25 && correctable.length > 0) {
      const [key, fact] = pick(random, correctable);
      const definition = STATED.find((s) => s.name === fact.name)!;
      let value = definition.value(random);
      for (let k = 0; fact.values.includes(value) && k < 20; k++) value = definition.value(rng('chat-session again', options.seed, i, k));
      if (fact.values.includes(value)) {
        turns.push({ kind: 'chat', text: pick(random, CHAT) });
        continue;
      }
      fact.values.push(value);
      fact.at = i;
      given.set(key, fact);
      turns.push({ kind: 'fact', text: pick(random, CORRECTIONS)(fact.name, value), facts: [{ name: fact.name, value }], correction: true });
    } else if (roll < 0.38 && documents.length > 0) {
      const document = documents.shift()!;
      const facts = document.fields.map(([name, value]) => ({ name, value: value(random) }));
      for (const fact of facts) given.set(fact.name.toLowerCase(), { name: fact.name, values: [fact.value], at: i });
      turns.push({ kind: 'document', text: documentText(random, document, facts, chars), facts });
    } else if (roll < 0.5) {
      turns.push({ kind: 'paste', text: logText(random, chars) });
    } else if (roll < 0.93 && askable.length > 0) {
      const [key, fact] = pick(random, askable);
      const fromDocument = fact.statedAt === undefined;
      const name = /^[A-Z]{2,}$/.test(fact.name) ? fact.name : fact.name.charAt(0).toLowerCase() + fact.name.slice(1);
      const document = DOCUMENTS.find((d) => d.fields.some(([field]) => field === fact.name))?.kind;
      const text = fromDocument
        ? pick(random, [`What was the ${name} in the ${document} I pasted?`, `According to the ${document}, what is the ${name}?`, `Remind me, what's the ${name} from the ${document}?`])
        : pick(random, [`What was the ${name} I gave you?`, `What's my ${name}?`, `Can you remind me of my ${name}?`, `Do you still have my ${name}?`]);
      turns.push({ kind: 'question', text, question: { key, expected: fact.values.at(-1)!, stale: fact.values.slice(0, -1), givenAt: fact.at } });
    } else {
      turns.push({ kind: 'chat', text: pick(random, CHAT) });
    }
  }
  return turns;
}

/** What a reply to a question did: the expected value, a value the user had corrected, that it does not have it, or anything else. */
export type RecallVerdict = 'right' | 'stale' | 'forgotten' | 'wrong';

const normal = (text: string) => text.replace(/\*\*|__|`/g, '').replace(/[’‘]/g, "'").replace(/\s+/g, ' ').toLowerCase();
const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * Judges a reply to a question: `right` when it gives the expected value (as a whole: `A-4471` is
 * not found in `A-44710`), `stale` when it gives only a value the user corrected since, `forgotten`
 * when it says it does not have it, `wrong` otherwise. Markdown marks and case are ignored.
 */
export function judgeRecall(reply: string, question: Pick<RecallQuestion, 'expected' | 'stale'>): RecallVerdict {
  const text = normal(reply);
  const says = (value: string) => new RegExp(`(?:^|[^a-z0-9])${escape(normal(value))}(?![a-z0-9])`).test(text);
  if (says(question.expected)) return 'right';
  if (question.stale.some(says)) return 'stale';
  if (/\b(?:don't|do not|no longer|can't|cannot|didn't)\b[^.?!]*\b(?:have|know|see|remember|find|recall)\b/.test(text)) return 'forgotten';
  return 'wrong';
}
