// The chat assistant: a scripted model that plays a plain chat assistant, for the Next.js example
// (`npm run example`) and for a chat benchmark.
//
// It stands in for a real model, so it knows only what its prompt shows: it reads the prompt as
// plain text (every message, every role, wherever a fact stands: a live message, a summary, a
// serialized record of earlier messages) with the same two rules everywhere, and knows no tag,
// wrapper or record format of any middleware. A fact a compaction dropped is simply unknown, and it
// says so plainly.
//
// Facts (`readChatFacts`), the newest mention of a name winning:
// - a sentence `my|our|your <name> is|was|are [now|actually|still] <value>`: the name is one to
//   four words; the value is its first word and the words after it that start with a capital
//   letter, a digit or a currency sign (`My name is Ada Lovelace.`, `my order number is A-4471`,
//   `My budget is €2,500`), its trailing punctuation left out;
// - a line `<Name>: <value>` (a document's field, a list item of a summary): the name starts with
//   a capital letter, one to five words; an optional `- ` or `* ` before it; the value is the rest
//   of the line.
// Markdown emphasis and code marks (`**`, `__`, backticks) are read as if absent.
//
// Policy, given the newest user text (the last text of the last user message):
// 1. a summary request (that text starts `You MUST summarize the conversation above` or `The
//    previous response did not fill in the required summary template`): the summary template with
//    every fact of the prompt under `## Important Context` as `- <Name>: <value>`, newest kept
//    first when they do not all fit the request's output limit (`summaryReply`); or, written the
//    `amnesiac` way (`assistantAgent({ summaries: 'amnesiac' })`, a variant for a benchmark that
//    must score worse), the same template with no fact at all (`amnesiacSummary`);
// 2. `what do you remember` / `what do you know` / `everything you remember|know`: every fact;
// 3. a question (a sentence ending `?`) naming a fact it has (the longest name found in it):
//    `The <name> you gave me is **<value>**.`; one asking `what is|was my|the <name>` or to
//    remember, recall or remind it of a name it has no fact for: that it does not have it;
// 4. facts in that text: an acknowledgement listing them (of a text of several lines, a document,
//    with how many lines it read);
// 5. a long text (400 characters or more) without facts: that it read it and found nothing to note;
// 6. anything else: what it can do, or (a question) that nothing in the conversation answers it.
// Questions are answered first, then the facts of the same message acknowledged.

import type { AgentReply, AgentRequest, AgentScript } from './agent';
import type { Message } from './conversation';
import { isSummaryRequestFor, promptText } from './fixer';
import { countText } from './tokens';

/** One fact as the prompt shows it: its name as written, its value, where its newest mention stands. */
export interface ChatFact {
  /** The name as written in its newest mention (`Order number`, `order number`). */
  name: string;
  value: string;
  /** Position in the text of the newest mention (a larger one is newer). */
  at: number;
}

/** What the prompt shows, by name in lower case with single spaces. */
export type ChatFacts = Map<string, ChatFact>;

