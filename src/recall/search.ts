import MiniSearch from 'minisearch';
import { RECORD_TOOL_OUTPUT_LIMIT } from '../tunables';
import { headLine, matchHeader } from './answer';
import type { RecalledMessage } from './messages';
import type { RecallAnswer, RecallInput, RecallMatch } from './types';

/** A piece of a message's text: the unit that is indexed, ranked and paged. */
interface Piece {
  id: number;
  position: number;
  start: number;
  end: number;
}

/**
 * Looks up `input` in `messages` (docs/design.md, "Recall"): with words, the pieces that hold them
 * ranked by BM25 (MiniSearch): those holding every word (failing that, any), a message
 * holding the whole query verbatim first, grouped by message,
 * the best message first; with a range only, its messages in order. Each page's answer
 * (`answerText`) holds at most `maxChars` characters, or one piece when a piece alone is larger. Nothing but slices of the messages' own text is returned; no
 * match is an empty page.
 */
export function searchMessages(messages: readonly RecalledMessage[], input: RecallInput, maxChars: number): RecallAnswer {
  const last = messages.length - 1;
  const from = Math.max(0, input.from ?? 0);
  const to = Math.min(last, input.to ?? last);
  const page = input.page ?? 1;
  const query = input.query?.trim() ?? '';
  const ranged = input.from !== undefined || input.to !== undefined;
  const size = Math.max(1, Math.min(RECORD_TOOL_OUTPUT_LIMIT, Math.floor(maxChars / 4)));
  const pieces: Piece[] = [];
  for (let position = from; position <= to; position++) pieces.push(...piecesOf(messages[position]!, size, pieces.length));
  const ordered = query !== '' ? ranked(messages, pieces, query) : ranged ? pieces : [];
  // the first line at its longest (every count as large as it can be), then each piece with a header of its own
  const most = ordered.length;
  const head = headLine({ count: most, page: most, pages: most, nextPage: most, messages: messages.length }).length;
  const costOf = (piece: Piece) => {
    const length = messages[piece.position]!.text.length;
    const excerpt = { start: piece.start, end: piece.end, length };
    return 2 + matchHeader({ position: piece.position, role: messages[piece.position]!.role, excerpt }).length + 1 + piece.end - piece.start;
  };
  const pages = paginate(ordered, maxChars - head, costOf);
  const matches = (pages[page - 1] ?? []).reduce<RecallMatch[]>((list, piece) => {
    const message = messages[piece.position]!;
    const previous = list[list.length - 1];
    if (previous !== undefined && previous.position === piece.position && (previous.excerpt?.end ?? message.text.length) === piece.start) {
      const start = previous.excerpt?.start ?? 0;
      list[list.length - 1] = matchOf(message, start, piece.end);
    } else list.push(matchOf(message, piece.start, piece.end));
    return list;
  }, []);
  return { matches, page, pages: pages.length, ...(page < pages.length ? { nextPage: page + 1 } : {}), messages: messages.length };
}

function matchOf(message: RecalledMessage, start: number, end: number): RecallMatch {
  const whole = start === 0 && end === message.text.length;
  return {
    position: message.position,
    role: message.role,
    text: message.text.slice(start, end),
    ...(whole ? {} : { excerpt: { start, end, length: message.text.length } }),
  };
}

/** A message's text in pieces of at most `size` characters, cut after a line where one ends in the piece's second half, never inside a surrogate pair. */
function piecesOf(message: RecalledMessage, size: number, firstId: number): Piece[] {
  const { text, position } = message;
  if (text === '') return [];
  const pieces: Piece[] = [];
  let start = 0;
  while (start < text.length) {
    let end = Math.min(text.length, start + size);
    if (end < text.length) {
      const newline = text.lastIndexOf('\n', end - 1);
      if (newline >= start + size / 2) end = newline + 1;
      else if (isHighSurrogate(text.charCodeAt(end - 1)) && end - 1 > start) end--;
    }
    pieces.push({ id: firstId + pieces.length, position, start, end });
    start = end;
  }
  return pieces;
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

/**
 * The words of a text as the index keeps them: each run between spaces, quotes and brackets
 * whole, without the punctuation around it (`src/legacy/util.ts:42`), without a line number
 * (`src/legacy/util.ts`), and its words and numbers
 * (`src`, `legacy`, `util`, `ts`, `42`), so a path, an error code and a word each find their
 * message. Lower case.
 */
export function tokenize(text: string): string[] {
  const terms: string[] = [];
  for (const run of text.split(/[\s"'`()[\]{}<>,;|]+/)) {
    const whole = run.replace(/^[^\p{L}\p{N}_]+|[^\p{L}\p{N}_]+$/gu, '');
    if (whole === '') continue;
    terms.push(whole);
    // a path with its line (`src/a.ts:12:5`) is also that path
    const path = whole.replace(/(?::\d+)+$/, '');
    if (path !== whole && path !== '') terms.push(path);
    const words = whole.split(/[^\p{L}\p{N}_]+/u).filter((word) => word !== '');
    if (words.length > 1) terms.push(...words);
  }
  return terms;
}

/** The pieces that hold the query's words, the best message first, each message's pieces in order. */
function ranked(messages: readonly RecalledMessage[], pieces: Piece[], query: string): Piece[] {
  const textOf = (piece: Piece) => messages[piece.position]!.text.slice(piece.start, piece.end);
  const index = new MiniSearch<{ id: number; text: string }>({ fields: ['text'], tokenize, processTerm: (term) => term.toLowerCase() });
  index.addAll(pieces.map((piece) => ({ id: piece.id, text: textOf(piece) })));
  const phrase = query.toLowerCase();
  const best = new Map<number, { verbatim: boolean; score: number }>();
  const matched = new Set<number>();
  // the pieces that hold every word of the query; when none does, those that hold any
  const every = index.search(query, { combineWith: 'AND' });
  for (const hit of every.length > 0 ? every : index.search(query, { combineWith: 'OR' })) {
    const piece = pieces[hit.id as number]!;
    matched.add(piece.id);
    // a message that holds the query as written is what was asked for: it ranks above those that only share its words
    const verbatim = textOf(piece).toLowerCase().includes(phrase);
    const was = best.get(piece.position) ?? { verbatim: false, score: 0 };
    best.set(piece.position, { verbatim: was.verbatim || verbatim, score: Math.max(was.score, hit.score) });
  }
  const order = [...best]
    .sort(([a, x], [b, y]) => Number(y.verbatim) - Number(x.verbatim) || y.score - x.score || b - a)
    .map(([position]) => position);
  const rank = new Map(order.map((position, place) => [position, place]));
  return pieces.filter((piece) => matched.has(piece.id)).sort((a, b) => rank.get(a.position)! - rank.get(b.position)! || a.start - b.start);
}

/** Pieces in pages of at most `room` characters (each with its header); a piece larger than a page has a page of its own. */
function paginate(pieces: Piece[], room: number, costOf: (piece: Piece) => number): Piece[][] {
  const pages: Piece[][] = [];
  let used = room;
  for (const piece of pieces) {
    const cost = costOf(piece);
    if (used + cost > room) {
      pages.push([]);
      used = 0;
    }
    pages[pages.length - 1]!.push(piece);
    used += cost;
  }
  return pages;
}