const MARKS = /\*\*|__|`/g;
const WORD = String.raw`[A-Za-z][A-Za-z'’-]*`;
// a value: its first word, then the words that start with a capital, a digit or a currency sign;
// a comma inside a number (`€2,500`) is part of it
const VALUE = String.raw`(?:[^\s,;]|,(?=\d))+(?:[ \t]+(?=[A-Z0-9€$£#])(?:[^\s,;]|,(?=\d))+)*`;
const SENTENCE = new RegExp(String.raw`\b(?:[Mm]y|[Oo]ur|[Yy]our)\s+(${WORD}(?:[ \t]+${WORD}){0,3})\s+(?:is|was|are)\s+(?:(?:now|actually|still)\s+)?(${VALUE})`, 'g');
const LINE = new RegExp(String.raw`^[ \t]*(?:[-*][ \t]+)?([A-Z][A-Za-z'’-]*(?:[ \t]+${WORD}){0,4})[ \t]*:[ \t]+(\S[^\n]*?)[ \t]*$`, 'gm');
const TRAILING = /[.,;:!?)"'’”]+$/;

/** A fact's name as a key: lower case, single spaces, a curly apostrophe made straight. */
export function factKey(name: string): string {
  return name.toLowerCase().replace(/’/g, "'").replace(/\s+/g, ' ').trim();
}

/** A sentence's value ends with the word that ends the sentence (`14C. What` is `14C`). */
function sentenceValue(value: string): string {
  const words = value.split(/[ \t]+/);
  const end = words.findIndex((word) => /[.!?]$/.test(word));
  return (end === -1 ? words : words.slice(0, end + 1)).join(' ').replace(TRAILING, '');
}

/** The facts a text shows (see the top of this file). */
export function readChatFacts(text: string): ChatFacts {
  // markdown marks read as spaces, so that positions stay those of `text`
  const plain = text.replace(MARKS, (mark) => ' '.repeat(mark.length));
  const found: Array<{ name: string; value: string; at: number }> = [];
  for (const m of plain.matchAll(SENTENCE)) found.push({ name: m[1]!, value: sentenceValue(m[2]!), at: m.index });
  for (const m of plain.matchAll(LINE)) found.push({ name: m[1]!, value: m[2]!.replace(/[.;]+$/, ''), at: m.index });
  const facts: ChatFacts = new Map();
  for (const fact of found.sort((a, b) => a.at - b.at)) {
    // a value names something: `…` or `--` is no value
    if (!/[A-Za-z0-9]/.test(fact.value)) continue;
    facts.set(factKey(fact.name), fact);
  }
  return facts;
}

// ---------------------------------------------------------------------------------------------
// questions

const RECALL_ALL = /\b(?:what (?:else )?do you (?:still )?(?:remember|know)|everything you (?:still )?(?:remember|know|have))\b/i;
const STOP_WORDS = new Set(['i', 'we', 'you', 'that', 'which', 'in', 'from', 'on', 'again', 'earlier', 'before', 'for', 'according', 'please', 'now', 'here', 'there', 'of', 'to', 'is', 'was', 'and', 'or']);
const ASKED = [
  /\bwhat(?:'s|’s| is| was| were| are)\s+(?:my|our|the)\s+([^?.!,]+)/i,
  /\b(?:remember|recall|know|have|remind me of|tell me)\s+(?:my|our|the)\s+([^?.!,]+)/i,
];

/** The name a question asks for by its wording (`what was the order number I gave you` → `order number`), if it asks for one. */
export function askedName(question: string): string | undefined {
  const plain = question.replace(MARKS, '');
  for (const pattern of ASKED) {
    const m = pattern.exec(plain);
    if (!m) continue;
    const words: string[] = [];
    for (const word of m[1]!.trim().split(/\s+/)) {
      if (STOP_WORDS.has(word.toLowerCase()) || !/^[A-Za-z][A-Za-z'’-]*$/.test(word) || words.length === 5) break;
      words.push(word);
    }
    if (words.length > 0) return factKey(words.join(' '));
  }
  return undefined;
}

/** The questions of a text: its sentences that end with `?`. */
export function questionsIn(text: string): string[] {
  return [...text.replace(MARKS, '').matchAll(/[^.!?\n]*\?/g)].map((m) => m[0].trim()).filter((q) => q.length > 1);
}

const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** The fact a question names: the longest known name found in it as whole words. */
export function factNamedIn(question: string, facts: ChatFacts): string | undefined {
  const text = factKey(question.replace(MARKS, ''));
  let best: string | undefined;
  for (const key of facts.keys()) {
    if (best !== undefined && key.length <= best.length) continue;
    if (new RegExp(`(?:^|[^a-z0-9'])${escape(key)}(?![a-z0-9])`).test(text)) best = key;
  }
  return best;
}

// ---------------------------------------------------------------------------------------------
// replies

/** The name as a line starts it (`Order number`). */
const capital = (name: string) => name.charAt(0).toUpperCase() + name.slice(1);
/** The name inside a sentence (`order number`; an acronym such as `IBAN` as it is). */
const inSentence = (name: string) => (/^[A-Z]{2,}\b/.test(name) ? name : name.charAt(0).toLowerCase() + name.slice(1));
const number = new Intl.NumberFormat('en-US');

/** A fact as a list item: `- **Order number**: A-4471` (read back as a fact). */
const item = (fact: ChatFact) => `- **${capital(fact.name.trim())}**: ${fact.value}`;

/** The answer to a question naming `key`, or that it does not have it. */
export function answer(key: string, facts: ChatFacts): string {
  const fact = facts.get(key);
  if (fact !== undefined) return `The ${inSentence(fact.name.trim())} you gave me is **${fact.value}**.`;
  // no `Name: value` line and no `my … is …` sentence in a reply, unless it states a fact
  return `I don't have the ${key} — it isn't in what I can still see of our conversation. If you gave it to me earlier, I no longer have it. Could you tell me again?`;
}

const HELP = [
  "I'm the local scripted assistant of this example (no real model, no API key). I answer only from what this conversation still shows me:",
  '',
  '1. Tell me a fact (“My order number is …”) and I will note it.',
  '2. Paste a document with values, one a line (“Invoice number: …”), and I will list them.',
  '3. Ask about them later (“What was the order number I gave you?”). I answer from the conversation, or from its summary once it has been compacted, or tell you plainly that I no longer have it.',
  '',
  'Paste long text to fill the small context window quickly.',
].join('\n');

function firstAndLast(text: string): { lines: number; first: string; last: string } {
  const lines = text.split('\n').map((line) => line.trim()).filter((line) => line.length > 0);
  const cut = (line: string) => (line.length > 60 ? `${line.slice(0, 59)}…` : line).replace(/`/g, "'");
  return { lines: lines.length, first: cut(lines[0] ?? ''), last: cut(lines.at(-1) ?? '') };
}

/** The reply to the newest user text `said`, given the facts of the whole prompt. */
export function chatReply(said: string, facts: ChatFacts): string {
  const text = said.trim();
  if (text.length === 0) return HELP;
  if (RECALL_ALL.test(text)) {
    const all = [...facts.values()].sort((a, b) => a.at - b.at);
    if (all.length === 0) return "I don't have any facts from our conversation: nothing in what I can still see of it tells me a value. Tell me one and ask me later.";
    return [`Here is everything I still have from our conversation (${all.length === 1 ? 'one fact' : `${all.length} facts`}):`, '', ...all.map(item)].join('\n');
  }
  const parts: string[] = [];
  const unanswered: string[] = [];
  for (const question of questionsIn(text)) {
    const key = factNamedIn(question, facts) ?? askedName(question);
    if (key === undefined) unanswered.push(question);
    else parts.push(answer(key, facts));
  }
  // the facts this message gives (the newest mention of each, as the whole prompt shows it)
  const given = [...readChatFacts(text).keys()].map((key) => facts.get(key)).filter((fact): fact is ChatFact => fact !== undefined);
  if (given.length === 1 && !text.includes('\n')) {
    parts.push(`Noted — your ${inSentence(given[0]!.name.trim())} is **${given[0]!.value}**.`);
  } else if (given.length > 0) {
    const { lines } = firstAndLast(text);
    const intro = lines > 1 ? `Thanks, I've read it (${number.format(lines)} lines). I noted these values:` : 'Noted, these values:';
    parts.push([intro, '', ...given.map(item)].join('\n'));
  }
  if (parts.length > 0) return parts.join('\n\n');
  if (text.length >= 400) {
    const { lines, first, last } = firstAndLast(text);
    return [
      `I've read what you pasted (${number.format(lines)} lines, ${number.format(text.length)} characters). There is nothing in it for me to note:`,
      '',
      `- it starts with \`${first}\``,
      `- it ends with \`${last}\``,
      '',
      'Tell me a fact, or paste a document with values, one a line, and ask me about them later.',
    ].join('\n');
  }
  if (unanswered.length > 0) {
    const quoted = unanswered[0]!.length > 80 ? `${unanswered[0]!.slice(0, 79)}…` : unanswered[0]!;
    return `I can only answer from what you've told me in this conversation, and nothing in it answers “${quoted}”. Tell me the facts and ask again.`;
  }
  if (text.length < 80 && /\b(?:thanks|thank you)\b/i.test(text)) return "You're welcome. Ask me about anything you told me earlier.";
  return HELP;
}

// ---------------------------------------------------------------------------------------------
// the summary

/** The summary template filled from these facts: every one of them, newest kept first when they do not all fit `maxTokens`. */
export function summaryReply(facts: ChatFacts, maxTokens?: number): string {
  const frame = (kept: ChatFact[], dropped: number) =>
    [
      '## Objective',
      "- Keep the facts the user gives and answer the user's questions from them",
      '',
      '## Requirements',
      '- Answer only from what the user said in this conversation; say plainly when a fact is not known',
      '',
      '## Decisions',
      '- None',
      '',
      '## Work State',
      '',
      '### Completed',
      `- Noted ${kept.length === 1 ? 'one fact' : `${kept.length} facts`} from the user's messages and pasted documents (under Important Context)${dropped > 0 ? `; ${dropped} older ones left out for length` : ''}`,
      '',
      '### Active',
      '- None',
      '',
      '### Blocked',
      '- None',
      '',
      '## Next Move',
      "1. Answer the user's next message from the facts below",
      '2. Note any new fact the user gives',
      '',
      '## Relevant Files',
      '- None',
      '',
      '## Important Context',
      ...(kept.length > 0 ? [...kept].sort((a, b) => a.at - b.at).map((fact) => `- ${capital(fact.name.trim())}: ${fact.value}`) : ['- No facts given yet']),
    ].join('\n');
  const newest = [...facts.values()].sort((a, b) => b.at - a.at);
  let kept = newest;
  let text = frame(kept, 0);
  // a margin under the limit: a reply cut at it fails the compaction
  const limit = maxTokens === undefined ? Infinity : Math.floor(maxTokens * 0.9);
  while (kept.length > 0 && countText(text) > limit) {
    kept = kept.slice(0, Math.max(0, Math.min(kept.length - 1, Math.floor(kept.length * 0.9))));
    text = frame(kept, newest.length - kept.length);
  }
  return text;
}

/**
 * The summary of a summarizer that keeps nothing: the template, its Objective and Requirements,
 * and no fact under Important Context, whatever the conversation held.
 */
export function amnesiacSummary(): string {
  // the honest template of no facts, with no word of having noted any
  return summaryReply(new Map())
    .split('\n')
    .map((line) => (line.startsWith('- Noted ') || line === '- No facts given yet' ? '- None' : line))
    .join('\n');
}

/** How the assistant writes a summary: every fact it sees (`honest`), or none (`amnesiac`). */
export type ChatSummaryMode = 'honest' | 'amnesiac';

/** The newest user text of a request: the last non-empty text part of its last user message. */
export function newestUserText(messages: Message[]): string {
  const last = [...messages].reverse().find((message) => message.role === 'user');
  const texts = (last?.parts ?? []).filter((part) => part.type === 'text' && part.text.trim().length > 0);
  const text = texts.at(-1);
  return text?.type === 'text' ? text.text : '';
}

/** The reply to a request, from its messages alone (`maxOutputTokens` bounds a summary; `summaries`: how it writes one). */
export function assistantReply(messages: Message[], maxOutputTokens?: number, summaries: ChatSummaryMode = 'honest'): AgentReply {
  if (isSummaryRequestFor(messages)) return { text: summaries === 'amnesiac' ? amnesiacSummary() : summaryReply(readChatFacts(promptText(messages)), maxOutputTokens) };
  return { text: chatReply(newestUserText(messages), readChatFacts(promptText(messages))) };
}

/**
 * The chat assistant as the provider server's scripted model: `startProviderServer({ agent: assistantAgent() })`.
 * `summaries`: how it writes a summary (default `honest`, every fact it sees).
 */
export function assistantAgent(options: { summaries?: ChatSummaryMode } = {}): AgentScript {
  const summaries = options.summaries ?? 'honest';
  if (summaries !== 'honest' && summaries !== 'amnesiac') throw new RangeError(`assistantAgent: summaries must be 'honest' or 'amnesiac', got ${String(summaries)}`);
  return { respond: (request: AgentRequest) => assistantReply(request.messages, request.maxOutputTokens, summaries) };
}
